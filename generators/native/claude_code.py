"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``), generated.

Each transcript is built line by line as Claude Code writes one: user and assistant lines on a
``uuid``/``parentUuid`` chain with ``sessionId``, ``timestamp``, ``version``, ``cwd``; a model
response split over several lines that share ``message.id``; ``tool_use`` blocks with ``toolu_``
IDs answered by ``tool_result`` blocks beside a ``toolUseResult``. On top of a small realistic
session, ``transcripts(feature)`` writes one adversarial feature (duplicate IDs, dangling calls,
orphan results, huge integers, compaction, ...), so that a producer meets, in a few lines each,
the shapes that real transcripts hold rarely. IDs come from one drawn seed and a counter, so
they are unique unless a feature repeats one on purpose.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from asr_conformance.generators.native.common import (
    Clock,
    NativeTranscript,
    awkward_text,
    clock,
    dumps,
    project_path,
    prompt_text,
    reply_text,
    tool_output,
    unicode_text,
    version,
    words,
)
from asr_conformance.generators.native.common import sentence as natural_sentence

FORMAT = "claude-code-jsonl"
VARIANTS: dict[str, str] = {
    "session": "a main session file (<session>.jsonl): the person's prompts, the model's responses, tool calls and results",
}
FEATURES: dict[str, str] = {
    "plain": "text only: prompts and answers, no tool calls",
    "calls": "tool calls one after another (Bash, Read, Edit, Grep, ...), each with its result and toolUseResult",
    "parallel": "one response with several tool_use blocks, one per line; results in one line or one line each",
    "duplicate-ids": "two tool_use blocks that carry the same native ID (a retried response)",
    "dangling": "a tool call with no result (the session ended or was resumed before it finished)",
    "interrupted": "a call rejected or interrupted by the person (is_error) and the [Request interrupted] marker",
    "orphans": "a tool_result whose tool_use_id no call in the file has (a resumed session's first lines)",
    "errors": "failed tools: is_error true, Exit code N, <tool_use_error> text",
    "empty-output": "results with empty text, an empty list or no content at all",
    "arguments": "awkward arguments: integers past 2**64, non-JSON text, deep nesting, unicode keys",
    "compaction": "a compact_boundary system line and the compaction summary as an isCompactSummary user line",
    "questions": "AskUserQuestion calls: answered (toolUseResult.answers), declined or never answered",
    "subagent": "a Task call, agent_progress lines copying the subagent's calls, a result with totalDurationMs",
    "permission-modes": "permission-mode lines and permissionMode on prompts, changing mid-session",
    "meta": "lines that are not conversation: isMeta reminders, command echo, system, snapshots, queue operations",
    "version-upgrade": "the version field changes mid-session (Claude Code updated between turns)",
    "durations": "toolUseResult members that record how long a tool ran (durationMs, totalDurationMs)",
    "code-caller": "a tool_use run by a code-execution tool (caller type code_execution with its tool_id)",
}
#: The feature that draws several of the others into one transcript.
MIXED = "mixed"

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
MODELS = ("claude-sonnet-4-5-20250929", "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001")
MODES = ("default", "plan", "acceptEdits", "bypassPermissions")
INTERRUPTED = "[Request interrupted by user]"
INTERRUPTED_TOOL = "[Request interrupted by user for tool use]"
REJECTED = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file "
            "edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to "
            "tell you how to proceed.")
#: The refusal when the person typed words for the agent; the words follow it.
REJECTED_WITH_WORDS = ("The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was "
                       "a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user "
                       "said:\n")
CLAUDE_LINE_TYPES = frozenset({
    "user", "assistant", "system", "summary", "progress", "file-history-snapshot", "queue-operation",
    "permission-mode", "attachment", "custom-title", "last-prompt",
})
#: The releases whose transcripts have this shape (major, minor, lowest and highest patch): 2.0.x and 2.1.x.
#: Callers of tool uses are recorded from 2.1.30 on (``Session.call``).
VERSIONS = ((2, 0, 0, 77), (2, 1, 0, 60))
CLAUDE_KEYS = ("sessionId", "uuid", "leafUuid", "messageId", "parentUuid", "isSidechain")

#: Text a person or a model would write, and text that converters like to clean.
#: Mostly word-level prose, code, paths, commands and errors (``common``); now and then anything Unicode holds.
sentence = natural_sentence()
prose = st.one_of(prompt_text(), reply_text(), awkward_text, unicode_text.filter(lambda t: bool(t.strip())))
#: Output of a tool: usually a few lines, at times long or anything at all.
output_text = st.one_of(tool_output(), awkward_text, unicode_text)


# --- one session being written ------------------------------------------------------------


