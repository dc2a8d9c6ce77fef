"""``asr-corpus check``: lint the case corpus and compare it with the reference.

Like ``jsonschema_suite check``: the corpus has its own tests.  For each case
it reports a problem when the metadata does not load, or when the reference
validator's verdict differs from the case's (for an invalid case, when the
reference names a rule the case does not list, or none it lists).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from asr_conformance import CORPUS_DIR
from asr_conformance.harness.judging.views import check_partial_view, check_view, compare_views
from asr_conformance.reference.checks import validate_path
from asr_conformance.reference.diagnostics import StreamDiagnostics
from asr_conformance.reference.reader import UnreadableStream, read_view
from asr_conformance.vocabulary.cases import Case, CorpusError, iter_cases, orphan_streams


def disagreement(case: Case) -> str | None:
    """Why the reference disagrees with the case, or None when it agrees."""
    outcome = validate_path(case.stream)
    errors = outcome.rules()
    if case.verdict == "valid":
        if errors:
            return f"expected valid, the reference rejects it: {_explain(outcome)}"
        return None
    if case.verdict == "invalid":
        if not errors:
            return "expected invalid, the reference accepts it"
        extra = errors - set(case.rules)
        if extra:
            return (f"not minimal: the reference also reports {', '.join(sorted(extra))} "
                    f"(case lists {', '.join(case.rules)}): {_explain(outcome)}")
        return None
    accepted = not errors
    if case.reference == "accept" and not accepted:
        return f"the metadata says the reference accepts it, but it rejects it: {_explain(outcome)}"
    if case.reference == "reject" and accepted:
        return "the metadata says the reference rejects it, but it accepts it"
    return None


def reader_disagreement(case: Case) -> str | None:
    """For a reader case: what is wrong with its expected view, or where the reference
    reader's view differs from it; None when they agree."""
    expected = case.view()
    problems = check_partial_view(expected, case.partial)
    if problems:
        return "the expected view breaks the view schema: " + "; ".join(problems[:3])
    try:
        view = read_view(case.stream)
    except (OSError, UnreadableStream) as error:
        return f"the reference reader gives no view: {error}"
    problem = check_view(view)
    if problem:
        return f"the reference reader's view breaks the view schema: {problem}"
    differences = compare_views(expected, view, case.partial)
    if differences:
        return "the reference reader disagrees: " + "; ".join(f"{d.path}: {d.message}" for d in differences[:3])
    return None


def orphan_views(corpus: Path) -> list[Path]:
    """Expected-view files with no case metadata beside them (a lint)."""
    views = sorted(corpus.rglob("*.view.json"))
    return [v for v in views if not v.with_name(v.name.removesuffix(".view.json") + ".toml").is_file()]


def _explain(outcome: StreamDiagnostics) -> str:
    return "; ".join(f"line {d.line}: {d.rule}: {d.message}" for d in outcome.errors[:3])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="asr-corpus", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["check", "list"])
    parser.add_argument("--corpus", type=Path, default=CORPUS_DIR, help="corpus folder (default: %(default)s)")
    options = parser.parse_args(argv)
    problems = 0
    if not options.corpus.is_dir():
        print(f"asr-corpus: {options.corpus}: no such corpus folder", file=sys.stderr)
        return 2
    try:
        cases = list(iter_cases(options.corpus))
    except CorpusError as error:
        print(f"asr-corpus: {error}", file=sys.stderr)
        return 2
    if not cases:  # a check of nothing is no pass
        print(f"asr-corpus: {options.corpus}: no case found (a case is a .jsonl stream with a .toml beside it)",
              file=sys.stderr)
        return 1
    if options.command == "list":
        for case in cases:
            print(f"{case.id}\t{case.verdict}\t{','.join(case.rules)}")
        return 0
    for orphan in orphan_streams(options.corpus):
        print(f"{orphan}: stream without metadata ({orphan.with_suffix('.toml').name} is missing)")
        problems += 1
    for orphan in orphan_views(options.corpus):
        print(f"{orphan}: expected view without a case (no .toml beside it)")
        problems += 1
    for case in cases:
        prefix = case.id.rsplit("/", 1)[-1].split("-", 1)[0]
        expected_prefix = {"valid": "valid", "invalid": "invalid", "implementation-defined": "impl"}[case.verdict]
        if prefix != expected_prefix:
            print(f"{case.id}: file name should start with '{expected_prefix}-' for verdict {case.verdict}")
            problems += 1
        why = disagreement(case)
        if why is None and case.expected_view is not None:
            why = reader_disagreement(case)
        if why:
            print(f"{case.id}: {why}")
            problems += 1
    print(f"{len(cases)} case(s), {problems} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
