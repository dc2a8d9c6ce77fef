"""Hostile implementations under examples/hostile/ cannot turn lost results, an interrupted run, a
rewritten corpus or injected text into a passing verdict or a forged report; the honest reference
still conforms, complete, under xdist."""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
from pathlib import Path

import pytest
from certifying import Certification, Certify, run_certification, shared_certification

from asr_conformance import CORPUS_DIR
from asr_conformance.gate.baseline import BaselineError, load_baseline
from asr_conformance.gate.integrity import snapshot
from asr_conformance.vocabulary.schemas import check_report

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = ROOT / "examples" / "hostile"
REFERENCE = ROOT / "examples" / "reference.toml"
#: One invalid and one valid case of ASR-260: enough to provoke each attack, quick to run.
SMALL = ("-m", "corpus", "-k", "ASR-260 and (exit-code-above-maximum or valid-exit-code-minimum)")


def report_of(folder: Path) -> dict:
    data = json.loads((folder / "out" / "report.json").read_text(encoding="utf-8"))
    assert check_report(data) is None
    return data


def assert_incomplete(folder: Path, result: Certification) -> dict:
    """The run fails, says INCOMPLETE everywhere, and no badge or verdict says it conforms."""
    assert result.ret != 0
    verdict_line = next(line for line in result.outlines if line.startswith("verdict: "))
    assert verdict_line.startswith("verdict: INCOMPLETE"), verdict_line
    report = report_of(folder)
    assert report["completeness"]["complete"] is False
    assert all(v["verdict"] in ("incomplete", "does-not-conform") for v in report["verdicts"])
    for badge in (folder / "out").glob("badge-*.json"):
        assert json.loads(badge.read_text())["color"] != "brightgreen"
    assert "**Incomplete run**" in (folder / "out" / "summary.md").read_text(encoding="utf-8")
    assert "Incomplete run" in (folder / "out" / "report.html").read_text(encoding="utf-8")
    return report


def test_an_implementation_that_kills_its_worker_gets_incomplete(certify: Certify, tmp_path: Path) -> None:
    """Without the sandbox the attack reaches the worker: the lost results make the run INCOMPLETE."""
    result = certify(f"--implementation={HOSTILE / 'kills-its-worker'}", *SMALL, "-n", "2", "--sandbox=none")
    report = assert_incomplete(tmp_path, result)
    lost = [r for r in report["results"] if r["outcome"] == "crash"]
    assert lost and all(r["message"].startswith("no result") for r in lost)
    assert report["completeness"]["missing"] == [r["test"] for r in lost]
    result.stdout.fnmatch_lines(["*no result: *invalid-exit-code-above-maximum*"])


def test_an_implementation_that_interrupts_pytest_gets_incomplete(certify: Certify, tmp_path: Path) -> None:
    result = certify(f"--implementation={HOSTILE / 'interrupts-pytest'}", *SMALL, "--sandbox=none")
    report = assert_incomplete(tmp_path, result)
    assert "the run was interrupted" in report["completeness"]["reasons"]


def test_in_the_sandbox_a_worker_killer_cannot_reach_pytest(certify: Certify, tmp_path: Path) -> None:
    """With bubblewrap (a PID namespace) the same attack never reaches the worker; the run stays complete
    and the cases the implementation would fail still fail."""
    import shutil

    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed here (apt-get install bubblewrap)")
    result = certify(f"--implementation={HOSTILE / 'kills-its-worker'}", *SMALL, "-n", "2", "--sandbox=bwrap")
    report = report_of(tmp_path)
    assert report["completeness"]["complete"]
    assert "verdict: DOES NOT CONFORM" in result.stdout.str() and "CONFORMS (" not in result.stdout.str()


def test_rewriting_the_corpus_during_the_run_makes_it_incomplete(certify: Certify, tmp_path: Path) -> None:
    """Run against a copy of the corpus (the checkout's is never exposed to the attack here)."""
    shipped = snapshot(CORPUS_DIR).digest
    copy = tmp_path / "corpus"
    shutil.copytree(CORPUS_DIR, copy)
    before = snapshot(copy)
    result = certify(f"--implementation={HOSTILE / 'rewrites-corpus'}", *SMALL, f"--cases={copy}")
    after = snapshot(copy)
    assert snapshot(CORPUS_DIR).digest == shipped
    if after.digest == before.digest:  # prevented (a read-only or hidden corpus): the run stands on its own
        assert report_of(tmp_path)["completeness"]["complete"] is True
        return
    report = assert_incomplete(tmp_path, result)
    assert any(name.endswith("invalid-exit-code-above-maximum.toml") for name in report["completeness"]["changed"])
    # The damage outlives the run; the next run on that copy is no longer a run on the shipped corpus.
    again = certify(f"--implementation={REFERENCE}", *SMALL, f"--cases={copy}")
    again.stdout.fnmatch_lines([f"*partial run: *--cases {copy} differs from the shipped corpus*"])
    assert report_of(tmp_path)["options"]["partial"] is True


