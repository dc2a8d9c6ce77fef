"""Swap the words of a transcript's texts, so that no prompt, reply or tool output can be matched to a sample.

A converter could recognise the suite's inputs by what they say (a sample's prompts) and behave
only on those. The disguise therefore rewrites the texts too, word for word:

* a *text* is a JSON string value of a member that holds what a person typed, a model wrote or a tool
  printed (``TEXT_MEMBERS``: ``text``, ``content``, ``command``, ``output``, ``file_path``...);
* each word of three letters or more in a text, unless it is one of the common words of
  ``vocabulary.words.COMMON`` (articles, pronouns, keywords, command names) or also stands anywhere
  outside a text (a key, a tool name, a type, a model), is replaced by a word of the same length
  (from ``vocabulary.words.CONTENT``, else made up), the same everywhere in the file, case kept
  (``parse``, ``Parse``, ``PARSE``; ``parseEmpty`` word by word); a run holding a digit is kept;
* the words of a label that opens a line of a text (``Exit Code:``, ``Wall time:``) are kept: the
  framing an agent prints around a tool's output;
* a text that opens the way an agent's own injected text does (a tag, ``[Request interrupted``,
  ``(no content)``, ``User has answered``, ``Caveat:``, embedded JSON) is kept whole, and its words
  count as words outside a text.

So prose stays prose (its glue words kept, its content words swapped for words), code stays code
(``snake_case`` and ``camelCase`` shapes, keywords and punctuation kept), paths stay paths and
commands stay commands. Lengths are kept. ``Words.swap`` applies the same map to any decoded string,
which is how the witness's facts of the original are renamed to compare with the copy's.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field

from asr_conformance.vocabulary.words import COMMON, by_length, made_up

#: Members whose string values are text: what a person typed, a model wrote, a tool was given or printed.
TEXT_MEMBERS = frozenset({
    "text", "content", "command", "cmd", "description", "prompt", "old_string", "new_string", "output", "stdout",
    "stderr", "thinking", "summary", "toolUseResult", "query", "pattern", "file_path", "filePath", "path",
    "notebook_path", "display", "displayContent", "message", "result", "aggregated_output", "formatted_output",
    "question", "answer", "title", "explanation", "plan", "step", "last_agent_message", "reason", "old_str",
    "new_str", "code", "body", "input", "resultDisplay", "oldString", "newString", "originalFile", "userModified",
    "error", "details", "response", "llmContent", "returnDisplay", "thought", "subject",
})
#: Openings of text an agent writes itself, which a witness may recognise by its words: kept whole.
KEPT_OPENINGS = (
    "<", "{", "[", "(no content)", "User has answered", "Caveat:", "# AGENTS.md", "Warmup",
    "The user doesn't want to proceed",  # Claude Code's refusal at its permission prompt
)
#: A JSON string (its body in group 1), and whether a colon follows (a key).
_STRING = re.compile(r'"([^"\\]*+(?:\\.[^"\\]*+)*+)"(\s*:)?')
#: In a raw JSON string body: an escape (kept) or a run of letters and digits.
_RAW_TOKEN = re.compile(r"(\\(?:u[0-9a-fA-F]{4}|.))|[A-Za-z0-9]++")
#: In a decoded string: a run of letters and digits.
_RUN = re.compile(r"[A-Za-z0-9]++")
#: The words of a run: ``HTTPServer`` is ``HTTP`` and ``Server``; ``parseEmpty`` is ``parse`` and ``Empty``.
_SUBWORD = re.compile(r"[A-Z]++(?![a-z])|[A-Z]?[a-z]++|[A-Z](?=[A-Z][a-z])")
#: An escape of an ASCII letter or digit: such a text is kept (its raw and decoded words would differ).
_ESCAPED_ALNUM = re.compile(r"\\u00(?:3[0-9]|[46][1-9a-fA-F]|[57][0-9aA])")
#: A label that opens a line: up to three words, then a colon.
_LABEL = re.compile(r"(?m)^[ \t]*((?:[A-Za-z][A-Za-z0-9]*[ \t]?){1,3}):")
#: Words shorter than this are kept (``a``, ``of``, ``id``: they identify nothing).
SHORTEST = 3


@dataclass
class Words:
    """The drawn word map: lower-case word to its same-length replacement; empty keeps every text."""

    base: dict[str, str] = field(default_factory=dict)
    _runs: dict[str, str] = field(default_factory=dict, repr=False)

    def __bool__(self) -> bool:
        return bool(self.base)

    def swap(self, text: str) -> str:
        """Any decoded string with its mapped words swapped (a fact the witness read)."""
        return _RUN.sub(self._run, text) if self.base else text

    def swap_json(self, text: str) -> str:
        """The file's text with the words of every text value swapped; keys and other values as they were."""
        if not self.base:
            return text
        out: list[str] = []
        done = 0
        for start, end in _texts(text):
            out += [text[done:start], _RAW_TOKEN.sub(self._raw, text[start:end])]
            done = end
        _last.clear()  # the file's text is not kept past its disguise
        return "".join(out) + text[done:]

    def _raw(self, match: re.Match[str]) -> str:
        return match.group(0) if match.group(1) is not None else self._run(match)

    def _run(self, match: re.Match[str]) -> str:
        run = match.group(0)
        new = self._runs.get(run)
        if new is None:
            new = run if any(c.isdigit() for c in run) else _SUBWORD.sub(self._word, run)
            self._runs[run] = new
        return new

    def _word(self, match: re.Match[str]) -> str:
        word = match.group(0)
        new = self.base.get(word.lower())
        if new is None:
            return word
        if word.isupper() and len(word) > 1:
            return new.upper()
        return new.capitalize() if word[0].isupper() else new


