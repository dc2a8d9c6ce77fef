"""One judging module per role: what an implementation's answer means against what was expected."""