class Session:
    """The lines of one transcript as they are written, with the state Claude Code carries."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.seed = draw(st.binary(min_size=8, max_size=8))
        self.counter = 0
        self.clock: Clock = clock(draw)
        self.session_id = self.uuid()
        self.version = version(draw, VERSIONS)
        self.model = draw(st.sampled_from(MODELS))
        self.cwd = project_path(draw)
        project = self.cwd.rsplit("/", 1)[-1]
        self.branch = draw(st.sampled_from(("main", "", f"feature/{project}", "release/0.9")))
        self.parent: str | None = None
        self.lines: list[str] = []
        self.features: set[str] = set()
        self.mode: str | None = None
        self.uuids: list[str] = []

    # IDs: unique by construction, shaped as Claude Code's.

    def _digest(self) -> bytes:
        self.counter += 1
        return hashlib.sha256(self.seed + self.counter.to_bytes(4, "big")).digest()

    def token(self, size: int) -> str:
        digest = self._digest()
        return "".join(BASE62[b % 62] for b in (digest * 2)[:size])

    def uuid(self) -> str:
        hexed = self._digest().hex()
        return f"{hexed[:8]}-{hexed[8:12]}-4{hexed[13:16]}-{'89ab'[int(hexed[16], 16) % 4]}{hexed[17:20]}-{hexed[20:32]}"

    def tool_id(self) -> str:
        return "toolu_01" + self.token(22)

    # Lines.

    def add(self, line: dict[str, Any]) -> None:
        self.lines.append(dumps(line))

    def envelope(self, kind: str, ts: str | None = None, sidechain: bool = False, **members: Any) -> dict[str, Any]:
        """A conversation line as Claude Code orders its keys; the chain moves to the new line."""
        uuid = self.uuid()
        line: dict[str, Any] = {"parentUuid": self.parent, "isSidechain": sidechain, "userType": "external",
                                "cwd": self.cwd, "sessionId": self.session_id, "version": self.version,
                                "gitBranch": self.branch, "type": kind}
        line.update(members)
        line["uuid"] = uuid
        line["timestamp"] = ts or self.clock.tick(self.draw)
        self.parent = uuid
        self.uuids.append(uuid)
        return line

    def prompt(self, text: str | None = None) -> str:
        """The person's words, as a string content (with the permission mode when one is in force)."""
        text = text if text is not None else self.draw(prose)
        members: dict[str, Any] = {"message": {"role": "user", "content": text}}
        if self.mode is not None:
            members["permissionMode"] = self.mode
        line = self.envelope("user", **members)
        self.add(line)
        uuid: str = line["uuid"]
        return uuid

    def user_line(self, content: Any, **flags: Any) -> str:
        line = self.envelope("user", message={"role": "user", "content": content}, **flags)
        self.add(line)
        uuid: str = line["uuid"]
        return uuid

    def response(self, blocks: list[dict[str, Any]], sidechain: bool = False, stop: str | None = "tool_use") -> list[str]:
        """One model response, one block per line (as Claude Code writes it), sharing message.id."""
        message_id, request_id = "msg_01" + self.token(22), "req_011C" + self.token(20)
        uuids = []
        for index, block in enumerate(blocks):
            last = index == len(blocks) - 1
            message = {"model": self.model, "id": message_id, "type": "message", "role": "assistant",
                       "content": [block], "stop_reason": stop if last else None, "stop_sequence": None,
                       "usage": {"input_tokens": self.draw(st.integers(1, 9)), "cache_read_input_tokens": 14032,
                                 "output_tokens": self.draw(st.integers(1, 400)), "service_tier": "standard"}}
            ts = self.clock.tick(self.draw, 2_000 if index else 30_000)
            line = self.envelope("assistant", ts, sidechain=sidechain, message=message, requestId=request_id)
            self.add(line)
            uuids.append(line["uuid"])
        return uuids

    def answer(self, text: str | None = None) -> None:
        """The model's closing text."""
        self.response([{"type": "text", "text": text if text is not None else self.draw(prose)}], stop="end_turn")

    def call_block(self, tool: Tool, caller: dict[str, Any] | None = None) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "tool_use", "id": tool.call_id, "name": tool.name}
        if tool.has_input:
            block["input"] = tool.input
        if caller is not None or _version(self.version) >= (2, 1, 30):  # recent versions record the caller
            block["caller"] = caller or {"type": "direct"}
        return block

    def results(self, outcomes: list[ResultEntry], source: str | None, together: bool = False,
                sidechain: bool = False) -> None:
        """Results as user lines: each on its own line with its toolUseResult, or all in one line."""
        groups = [outcomes] if together else [[o] for o in outcomes]
        for group in groups:
            blocks = [o.block() for o in group]
            members: dict[str, Any] = {"message": {"role": "user", "content": blocks}}
            raws = [o for o in group if o.has_raw]
            if raws:
                members["toolUseResult"] = raws[0].raw
            if source is not None:
                members["sourceToolAssistantUUID"] = source
            line = self.envelope("user", sidechain=sidechain, **members)
            self.add(line)

    def progress(self, data: dict[str, Any], parent_tool: str, tool_use: str) -> None:
        self.add(self.envelope("progress", data=data, parentToolUseID=parent_tool, toolUseID=tool_use))

    def system(self, subtype: str, **members: Any) -> None:
        line = self.envelope("system", subtype=subtype, **members)
        self.add(line)

    def set_mode(self, mode: str, line: bool) -> None:
        """A new permission mode: a permission-mode line (recent versions), or only on the next prompt."""
        self.mode = mode
        if line:
            self.add({"type": "permission-mode", "permissionMode": mode, "sessionId": self.session_id})


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