def draw_words(text: str, rng: random.Random) -> Words:
    """A word map for the file's text: every word of its texts that says something, to a fresh one."""
    kept: set[str] = set(COMMON)
    said: set[str] = set()
    for body, is_text in _strings(text):
        if is_text:
            said.update(_runs_of(body))
            kept.update(_label_words(body))
        else:
            kept.update(_words_of(_decoded(body)))
    bases = sorted({w.lower() for run in said if not any(c.isdigit() for c in run)
                    for w in _SUBWORD.findall(run)} - kept)
    bases = [b for b in bases if len(b) >= SHORTEST]
    pools = by_length(frozenset(kept))
    for pool in pools.values():
        rng.shuffle(pool)
    taken = set(kept)
    base: dict[str, str] = {}
    for word in bases:
        pool = pools.get(len(word), [])
        new = pool.pop() if pool else made_up(len(word), rng)
        while new in taken:
            new = pool.pop() if pool else made_up(len(word), rng)
        taken.add(new)
        base[word] = new
    return Words(base)


def _label_words(body: str) -> set[str]:
    """The words of the labels that open a line of a text and end in a colon (``Exit Code:``, ``Wall time:``,
    ``Process Group PGID:``): the framing an agent prints around a tool's output, which a converter may
    read by its words and which says nothing of a sample."""
    if ":" not in body:
        return set()
    return {w for label in _LABEL.findall(_decoded(body)) for w in _words_of(label)}


def _runs_of(body: str) -> list[str]:
    return [m.group(0) for m in _RAW_TOKEN.finditer(body) if m.group(1) is None]


def _words_of(text: str) -> set[str]:
    return {w.lower() for run in _RUN.findall(text) for w in _SUBWORD.findall(run)}


def _decoded(body: str) -> str:
    if "\\" not in body:
        return body
    try:
        value = json.loads(f'"{body}"')
    except ValueError:
        return re.sub(r"\\(?:u[0-9a-fA-F]{4}|.)", " ", body)
    return value if isinstance(value, str) else body


def _chunks(text: str) -> list[tuple[int, int]]:
    """The spans that are JSON documents: the whole text when it is one (a pretty-printed session), else each
    line that is one (JSON Lines). Text outside them is never a text value."""
    try:
        json.loads(text)
        return [(0, len(text))]
    except ValueError:
        pass
    spans: list[tuple[int, int]] = []
    start = 0
    for line in text.split("\n"):
        end = start + len(line)
        try:
            if line.strip():
                json.loads(line)
                spans.append((start, end))
        except ValueError:
            pass
        start = end + 1
    return spans


#: The last text scanned and its spans: drawing the words and swapping them scan the same text.  A pure cache
#: of one scan, kept by the text object itself and emptied after each disguise (the text is not kept past it).
_last: list[tuple[str, list[tuple[int, int, bool]]]] = []


def _scan(text: str) -> list[tuple[int, int, bool]]:
    """Every JSON string body in the documents of the text: (start, end, is a text value)."""
    if _last and _last[0][0] is text:
        return _last[0][1]
    found = _scan_once(text)
    _last[:] = [(text, found)]
    return found


def _scan_once(text: str) -> list[tuple[int, int, bool]]:
    found: list[tuple[int, int, bool]] = []
    covered = 0
    for chunk_start, chunk_end in _chunks(text):
        if chunk_start > covered:
            found.append((covered, chunk_start, False))  # not JSON: every word there is kept
        key, key_end = None, -1
        for match in _STRING.finditer(text, chunk_start, chunk_end):
            if match.group(2) is not None:
                key, key_end = match.group(1), match.end()
                found.append((match.start(1), match.end(1), False))
                continue
            body = match.group(1)
            is_text = (key in TEXT_MEMBERS and key_end >= 0 and not text[key_end:match.start()].strip()
                       and _swappable(body))
            found.append((match.start(1), match.end(1), is_text))
            key, key_end = None, -1
        covered = chunk_end
    if covered < len(text):
        found.append((covered, len(text), False))
    return found


def _strings(text: str) -> list[tuple[str, bool]]:
    return [(text[start:end], is_text) for start, end, is_text in _scan(text)]


def _texts(text: str) -> list[tuple[int, int]]:
    return [(start, end) for start, end, is_text in _scan(text) if is_text]


def _swappable(body: str) -> bool:
    head = _decoded(body[:200]).lstrip()
    return bool(head) and not head.startswith(KEPT_OPENINGS) and _ESCAPED_ALNUM.search(body) is None
