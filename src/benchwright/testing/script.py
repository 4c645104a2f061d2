"""A scripted model: answers from a YAML file of turns, served with no key on one port in the
OpenAI chat, Anthropic Messages and OpenAI Responses formats (streaming included) and Gemini's
(``benchwright serve-model TURNS.yaml``). Point an agent CLI or a judge at it to try a setup
without a model or a key.

The file::

    version: 1
    turns:
      - text: "I will look at the code."
        tool_calls:
          - {name: run_shell_command, arguments: {command: "cat src/parser.py"}}
      - text: "Fixed."
    replies:                      # optional, checked first
      - match: "Respond with a JSON"
        text: '{"verdict": "PASS"}'
    usage: [120, 30]              # optional

* ``turns``: the answer to a request is ``turns[n]``, ``n`` being how many of the script's own
  turns the request's conversation already has among its assistant messages (same tool calls,
  or for a turn without tool calls the same text; what a CLI puts in the history itself does
  not count). Answering is stateless: retries and parallel runs get the same answers. Past the end, the answer is the last turn's ``text`` (without its tool
  calls), or ``done`` when it has none.
* ``replies``: a request whose last user or tool message matches ``match`` (a Python regular
  expression, searched anywhere in the text) gets that reply instead, whatever its turn: the
  side requests some CLIs make (a title, a summary), a judge's question.
* A turn or reply has ``text`` and/or ``tool_calls``; a tool call has ``name``, ``arguments``
  (a mapping, or the exact text to send) and optionally ``id`` (default ``call_N_I``).
* ``usage``: the ``[input, output]`` tokens every answer reports; default: estimated from the
  words of the request and of the answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from benchwright import yamldoc
from benchwright.agents.proxy import WireServer
from benchwright.errors import InputError, Problem
from benchwright.httpserve import RecordedRequest, Response
from benchwright.model.base import Answer, GenerationRequest, ToolCall

__all__ = ["ScriptedModel", "ScriptedServer", "Turn"]

_TOP = ("version", "turns", "replies", "usage")
_TURN = ("text", "tool_calls")
_CALL = ("name", "arguments", "id")


@dataclass(frozen=True)
class Turn:
    """One scripted answer."""

    text: str = ""
    tool_calls: tuple[tuple[str, str, str], ...] = ()
    """``(id, name, arguments JSON text)``; an empty id is made from the turn's place."""
    match: re.Pattern[str] | None = None
    """For a reply: what the last user or tool message must contain."""


def _canonical(arguments: Any) -> str:
    """Tool-call arguments compared as JSON values (key order and spacing aside)."""
    try:
        return json.dumps(json.loads(arguments) if isinstance(arguments, str) else arguments, sort_keys=True)
    except (ValueError, TypeError):
        return str(arguments)


def _words(text: str) -> int:
    return len(re.findall(r"\w+|[^\w\s]+", text))


