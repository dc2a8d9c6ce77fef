"""Hostile implementations as a vendor who wants the badge would write them, run as the harness runs
in CI and for many certifiers: as root, in bubblewrap.  None may escape, forge, read a secret, see an
answer or exhaust the machine; each test also shows the attack working where the protection is off,
so that a test that passes is one that could have failed."""

from __future__ import annotations

import json
import os
import secrets
import socket
import sys
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
from certifying import PLUGIN_DEFAULT_REPORT_DIR, Certify, run_certification
from sandbox_marks import as_root, contained, needs_sandbox

from asr_conformance import CORPUS_DIR
from asr_conformance.gate.verdict import EXIT_PARTIAL
from asr_conformance.harness.adapters.answers import Outcome
from asr_conformance.harness.adapters.oneshot import OneShotValidator
from asr_conformance.harness.isolation import boxes, disclosure, limits, mounts, policies
from asr_conformance.harness.isolation import sandbox as sandbox_module
from asr_conformance.harness.isolation.policies import Policy

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = ROOT / "examples" / "hostile"
INVALID_CASE = CORPUS_DIR / "validator" / "ASR-164" / "invalid-loosen-redacted-to-full.jsonl"


@pytest.fixture
def mode(request: pytest.FixtureRequest) -> Policy:
    """The containment of a run with ``--sandbox`` set to the parameter."""
    return contained(sandbox=request.param)


#: The containment of a run with --sandbox=strict.
STRICT = contained(sandbox="strict")


def _validate(name: str, stream: Path = INVALID_CASE, **options) -> object:
    return OneShotValidator([str(HOSTILE / name)], timeout=60, **options).validate(stream)


def _probe(tmp_path: Path, body: str) -> Path:
    script = tmp_path / "probe"
    script.write_text("#!/bin/sh\n" + body + "\nexit 0\n")
    script.chmod(0o755)
    return script


@needs_sandbox
@pytest.mark.parametrize("mode", ["strict"], indirect=True)
def test_root_is_an_unprivileged_user_without_capabilities(mode: Policy, tmp_path: Path) -> None:
    script = _probe(tmp_path, "id -u >&2; grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status >&2; "
                              "ls /proc | grep -c '^[0-9]' >&2")
    answer = OneShotValidator([str(script)], policy=mode).validate(INVALID_CASE)
    said = answer.stderr_tail.split()
    assert said[0] == str(sandbox_module.SANDBOX_UID), answer.stderr_tail
    assert said[said.index("CapEff:") + 1] == "0000000000000000"
    assert said[said.index("CapBnd:") + 1] == "0000000000000000"
    assert said[said.index("NoNewPrivs:") + 1] == "1"
    assert int(said[-1]) <= 4, "its own PID namespace: the sandbox, the shell and its commands, nothing else"


@needs_sandbox
@as_root
@pytest.mark.parametrize("mode", ["strict"], indirect=True)
def test_no_remount_unmount_or_bytecode_plant(mode: Policy) -> None:
    import asr_conformance.reports.markdown as target

    cache = Path(__import__("importlib.util").util.cache_from_source(target.__file__))
    before = cache.read_bytes() if cache.exists() else None
    answer = _validate("remounts-and-plants-bytecode", policy=mode)
    assert answer.outcome is Outcome.ACCEPT, answer.explain()
    assert "ESCAPED" not in answer.stderr_tail, answer.stderr_tail
    assert (cache.read_bytes() if cache.exists() else None) == before


@needs_sandbox
@pytest.mark.parametrize("mode", ["strict", "none"], indirect=True)
def test_no_answer_key_is_in_sight(mode: Policy) -> None:
    """Started from the checkout (its .git, its cases/ and pytest's temporary folders all there), it
    finds the case it was given only where nothing hides them."""
    answer = _validate("reads-the-answer-key", cwd=str(ROOT), policy=mode)
    if mode.settings.sandbox == "none":
        assert "FOUND the case" in answer.stderr_tail and answer.outcome is Outcome.REJECT, answer.explain()
        return
    assert "FOUND" not in answer.stderr_tail, answer.stderr_tail
    assert answer.outcome is Outcome.ACCEPT, answer.explain()


