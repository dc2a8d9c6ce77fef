"""The conformance suite: tests of the implementation under test, collected by the plugin."""