class ScriptedModel:
    """The answers of a turns file (see the module)."""

    def __init__(self, turns: list[Turn], replies: list[Turn] | None = None,
                 usage: tuple[int, int] | None = None) -> None:
        self.turns = turns
        self.replies = replies or []
        self.usage = usage

    @classmethod
    def load(cls, path: Path) -> ScriptedModel:
        """Read a turns file.

        Raises:
            InputError: the file is not one (each problem names the file, the line, the place
                and how to fix it).
        """
        doc = yamldoc.load(path)
        data = doc.data
        problems: list[Problem] = []

        def bad(where: tuple[str | int, ...], message: str, hint: str) -> None:
            problems.append(doc.problem(where, message, hint))

        if not isinstance(data, dict):
            raise InputError([doc.problem((), "a turns file is a mapping with 'version' and "
                                              "'turns'", "start with 'version: 1' and 'turns:'")])
        for key in data:
            if key not in _TOP:
                bad((str(key),), f"unknown key {key!r}", f"the keys are {', '.join(_TOP)}")
        if data.get("version") != 1:
            bad(("version",), f"version must be 1, not {data.get('version')!r}", "write 'version: 1'")
        turns = cls._turns(data.get("turns"), "turns", bad, required=True)
        replies = cls._turns(data.get("replies"), "replies", bad, required=False)
        usage = data.get("usage")
        pair: tuple[int, int] | None = None
        if usage is not None:
            if (isinstance(usage, list) and len(usage) == 2
                    and all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in usage)):
                pair = (usage[0], usage[1])
            else:
                bad(("usage",), f"usage must be two token counts [input, output], not {usage!r}",
                    "e.g. 'usage: [120, 30]', or leave it out to estimate them")
        if problems:
            raise InputError(problems)
        return cls(turns, replies, pair)

    @staticmethod
    def _turns(value: Any, name: str, bad: Any, *, required: bool) -> list[Turn]:
        if value is None and not required:
            return []
        if not isinstance(value, list) or (required and not value):
            bad((name,), f"'{name}' must be a list{' of at least one turn' if required else ''}",
                f"write '{name}:' and under it items like '- text: \"...\"'")
            return []
        out: list[Turn] = []
        for i, item in enumerate(value):
            where: tuple[str | int, ...] = (name, i)
            if not isinstance(item, dict):
                bad(where, "a turn is a mapping with 'text' and/or 'tool_calls'",
                    "e.g. '- text: \"Fixed.\"'")
                continue
            allowed = (*_TURN, "match") if name == "replies" else _TURN
            for key in item:
                if key not in allowed:
                    bad((*where, str(key)), f"unknown key {key!r}", f"the keys are {', '.join(allowed)}")
            text = item.get("text", "")
            if not isinstance(text, str):
                bad((*where, "text"), "text must be a string", "quote it: text: \"...\"")
                text = ""
            match: re.Pattern[str] | None = None
            if name == "replies":
                pattern = item.get("match")
                if not isinstance(pattern, str) or not pattern:
                    bad((*where, "match"), "a reply needs 'match', a regular expression",
                        "e.g. match: \"Respond with a JSON\"")
                else:
                    try:
                        match = re.compile(pattern)
                    except re.error as exc:
                        bad((*where, "match"), f"not a valid regular expression: {exc}",
                            "escape special characters such as ( [ . * with a backslash")
            calls = item.get("tool_calls", [])
            made: list[tuple[str, str, str]] = []
            if not isinstance(calls, list):
                bad((*where, "tool_calls"), "tool_calls must be a list",
                    "e.g. tool_calls: [{name: shell, arguments: {command: ls}}]")
                calls = []
            for j, call in enumerate(calls):
                at = (*where, "tool_calls", j)
                if not isinstance(call, dict) or not isinstance(call.get("name"), str) or not call["name"]:
                    bad(at, "a tool call is a mapping with a 'name' and 'arguments'",
                        "e.g. {name: shell, arguments: {command: ls}}")
                    continue
                for key in call:
                    if key not in _CALL:
                        bad((*at, str(key)), f"unknown key {key!r}", f"the keys are {', '.join(_CALL)}")
                args = call.get("arguments", {})
                if isinstance(args, dict):
                    args = json.dumps(args)
                elif not isinstance(args, str):
                    bad((*at, "arguments"), "arguments must be a mapping (or the exact JSON text)",
                        "e.g. arguments: {command: ls}")
                    args = "{}"
                made.append((str(call.get("id") or ""), call["name"], args))
            if not text and not made:
                bad(where, "a turn says nothing: give it 'text' or 'tool_calls'", "add text: \"...\"")
            out.append(Turn(text, tuple(made), match))
        return out

    def choose(self, request: GenerationRequest) -> tuple[Turn, int]:
        """The turn answering ``request`` and its number (-1 for a reply, len(turns) past the end)."""
        last = next((m for m in reversed(request.messages) if m.get("role") in ("user", "tool")), None)
        said = str(last.get("content") or "") if last else ""
        for reply in self.replies:
            if reply.match is not None and reply.match.search(said):
                return reply, -1
        n = sum(1 for m in request.messages if m.get("role") == "assistant" and self._ours(m))
        if n < len(self.turns):
            return self.turns[n], n
        return Turn(self.turns[-1].text or "done") if self.turns else Turn("done"), len(self.turns)

    def _ours(self, message: dict[str, Any]) -> bool:
        """Whether an assistant message of the conversation is one of the script's turns (its
        tool calls, else its text): what a CLI adds to the history itself (gemini-cli and
        qwen-code open with a "Got it. Thanks for the context!") does not count as a turn."""
        calls = message.get("tool_calls") or []
        if calls:
            said = {(c.get("function", {}).get("name"), _canonical(c.get("function", {}).get("arguments")))
                    for c in calls if isinstance(c, dict)}
            return any(said == {(name, _canonical(args)) for _, name, args in t.tool_calls}
                       for t in self.turns if t.tool_calls)
        text = str(message.get("content") or "").strip()
        return bool(text) and any(text == t.text.strip() for t in self.turns if not t.tool_calls)

    def answer(self, request: GenerationRequest) -> Answer:
        """The scripted answer to ``request``."""
        turn, n = self.choose(request)
        calls = tuple(ToolCall(call_id or f"call_{max(n, 0)}_{i}", name, args)
                      for i, (call_id, name, args) in enumerate(turn.tool_calls))
        if self.usage is not None:
            tin, tout = self.usage
        else:
            sent = " ".join(str(m.get("content") or "") for m in request.messages)
            tin = _words(sent)
            tout = _words(" ".join([turn.text, *(f"{c.name} {c.arguments}" for c in calls)]))
        return Answer(turn.text, tokens_in=tin, tokens_out=tout, tokens_estimated=self.usage is None,
                      finish_reason="tool_calls" if calls else "stop", model="scripted",
                      tool_calls=calls)


class ScriptedServer(WireServer):
    """Serves a :class:`ScriptedModel` over HTTP: any key (or none) is accepted."""

    name: ClassVar[str] = "scripted-model"

    def __init__(self, model: ScriptedModel, *, host: str = "127.0.0.1", port: int = 0,
                 model_name: str = "scripted") -> None:
        super().__init__(host=host, port=port)
        self.model = model
        self.model_name = model_name

    def _context(self, rec: RecordedRequest) -> Any:
        return self.model

    def _model_name(self, context: Any) -> str:
        return self.model_name

    def _admit(self, method: str, path: str, headers: dict[str, str], query: str) -> Response | None:
        """Served on loopback, it answers loopback names only: a web page cannot reach it by
        rebinding a name of its own to 127.0.0.1."""
        from benchwright.server.guard import LOOPBACK_NAMES, host_name

        if self._host in LOOPBACK_NAMES and host_name(headers.get("host", "")) not in LOOPBACK_NAMES:
            return self._error_for(self._flavour(path, headers), 403,
                                   "only loopback host names are served (Host: 127.0.0.1 or localhost)",
                                   close=True)
        return None

    async def _generate(self, context: Any, request: GenerationRequest) -> tuple[Answer | None, str]:
        return self.model.answer(request), ""
