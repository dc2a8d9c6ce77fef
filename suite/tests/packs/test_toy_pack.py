"""A third-party format pack end to end: the toy pack installed beside the suite, certifying toy converters.

Each run is a real certification in a subprocess whose ``PYTHONPATH`` holds the pack
(``toy_site``); the honest converter must conform and name its judge, each seeded bug must
fail with its rule, and broken packs must never pass a converter or be blamed on it."""

from __future__ import annotations

import json

import pytest
from certifying import Certification, run_certification
from hypothesis import Phase, given, settings
from toy_site import CONVERTERS, SAMPLES, TOY, toy_site

from asr_conformance.harness.judging.fidelity import judge_fidelity, judge_mutation
from asr_conformance.harness.judging.producer import output_problems
from asr_conformance.packs.registry import Packs
from asr_conformance.vocabulary.schemas import check_report

#: The toy generator's features, one fuzz property each (examples/toy-pack/src/asr_toy_pack/generator.py).
TOY_FEATURES = ("calls", "dangling", "exit-codes", "plain", "result-times")


def certify(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, converter: str, *args: str,
            pack: str | None = None, group: str = "asr_conformance.format_packs") -> tuple[Certification, dict]:
    site = toy_site(pytester.path, pack, group)
    monkeypatch.setenv("PYTHONPATH", str(site))
    result = run_certification(
        f"--implementation={CONVERTERS / converter}", f"--inputs={SAMPLES}", "-p", "no:xdist",
        "--asr-shrink-time=1", f"--report-dir={pytester.path / 'reports'}", *args, cwd=pytester.path)
    report = json.loads((pytester.path / "reports" / "report.json").read_text(encoding="utf-8"))
    assert check_report(report) is None
    return result, report


def producer_verdict(report: dict) -> dict:
    return next(v for v in report["verdicts"] if v["role"] == "producer")


#: Every producer test on the samples, and of the properties the one of tool calls: a converter that drops calls
#: fails it as it fails the others, each shrinking to its own counterexample; the honest converter passes it (and
#: every feature's transcripts in process, below).
WITH_ONE_PROPERTY = ("-k", "not test_converts_generated_transcripts or calls")


def test_the_honest_toy_converter_conforms_judged_by_the_toy_pack(pytester, monkeypatch) -> None:
    result, report = certify(pytester, monkeypatch, "toy-to-asr", *WITH_ONE_PROPERTY)
    text = result.stdout.str()
    assert result.ret == 0, text[-3000:]
    assert "verdict: CONFORMS (fidelity judged by toy-pack 0.1.0 (third-party))" in text
    judge = producer_verdict(report)["judged_by"]
    assert [(j["name"], j["builtin"], j["distribution"], j["format"]) for j in judge] == \
        [("toy-pack", False, "asr-toy-pack", "toy-json")]
    assert len(judge[0]["sha256"]) == 64
    fuzzed = [r for r in report["results"] if r["kind"] == "fuzz"]
    assert fuzzed and all(r["outcome"] == "pass" for r in fuzzed)  # the pack's generator ran
    summary = (pytester.path / "reports" / "summary.md").read_text(encoding="utf-8")
    assert "fidelity judged by toy-pack 0.1.0 (third-party) from asr-toy-pack" in summary


#: Transcripts per feature, as many as a property of the project's fixed profile draws.
FAITHFUL_BUDGET = 8


@pytest.mark.parametrize("feature", sorted(TOY_FEATURES))
def test_the_honest_toy_converter_passes_every_generated_transcript_and_source_edit(monkeypatch, feature: str) -> None:
    """What every fuzz property of the honest run asks, in process: the toy generator's transcripts of each feature
    converted by the toy converter's own conversion, valid and faithful to the toy pack's witness, and following
    each of its source edits."""
    monkeypatch.syspath_prepend(str(TOY / "src"))
    monkeypatch.syspath_prepend(str(CONVERTERS))
    import asr_toy_pack
    from asr_toy_pack.generator import FEATURES, transcripts
    from toy_to_asr import Refused, convert

    def stream_of(data: bytes) -> bytes | str:
        try:
            return b"".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
                            for r in convert(data, None))
        except Refused as why:
            return f"refused: {why}"

    assert set(TOY_FEATURES) == set(FEATURES)
    pack = Packs.of(asr_toy_pack.PACK).for_format("toy-json")
    assert pack is not None and pack.pack.edits
    drawn: list[bytes] = []

    @settings(max_examples=FAITHFUL_BUDGET, derandomize=True, database=None, deadline=None, phases=[Phase.generate])
    @given(transcripts(feature))
    def collect(transcript) -> None:
        drawn.append(transcript.data())

    collect()
    assert len(drawn) == FAITHFUL_BUDGET
    for data in drawn:
        stream = stream_of(data)
        assert isinstance(stream, bytes) and output_problems(stream) == [], (stream, data)
        judged = judge_fidelity(data, stream, Packs.of(pack))
        assert judged.not_checked is None and judged.findings == [], (judged, data)
        assert judged.judge is not None and judged.judge.name == "toy-pack"
        for edit in pack.pack.edits:
            assert judge_mutation(edit, pack, data, stream, stream_of).findings == [], (edit.name, data)


