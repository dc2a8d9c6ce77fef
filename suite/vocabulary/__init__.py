"""The shared vocabulary: the rule catalog, the case corpus, the wire protocol and the
published schemas. Every other part of the package may import from here; nothing here
imports from the reference, the harness, the gate or the plugin."""