@needs_sandbox
@as_root
@pytest.mark.parametrize("mode", ["strict", "none"], indirect=True)
def test_secrets_stay_secret(mode: Policy, monkeypatch: pytest.MonkeyPatch) -> None:
    token = f"SECRET-{secrets.token_hex(8)}"
    planted = Path("/etc") / f"asr-conformance-test-{uuid.uuid4().hex}"
    planted.write_text(token + "\n")
    planted.chmod(0o600)
    monkeypatch.setenv("ASR_CERTIFIER_TOKEN", token)
    monkeypatch.setenv("ASR_SECRET_FILE", str(planted))
    try:
        answer = _validate("reads-secrets", pass_env=("ASR_SECRET_FILE",), policy=mode)
    finally:
        planted.unlink()
    found = json.loads(answer.diagnostics[0]["message"])
    if mode.settings.sandbox == "none":
        assert token in answer.received, "uncontained, root reads everything: the attack works"
        return
    assert token not in answer.received, found.keys()
    assert "shadow" not in found and "secret file" not in found
    assert not [label for label in found if label.startswith(("/root", "/home"))]


@as_root
def test_a_root_only_file_removed_after_the_listing_is_not_covered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The listing of root-only entries is reused for a while; a file removed since (another run's planted
    secret, a package's lock file) must not be covered, or bwrap fails to start on a mount point it cannot
    make in the read-only folder, and the case reads as the implementation's crash."""
    planted = Path("/etc") / f"asr-conformance-test-{uuid.uuid4().hex}"
    planted.write_text("gone soon\n")
    planted.chmod(0o600)
    try:
        listing = sandbox_module.root_only_entries()
        assert (str(planted), False) in listing
    finally:
        planted.unlink()
    # The listing as it stood (a folder's time stamp can miss a file made and removed within one clock tick).
    monkeypatch.setattr(sandbox_module, "root_only_entries", lambda *trees: listing)
    line = sandbox_module.command(["/bin/true"], sandbox_module.View(), "/", "none", 1 << 20)
    assert str(planted) not in line


@needs_sandbox
@pytest.mark.parametrize("network", ["none", "host"])
def test_the_network_is_off_unless_chosen(network: str) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)
    accepted: list[bytes] = []

    def serve() -> None:
        try:
            connection, _ = listener.accept()
            accepted.append(connection.recv(100))
            connection.close()
        except OSError:
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    tag = uuid.uuid4().hex
    os.environ["ASR_LISTENER_PORT"], os.environ["ASR_LEFTOVER_TAG"] = str(listener.getsockname()[1]), tag
    try:
        answer = _validate("connects-to-loopback", pass_env=("ASR_LISTENER_PORT", "ASR_LEFTOVER_TAG"),
                           policy=replace(STRICT, network=network))
    finally:
        del os.environ["ASR_LISTENER_PORT"], os.environ["ASR_LEFTOVER_TAG"]
        if not accepted:
            socket.create_connection(listener.getsockname()).close()  # end the accept
        thread.join(10)
        listener.close()
    assert ("CONNECTED" in answer.stderr_tail) is (network == "host"), answer.stderr_tail
    assert any(accepted) is (network == "host"), "the listener heard from it only on the host network"
    assert not Path(f"/dev/shm/asr-hostile-{tag}").exists(), "its /dev/shm is its own"