# --- tools ------------------------------------------------------------------------------------


class Tool:
    """One call as the model makes it: ID, name and arguments."""

    def __init__(self, call_id: str, name: str, input: Any, has_input: bool = True) -> None:
        self.call_id, self.name, self.input, self.has_input = call_id, name, input, has_input


MISSING = object()


class ResultEntry:
    """One result: the tool_result block (what reached the model) and the toolUseResult beside it."""

    def __init__(self, call_id: str, content: Any = MISSING, is_error: bool | None = None, raw: Any = MISSING) -> None:
        self.call_id, self.content, self.is_error, self.raw = call_id, content, is_error, raw

    @property
    def has_raw(self) -> bool:
        return self.raw is not MISSING

    def block(self) -> dict[str, Any]:
        block: dict[str, Any] = {"tool_use_id": self.call_id, "type": "tool_result"}
        if self.content is not MISSING:
            block["content"] = self.content
        if self.is_error is not None:
            block["is_error"] = self.is_error
        return block


def _path(s: Session, draw: st.DrawFn) -> str:
    name = draw(st.sampled_from(("src/lib.rs", "README.md", "tests/test_cli.py", "src/app.ts", "Cargo.toml")))
    return f"{s.cwd}/{name}" if draw(st.booleans()) else f"{s.cwd}/{draw(words)}/{draw(prose)}.txt"


SHELL = ("git status", "ls -la", "pytest -q", "cat README.md", "git diff --stat", "ls src", "cargo test -p parser",
         "cat Cargo.toml", "npm run build", "grep -rn TODO src")
#: Commands that look around before acting.
LOOK = ("ls -la", "cat README.md", "git log --oneline -5", "ls src")


def _bash(s: Session, draw: st.DrawFn, commands: tuple[str, ...] = SHELL) -> Tool:
    command = draw(st.sampled_from(commands) | st.builds(lambda a, b: f"{a} {b}", st.sampled_from(commands), prose))
    arguments: dict[str, Any] = {"command": command, "description": draw(sentence)}
    if draw(st.booleans()):
        arguments["timeout"] = draw(st.sampled_from((60000, 120000, 600000)))
    return Tool(s.tool_id(), "Bash", arguments)


def _bash_ok(draw: st.DrawFn, tool: Tool) -> ResultEntry:
    out = draw(output_text)
    raw: dict[str, Any] = {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}
    if draw(st.integers(0, 3)) == 0:
        raw["returnCodeInterpretation"] = draw(st.sampled_from(("No matches found", "Success", "Files differ")))
    return ResultEntry(tool.call_id, out, draw(st.sampled_from((False, None))), raw)


def _read(s: Session, draw: st.DrawFn) -> Tool:
    arguments: dict[str, Any] = {"file_path": _path(s, draw)}
    if draw(st.booleans()):
        arguments.update(offset=draw(st.integers(1, 400)), limit=draw(st.integers(1, 200)))
    return Tool(s.tool_id(), "Read", arguments)


def _read_ok(draw: st.DrawFn, tool: Tool) -> ResultEntry:
    lines = draw(st.lists(prose, min_size=1, max_size=4))
    start = tool.input.get("offset", 1) if isinstance(tool.input, dict) else 1
    numbered = "\n".join(f"{start + i:>6}→{text}" for i, text in enumerate(lines))
    raw = {"type": "text", "file": {"filePath": tool.input["file_path"], "content": "\n".join(lines),
                                    "numLines": len(lines), "startLine": start, "totalLines": start + len(lines) + 3}}
    return ResultEntry(tool.call_id, numbered, None, raw)


def _edit(s: Session, draw: st.DrawFn) -> Tool:
    return Tool(s.tool_id(), "Edit", {"file_path": _path(s, draw), "old_string": draw(prose), "new_string": draw(prose)})


def _edit_ok(draw: st.DrawFn, tool: Tool) -> ResultEntry:
    path = tool.input["file_path"]
    raw = {"filePath": path, "oldString": tool.input["old_string"], "newString": tool.input["new_string"],
           "originalFile": draw(prose), "structuredPatch": [], "userModified": False, "replaceAll": False}
    return ResultEntry(tool.call_id, f"The file {path} has been updated.", None, raw)


