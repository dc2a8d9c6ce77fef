"""The sandbox's view cannot be widened by a path: interpreters, links, where the program lies, allow_read.

Run as the harness runs in CI, as root in bubblewrap.  Each attack is also shown to work with the
protection taken away (paths compared as written, no check of the finished command line), so that a
test that passes is one that could have failed."""

from __future__ import annotations

import os
import secrets
import shutil
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from sandbox_marks import as_root, contained, needs_sandbox

from asr_conformance import CORPUS_DIR
from asr_conformance.harness.adapters.answers import Outcome
from asr_conformance.harness.adapters.oneshot import OneShotValidator
from asr_conformance.harness.isolation import policies, visibility, wrapping
from asr_conformance.harness.isolation import sandbox as sandbox_module
from asr_conformance.harness.isolation.policies import Policy
from asr_conformance.harness.isolation.wrapping import SandboxRefused

ROOT = Path(__file__).resolve().parents[3]
HOSTILE = ROOT / "examples" / "hostile"
INVALID_CASE = CORPUS_DIR / "validator" / "ASR-164" / "invalid-loosen-redacted-to-full.jsonl"
#: What a probe prints: the root folder's listing, a root-only secret, the checkout's .git and corpus.
LOOK = ('ls / >&2; for f in /root/asr-hostile-secret-* "$(dirname "$0")"/root/root/asr-hostile-secret-*; do '
        'cat "$f" >&2; done; ('
        f'cat {ROOT}/.git; ls {ROOT}/.git {CORPUS_DIR}/validator) >&2 2>/dev/null')


#: The containment of a run with --sandbox=strict (as its run context gives it to an implementation).
STRICT = contained(sandbox="strict")


@pytest.fixture
def strict() -> Policy:
    return STRICT


@pytest.fixture
def root_secret() -> Iterator[str]:
    """A 0600 file of root's in /root, as a certifier's machine has (keys, tokens)."""
    token = f"ROOTSECRET-{secrets.token_hex(8)}"
    planted = Path("/root") / f"asr-hostile-secret-{uuid.uuid4().hex}"
    planted.write_text(token + "\n")
    planted.chmod(0o600)
    yield token
    planted.unlink()


def _script(folder: Path, shebang: str, body: str = LOOK, name: str = "probe") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / name
    script.write_text(f"#!{shebang}\n{body}\nexit 0\n")
    script.chmod(0o755)
    return script


def _said(program: Path | str, policy: Policy = STRICT, **options: object) -> str:
    """What the program printed, run as a validator under --sandbox=strict (and ``policy``'s own choices)."""
    answer = OneShotValidator([str(program)], timeout=60, policy=policy, **options).validate(  # type: ignore[arg-type]
        INVALID_CASE)
    assert answer.outcome is Outcome.ACCEPT, answer.explain()
    return answer.stderr_tail


