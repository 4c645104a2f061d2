"""What a fake service is told to answer (:class:`Reply`, :data:`AnswerFn`) and what it records
of each request it receives (:class:`RecordedRequest`).

See :mod:`benchwright.testing.servers` for the servers that use them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from benchwright.httpserve import RecordedRequest, http_reason

__all__ = ["AnswerFn", "RecordedRequest", "Reply", "ReplyKind", "ScriptedCall", "http_reason"]

ScriptedCall = tuple[str, Mapping[str, Any] | str] | tuple[str, str, Mapping[str, Any] | str]
"""A tool call for :meth:`Reply.tool_calls`: ``(name, arguments)`` or ``(id, name, arguments)``;
the arguments an object (sent as JSON text) or the exact text to send (invalid JSON too)."""

ReplyKind = Literal["answer", "error", "raw", "drop"]


@dataclass(frozen=True)
class Reply:
    """What the server does with one generation request.

    Build one with the class methods; ``Reply()`` is a normal answer ``"ok"``.

    * ``answer``: a normal 200 answer in the server's wire format, with tool calls when
      ``calls`` has any (:meth:`tool_calls`).
    * ``error``: an HTTP error with the service's error body (``{"error": {...}}``).
    * ``raw``: exactly ``body`` with ``status`` and ``content_type`` (malformed JSON and such).
    * ``drop``: the connection is closed without any response (after ``delay_s``).

    Every kind waits ``delay_s`` seconds (on top of the server's ``delay_s``) first and may add
    response ``headers`` (``Retry-After``, ``retry-after-ms``, rate-limit headers...).
    """

    kind: ReplyKind = "answer"
    text: str = "ok"
    """The answer's text (``answer``)."""
    finish_reason: str | None = None
    """``finish_reason`` / ``stop_reason``; ``None``: ``"stop"`` (OpenAI) or ``"end_turn"``."""
    usage: tuple[int, int] | Literal["auto"] | None = "auto"
    """``(input_tokens, output_tokens)``; ``"auto"``: rough word counts of the request and the
    text; ``None``: the response carries no ``usage`` at all."""
    model: str | None = None
    """The model the response names; ``None``: the model the request asked for."""
    status: int = 200
    message: str = ""
    """The error message (``error``)."""
    error_type: str | None = None
    """The error body's ``type``; ``None``: a usual one for ``status``."""
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    """The body sent verbatim (``raw``)."""
    content_type: str = "application/json"
    delay_s: float = 0.0
    calls: tuple[tuple[str, str, str], ...] = ()
    """Tool calls of the answer: ``(id, name, arguments JSON text)``; an empty id is given one
    by the server (``call_N``). OpenAI: ``message.tool_calls``; Anthropic: ``tool_use`` blocks,
    an id's ``call_`` prefix becoming ``toolu_`` (the arguments parsed: they must then be a JSON
    object)."""

    @classmethod
    def answer(cls, text: str = "ok", *, finish_reason: str | None = None,
               usage: tuple[int, int] | Literal["auto"] | None = "auto", model: str | None = None,
               delay_s: float = 0.0, headers: Mapping[str, str] | None = None) -> Reply:
        """A normal answer."""
        return cls("answer", text=text, finish_reason=finish_reason, usage=usage, model=model,
                   delay_s=delay_s, headers=dict(headers or {}))

    @classmethod
    def tool_calls(cls, calls: Sequence[ScriptedCall], *, text: str = "",
                   finish_reason: str | None = None,
                   usage: tuple[int, int] | Literal["auto"] | None = "auto",
                   model: str | None = None, delay_s: float = 0.0,
                   headers: Mapping[str, str] | None = None) -> Reply:
        """An answer calling tools, e.g. ``Reply.tool_calls([("shell", {"command": "ls"})])``
        or with ids ``[("call_1", "read_file", {"path": "a.py"})]``. The finish reason is
        ``tool_calls`` (OpenAI) or ``tool_use`` (Anthropic) unless given."""
        made: list[tuple[str, str, str]] = []
        for call in calls:
            if len(call) == 3:
                call_id, name, args = call
            else:
                call_id, (name, args) = "", call
            made.append((str(call_id), str(name),
                         args if isinstance(args, str) else json.dumps(dict(args))))
        return cls("answer", text=text, finish_reason=finish_reason, usage=usage, model=model,
                   delay_s=delay_s, headers=dict(headers or {}), calls=tuple(made))

    @classmethod
    def error(cls, status: int, message: str = "", *, headers: Mapping[str, str] | None = None,
              error_type: str | None = None, delay_s: float = 0.0) -> Reply:
        """An HTTP error in the wire format's error shape, e.g.
        ``Reply.error(429, "slow down", headers={"Retry-After": "7"})``."""
        if status < 400:
            raise ValueError(f"an error reply needs a status >= 400, not {status}")
        return cls("error", status=status, message=message or http_reason(status),
                   error_type=error_type, headers=dict(headers or {}), delay_s=delay_s)

    @classmethod
    def raw(cls, body: bytes | str, *, status: int = 200, content_type: str = "application/json",
            headers: Mapping[str, str] | None = None, delay_s: float = 0.0) -> Reply:
        """Exactly ``body`` (anything: HTML from a proxy, an unexpected JSON shape...)."""
        data = body.encode() if isinstance(body, str) else body
        return cls("raw", status=status, body=data, content_type=content_type,
                   headers=dict(headers or {}), delay_s=delay_s)

    @classmethod
    def malformed(cls, *, status: int = 200, delay_s: float = 0.0) -> Reply:
        """A 200 response labelled ``application/json`` whose body is not valid JSON."""
        return cls.raw(b'{"id": "broken", "choices": [{"index": 0, "mess', status=status,
                       delay_s=delay_s)

    @classmethod
    def drop(cls, *, delay_s: float = 0.0) -> Reply:
        """Close the connection without answering (after reading the whole request)."""
        return cls("drop", delay_s=delay_s)


AnswerFn = Callable[[dict[str, Any]], Reply | str | Awaitable[Reply | str]]
"""Decides the reply to one generation request from its parsed JSON body (a plain string is
the text of a normal answer). It may be a coroutine function: it then runs on the server's
event loop, and may await (an :class:`asyncio.Event`, a sleep...)."""