def _grep(s: Session, draw: st.DrawFn) -> Tool:
    return Tool(s.tool_id(), "Grep", {"pattern": draw(sentence), "path": s.cwd, "output_mode": "content", "-n": True})


def _grep_ok(draw: st.DrawFn, tool: Tool) -> ResultEntry:
    found = draw(st.lists(prose, min_size=1, max_size=3))
    text = "\n".join(f"src/{i}.rs:{i + 3}:{t}" for i, t in enumerate(found))
    raw = {"mode": "content", "numFiles": len(found), "filenames": [], "content": text, "numLines": len(found)}
    return ResultEntry(tool.call_id, text, None, raw)


def _glob(s: Session, draw: st.DrawFn) -> Tool:
    return Tool(s.tool_id(), "Glob", {"pattern": draw(st.sampled_from(("**/*.rs", "**/ci*.yml", "src/**/*.ts")))})


def _glob_ok(draw: st.DrawFn, tool: Tool) -> ResultEntry:
    names = draw(st.lists(st.builds(lambda w: f"src/{w}.rs", words), min_size=1, max_size=3, unique=True))
    raw = {"filenames": names, "durationMs": draw(st.integers(0, 5_000)), "numFiles": len(names), "truncated": False}
    return ResultEntry(tool.call_id, "\n".join(names), None, raw)


def _fetch(s: Session, draw: st.DrawFn) -> Tool:
    return Tool(s.tool_id(), "WebFetch", {"url": f"https://docs.example.org/{draw(words)}", "prompt": draw(sentence)})


def _fetch_ok(draw: st.DrawFn, tool: Tool) -> ResultEntry:
    text = draw(output_text)
    raw = {"bytes": draw(st.integers(0, 90_000)), "code": 200, "codeText": "OK", "result": text,
           "durationMs": draw(st.integers(1, 20_000) | st.floats(0.5, 9_999.5).map(lambda f: round(f, 3))),
           "url": tool.input["url"]}
    return ResultEntry(tool.call_id, text, None, raw)


def _todo(s: Session, draw: st.DrawFn) -> Tool:
    todos = [{"content": draw(prose), "status": draw(st.sampled_from(("pending", "in_progress", "completed"))),
              "activeForm": draw(sentence)} for _ in range(draw(st.integers(1, 3)))]
    return Tool(s.tool_id(), "TodoWrite", {"todos": todos})


def _todo_ok(draw: st.DrawFn, tool: Tool) -> ResultEntry:
    text = ("Todos have been modified successfully. Ensure that you continue to use the todo list to track your "
            "progress. Please proceed with the current tasks if applicable")
    return ResultEntry(tool.call_id, text, None, {"oldTodos": [], "newTodos": tool.input["todos"]})


def _mcp(s: Session, draw: st.DrawFn) -> Tool:
    name = f"mcp__{draw(words)}__{draw(st.sampled_from(('metadata', 'search', 'get_issue', 'run')))}"
    return Tool(s.tool_id(), name, draw(st.dictionaries(words, st.integers(-5, 500) | sentence | st.booleans(),
                                                         max_size=3)))


def _mcp_ok(draw: st.DrawFn, tool: Tool) -> ResultEntry:
    parts = [{"type": "text", "text": t} for t in draw(st.lists(output_text, min_size=1, max_size=3))]
    return ResultEntry(tool.call_id, parts, None, parts)


Maker = Callable[[Session, st.DrawFn], Tool]
Runner = Callable[[st.DrawFn, Tool], ResultEntry]
#: Everyday tools: how the model calls each, and a successful result of each.
TOOLS: tuple[tuple[Maker, Runner], ...] = (
    (_bash, _bash_ok), (_bash, _bash_ok), (_bash, _bash_ok), (_read, _read_ok), (_edit, _edit_ok), (_grep, _grep_ok),
    (_glob, _glob_ok), (_fetch, _fetch_ok), (_todo, _todo_ok), (_mcp, _mcp_ok),
)


def _failure(draw: st.DrawFn, tool: Tool) -> ResultEntry:
    """A tool that failed, as Claude Code records each kind of failure."""
    if tool.name == "Bash":
        code, stderr = draw(st.integers(1, 255)), draw(output_text)
        text = f"Exit code {code}\n{stderr}"
        return ResultEntry(tool.call_id, text, True, f"Error: {text}")
    reason = draw(st.sampled_from(("File does not exist.", "String to replace not found in file.",
                                   "File has not been read yet. Read it first before writing to it.")))
    if draw(st.booleans()):
        return ResultEntry(tool.call_id, f"<tool_use_error>{reason}</tool_use_error>", True, f"Error: {reason}")
    return ResultEntry(tool.call_id, [{"type": "text", "text": draw(output_text)}], True, MISSING)


