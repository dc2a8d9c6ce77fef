"""Isolation: how an untrusted implementation runs, and what it can see and keep.

The lowest layer of the harness.  The sandbox and what it may show (``sandbox``, ``visibility``),
resource limits and bounded output folders (``limits``, ``mounts``), containment of each process
(boxes, the environment, the live-process registry, the sweep) and running a child on a deadline
(``processes``).  Nothing here knows what a role, a case or a verdict is: it imports nothing else
of the harness."""
