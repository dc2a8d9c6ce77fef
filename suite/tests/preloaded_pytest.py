"""A Python process that has imported pytest once and forks a fresh child for each certification run.

The project's tests start a few hundred certification runs; in each, a new interpreter spent about a
third of a CPU second importing pytest, Hypothesis, jsonschema and orjson before it did anything else.
This server imports them once, and the suite's plugin with what it imports (a fifth of a CPU second more per run;
at their import they only define and read the package's own files), then for each request line forks a child that becomes
``python -m pytest ARGS``
run in the request's folder with its environment: working directory, ``os.environ``, ``sys.path``
(the folder, then ``PYTHONPATH``, then the interpreter's own), stdin at end of file and stdout
and stderr into the files named.  The child ends as the interpreter would (atexit handlers, then
the exit status); the server answers each request with the child's pid, then its exit status.

    {"args": [...], "cwd": "...", "env": {...}, "stdout": "FILE", "stderr": "FILE"}
    <- {"pid": 1234}
    <- {"status": 0}
"""

from __future__ import annotations

import atexit
import gc
import json
import os
import signal
import sys

import hypothesis
import jsonschema  # noqa: F401  (preloaded: the suite validates against its schemas in every run)
import orjson  # noqa: F401  (preloaded: the reference reader's fast path)
import pytest

# Hypothesis is a pytest plugin too: pytest would rewrite its asserts on import, and warns about a plugin
# module imported before it could. Its asserts are Hypothesis's own, never a certification's, so the
# preloaded modules say what a module that must not be rewritten says.
for _name in ("hypothesis", "_hypothesis_globals"):
    if _name in sys.modules:
        sys.modules[_name].__doc__ = (sys.modules[_name].__doc__ or "") + "\n\nPYTEST_DONT_REWRITE\n"
del hypothesis

# The suite's plugin and what it imports (harness, judges, generators): every certification run loads them, and
# they are the same files in every child. Nothing runs at their import but definitions; what a run configures it
# sets in its own forked copy.
import asr_conformance.plugin.hooks  # noqa: E402,F401

# Installed as a package (not editable), the suite is a plugin distribution whose modules pytest marks for
# assertion rewriting, and it warns about those imported before it could rewrite them: said of them as of
# Hypothesis above (their asserts are internal checks, never a certification's verdict).
for _name, _module in list(sys.modules.items()):
    if _name.startswith("asr_conformance"):
        _module.__doc__ = (_module.__doc__ or "") + "\n\nPYTEST_DONT_REWRITE\n"

#: The interpreter's own path, without this script's folder (a certification run does not see it).
BASE_PATH = [entry for entry in sys.path[1:] if entry and os.path.realpath(entry) != os.path.dirname(os.path.realpath(__file__))]


def _become(request: dict) -> int:
    # A run starts as one from a shell would: Ctrl-C interrupts it. Ignored signals survive fork and exec, and the
    # process that started this server may have been ignoring SIGINT (a pytest-xdist worker can be).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    extra = [entry for entry in request["env"].get("PYTHONPATH", "").split(os.pathsep) if entry]
    sys.path[:] = [request["cwd"], *extra, *BASE_PATH]
    sys.dont_write_bytecode = bool(request["env"].get("PYTHONDONTWRITEBYTECODE"))
    stdin = os.open(os.devnull, os.O_RDONLY)
    os.dup2(stdin, 0)
    for fd, name in ((1, "stdout"), (2, "stderr")):
        target = os.open(request[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(target, fd)
        os.close(target)
    sys.stdin = open(0, encoding="utf-8", errors="replace", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False)  # noqa: SIM115
    sys.argv = [sys.executable, *request["args"]]
    try:
        code = pytest.main(list(request["args"]))
    except SystemExit as ending:
        code = ending.code if isinstance(ending.code, int) else (0 if ending.code is None else 1)
    return int(code)


def _child(request: dict) -> None:
    """Never returns: runs the certification and exits as an interpreter does."""
    code = 70
    try:
        code = _become(request)
    except BaseException:  # a run that dies says why, as a fresh interpreter would
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _renew() -> None:
    """Hash the corpus and the package here, so that each child finds their digests in the memo it inherits
    (``integrity.DigestMemo``) and reads again only the files changed since: a run hashes both at its start and
    its end, about a third of a CPU second of a short run's start. Repeated before each fork, it rereads only
    what changed (written bytecode, a test's own corpus), in a few milliseconds.

    The same for the listing of root-only entries the sandbox hides (a pure cache of the machine, walked anew
    once it is older than its refresh time): renewed here, not walked again in each child."""
    from asr_conformance import CORPUS_DIR
    from asr_conformance.gate.integrity import package_code, snapshot
    from asr_conformance.harness.isolation.sandbox import root_only_entries
    from asr_conformance.plugin.session import package_roots

    snapshot(CORPUS_DIR)
    for root in package_roots():
        snapshot(root, package_code)
    root_only_entries()


def _warm_caches() -> None:
    """Fill, once, the caches every run fills at its start and that only the package's own files decide: the rules
    catalog and the compiled validator of each schema a run checks documents against (manifests, expectations
    files, its report, views, case metadata, protocol messages). Each child then finds them made, as a
    longer-lived process would."""
    from importlib import resources

    from asr_conformance.harness.judging.views import view_schema
    from asr_conformance.vocabulary import protocol
    from asr_conformance.vocabulary.cases import case_schema
    from asr_conformance.vocabulary.rules import load_catalog
    from asr_conformance.vocabulary.schemas import first_problem, published_schema

    load_catalog()
    folder = resources.files("asr_conformance").joinpath("schemas")
    schemas = [case_schema(), view_schema()]
    schemas += [published_schema(entry.name) for entry in folder.iterdir() if entry.name.endswith(".schema.json")]
    schemas += [protocol.schema(entry.name.removesuffix(".schema.json"))
                for entry in folder.joinpath("protocol").iterdir() if entry.name.endswith(".schema.json")]
    for schema in schemas:
        first_problem(schema, None)


def serve() -> None:
    _renew()
    _warm_caches()
    # What was imported stays alive in every child: kept out of their garbage collections (they walk
    # every tracked object, and pytest collects at the end of each run), and out of copy-on-write.
    gc.freeze()
    for line in sys.stdin:
        request = json.loads(line)
        _renew()
        pid = os.fork()
        if pid == 0:
            _child(request)
        print(json.dumps({"pid": pid}), flush=True)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), flush=True)


if __name__ == "__main__":
    serve()