@needs_sandbox
@pytest.mark.parametrize(
    ("name", "limit", "named"),
    [
        ("fork-bomb", ("processes", 64), "limit of 64 processes"),
        ("memory-bomb", ("memory", 256 * limits.MIB), "address-space limit of 256 MiB"),
        ("disk-bomb", ("disk", 32 * limits.MIB), "scratch folder of 32 MiB"),
    ],
)
def test_a_bomb_fails_its_case_naming_the_limit_and_leaves_nothing(name: str, limit: tuple[str, int], named: str,
                                                                   tmp_path: Path) -> None:
    if name == "fork-bomb" and not limits.pids_cgroups():
        pytest.skip("no pids cgroup can be made here (the harness is not root, or cgroups are read-only)")
    tag = uuid.uuid4().hex
    os.environ["ASR_LEFTOVER_TAG"] = tag
    try:
        answer = _validate(name, policy=replace(STRICT, limits=(limit,)), pass_env=("ASR_LEFTOVER_TAG",))
    finally:
        del os.environ["ASR_LEFTOVER_TAG"]
    assert answer.outcome is Outcome.CRASH and named in answer.message, answer.explain()
    assert _tagged(tag) == [], "nothing it started outlives the case"


def _tagged(tag: str) -> list[int]:
    """Live processes (not zombies) whose environment carries the tag."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if f"ASR_LEFTOVER_TAG={tag}".encode() in environ and state != "Z" and int(entry) != os.getpid():
            found.append(int(entry))
    return found


@pytest.mark.skipif(not limits.pids_cgroups(), reason="no pids cgroup can be made here (not root, or read-only cgroups)")
def test_each_process_has_its_own_pids_cgroup_removed_with_it(tmp_path: Path) -> None:
    import subprocess

    from asr_conformance.harness.isolation.processes import spawn

    child = spawn([str(_probe(tmp_path, "sleep 30"))], None, subprocess.DEVNULL, policy=Policy(limits=(("processes", 9),)))
    assert child.group is not None and child.group.folder is not None
    folder = child.group.folder
    assert (folder / "pids.max").read_text().strip() == "9"
    # The shell that starts the process joins the group before it execs the implementation.
    for _ in range(2000):
        if (folder / "cgroup.procs").read_text().split() or child.process.poll() is not None:
            break
        time.sleep(0.005)
    assert (folder / "cgroup.procs").read_text().split(), "the process runs inside it"
    child.close()
    assert not folder.exists()


def test_every_rlimit_is_set_soft_and_hard_in_the_implementation_process(tmp_path: Path) -> None:
    """The shell that starts the process sets them; the implementation sees them and cannot raise them."""
    from asr_conformance.harness.isolation.processes import run_bounded

    chosen = (("memory", 512 * limits.MIB), ("cpu", 7), ("open_files", 50), ("file_size", limits.MIB))
    probe = _probe(tmp_path, "cat /proc/self/limits; ulimit -n 51 2>/dev/null && echo raised")
    finished = run_bounded([str(probe)], timeout=60, policy=Policy(limits=chosen))
    assert finished.returncode == 0, finished.stderr
    shown = {line[:26].strip(): line[26:].split()[:2] for line in finished.stdout.decode().splitlines()[1:]}
    assert shown["Max address space"] == [str(512 * limits.MIB)] * 2
    assert shown["Max cpu time"] == ["7", "7"]
    assert shown["Max open files"] == ["50", "50"]
    assert shown["Max file size"] == [str(limits.MIB)] * 2
    assert "raised" not in finished.stdout.decode()


def test_a_limit_from_the_command_line_wins_over_the_manifest_and_is_refused_when_nonsense() -> None:
    chosen = policies.effective_limits(replace(contained(limits=(("cpu", 7),)),
                                                  limits=(("cpu", 100), ("open_files", 50))))
    assert (chosen.cpu, chosen.open_files, chosen.memory) == (7, 50, limits.DEFAULTS.memory)
    assert limits.parse_limit("memory", "4G", "x") == 4 * 1024**3
    for wrong in ("lots", 0, True, -5):
        with pytest.raises(limits.LimitError, match="x"):
            limits.parse_limit("memory", wrong, "x")


@needs_sandbox
def test_the_header_names_each_protection() -> None:
    line = disclosure.describe_sandbox(STRICT)
    for protection in ("user namespace (uid 65534, no capabilities", "no_new_privs", "PID, IPC, UTS and network",
                       "allow-listed read-only files", "private /tmp and /dev/shm", "address space 8 GiB",
                       "CPU 600 s", "1024 open files", "scratch disk 256 MiB"):
        assert protection in line, line


def test_stale_staging_of_dead_runs_is_removed_and_live_runs_are_kept(tmp_path: Path) -> None:
    dead = tmp_path / f"{boxes.STAGING_PREFIX}{_dead_pid()}-abc"
    live = tmp_path / f"{boxes.STAGING_PREFIX}{os.getpid()}-def"
    other = tmp_path / "asr-run-someone-elses"
    for folder in (dead, live, other):
        (folder / "box" / "in").mkdir(parents=True)
    (dead / "box" / "in").chmod(0o500)
    assert boxes.remove_stale_staging(tmp_path) == [dead]
    assert not dead.exists() and live.exists() and other.exists()


def _dead_pid() -> int:
    import subprocess

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@needs_sandbox
@as_root
def test_a_certification_run_of_an_escaper_does_not_conform_and_leaves_the_machine_clean(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    scratch = pytester.path / "machine-tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    result = pytester.runpytest_subprocess(  # a fresh interpreter: it reads TMPDIR as set here
        f"--implementation={HOSTILE / 'remounts-and-plants-bytecode'}", "-p", "no:cacheprovider", "--report-dir=out",
        "--sandbox=strict", "-m", "corpus", "-k", "ASR-164", timeout=600)
    assert result.ret == 1 and "verdict: DOES NOT CONFORM" in result.stdout.str()
    assert "changed during the run" not in result.stdout.str()
    assert "sandbox: bubblewrap (user namespace" in result.stdout.str()
    assert list(scratch.iterdir()) == [], "no staging left behind"


@pytest.mark.skipif(not limits.pids_cgroups(), reason="no pids cgroup can be made here (not root, or read-only cgroups)")
def test_pids_cgroups_of_dead_runs_are_removed_and_live_ones_kept() -> None:
    parent = limits._pids_parent()
    assert parent is not None
    dead = parent / f"{limits.GROUP_PREFIX}{_dead_pid()}-0123456789ab"
    live = parent / f"{limits.GROUP_PREFIX}{os.getpid()}-0123456789ab"
    dead.mkdir()
    live.mkdir()
    try:
        removed = limits.remove_stale_groups()  # with any a run killed outright left on this machine
        assert dead in removed and live not in removed
        assert not dead.exists() and live.exists()
    finally:
        limits.ProcessGroup.remove(live)


def test_limit_options_are_checked_and_shown_in_the_header(pytester: pytest.Pytester) -> None:
    wrong = run_certification("--implementation=" + str(HOSTILE / "fork-bomb"), "--limit-memory=lots",
                              "--co", "-p", "no:cacheprovider", cwd=pytester.path, report_dir=PLUGIN_DEFAULT_REPORT_DIR)
    assert wrong.ret == pytest.ExitCode.USAGE_ERROR
    assert "--limit-memory: a size in bytes (suffix K, M or G), not 'lots'" in wrong.stderr.str()
    shown = run_certification("--implementation=" + str(HOSTILE / "fork-bomb"), "--limit-memory=1G",
                              "--limit-cpu=33", "--co", "-p", "no:cacheprovider", "--report-dir=none", cwd=pytester.path)
    assert "address space 1 GiB, CPU 33 s" in shown.stdout.str()


@needs_sandbox
def test_memorised_fuzz_examples_pass_only_a_fixed_run(certify: Certify, tmp_path: Path) -> None:
    """A validator that learnt one honest run's examples by heart (and accepts anything else) passes a
    run on the same fixed examples, which says it certifies nothing, and fails a certification run."""
    table = tmp_path / "answers" / "table.jsonl"
    table.parent.mkdir()
    memorised = (f"--implementation={HOSTILE / 'replays-memorised-answers'}",
                 "-m", "fuzz", "-k", "test_rejects_mutated_streams and ASR-164")
    # The default profile unless a run names one: the project's fixed profile must not leak into the last run.
    recorded = certify(*memorised, "--hypothesis-profile=asr-fixed", "--sandbox=none", "--pass-env=ASR_MEMORISE_TO",
                       env={"ASR_HYPOTHESIS_PROFILE": None, "ASR_MEMORISE_TO": str(table)})
    # No sandbox and a variable passed through: a widened sandbox, so a partial verdict (exit status 10), not a pass.
    assert recorded.ret == EXIT_PARTIAL and table.read_text().count("\n") >= 8, recorded.stdout.str()[-2000:]
    replay_env = {"ASR_HYPOTHESIS_PROFILE": None, "ASR_MEMORISED_FROM": str(table)}
    replayed = certify(*memorised, "--hypothesis-profile=asr-fixed", "--pass-env=ASR_MEMORISED_FROM",
                       f"--allow-read={table.parent}", env=replay_env)
    assert replayed.ret == EXIT_PARTIAL, replayed.stdout.str()[-2000:]
    assert "regression gate that certifies nothing new; no badge" in replayed.stdout.str()
    certified = certify(*memorised, "--pass-env=ASR_MEMORISED_FROM", f"--allow-read={table.parent}", env=replay_env)
    assert certified.ret == 1 and "verdict: DOES NOT CONFORM" in certified.stdout.str(), \
        certified.stdout.str()[-2000:]


@needs_sandbox
@as_root
@pytest.mark.skipif(not mounts.may_mount(), reason="no tmpfs can be mounted here (the harness needs CAP_SYS_ADMIN)")
def test_a_converter_filling_its_output_folder_meets_the_disk_limit_and_leaves_no_mount(tmp_path: Path) -> None:
    """RLIMIT_FSIZE bounds one file; the output folder's own tmpfs bounds them all (size and count)."""
    from asr_conformance.harness.adapters.persistent import PersistentImplementation

    source = tmp_path / "native.jsonl"
    source.write_text("{}\n")
    policy = replace(STRICT, limits=(("disk", 8 * limits.MIB),))
    adapter = PersistentImplementation([str(HOSTILE / "fills-its-output-folder")], timeout=60, role="producer",
                                       policy=policy)
    staging = str(boxes.staging_root(policy.settings))
    try:
        conversion = adapter.convert(source)
    finally:
        adapter.close()
    assert conversion.outcome is Outcome.CRASH, conversion.explain()
    # Only a full tmpfs of the box's own (statvfs) names the output folder: the mount was there, 8 MiB.
    assert "it filled its output folder of 8 MiB" in conversion.message, conversion.explain()
    assert not any(point.startswith(staging) for point in mounts._mount_points()), "no mount outlives its box"


@pytest.mark.skipif(not mounts.may_mount(), reason="no tmpfs can be mounted here (the harness needs CAP_SYS_ADMIN)")
def test_stale_staging_with_a_mount_left_by_a_killed_run_is_released_and_removed(tmp_path: Path) -> None:
    dead = tmp_path / f"{boxes.STAGING_PREFIX}{_dead_pid()}-abc"
    out = dead / "box" / "out"
    out.mkdir(parents=True)
    assert mounts._mount(str(out), 1 << 20), "a mount as a killed run would leave it"
    (out / "stream.jsonl").write_text("{}\n")
    assert boxes.remove_stale_staging(tmp_path) == [dead]
    assert not dead.exists() and str(out) not in mounts._mount_points()


def test_the_header_says_how_output_folders_are_bounded() -> None:
    assert mounts.describe().startswith("output folders: ")
    assert ("a tmpfs each" in mounts.describe()) is mounts.may_mount()