def _everyday(s: Session, draw: st.DrawFn) -> tuple[Tool, Runner]:
    make, run = draw(st.sampled_from(TOOLS))
    return make(s, draw), run


def _preamble(s: Session, draw: st.DrawFn) -> list[dict[str, Any]]:
    """What may come before a response's calls: thinking and a sentence of text."""
    blocks: list[dict[str, Any]] = []
    if draw(st.integers(0, 3)) == 0:
        blocks.append({"type": "thinking", "thinking": draw(prose), "signature": "c2lnbmF0dXJl" + s.token(12)})
    if draw(st.booleans()):
        blocks.append({"type": "text", "text": draw(prose)})
    return blocks


# --- episodes: each writes one turn or feature --------------------------------------------


def plain(s: Session, draw: st.DrawFn) -> None:
    s.prompt()
    s.answer()


def calls(s: Session, draw: st.DrawFn, most: int = 4) -> None:
    s.prompt()
    for index in range(draw(st.integers(min(2, most), most))):
        # a task often starts by looking around with a shell command that lists or reads
        looks = index == 0 and not draw(st.booleans())
        tool, run = (_bash(s, draw, LOOK), _bash_ok) if looks else _everyday(s, draw)
        source = s.response([*_preamble(s, draw), s.call_block(tool)])[-1]
        s.results([run(draw, tool)], source)
    s.answer()
    s.features.add("calls")


def parallel(s: Session, draw: st.DrawFn) -> None:
    s.prompt()
    picked = [_everyday(s, draw) for _ in range(draw(st.integers(2, 4)))]
    source = s.response([*_preamble(s, draw), *(s.call_block(tool) for tool, _ in picked)])[-1]
    outcomes = [run(draw, tool) for tool, run in picked]
    s.results(draw(st.permutations(outcomes)), source, together=draw(st.booleans()))
    s.answer()
    s.features |= {"calls", "parallel"}


def duplicate_ids(s: Session, draw: st.DrawFn) -> None:
    """A response retried with the same tool_use ID; one or both calls get a result."""
    s.prompt()
    tool = _read(s, draw)
    s.response([s.call_block(tool)])
    source = s.response([s.call_block(tool)])[-1]
    answers = draw(st.integers(1, 2))
    for _ in range(answers):
        s.results([_read_ok(draw, tool)], source)
    s.answer()
    s.features |= {"calls", "duplicate-ids"}


def dangling(s: Session, draw: st.DrawFn) -> None:
    """A call that never got its result: the terminal closed, then the session was resumed (or not)."""
    s.prompt()
    tool, _ = _everyday(s, draw)
    s.response([*_preamble(s, draw), s.call_block(tool)])
    if draw(st.booleans()):
        s.system("informational", content="Claude Code was interrupted: the terminal closed.", level="warning",
                 isMeta=False)
    s.features |= {"dangling"}


def interrupted(s: Session, draw: st.DrawFn) -> None:
    s.prompt()
    tool, _ = _everyday(s, draw)
    source = s.response([*_preamble(s, draw), s.call_block(tool)])[-1]
    if draw(st.booleans()):  # refused at the permission prompt, sometimes with the person's words
        text = REJECTED if draw(st.booleans()) else f"{REJECTED_WITH_WORDS}{draw(prose)}"
        outcome = ResultEntry(tool.call_id, text, True, f"Error: {text}" if draw(st.booleans()) else "User rejected tool use")
    else:
        raw = {"stdout": draw(output_text), "stderr": "", "interrupted": True, "isImage": False}
        outcome = ResultEntry(tool.call_id, INTERRUPTED_TOOL, True, raw)
    s.results([outcome], source)
    s.user_line([{"type": "text", "text": INTERRUPTED_TOOL}])
    if draw(st.booleans()):  # an interrupted answer, no tool
        s.prompt()
        s.response([{"type": "text", "text": draw(prose)}], stop=None)
        s.user_line([{"type": "text", "text": INTERRUPTED}])
    s.features |= {"calls", "interrupted"}


def orphans(s: Session, draw: st.DrawFn) -> None:
    """A result for a call the file does not hold, as a resumed session's copied first lines have."""
    tool, run = _everyday(s, draw)
    s.parent = s.uuid()  # the line it hangs on is in another file
    s.results([run(draw, tool)], s.uuid())
    s.prompt()
    s.answer()
    s.features.add("orphans")


def errors(s: Session, draw: st.DrawFn) -> None:
    s.prompt()
    for _ in range(draw(st.integers(1, 2))):
        tool, _ = _everyday(s, draw)
        source = s.response([*_preamble(s, draw), s.call_block(tool)])[-1]
        s.results([_failure(draw, tool)], source)
    s.answer()
    s.features |= {"calls", "errors"}