def test_a_converter_that_drops_every_second_call_fails_under_fidelity_and_fuzzing(pytester, monkeypatch) -> None:
    """One run for both: its failures of the producer tests on the samples and of the fuzz property, each told
    apart by kind."""
    # Shrunk for 0.2 s: the failure's rule is read, not its size.
    result, report = certify(pytester, monkeypatch, "toy-drops-every-second-call", *WITH_ONE_PROPERTY,
                             "--asr-shrink-time=0.2")
    assert result.ret == 1 and "verdict: DOES NOT CONFORM (fidelity judged by toy-pack" in result.stdout.str()
    failed = [r for r in report["results"] if r["outcome"] == "fail"]
    assert {r["kind"] for r in failed} == {"producer", "fuzz"}, [r["id"] for r in failed]
    for kind in ("producer", "fuzz"):
        of_kind = [r for r in failed if r["kind"] == kind]
        assert of_kind and any("ASR-157" in r["rules"] for r in of_kind), kind


def test_a_kind_set_from_the_tool_name_fails_when_the_pack_says_the_agent_publishes_no_mapping(pytester,
                                                                                             monkeypatch) -> None:
    result, report = certify(pytester, monkeypatch, "toy-kind-from-name", "-m", "not fuzz")
    failed = [r for r in report["results"] if r["outcome"] == "fail"]
    assert result.ret == 1 and {rule for r in failed for rule in r["rules"]} == {"ASR-253"}


def test_a_hollow_pack_fails_a_faithful_converter_instead_of_passing_it(pytester, monkeypatch) -> None:
    # The fidelity tests only (of the input and its disguised copy): what the hollow judge decides.
    result, report = certify(pytester, monkeypatch, "toy-to-asr", "-m", "not fuzz", "-k", "test_fidelity",
                             pack="broken_toy_packs:HOLLOW")
    failed = [r for r in report["results"] if r["outcome"] == "fail" and "fidelity" in r["test"]]
    assert result.ret == 1 and failed, result.stdout.str()[-3000:]
    assert "ASR-250" in {rule for r in failed for rule in r["rules"]}
    assert "fidelity judged by hollow-toy-pack 0.1.0 (third-party)" in result.stdout.str()


#: The producer tests that call the pack; with the fuzz property of plain chats (the cheapest transcript to draw)
#: for the packs that fail on any input: the fuzz path reads through the same guarded call, a hang (its thread left
#: running) is a case it must survive, and a pack's first failure ends the property at once. (The malformed pack
#: fails only on a transcript with calls, which plain chats never hold.)
JUDGED, JUDGED_AND_FUZZED = "fidelity or source_edit", "fidelity or source_edit or plain"


@pytest.mark.parametrize(("pack", "said", "selection"), [
    ("broken_toy_packs:RAISING", "raised RuntimeError in reading the input: the toy reader broke", JUDGED_AND_FUZZED),
    ("broken_toy_packs:HANGING", "did not finish reading the input within 1 s (hung)", JUDGED_AND_FUZZED),
    ("broken_toy_packs:MALFORMED", "gave SourceFacts.calls[0] as dict, not NativeCall (malformed facts)", JUDGED),
])
def test_a_broken_pack_is_the_suites_error_and_the_run_is_incomplete(pytester, monkeypatch, pack: str,
                                                                      said: str, selection: str) -> None:
    result, report = certify(pytester, monkeypatch, "toy-to-asr", "-k", selection, pack=pack)
    text = result.stdout.str()
    name = pack.split(":")[1].lower()
    assert result.ret == 1 and "verdict: INCOMPLETE" in text, text[-3000:]
    assert f"fidelity judge {name}-toy-pack 0.1.0 (third-party, broken-toy-packs) {said}" in text
    verdict = producer_verdict(report)
    assert verdict["verdict"] == "incomplete" and verdict["judge_errors"]
    assert not [r for r in report["results"] if r["outcome"] in ("fail", "crash")]
    assert "Traceback" not in text
    fuzzed = [r for r in report["results"] if r["kind"] == "fuzz"]
    assert bool(fuzzed) == (selection == JUDGED_AND_FUZZED), [r["id"] for r in fuzzed]
    assert all(r["outcome"] == "skipped" and said in r["details"]["suite_error"] for r in fuzzed), fuzzed


def test_built_in_packs_only_leaves_a_third_party_format_unchecked(pytester, monkeypatch) -> None:
    result, report = certify(pytester, monkeypatch, "toy-to-asr", "-m", "not fuzz", "--builtin-packs-only")
    text = result.stdout.str()
    assert "verdict: PARTIAL: conforms on what was checked; not checked: fidelity not checked" in text, text[-3000:]
    assert result.ret == 10  # a partial verdict has its own exit status, never 0
    assert "third-party packs not used (built-in packs only): toy-pack 0.1.0" in text
    assert report["options"]["builtin_packs_only"] is True
    verdict = producer_verdict(report)
    assert "judged_by" not in verdict and verdict["verdict"] == "partial"
    # The verdict names the installed pack the option ignored.
    assert any("--builtin-packs-only ignored the installed pack(s) toy-pack 0.1.0" in why
               for why in verdict["unchecked"]), verdict


def test_a_witness_only_pack_is_judged_but_its_format_is_not_fuzzed(pytester, monkeypatch) -> None:
    result, report = certify(pytester, monkeypatch, "toy-to-asr", "--source-format=toy-json",
                             pack="asr_toy_pack.witness:ToyWitness", group="asr_conformance.witnesses")
    text = result.stdout.str()
    assert "entry-point group is deprecated" in text
    assert "not fuzzed: no generator for toy-json" in text, text[-3000:]
    assert producer_verdict(report)["not_fuzzed"] == [
        "not fuzzed: no generator for toy-json (install a pack for that format that has one)"]
    assert "fidelity judged by toy (third-party)" not in text and "fidelity judged by toy 0.1.0 (third-party)" in text
