"""Isolation: how an untrusted implementation runs, and what it can see and keep.

The lowest layer of the harness; nothing here knows what a role, a case or a verdict is, and it
imports nothing else of the harness.  One module per job, lowest first:

* ``limits``, ``mounts``, ``visibility``, ``sandbox``: resource limits, size-limited output
  folders, what the sandbox may show (canonical paths) and bubblewrap's command line;
* ``policies``: a run's settings and an implementation's policy (made once, carried to each start);
* ``allowlist``: the environment an implementation gets, from an allow-list;
* ``boxes``: each process's private folders, blind input copies, the staging and its removal;
* ``named_files``: reading a file an implementation names, without trusting it;
* ``live_processes``, ``sweeping``, ``signal_handlers``: the live implementations of this
  process, the subreaper and the sweep of leftovers, and what SIGINT and SIGTERM do to both;
* ``wrapping``, ``disclosure``: the contained command line, and what the run says about it;
* ``processes``: running a child in its box on a deadline, and ending everything it started.
"""