def empty_output(s: Session, draw: st.DrawFn) -> None:
    s.prompt()
    for shape in draw(st.lists(st.sampled_from(("text", "list", "absent", "bash")), min_size=1, max_size=3)):
        tool = _bash(s, draw) if shape == "bash" else _mcp(s, draw)
        source = s.response([s.call_block(tool)])[-1]
        if shape == "bash":
            raw: Any = {"stdout": "", "stderr": "", "interrupted": False, "isImage": False}
            outcome = ResultEntry(tool.call_id, "", draw(st.sampled_from((False, None))), raw)
        else:
            content = {"text": "", "list": [], "absent": MISSING}[shape]
            outcome = ResultEntry(tool.call_id, content, None, [] if shape == "list" else MISSING)
        s.results([outcome], source)
    s.answer()
    s.features |= {"calls", "empty-output"}


#: JSON values with the numbers and text that break converters: past 2**53 and 2**64, deep, unicode.
HUGE = st.one_of(st.integers(2**64, 2**80), st.integers(-(2**80), -(2**64) - 1), st.integers(2**53, 2**64))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | HUGE | unicode_text | awkward_text
    | st.floats(allow_nan=False, allow_infinity=False, width=64),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(unicode_text, inner, max_size=3),
    max_leaves=10,
)
NOT_JSON = st.sampled_from(('{"command": "ls', "{'path': 'src'}", "[1, 2,", "undefined", "NaN", "{\"a\":1}}"))


def arguments(s: Session, draw: st.DrawFn) -> None:
    s.prompt()
    # The API hands Claude Code every tool input as an object, so text that is not JSON stands in values only
    # (a whole-string input would be a shape no real transcript holds, and no converter owes it anything).
    shapes = draw(st.lists(st.sampled_from(("huge", "text", "nested", "empty")), min_size=1, max_size=3))
    if "huge" not in shapes:
        shapes.append("huge")
    for shape in shapes:
        name = f"mcp__{draw(words)}__{draw(words)}"
        if shape == "huge":
            value: Any = {"id": draw(HUGE), "limit": draw(st.integers(2**64, 2**200)), "note": draw(awkward_text)}
        elif shape == "text":
            value = {"query": draw(NOT_JSON), draw(unicode_text): draw(NOT_JSON)}
        elif shape == "nested":
            value = {"data": draw(json_values)}
        else:
            value = {}
        tool = Tool(s.tool_id(), name, value)
        source = s.response([s.call_block(tool)])[-1]
        s.results([_mcp_ok(draw, tool)], source)
    s.answer()
    s.features |= {"calls", "arguments"}


def compaction(s: Session, draw: st.DrawFn) -> None:
    last = s.parent
    s.parent = None
    s.system("compact_boundary", content="Conversation compacted", isMeta=False, level="info",
             logicalParentUuid=last, compactMetadata={"trigger": draw(st.sampled_from(("manual", "auto"))),
                                                       "preTokens": draw(st.integers(1000, 200_000))})
    summary = ("This session is being continued from a previous conversation that ran out of context. The summary "
               "below covers the earlier portion of the conversation.\n\n" + draw(prose))
    s.user_line(summary, isCompactSummary=True, isVisibleInTranscriptOnly=True)
    s.prompt()
    s.answer()
    s.features.add("compaction")


def questions(s: Session, draw: st.DrawFn) -> None:
    s.prompt()
    count = draw(st.integers(1, 3))
    texts = draw(st.lists(prose.map(lambda t: t + "?"), min_size=count, max_size=count, unique=True))
    asked: list[dict[str, Any]] = []
    options: dict[str, list[str]] = {}
    for text in texts:
        labels = options[text] = draw(st.lists(prose, min_size=2, max_size=4, unique=True))
        asked.append({"question": text, "header": draw(sentence)[:12],
                      "options": [{"label": label, "description": draw(sentence)} for label in labels],
                      "multiSelect": draw(st.booleans())})
    tool = Tool(s.tool_id(), "AskUserQuestion", {"questions": asked})
    source = s.response([*_preamble(s, draw), s.call_block(tool)])[-1]
    how = draw(st.sampled_from(("answered", "answered", "declined", "unanswered")))
    if how == "answered":
        answers: dict[str, str] = {}
        for text, labels in options.items():
            answers[text] = draw(st.sampled_from(labels) | prose | st.just(", ".join(labels[:2])))
        text = "User has answered your questions: " + ", ".join(f'"{q}"="{a}"' for q, a in answers.items()) \
               + ". You can now continue with the user's answers in mind."
        s.results([ResultEntry(tool.call_id, text, None, {"questions": asked, "answers": answers})], source)
        s.answer()
    elif how == "declined":
        s.results([ResultEntry(tool.call_id, REJECTED, True, f"Error: {REJECTED}")], source)
        s.user_line([{"type": "text", "text": INTERRUPTED_TOOL}])
        s.features.add("interrupted")
    else:
        s.features.add("dangling")
    s.features.add("questions")


