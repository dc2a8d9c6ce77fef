"""Certification runs in a fresh pytest process, as a vendor starts them: the one runner the
project's tests use (through the ``certify`` fixture, or ``shared_certification`` in a module-scoped
fixture whose single run several tests inspect, once per test session even under xdist)."""

from __future__ import annotations

import atexit
import fcntl
import itertools
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

#: Plugins a certification run never needs: leaving them out spares each run their start-up (anyio's
#: plugin imports trio, when installed, at every start: a fifth of a small run's CPU time).
UNNEEDED_PLUGINS = ("-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:anyio")
#: The plugin's own default report folder: asked for, it is left to the plugin (no --report-dir is added).
PLUGIN_DEFAULT_REPORT_DIR = "reports/out"
#: Variables of the outer run that must not leak into a certification run.
OUTER_VARIABLES = ("PYTEST_ADDOPTS", "TOX_ENV_DIR", "PYTEST_CURRENT_TEST")
_runs = itertools.count()


@dataclass
class Certification:
    """One certification run in a subprocess: its exit code, its output and the report it wrote.

    Attribute access falls through to the ``pytest.RunResult``, so ``assert_outcomes``,
    ``parseoutcomes``, ``stdout.fnmatch_lines`` and ``outlines`` work as on pytester's result."""

    result: pytest.RunResult
    folder: Path
    report_dir: Path | None
    args: tuple[str, ...] = field(default=())
    #: The report text last checked against the schema: a walk of a whole run's report takes a fifth of a second,
    #: and several tests read one shared run.
    _checked: str | None = field(default=None, repr=False, compare=False)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.result, name)

    @property
    def text(self) -> str:
        """Standard output, as one string."""
        return self.result.stdout.str()

    @property
    def outcomes(self) -> dict[str, int]:
        """The summary line's counts; empty when the run printed none (a usage error)."""
        try:
            return self.result.parseoutcomes()
        except ValueError:
            return {}

    @property
    def report(self) -> dict:
        """report.json of the run, checked against its schema: read and parsed anew at each access (each test may
        change its own copy), checked once for each text the file holds."""
        from asr_conformance.vocabulary.schemas import check_report

        assert self.report_dir is not None, "this run was started with report_dir=None"
        text = (self.report_dir / "report.json").read_text(encoding="utf-8")
        data = json.loads(text)
        if text != self._checked:
            assert check_report(data) is None
            self._checked = text
        return data

    def failed(self, test: str = "test_validator_case") -> set[str]:
        """The parameter IDs of ``test`` that failed, from the short summary."""
        return set(re.findall(rf"FAILED \S*{test}\[(.+?)\]", self.text))


def run_certification(*args: str | os.PathLike[str], cwd: Path, env: Mapping[str, str | None] | None = None,
                      timeout: float = 600, report_dir: str | None = "out", all_plugins: bool = False) -> Certification:
    """Run ``pytest *args`` in a fresh process in ``cwd``, as a vendor would start it.

    ``env`` adds variables (a ``None`` value removes one); ``report_dir`` (relative to ``cwd``)
    becomes ``--report-dir`` unless ``args`` name one, ``None`` meaning ``--report-dir=none`` and
    ``PLUGIN_DEFAULT_REPORT_DIR`` the plugin's default, the option left out;
    plugins no certification needs are left out unless ``all_plugins`` (for ``--help``, say).
    Like pytester's subprocess runs: HOME is the folder, colours are off, outer pytest options
    are dropped and the temporary folders are the run's own."""
    words = tuple(os.fspath(arg) for arg in args)
    cwd.mkdir(parents=True, exist_ok=True)
    basetemp = cwd / f".basetemp-{os.getpid()}-{next(_runs)}"
    given_dir = any(word == "--report-dir" or word.startswith("--report-dir=") for word in words)
    leave_default = given_dir or report_dir == PLUGIN_DEFAULT_REPORT_DIR
    report_args: tuple[str, ...] = () if leave_default else (f"--report-dir={report_dir or 'none'}",)
    environment = {key: value for key, value in os.environ.items() if key not in OUTER_VARIABLES}
    environment.update(HOME=str(cwd), USERPROFILE=str(cwd), PY_COLORS="0")
    environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(cwd), os.environ.get("PYTHONPATH", "")]))
    for key, value in (env or {}).items():
        if value is None:
            environment.pop(key, None)
        else:
            environment[key] = value
    plugins = () if all_plugins else UNNEEDED_PLUGINS
    command = [sys.executable, "-m", "pytest", f"--basetemp={basetemp}", *plugins, *report_args, *words]
    if FRESH_INTERPRETERS:
        returncode, stdout, stderr = _run_fresh(command, cwd, environment, timeout)
    else:
        returncode, stdout, stderr = _preloaded().run(command[3:], cwd, environment, timeout)
    code: int | pytest.ExitCode = returncode
    try:
        code = pytest.ExitCode(returncode)
    except ValueError:
        pass
    result = pytest.RunResult(code, stdout.splitlines(), stderr.splitlines(), 0.0)
    folder = None
    if given_dir:
        chosen = next(word for word in reversed(words) if word.startswith("--report-dir"))
        value = chosen.partition("=")[2] if "=" in chosen else words[words.index(chosen) + 1]
        folder = None if value in ("none", "") else cwd / value
    elif report_dir is not None:
        folder = cwd / report_dir
    return Certification(result, cwd, folder, words)



Certify = Callable[..., Certification]