@pytest.fixture(scope="module")
def forged_name(tmp_path_factory: pytest.TempPathFactory) -> tuple[Certification, Path]:
    """The reference validator under a manifest whose name forges a verdict table, on SMALL in the default sandbox,
    nothing passed through or shown besides: read by the markdown test and by the closed box's."""
    folder = tmp_path_factory.mktemp("forged-name")
    manifest = folder / "acme.toml"
    text = (HOSTILE / "markdown-injection-name.toml").read_text(encoding="utf-8")
    manifest.write_text(text.replace("../reference-validator", str(ROOT / "examples" / "reference-validator")))
    return run_certification(f"--implementation={manifest}", *SMALL, cwd=folder), folder


def test_a_manifest_name_cannot_forge_the_markdown_summary(forged_name: tuple[Certification, Path]) -> None:
    result, folder = forged_name
    assert result.ret == 0
    markdown = (folder / "out" / "summary.md").read_text(encoding="utf-8")
    assert "<!--" not in markdown
    rows = [line for line in markdown.splitlines() if line.startswith("|") and "conforms" in line]
    assert len(rows) == 1 and rows[0].count(" | ") == 10  # the suite's one row, its cells intact
    assert markdown.splitlines()[0].startswith("# ASR conformance: acme \\| implementation \\| role")


@pytest.mark.parametrize("protocol", [(), ("--persistent",)], ids=["oneshot", "persistent"])
def test_control_characters_and_workflow_commands_never_reach_the_terminal(
        certify: Certify, protocol: tuple[str, ...]) -> None:
    result = certify(f"--implementation={HOSTILE / 'control-characters-in-handshake'}", *SMALL, *protocol)
    assert result.ret == 1
    output = result.stdout.str() + result.stderr.str()
    assert "\x1b" not in output and "\x07" not in output and "\r" not in output
    assert not re.search(r"^\s*::", output, re.MULTILINE), "a line would be a GitHub workflow command"
    assert "::error::forged" in output  # shown, defused
    verdicts = [line for line in result.outlines if "verdict: " in line]
    # exactly one line starts with the verdict (a forged one may follow indented, e.g. in the short test
    # summary, which CI=true prints untruncated), and it is the real one
    real = [line for line in verdicts if line.startswith("verdict: ")]
    assert len(real) == 1 and real[0].startswith("verdict: DOES NOT CONFORM")


def test_a_lone_surrogate_rule_neither_kills_a_worker_nor_empties_the_report(certify: Certify, tmp_path: Path) -> None:
    # Under --strict-reasons the named rules fail the case, so the name reaches the failure message and the report.
    result = certify(f"--implementation={HOSTILE / 'lone-surrogate-rule'}", *SMALL, "-n", "2", "--strict-reasons")
    assert result.ret == 1
    assert "crashed" not in result.stdout.str()
    report = report_of(tmp_path)
    assert report["completeness"]["complete"] is True
    assert report["verdicts"][0]["verdict"] == "does-not-conform"
    named = [r["details"].get("rules_named") for r in report["results"] if r["outcome"] == "fail"]
    # A name that is no rule ID (a lone surrogate) is not recorded as a rule; ASR-999 looks like one.
    assert named and all(rules == ["ASR-999"] for rules in named)


