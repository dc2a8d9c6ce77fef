"""Producer fidelity: witnesses that read native inputs, and checks that hold a stream to them.

``facts``      what a witness reports (SourceFacts, Finding) and the Witness interface
``claude_code`` the witness for Claude Code transcripts, and its source mutations (``MUTATIONS``)
``codex``, ``gemini`` the witnesses for Codex rollouts and Gemini CLI sessions; their edits in ``*_mutations``
``registry``   which witness reads an input (built-ins and ``asr_conformance.witnesses`` entry points)
``compare``    ``check_fidelity(facts, records)``: the findings, per rule and family
``mutations``  the SourceMutation type: an edit of the source and what it must change in the stream

See docs/witnesses.md.
"""