def _unprotected(monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness as it was: paths compared as written, shared folders by name only, nothing looked for
    below a shown folder's top, no check of the finished command line."""
    def as_written(path: str | os.PathLike[str]) -> str:
        return os.path.abspath(os.fspath(path))

    def by_name(folder: str, guarded: visibility.Guarded) -> str:
        return "shared" if folder in visibility.SHARED_FOLDERS else ""

    monkeypatch.setattr(visibility, "canonical", as_written)
    monkeypatch.setattr(sandbox_module, "canonical", as_written)
    monkeypatch.setattr(sandbox_module, "refusal", by_name)
    monkeypatch.setattr(visibility, "hidden_below", lambda folder, shallow=False: ((), ()))
    monkeypatch.setattr(visibility, "pytest_temp_roots", lambda: ())
    monkeypatch.setattr(visibility, "violations", lambda *_: [])


SHEBANGS = ["//bin/sh", "/./bin/sh", "/usr/../bin/sh", "LINK/root/bin/sh"]


@needs_sandbox
@as_root
@pytest.mark.parametrize(("shebang", "protected"), [*((s, True) for s in SHEBANGS), ("//bin/sh", False)])
def test_an_interpreter_path_shows_nothing_of_the_machine(shebang: str, protected: bool, strict: Policy, root_secret: str,
                                                          tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the protection, "//" is the host's root shown read-only: root's 0600 file is read.  (The
    other spellings were made absolute and normal even before; a link to / as a prefix made bubblewrap
    fail to start.)"""
    folder = tmp_path / "acme"
    if shebang.startswith("LINK"):
        # An interpreter reached through a link in the implementation's own folder.
        folder.mkdir()
        (folder / "root").symlink_to("/")
        shebang = shebang.replace("LINK", str(folder))
    program = _script(folder, shebang)
    if not protected:
        _unprotected(monkeypatch)
    said = _said(program)
    if not protected:
        assert root_secret in said, said
        return
    assert root_secret not in said, said
    assert "HEAD" not in said and "gitdir" not in said and "ASR-164" not in said, said


@needs_sandbox
@as_root
@pytest.mark.parametrize(("where", "protected"), [("root", True), ("tmp", True), ("checkout", True), ("checkout", False)])
def test_a_program_in_a_folder_never_shown_whole_is_shown_alone(where: str, protected: bool, strict: Policy,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """At /, in /tmp, at the root of a checkout of the suite: only the program file is shown, never a
    file beside it (the checkout was shown whole before, its cases and history with it)."""
    tag = uuid.uuid4().hex
    folder = {"root": Path("/"), "tmp": Path(os.path.realpath("/tmp")), "checkout": ROOT}[where]
    program = _script(folder, "/bin/sh", 'cat "$(dirname "$0")"/asr-sibling-* >&2; echo RAN >&2', name=f"asr-probe-{tag}")
    sibling = folder / f"asr-sibling-{tag}"
    sibling.write_text("SIBLING\n")
    if not protected:
        _unprotected(monkeypatch)
    try:
        said = _said(program, cwd=str(folder))
    finally:
        program.unlink()
        sibling.unlink()
    assert "RAN" in said
    assert ("SIBLING" in said) is not protected, said


@needs_sandbox
@as_root
@pytest.mark.parametrize("protected", [True, False], ids=["protected", "unprotected"])
def test_hidden_entries_are_covered_at_any_depth(protected: bool, strict: Policy, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "acme"
    nested = project / "vendor" / "lib" / ".git"
    nested.mkdir(parents=True)
    (nested / "HEAD").write_text("ANSWERS\n")
    (project / "pyproject.toml").write_text("")
    program = _script(project / "bin", "/bin/sh", f"cat {nested}/HEAD >&2")
    if not protected:
        _unprotected(monkeypatch)
    said = _said(program)
    assert ("ANSWERS" in said) is not protected, said


@needs_sandbox
@pytest.mark.parametrize("folder", ["/", "..", "/tmp", "/root/..", "/home"])
def test_allow_read_of_the_root_a_shared_folder_or_the_checkout_is_refused(folder: str, strict: Policy,
                                                                          tmp_path: Path) -> None:
    with pytest.raises(policies.UsageError, match="may not be shown"):
        policies.settings_for(allow_read=(folder,))
    program = _script(tmp_path / "acme", "/bin/sh", "exit 0")
    with pytest.raises(SandboxRefused, match="may not be shown"):
        OneShotValidator([str(program)], timeout=60, cwd=str(ROOT / "suite"),
                         policy=replace(strict, read_only=(folder,))).validate(INVALID_CASE)


@needs_sandbox
def test_an_honest_allow_read_is_shown(strict: Policy, tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (runtime / "licence").write_text("LICENSED\n")
    program = _script(tmp_path / "acme", "/bin/sh", f"cat {runtime}/licence >&2")
    assert "LICENSED" in _said(program, policy=replace(strict, read_only=(str(runtime),)))
    assert "LICENSED" not in _said(program)


# --- the invariant, on command lines as a faulty builder would make them ------------------------------


def _guarded() -> visibility.Guarded:
    return wrapping.guarded_paths()


def _command(*mounts: str) -> list[str]:
    return ["bwrap", "--unshare-user", "--uid", "65534", "--gid", "65534", "--cap-drop", "ALL", "--unshare-pid",
            *mounts, "--", "true"]


@pytest.mark.parametrize(("mounts", "why"), [
    (("--ro-bind", "//", "//"), "not canonical"),
    (("--ro-bind", "/", "/"), "the root folder"),
    (("--ro-bind", "/tmp", "/tmp"), "shared folder /tmp"),
    (("--ro-bind", str(ROOT), str(ROOT)), "the suite's package"),
    (("--ro-bind", "/usr", "/etc/x"), "is shown as"),
    (("--ro-bind", str(CORPUS_DIR), str(CORPUS_DIR)), f"{CORPUS_DIR}/validator is visible"),
])
def test_the_invariant_names_every_widened_view(mounts: tuple[str, ...], why: str) -> None:
    found = visibility.violations(_command(*mounts), _guarded(), 65534)
    if why:
        assert any(why in problem for problem in found), found
    else:
        assert found == []


def test_the_invariant_wants_hidden_entries_covered_after_the_bind(tmp_path: Path) -> None:
    project = tmp_path / "acme"
    (project / "deep" / "er" / ".hypothesis").mkdir(parents=True)
    entry = str(project / "deep" / "er" / ".hypothesis")
    bind = ("--ro-bind", str(project), str(project))
    assert any(entry in p for p in visibility.violations(_command(*bind), _guarded(), 65534))
    assert any(entry in p for p in visibility.violations(_command("--tmpfs", entry, *bind), _guarded(), 65534))
    assert visibility.violations(_command(*bind, "--tmpfs", entry), _guarded(), 65534) == []


def test_the_invariant_wants_an_unprivileged_user_without_capabilities() -> None:
    command = _command()
    assert visibility.violations(command, _guarded(), 65534) == []
    assert visibility.violations([c if c != "65534" else "0" for c in command], _guarded(), 65534)
    assert visibility.violations([*command[:1], "--cap-add", "CAP_SYS_ADMIN", *command[1:]], _guarded(), 65534)


@needs_sandbox
def test_a_start_that_breaks_the_invariant_is_refused(strict: Policy, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A faulty builder (one that shows the machine's root) is caught by the check of the finished command line."""
    built = sandbox_module.command

    def faulty(argv: list[str], *rest: object) -> list[str]:
        line = built(argv, *rest)  # type: ignore[arg-type]
        end = line.index("--")
        return [*line[:end], "--ro-bind", "/", "/", *line[end:]]

    monkeypatch.setattr(sandbox_module, "command", faulty)
    program = _script(tmp_path / "acme", "/bin/sh", "exit 0")
    with pytest.raises(SandboxRefused, match="more than the contract lists") as refused:
        OneShotValidator([str(program)], timeout=60, policy=strict).validate(INVALID_CASE)
    assert "/ is shown whole: it is the root folder" in str(refused.value)


def test_the_hostile_shebang_example_is_what_it_says() -> None:
    assert (HOSTILE / "root-through-its-shebang").read_text().startswith("#!//bin/sh\n")
    assert shutil.which("sh")