def test_files_planted_in_the_report_folder_are_replaced_not_written_through(certify: Certify, tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere.md"
    elsewhere.write_text("untouched")
    (out / "summary.md").symlink_to(elsewhere)
    (out / "badge-reader.json").write_text('{"schemaVersion": 1, "message": "100%", "color": "brightgreen"}')
    result = certify(f"--implementation={HOSTILE / 'kills-its-worker'}", "-m", "corpus", "-k", "valid-exit-code-minimum")
    assert result.ret == 0
    assert elsewhere.read_text() == "untouched"
    assert not (out / "summary.md").is_symlink() and not (out / "badge-reader.json").exists()


@pytest.mark.parametrize("narrowing", [
    ("--deselect", "suite/conformance/test_validator_corpus.py::test_validator_case[validator/ASR-260/valid-exit-code-minimum]"),
    ("--ignore", "suite/conformance/test_producer.py"),
])
def test_deselecting_or_ignoring_tests_makes_the_run_partial(certify: Certify, tmp_path: Path, narrowing: tuple[str, str]) -> None:
    flag, value = narrowing
    result = certify(f"--implementation={REFERENCE}", "-m", "corpus", "-k", "ASR-260", f"{flag}={ROOT / value}")
    result.stdout.fnmatch_lines([f"*partial run: *{flag} *only a full run certifies*"])
    assert flag in " ".join(report_of(tmp_path)["options"]["partial_reasons"])


def test_a_corpus_that_differs_from_the_shipped_one_makes_the_run_partial(certify: Certify, tmp_path: Path) -> None:
    """Both runs are narrowed by ``-k`` (a partial run either way): what differs is the corpus reason."""
    copy = tmp_path / "corpus"
    shutil.copytree(CORPUS_DIR, copy)
    differs = f"--cases {copy} differs from the shipped corpus"
    same = certify(f"--implementation={REFERENCE}", "--cases", str(copy), *SMALL)
    assert same.ret == 0 and same.outcomes.get("passed", 0) >= 2
    reasons = report_of(tmp_path)["options"]["partial_reasons"]
    assert reasons and differs not in reasons  # an identical copy is the shipped corpus
    case = next((copy / "validator" / "ASR-260").glob("invalid-*.toml"))
    case.write_text(case.read_text().replace('verdict = "invalid"', 'verdict = "implementation-defined"\nreference = "reject"'))
    doctored = certify(f"--implementation={REFERENCE}", "--cases", str(copy), *SMALL)
    doctored.stdout.fnmatch_lines([f"*partial run: *{differs}*"])
    assert differs in report_of(tmp_path)["options"]["partial_reasons"]


def _unreadable(folder: Path, baseline: str) -> Path:
    """A baseline no run can read, as the command line names it (relative to the run's folder)."""
    if baseline == "fifo":
        os.mkfifo(folder / "fifo")
    if baseline == "deep.json":
        (folder / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    return Path(baseline)


@pytest.mark.parametrize("baseline", ["/dev/zero", "fifo", "deep.json"])
def test_an_unreadable_baseline_is_refused_naming_the_file(tmp_path: Path, baseline: str,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """What the plugin does with ``--baseline``, in process (in a thread: a fifo must not hang the test); the run
    below shows the refusal ending a run as a usage error."""
    monkeypatch.chdir(tmp_path)
    path = _unreadable(tmp_path, baseline)
    raised: list[BaseException] = []

    def load() -> None:
        try:
            load_baseline(path)
        except BaseException as error:  # whatever it raises is judged below
            raised.append(error)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(60)
    assert raised, "loading the baseline neither ended nor was refused"
    assert isinstance(raised[0], BaselineError), repr(raised[0])
    assert str(raised[0]).startswith(f"{baseline}: the baseline report ")


def test_an_unreadable_baseline_is_a_usage_error_naming_the_file(certify: Certify, tmp_path: Path) -> None:
    baseline = _unreadable(tmp_path, "deep.json")
    result = certify(f"--implementation={REFERENCE}", *SMALL, f"--baseline={baseline}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{baseline}: the baseline report *"])
    assert "RecursionError" not in result.stderr.str()


@pytest.mark.e2e
def test_the_reference_conforms_complete_under_xdist(reference_whole_run: Certification) -> None:
    result = reference_whole_run
    assert result.ret == 0, result.stdout.str()[-3000:]
    result.stdout.fnmatch_lines(["verdict: CONFORMS (fidelity judged by claude-code *)"])
    report = result.report
    assert report["completeness"] == {"complete": True, "reasons": [], "missing": [], "changed": [], "exit_status": 0}
    assert report["options"]["partial"] is False and report["corpus"]["digest"] == snapshot(CORPUS_DIR).digest
    assert {v["verdict"] for v in report["verdicts"]} == {"conforms"}


def test_a_run_killed_outright_leaves_no_earlier_verdict_behind(certify: Certify, tmp_path: Path) -> None:
    """Without xdist the implementation kills pytest itself: nothing can be written, and the last
    run's passing badge must not stay to be read as this run's."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "badge-validator.json").write_text('{"schemaVersion": 1, "message": "100%", "color": "brightgreen"}')
    (out / "report.json").write_text("{}")
    result = certify(f"--implementation={HOSTILE / 'kills-its-worker'}", *SMALL, "--sandbox=none")
    assert result.ret != 0
    assert not (out / "badge-validator.json").exists() and not (out / "report.json").exists()


#: The certification a vendor runs: the default Hypothesis profile (a fresh seed), not the project's fixed one.
DEFAULT_PROFILE = {"ASR_HYPOTHESIS_PROFILE": None}
#: Two Claude Code samples, byte for byte: enough for the fingerprinting converter to recognise, quick to run.
FINGERPRINTED = ("plain-chat.jsonl", "fix-parser-test.jsonl")
#: The producer tests that judge a conversion against its source, on the samples, their disguised copies and their
#: edits: where recognising the samples pays. The other producer tests (damaged input, independence of the machine,
#: the stream's own validity) convert the samples many times over and judge nothing a recogniser changes.
FIDELITY_TESTS = ("-m", "not fuzz", "-k", "test_fidelity or test_follows_source_edit")


@pytest.fixture
def two_samples(tmp_path: Path) -> Path:
    folder = tmp_path / "samples"
    folder.mkdir()
    for name in FINGERPRINTED:
        shutil.copy(ROOT / "examples" / "claude-code-converter" / "samples" / name, folder / name)
    return folder


#: The two hostile converters below, certified side by side in one run (one report column each).
TEXT_RECOGNISERS = ("fingerprints-its-samples", "recognises-texts")


@pytest.fixture(scope="module")
def recognisers(tmp_path_factory: pytest.TempPathFactory) -> Certification:
    """Both converters that recognise what they are judged on, on the same two samples in one run under the
    default profile (a fresh seed, fresh disguised copies): one pytest start-up and collection for both."""
    samples = ROOT / "examples" / "claude-code-converter" / "samples"
    return shared_certification(
        tmp_path_factory, "hostile-recognisers", *(f"--implementation={HOSTILE / name}" for name in TEXT_RECOGNISERS),
        *(f"--inputs={samples / name}" for name in FINGERPRINTED), *FIDELITY_TESTS, "-p", "no:xdist",
        env=DEFAULT_PROFILE)


def column(result: Certification, name: str) -> tuple[list[str], dict[str, set[str]], set[str]]:
    """One implementation of a side-by-side run: its block of the summary, the outcomes of each of its tests
    (by test function) and the rules of its failing results."""
    start = result.outlines.index(next(line for line in result.outlines if line.startswith(f"implementation: {name} ")))
    end = next((i for i in range(start + 1, len(result.outlines)) if not result.outlines[i].startswith("  ")),
               len(result.outlines))
    outcomes: dict[str, set[str]] = {}
    failing: set[str] = set()
    results = [r for r in result.report["results"] if r["implementation"] == name]
    assert results, f"no results of {name}"
    for r in results:
        outcomes.setdefault(r["id"].split("[", 1)[0].removeprefix("producer/"), set()).add(r["outcome"])
        if r["outcome"] == "fail":
            failing.update(r["rules"])
    return result.outlines[start:end], outcomes, failing


@pytest.mark.e2e
def test_a_converter_that_fingerprints_its_samples_does_not_conform(recognisers: Certification) -> None:
    """It converts the samples it recognises honestly and passes test_fidelity on them; the disguised copies
    and the disguised source edits it cannot recognise show the user messages it drops (ASR-157)."""
    result = recognisers
    assert "verdict: DOES NOT CONFORM" in result.text, result.text[-3000:]
    result.stdout.fnmatch_lines(["  fingerprints-its-samples producer: DOES NOT CONFORM*"])
    assert isinstance(result.report["hypothesis"]["seed"], int), "the default profile: a fresh seed"
    block, outcomes, failing = column(result, "fingerprints-its-samples")
    assert any(line.startswith("  rules with failing cases: ASR-157") for line in block), block
    assert outcomes["test_fidelity"] == {"pass"}, "on the samples themselves it behaves"
    assert outcomes["test_fidelity_disguised"] == {"fail"}
    assert "fail" in outcomes["test_follows_source_edit"]
    assert failing == {"ASR-157"}


@pytest.mark.e2e
def test_the_honest_converter_conforms_on_the_same_samples(certify: Certify, two_samples: Path) -> None:
    converter = ROOT / "examples" / "claude-code-converter" / "asr-from-claude-code"
    result = certify(f"--implementation={converter}", f"--inputs={two_samples}", *FIDELITY_TESTS, "-p", "no:xdist",
                     env=DEFAULT_PROFILE)
    assert result.ret == 0, result.text[-3000:]
    assert "verdict: CONFORMS" in result.text
    assert {r["outcome"] for r in result.report["results"] if "fidelity" in r["id"]} == {"pass"}


@pytest.mark.e2e
def test_a_converter_that_recognises_texts_does_not_conform(recognisers: Certification) -> None:
    """It converts honestly when a prompt is a sample's or none reads as English, and drops the user messages
    of anything else: each run's disguised copies (fresh seeds, words swapped) show it (ASR-157), so one run
    per session is a fresh trial of that claim. That it passes on copies that keep their texts is shown in
    fidelity/test_disguised_texts.py."""
    assert "verdict: DOES NOT CONFORM" in recognisers.text, recognisers.text[-3000:]
    recognisers.stdout.fnmatch_lines(["  recognises-texts producer: DOES NOT CONFORM*"])
    _, outcomes, failing = column(recognisers, "recognises-texts")
    assert outcomes["test_fidelity"] == {"pass"}, "on the samples themselves it behaves"
    assert outcomes["test_fidelity_disguised"] == {"fail"}
    assert failing == {"ASR-157"}


def test_a_passed_secret_reaches_no_report_and_the_widening_is_named_everywhere(certify: Certify,
                                                                                 tmp_path: Path) -> None:
    """A validator given GITHUB_TOKEN (--pass-env) names its value as a rule, in its messages and on stderr
    of every case: the value is in no report, no JUnit file, no console line; the name is, as a widening of
    the certificate (header, report.json, summary.md, report.html, beside the verdict, on the badge)."""
    token = f"ghp_{os.urandom(12).hex()}"
    result = certify(f"--implementation={HOSTILE / 'names-its-secrets-as-rules'}", *SMALL, "--pass-env=GITHUB_TOKEN",
                     "--junitxml=out/junit.xml", "-rA", env={"GITHUB_TOKEN": token, **DEFAULT_PROFILE})
    written = {path.name: path.read_text(encoding="utf-8") for path in (tmp_path / "out").iterdir() if path.is_file()}
    assert {"report.json", "summary.md", "report.html", "junit.xml", "badge-validator.json"} <= written.keys()
    assert token not in result.text + result.stderr.str()
    assert not [name for name, text in written.items() if token in text or token[4:] in text]
    report = report_of(tmp_path)
    named = [r["details"].get("rules_named") for r in report["results"] if r["details"].get("rules_named")]
    assert all(rule.startswith("ASR-") for rules in named for rule in rules), named
    assert report["options"]["pass_env"] == ["GITHUB_TOKEN"]
    assert report["options"]["widened"] == ["pass_env GITHUB_TOKEN"]
    note = "certified with a widened sandbox: pass_env GITHUB_TOKEN"
    assert note in written["summary.md"].replace("\\", "") and note in written["report.html"]
    assert "widened sandbox: pass_env GITHUB_TOKEN" in json.loads(written["badge-validator.json"])["message"]
    assert "asr-conformance: widened sandbox: pass_env GITHUB_TOKEN" in result.text
    verdict = next(index for index, line in enumerate(result.outlines) if line.startswith("verdict: "))
    assert result.outlines[verdict + 1] == note


def test_a_closed_box_names_no_widening(forged_name: tuple[Certification, Path]) -> None:
    """The control of the test above: a run that passes nothing through and shows nothing more names no widening."""
    result, folder = forged_name
    assert result.ret == 0, result.text[-2000:]
    report = report_of(folder)
    assert report["options"]["widened"] == [] and report["options"]["pass_env"] == []
    assert "widened" not in result.text and "widened" not in (folder / "out" / "summary.md").read_text()


def test_an_interpreter_named_through_the_root_does_not_conform(certify: Certify, tmp_path: Path) -> None:
    """The hostile validator whose first line is ``#!//bin/sh``, certified as root in the default sandbox: it
    reads no root file and finds no answer key, so it accepts the invalid case and does not conform.  (Its
    own working directory's path, empty, is all it finds of pytest's temporary folders.)"""
    secret = Path("/root") / f"asr-hostile-secret-{os.urandom(8).hex()}"
    secret.write_text("ROOTSECRET\n")
    secret.chmod(0o600)
    try:
        result = certify(f"--implementation={HOSTILE / 'root-through-its-shebang'}", *SMALL)
    finally:
        secret.unlink()
    assert result.ret == 1 and "verdict: DOES NOT CONFORM" in result.text, result.text[-3000:]
    assert "ROOTSECRET" not in result.text and "FOUND the case" not in result.text
    assert "FOUND git history" not in result.text