def subagent(s: Session, draw: st.DrawFn) -> None:
    s.prompt()
    agent = s.token(7).lower()
    prompt = draw(prose)
    task = Tool(s.tool_id(), "Task", {"description": draw(sentence), "prompt": prompt,
                                      "subagent_type": draw(st.sampled_from(("Explore", "general-purpose", "Plan")))})
    source = s.response([*_preamble(s, draw), s.call_block(task)])[-1]
    s.progress({"type": "hook_progress", "hookEvent": "PreToolUse", "hookName": "PreToolUse:Task",
                "command": "~/.claude/hooks/audit.sh"}, task.call_id, task.call_id)
    for _ in range(draw(st.integers(1, 2))):
        inner, _run = _everyday(s, draw)
        copied = {"type": "assistant", "timestamp": s.clock.tick(draw, 5_000),
                  "message": {"model": "claude-haiku-4-5", "id": "msg_01" + s.token(22), "type": "message",
                              "role": "assistant", "content": [s.call_block(inner)]}, "uuid": s.uuid()}
        s.progress({"message": copied, "normalizedMessages": [], "type": "agent_progress", "prompt": prompt,
                    "agentId": agent}, task.call_id, "agent_msg_01" + s.token(22))
    s.parent = source
    report = draw(output_text)
    content = [{"type": "text", "text": report},
               {"type": "text", "text": f"agentId: {agent} (for resuming to continue this agent's work if needed)"}]
    raw = {"status": "completed", "prompt": prompt, "agentId": agent, "content": content[:1],
           "totalDurationMs": draw(st.integers(100, 600_000)), "totalTokens": draw(st.integers(100, 90_000)),
           "totalToolUseCount": draw(st.integers(1, 9))}
    s.results([ResultEntry(task.call_id, content, None, raw)], source)
    s.answer()
    s.features |= {"calls", "subagent", "durations"}


def permission_modes(s: Session, draw: st.DrawFn) -> None:
    modes = draw(st.lists(st.sampled_from(MODES), min_size=2, max_size=3, unique=True))
    for mode in modes:
        s.set_mode(mode, line=draw(st.booleans()))
        if mode == "bypassPermissions" or draw(st.booleans()):
            calls(s, draw, most=2)
        else:
            plain(s, draw)
    s.features.add("permission-modes")


def meta(s: Session, draw: st.DrawFn) -> None:
    name = draw(st.sampled_from(("/model", "/clear", "/compact", "/plan", "/context")))
    s.user_line(f"<command-name>{name}</command-name>\n            <command-message>{name[1:]}</command-message>\n"
                f"            <command-args></command-args>")
    s.user_line(f"<local-command-stdout>{draw(prose)}</local-command-stdout>")
    s.user_line("Caveat: The messages below were generated by the user while running local commands. DO NOT respond "
                "to these messages or otherwise consider them in your response unless the user explicitly asks you to.",
                isMeta=True)
    s.add({"type": "queue-operation", "operation": "enqueue", "timestamp": s.clock.tick(draw),
           "sessionId": s.session_id, "content": draw(prose)})
    s.add({"type": "file-history-snapshot", "messageId": s.uuid(),
           "snapshot": {"messageId": s.uuid(), "trackedFileBackups": {}, "timestamp": s.clock.tick(draw)},
           "isSnapshotUpdate": False})
    s.prompt()
    s.user_line([{"type": "text", "text": f"<system-reminder>\n{draw(prose)}\n</system-reminder>"}], isMeta=True)
    s.answer()
    s.system("stop_hook_summary", hookCount=1, hookInfos=[{"command": "~/.claude/hooks/notify.sh stop"}],
             hookErrors=[], preventedContinuation=False, stopReason="", hasOutput=False, level="suggestion")
    s.system("turn_duration", durationMs=draw(st.integers(100, 900_000)), isMeta=False)
    s.add({"type": "custom-title", "customTitle": draw(prose), "sessionId": s.session_id})
    s.features.add("meta")


def version_upgrade(s: Session, draw: st.DrawFn) -> None:
    plain(s, draw)
    major, minor, patch = (int(p) for p in s.version.split("."))
    s.version = f"{major}.{minor}.{patch + draw(st.integers(1, 30))}"
    calls(s, draw, most=2) if draw(st.booleans()) else plain(s, draw)
    s.features.add("version-upgrade")


