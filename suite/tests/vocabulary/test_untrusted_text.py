"""Text an implementation controls is neutralized for each sink: JSON, the terminal and CI logs, Markdown."""

from __future__ import annotations

import json

import pytest

from asr_conformance.vocabulary.untrusted import (
    clean_value,
    code_span,
    markdown_text,
    needs_terminal_cleaning,
    no_surrogates,
    terminal_block,
    terminal_line,
)


def test_lone_surrogates_become_replacement_characters_everywhere() -> None:
    value = {"\ud800": ["a\udfff", {"b": "\ud83d"}], "n": 1}
    cleaned = clean_value(value)
    json.dumps(cleaned, ensure_ascii=False).encode("utf-8")
    assert cleaned == {"\ufffd": ["a\ufffd", {"b": "\ufffd"}], "n": 1}
    assert no_surrogates("😀") == "😀"  # a real pair is one character, not a surrogate


def test_deep_values_are_cut_not_recursed() -> None:
    deep: list = []
    for _ in range(10_000):
        deep = [deep]
    assert "nested too deeply" in json.dumps(clean_value(deep))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("\x1b[32mverdict: CONFORMS\x1b[0m", "verdict: CONFORMS"),
        ("\x1b]0;title\x07name", "name"),
        ("a\rb", "a\\x0db"),
        ("bell\x07", "bell\\x07"),
        ("rtl\u202eevil", "rtl\\u202eevil"),
        ("\x9b31mred", "red"),
    ],
)
def test_terminal_lines_drop_escapes_and_show_controls(text: str, expected: str) -> None:
    assert terminal_line(text) == expected


def test_workflow_commands_are_defused_on_every_line() -> None:
    block = terminal_block("ok\n::error::forged\n  ::set-output name=a::b\nnot::a command")
    assert block.splitlines() == ["ok", "\\::error::forged", "  \\::set-output name=a::b", "not::a command"]
    assert terminal_line("name\n::error::x") == "name\\n::error::x"
    assert needs_terminal_cleaning("::warning::x") and not needs_terminal_cleaning("plain\ttext\n")


def test_markdown_text_is_one_inert_line() -> None:
    text = markdown_text("a\n| x | ✅ |\n<!-- hide `code` *b* [l](u)")
    assert "\n" not in text and "<" not in text
    assert text == "a \\| x \\| ✅ \\| &lt;!-- hide \\`code\\` \\*b\\* \\[l\\](u)"


def test_code_spans_use_a_longer_fence_than_the_text() -> None:
    assert code_span("a ``b`` c") == "```a ``b`` c```"
    assert code_span("`x`") == "`` `x` ``"
    assert code_span("one\ntwo") == "`one two`"