#: ``ASR_TESTS_FRESH_INTERPRETERS=1`` starts every certification run as a new interpreter
#: (``python -m pytest``) instead of a fork of the preloaded one (``preloaded_pytest.py``).
FRESH_INTERPRETERS = os.environ.get("ASR_TESTS_FRESH_INTERPRETERS") == "1" or not hasattr(os, "fork")


def _timed_out(command: list[str], timeout: float, stdout: str) -> None:
    pytest.fail(f"the certification run did not end within {timeout} s: {' '.join(command)}\n{stdout[-3000:]!r}")


def _signals_as_from_a_shell() -> None:
    """In the child before exec: SIGINT and SIGTERM as a shell leaves them (an ignored signal survives exec, and
    the worker starting the run may have been ignoring SIGINT)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _run_fresh(command: list[str], cwd: Path, env: Mapping[str, str], timeout: float) -> tuple[int, str, str]:
    try:
        done = subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, errors="replace", timeout=timeout, preexec_fn=_signals_as_from_a_shell)
    except subprocess.TimeoutExpired as expired:
        out = expired.stdout.decode("utf-8", "replace") if isinstance(expired.stdout, bytes) else (expired.stdout or "")
        _timed_out(command, timeout, out)
    return done.returncode, done.stdout, done.stderr


class PreloadedPytest:
    """This process's ``preloaded_pytest.py`` server: each run is a child forked from it (see its docstring)."""

    def __init__(self) -> None:
        # Each run gets its own environment when it is forked; the server keeps none of a test's own variables
        # (ASR_*), or a test that finds its leftovers by a variable would find the server, started during it.
        environment = {key: value for key, value in os.environ.items()
                       if key not in (*OUTER_VARIABLES, "PYTHONPATH") and not key.startswith("ASR_")}
        self.process = subprocess.Popen([sys.executable, str(Path(__file__).with_name("preloaded_pytest.py"))],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment, text=True,
                                        cwd=os.path.dirname(os.path.abspath(__file__)))
        self._pending = b""

    def alive(self) -> bool:
        return self.process.poll() is None

    def _answer(self, timeout: float | None) -> dict[str, int] | None:
        """The server's next answer line, or None when none came within ``timeout`` seconds.

        Read from the pipe's descriptor into a buffer of this object's own: the server often writes both
        answers of a quick run at once, and a buffered ``readline`` would take the second into the file
        object's buffer, where ``select`` on the descriptor cannot see it (the wait then lasted the whole
        run timeout, and the run failed as hung)."""
        assert self.process.stdout is not None
        descriptor = self.process.stdout.fileno()
        while b"\n" not in self._pending:
            if timeout is not None and not select.select([descriptor], [], [], timeout)[0]:
                return None
            chunk = os.read(descriptor, 65536)
            if not chunk:
                raise RuntimeError("the preloaded pytest server ended")
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        answer: dict[str, int] = json.loads(line)
        return answer

    def run(self, args: list[str], cwd: Path, env: Mapping[str, str], timeout: float) -> tuple[int, str, str]:
        assert self.process.stdin is not None
        with tempfile.TemporaryDirectory(prefix="certify-") as folder:
            out, err = Path(folder) / "stdout", Path(folder) / "stderr"
            request = {"args": args, "cwd": str(cwd), "env": dict(env), "stdout": str(out), "stderr": str(err)}
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            started = self._answer(60)
            if started is None:
                raise RuntimeError("the preloaded pytest server did not fork")
            ended = self._answer(timeout)
            if ended is None:
                os.kill(started["pid"], signal.SIGKILL)
                self._answer(None)
                _timed_out([sys.executable, "-m", "pytest", *args], timeout, out.read_text("utf-8", "replace"))
            return (ended["status"], out.read_text("utf-8", "replace") if out.exists() else "",
                    err.read_text("utf-8", "replace") if err.exists() else "")

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


_server: list[PreloadedPytest] = []


def _preloaded() -> PreloadedPytest:
    """The server of this process (one per xdist worker), started on first use and again if it died."""
    if not _server or not _server[0].alive():
        _server[:] = [PreloadedPytest()]
        atexit.register(_server[0].close)
    return _server[0]


def shared_folder(factory: pytest.TempPathFactory, name: str) -> Path:
    """The folder the shared run ``name`` runs in, the same for every xdist worker: a fixture that must put a
    file there before the run (a manifest, a file the run must leave alone) writes it whole (write, then rename)."""
    base = factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return root / f"shared-{name}"


def shared_certification(factory: pytest.TempPathFactory, name: str, *args: str | os.PathLike[str],
                         **options: Any) -> Certification:
    """One run of ``pytest *args`` for the whole test session, whichever xdist worker asks first.

    Module-scoped fixtures call it, so that several tests read one run's output and report.  Under
    xdist each worker would run such a fixture itself; here the first takes a lock, runs and saves
    the result beside the workers' temporary folders, and the others wait for it and read it.
    ``name`` says which run it is: the same name must always come with the same arguments."""
    folder = shared_folder(factory, name)
    root, saved = folder.parent, folder.parent / f"shared-{name}.json"
    with open(root / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if saved.exists():
            data = json.loads(saved.read_text(encoding="utf-8"))
            result = pytest.RunResult(data["ret"], data["out"], data["err"], 0.0)
            report_dir = Path(data["report_dir"]) if data["report_dir"] else None
            return Certification(result, folder, report_dir, tuple(data["args"]))
        run = run_certification(*args, cwd=folder, **options)
        saved.write_text(json.dumps({"ret": int(run.ret), "out": run.result.outlines, "err": run.result.errlines,
                                     "report_dir": str(run.report_dir) if run.report_dir else None,
                                     "args": list(run.args)}), encoding="utf-8")
        return run