def durations(s: Session, draw: st.DrawFn) -> None:
    s.prompt()
    for maker, runner in draw(st.lists(st.sampled_from(((_glob, _glob_ok), (_fetch, _fetch_ok))), min_size=1,
                                       max_size=2)):
        tool = maker(s, draw)
        source = s.response([*_preamble(s, draw), s.call_block(tool)])[-1]
        s.results([runner(draw, tool)], source)
    s.answer()
    s.features |= {"calls", "durations"}


def code_caller(s: Session, draw: st.DrawFn) -> None:
    """A program the model wrote (code execution) calls a tool; the tool_use records it as its caller."""
    s.prompt()
    server_id = "srvtoolu_01" + s.token(22)
    cell = {"type": "server_tool_use", "id": server_id, "name": "code_execution",
            "input": {"code": f"result = await {draw(words)}()\nprint(result)"}}
    picked = [_everyday(s, draw) for _ in range(draw(st.integers(1, 2)))]
    caller = {"type": "code_execution_20250825", "tool_id": server_id}
    source = s.response([cell, *(s.call_block(tool, caller) for tool, _ in picked)])[-1]
    s.results([run(draw, tool) for tool, run in picked], source, together=draw(st.booleans()))
    done = {"type": "code_execution_tool_result", "tool_use_id": server_id,
            "content": {"type": "code_execution_result", "stdout": draw(output_text), "stderr": "", "return_code": 0,
                        "content": []}}
    s.response([done, {"type": "text", "text": draw(prose)}], stop="end_turn")
    s.features |= {"calls", "code-caller"}


EPISODES: dict[str, Callable[[Session, st.DrawFn], None]] = {
    "plain": plain, "calls": calls, "parallel": parallel, "duplicate-ids": duplicate_ids, "dangling": dangling,
    "interrupted": interrupted, "orphans": orphans, "errors": errors, "empty-output": empty_output,
    "arguments": arguments, "compaction": compaction, "questions": questions, "subagent": subagent,
    "permission-modes": permission_modes, "meta": meta, "version-upgrade": version_upgrade,
    "durations": durations, "code-caller": code_caller,
}
#: Features that must open the file (a resumed session's copied lines come first).
OPENING = ("orphans",)
#: Features best written last (nothing follows an unfinished call but a resume).
CLOSING = ("dangling",)


# --- the strategies ------------------------------------------------------------------------------


def _check(feature: str, variant: str | None) -> None:
    if feature != MIXED and feature not in FEATURES:
        known = ", ".join([MIXED, *sorted(FEATURES)])
        raise ValueError(f"unknown Claude Code feature {feature!r}; known features: {known}")
    if variant is not None and variant not in VARIANTS:
        raise ValueError(f"unknown Claude Code variant {variant!r}; known variants: {', '.join(sorted(VARIANTS))}")


@st.composite
def _transcript(draw: st.DrawFn, feature: str) -> NativeTranscript:
    s = Session(draw)
    if feature == MIXED:
        wanted = draw(st.lists(st.sampled_from(sorted(set(FEATURES) - {"plain"})), min_size=2, max_size=3, unique=True))
    else:
        wanted = [feature]
    order = [f for f in wanted if f in OPENING] + [f for f in wanted if f not in OPENING + CLOSING] \
        + [f for f in wanted if f in CLOSING]
    if draw(st.integers(0, 3)) == 0 and "orphans" not in order:
        s.add({"type": "file-history-snapshot", "messageId": s.uuid(),
               "snapshot": {"messageId": s.uuid(), "trackedFileBackups": {}, "timestamp": s.clock.stamp()},
               "isSnapshotUpdate": False})
    if feature != "plain" and "orphans" not in order and draw(st.booleans()):
        plain(s, draw)
    for name in order:
        EPISODES[name](s, draw)
    if feature == "plain" and draw(st.booleans()):
        plain(s, draw)
    if draw(st.integers(0, 3)) == 0 and s.uuids:  # a title Claude Code wrote for the session
        s.lines.insert(0, dumps({"type": "summary", "summary": draw(sentence), "leafUuid": s.uuids[-1]}))
    if not any('"tool_use"' in line for line in s.lines):
        s.features.add("plain")
    return NativeTranscript(FORMAT, "session", tuple(s.lines), frozenset(s.features & set(FEATURES)))


def transcripts(feature: str = MIXED, variant: str | None = None) -> st.SearchStrategy[NativeTranscript]:
    """Claude Code transcripts that hold ``feature`` (one of ``FEATURES``, or ``mixed`` for several)."""
    _check(feature, variant)
    return _transcript(feature)


def variant_of(data: bytes) -> str | None:
    """``session`` when the bytes look like a Claude Code transcript, else None."""
    for raw in data.split(b"\n")[:20]:
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            return None
        if value["type"] in CLAUDE_LINE_TYPES and any(key in value for key in CLAUDE_KEYS):
            return "session"
    return None


__all__ = ["FEATURES", "FORMAT", "MIXED", "VARIANTS", "transcripts", "variant_of"]
