"""Fake model services on loopback: real HTTP, the real wire formats, scripted answers.

:class:`OpenAIServer` speaks the OpenAI wire format (``POST /v1/chat/completions``,
``POST /v1/completions``, ``GET /v1/models``); :class:`AnthropicServer` speaks the Anthropic
Messages format (``POST /v1/messages``, ``GET /v1/models``). Each listens on ``127.0.0.1`` on an
ephemeral port and runs its own asyncio event loop in a background thread, so it serves
synchronous and asynchronous clients alike (including a client running its own event loop in
the test's thread). The HTTP/1.1 implementation (:mod:`benchwright.httpserve`) is small, on
asyncio streams and the standard library only: keep-alive connections, ``Content-Length``
bodies (no chunked uploads), JSON responses.

Both stream when a request says ``stream: true`` (chat completions and messages): the scripted
answer is sent as the real services' server-sent events (:mod:`benchwright.model.wire`): OpenAI
``chat.completion.chunk`` deltas (the role, the text in a few pieces, each tool call's index, id
and name and then its arguments in pieces, the finish reason, a usage chunk when
``stream_options.include_usage``, ``[DONE]``); Anthropic ``message_start``,
``content_block_start``/``_delta`` (``text_delta``, ``input_json_delta``)/``_stop``,
``message_delta`` (stop reason, output tokens), ``message_stop``.

A scripted answer may call tools (``Reply.tool_calls([("shell", {"command": "ls"})])``), sent in
the service's wire format (OpenAI ``message.tool_calls``, Anthropic ``tool_use`` blocks). As the
real services do, a request whose tool results do not match the tool calls before them is
refused with 400 (OpenAI: every assistant ``tool_calls`` id answered by a ``tool`` message
right after it; Anthropic: every ``tool_use`` id answered by a ``tool_result`` block in the
next user message).

What each generation request gets is decided by an *answer function*: it receives the parsed
JSON body the client sent and returns a :class:`Reply` (or a plain string, the answer's text;
both in :mod:`benchwright.testing.reply`)::

    def answer(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["content"] == "boom":
            return Reply.error(503, "try later", headers={"Retry-After": "2"})
        return Reply.answer("```python\\nprint(1)\\n```", usage=(12, 4))

    with OpenAIServer(answer=answer, delay_s=0.1, expected_key="sk-test") as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="sk-test")
        ...
        assert srv.count == 1 and srv.requests[0].json["model"] == "m"

Every request received (whatever its path, and before any check) is recorded in
:attr:`FakeServer.requests`. The answer function runs on the server's event loop thread: it
must be quick and must not block (use :attr:`Reply.delay_s` for slow answers, or make it a
coroutine function). If it raises, the client gets a 500 and :attr:`FakeServer.errors` says why.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import re
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar

from benchwright.httpserve import _HEAD_LIMIT as _HEAD_LIMIT
from benchwright.httpserve import HTTPServerBase, _Response
from benchwright.model import wire
from benchwright.model.base import ToolCall
from benchwright.testing.reply import AnswerFn, RecordedRequest, Reply
from benchwright.testing.reply import ReplyKind as ReplyKind
from benchwright.testing.reply import http_reason as http_reason

__all__ = [
    "AnswerFn",
    "AnthropicServer",
    "FakeServer",
    "OpenAIServer",
    "RecordedRequest",
    "Reply",
]


def _words(text: str) -> int:
    return len(re.findall(r"\w+|[^\w\s]+", text))


def _request_text(body: Mapping[str, Any]) -> str:
    parts: list[str] = []
    prompt = body.get("prompt")
    if isinstance(prompt, str):
        parts.append(prompt)
    elif isinstance(prompt, list):
        parts.extend(p for p in prompt if isinstance(p, str))
    system = body.get("system")
    if isinstance(system, str):
        parts.append(system)
    for msg in body.get("messages") or []:
        content = msg.get("content") if isinstance(msg, dict) else None
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(c.get("text", "")) for c in content if isinstance(c, dict))
    return "\n".join(parts)


def _json_bytes(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


class FakeServer(HTTPServerBase):
    """What the fake services share on top of the HTTP server: answer functions, the
    expected key, the models listed (use a subclass).

    Start it with ``with`` (or :meth:`start` / :meth:`stop`). ``answer`` and ``delay_s`` may be
    reassigned while the server runs.
    """

    name: ClassVar[str] = "fake"
    generation_paths: ClassVar[frozenset[str]] = frozenset()
    """POST paths answered through the answer function."""

    def __init__(self, answer: AnswerFn | None = None, *, delay_s: float = 0.0,
                 expected_key: str | None = None, models: tuple[str, ...] = ("fake-model",),
                 host: str = "127.0.0.1", port: int = 0) -> None:
        """
        Args:
            answer: decides each generation request's reply (default: ``Reply()``, "ok").
            delay_s: wait this long before every generation reply (the model "thinking").
            expected_key: when set, requests without this key get 401.
            models: what ``GET /v1/models`` lists.
            host, port: where to listen (default: loopback, an ephemeral port).
        """
        super().__init__(host=host, port=port)
        self.answer: AnswerFn | None = answer
        self.delay_s = delay_s
        self.expected_key = expected_key
        self.models = tuple(models)
        self._ids = itertools.count(1)

    @property
    def base_url(self) -> str:
        """What to give the service's SDK as its base URL."""
        return self.url

    # -- answering ----------------------------------------------------------------------------

    def _plain(self, status: int, message: str, *, close: bool = False) -> _Response:
        response = self._error(Reply.error(status, message))
        response.close = close
        return response

    async def _respond(self, rec: RecordedRequest) -> _Response | None:
        """The response to ``rec``; ``None`` to drop the connection."""
        if not self._authorized(rec):
            return self._plain(401, "invalid or missing API key")
        route = self._route(rec.path)
        if route is None:
            return self._plain(404, f"no route for {rec.path}")
        if rec.method != route:
            return self._plain(405, f"{rec.method} is not allowed on {rec.path}")
        if rec.method == "GET":
            return _Response(200, _json_bytes(self._models_body()), {})
        if not isinstance(rec.json, dict):
            return self._plain(400, "the request body is not a JSON object")
        problem = self._validate(rec)
        if problem:
            return self._plain(400, problem)
        reply = await self._decide(rec.json)
        delay = self.delay_s + reply.delay_s
        if delay > 0:
            await asyncio.sleep(delay)
        if reply.kind == "drop":
            return None
        if reply.kind == "error":
            return self._error(reply)
        if reply.kind == "raw":
            return _Response(reply.status, reply.body, dict(reply.headers), reply.content_type)
        usage = reply.usage
        if usage == "auto":
            said = " ".join([reply.text, *(f"{name} {args}" for _, name, args in reply.calls)])
            usage = (_words(_request_text(rec.json)), _words(said))
        model = reply.model or str(rec.json.get("model", self.models[0]))
        if rec.json.get("stream") is True:
            events = self._stream_events(rec, reply, model, usage)
            return _Response(200, b"", dict(reply.headers), "text/event-stream",
                             stream=_chunks(events))
        data = self._answer_body(rec, reply, model, usage)
        return _Response(200, _json_bytes(data), dict(reply.headers))

    async def _decide(self, body: dict[str, Any]) -> Reply:
        if self.answer is None:
            return Reply()
        try:
            result = self.answer(body)
            reply = await result if inspect.isawaitable(result) else result
        except Exception as exc:
            with self._lock:
                self._errors.append(f"answer function: {type(exc).__name__}: {exc}")
            return Reply.error(500, f"the answer function raised {type(exc).__name__}: {exc}")
        return Reply.answer(reply) if isinstance(reply, str) else reply

    def _next_id(self) -> int:
        return next(self._ids)

    def _call_ids(self, reply: Reply) -> list[str]:
        return [call_id or f"call_{self._next_id()}" for call_id, _, _ in reply.calls]

    # -- what a wire format decides ------------------------------------------------------------

    def _route(self, path: str) -> str | None:
        """The method allowed on ``path``; ``None`` for an unknown path."""
        if path in self.generation_paths:
            return "POST"
        return "GET" if path == "/v1/models" else None

    def _authorized(self, rec: RecordedRequest) -> bool:
        raise NotImplementedError

    def _validate(self, rec: RecordedRequest) -> str | None:
        """A 400 message for a request the real service would reject, else ``None``."""
        return None

    def _models_body(self) -> dict[str, Any]:
        raise NotImplementedError

    def _answer_body(self, rec: RecordedRequest, reply: Reply, model: str,
                     usage: tuple[int, int] | None) -> dict[str, Any]:
        raise NotImplementedError

    def _stream_events(self, rec: RecordedRequest, reply: Reply, model: str,
                       usage: tuple[int, int] | None) -> list[bytes]:
        """The server-sent events answering a ``stream: true`` request."""
        raise NotImplementedError

    def _rendered(self, reply: Reply, model: str, usage: tuple[int, int] | None,
                  finish: str, id_prefix: str = "call_") -> wire.Rendered:
        calls = [ToolCall(call_id.replace("call_", id_prefix, 1), name, args)
                 for call_id, (_, name, args) in zip(self._call_ids(reply), reply.calls, strict=True)]
        tin, tout = usage or (0, 0)
        return wire.Rendered(reply.text, calls, finish, model, tin, tout)

    def _error(self, reply: Reply) -> _Response:
        raise NotImplementedError


async def _chunks(events: list[bytes]) -> AsyncIterator[bytes]:
    for event in events:
        yield event
        await asyncio.sleep(0)


def _openai_tool_turns(messages: list[Any]) -> str | None:
    """What the real service says about tool results that do not answer the calls before them."""
    pending: list[str] = []
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            return f"messages[{i}]: not an object"
        role = msg.get("role")
        if role == "tool":
            call_id = msg.get("tool_call_id")
            if call_id not in pending:
                return (f"Invalid parameter: messages with role 'tool' must be a response to a "
                        f"preceeding message with 'tool_calls' (messages[{i}], id {call_id!r})")
            pending.remove(call_id)
            continue
        if pending:
            return ("An assistant message with 'tool_calls' must be followed by tool messages "
                    f"responding to each 'tool_call_id'. Missing: {', '.join(pending)}")
        if role == "assistant":
            pending = [str(c.get("id")) for c in msg.get("tool_calls") or [] if isinstance(c, dict)]
    if pending:
        return ("An assistant message with 'tool_calls' must be followed by tool messages "
                f"responding to each 'tool_call_id'. Missing: {', '.join(pending)}")
    return None


def _anthropic_tool_turns(messages: list[Any]) -> str | None:
    """Every ``tool_use`` answered by a ``tool_result`` at the start of the next user message."""
    for i, msg in enumerate(messages):
        content = msg.get("content") if isinstance(msg, dict) else None
        if not isinstance(content, list) or msg.get("role") != "assistant":
            continue
        ids = [b.get("id") for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        if not ids:
            continue
        after = messages[i + 1] if i + 1 < len(messages) else None
        blocks = after.get("content") if isinstance(after, dict) else None
        answered = [b.get("tool_use_id") for b in blocks or []
                    if isinstance(b, dict) and b.get("type") == "tool_result"] \
            if isinstance(blocks, list) else []
        missing = [x for x in ids if x not in answered]
        if missing:
            return (f"messages.{i + 1}: `tool_use` ids were found without `tool_result` blocks "
                    f"immediately after: {', '.join(map(str, missing))}")
    return None


_OPENAI_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error",
                       403: "permission_error", 404: "invalid_request_error",
                       429: "rate_limit_exceeded"}


class OpenAIServer(FakeServer):
    """A fake OpenAI-compatible service: ``POST /v1/chat/completions``, ``POST /v1/completions``,
    ``GET /v1/models``; ``Authorization: Bearer KEY`` is checked when ``expected_key`` is set.

    :attr:`base_url` is ``http://127.0.0.1:PORT/v1`` (what ``openai.OpenAI(base_url=...)`` takes).
    A chat request needs ``model`` and ``messages``; a completion request ``model`` and
    ``prompt`` (else 400, as the real service does).
    """

    name = "openai"
    generation_paths = frozenset({"/v1/chat/completions", "/v1/completions"})

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def _authorized(self, rec: RecordedRequest) -> bool:
        if self.expected_key is None:
            return True
        return rec.headers.get("authorization", "") == f"Bearer {self.expected_key}"

    def _validate(self, rec: RecordedRequest) -> str | None:
        body = rec.json
        if not body.get("model"):
            return "you must provide a model parameter"
        if body.get("stream") and rec.path != "/v1/chat/completions":
            return "streaming is only supported on /v1/chat/completions by this fake server"
        if rec.path == "/v1/chat/completions" and not isinstance(body.get("messages"), list):
            return "'messages' is a required property"
        if rec.path == "/v1/completions" and "prompt" not in body:
            return "'prompt' is a required property"
        if rec.path == "/v1/chat/completions":
            if "tools" in body and not isinstance(body["tools"], list):
                return "'tools' must be an array"
            return _openai_tool_turns(body["messages"])
        return None

    def _models_body(self) -> dict[str, Any]:
        return {"object": "list", "data": [
            {"id": m, "object": "model", "created": 0, "owned_by": "benchwright"}
            for m in self.models]}

    def _answer_body(self, rec: RecordedRequest, reply: Reply, model: str,
                     usage: tuple[int, int] | None) -> dict[str, Any]:
        n = self._next_id()
        finish = reply.finish_reason or ("tool_calls" if reply.calls else "stop")
        data: dict[str, Any]
        if rec.path == "/v1/chat/completions":
            message: dict[str, Any] = {"role": "assistant", "content": reply.text}
            if reply.calls:
                message["content"] = reply.text or None
                message["tool_calls"] = [
                    {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
                    for call_id, (_, name, args) in zip(self._call_ids(reply), reply.calls,
                                                        strict=True)]
            data = {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
                    "model": model, "choices": [{
                        "index": 0, "message": message, "logprobs": None, "finish_reason": finish}]}
        else:
            data = {"id": f"cmpl-{n}", "object": "text_completion", "created": int(time.time()),
                    "model": model, "choices": [{
                        "index": 0, "text": reply.text, "logprobs": None, "finish_reason": finish}]}
        if usage is not None:
            data["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                             "total_tokens": usage[0] + usage[1]}
        return data

    def _stream_events(self, rec: RecordedRequest, reply: Reply, model: str,
                       usage: tuple[int, int] | None) -> list[bytes]:
        finish = reply.finish_reason or ("tool_calls" if reply.calls else "stop")
        options = rec.json.get("stream_options")
        include = isinstance(options, dict) and options.get("include_usage") is True
        return wire.openai_chat_events(self._rendered(reply, model, usage, finish),
                                       include_usage=include and usage is not None)

    def _error(self, reply: Reply) -> _Response:
        kind = reply.error_type or _OPENAI_ERROR_TYPES.get(
            reply.status, "server_error" if reply.status >= 500 else "invalid_request_error")
        body = {"error": {"message": reply.message, "type": kind, "param": None,
                          "code": "invalid_api_key" if reply.status == 401 else None}}
        return _Response(reply.status, _json_bytes(body), dict(reply.headers))


_ANTHROPIC_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                          403: "permission_error", 404: "not_found_error",
                          413: "request_too_large", 429: "rate_limit_error",
                          529: "overloaded_error"}


class AnthropicServer(FakeServer):
    """A fake Anthropic service: ``POST /v1/messages`` and ``GET /v1/models``.

    :attr:`base_url` is ``http://127.0.0.1:PORT`` (the Anthropic SDK adds ``/v1/...`` itself).
    Every request needs an ``anthropic-version`` header; when ``expected_key`` is set, the
    ``x-api-key`` header (or ``Authorization: Bearer``) must carry it. A message request needs
    ``model``, ``max_tokens`` and a non-empty ``messages`` list (else 400, as the real service).
    An answer's ``finish_reason`` is sent as ``stop_reason`` (default ``end_turn``).
    """

    name = "anthropic"
    generation_paths = frozenset({"/v1/messages"})

    def _authorized(self, rec: RecordedRequest) -> bool:
        if self.expected_key is None:
            return True
        return (rec.headers.get("x-api-key") == self.expected_key
                or rec.headers.get("authorization") == f"Bearer {self.expected_key}")

    def _validate(self, rec: RecordedRequest) -> str | None:
        if "anthropic-version" not in rec.headers:
            return "anthropic-version: header is required"
        body = rec.json
        if not body.get("model"):
            return "model: Field required"
        if not isinstance(body.get("max_tokens"), int):
            return "max_tokens: Field required"
        if not isinstance(body.get("messages"), list) or not body["messages"]:
            return "messages: at least one message is required"
        return _anthropic_tool_turns(body["messages"])

    async def _respond(self, rec: RecordedRequest) -> _Response | None:
        if rec.method == "GET" and "anthropic-version" not in rec.headers and self._route(rec.path):
            return self._plain(400, "anthropic-version: header is required")
        return await super()._respond(rec)

    def _models_body(self) -> dict[str, Any]:
        data = [{"type": "model", "id": m, "display_name": m, "created_at": "2025-01-01T00:00:00Z"}
                for m in self.models]
        return {"data": data, "has_more": False,
                "first_id": data[0]["id"] if data else None,
                "last_id": data[-1]["id"] if data else None}

    def _answer_body(self, rec: RecordedRequest, reply: Reply, model: str,
                     usage: tuple[int, int] | None) -> dict[str, Any]:
        content: list[dict[str, Any]] = []
        if reply.text or not reply.calls:
            content.append({"type": "text", "text": reply.text})
        for call_id, (_, name, args) in zip(self._call_ids(reply), reply.calls, strict=True):
            content.append({"type": "tool_use", "id": call_id.replace("call_", "toolu_", 1),
                            "name": name, "input": json.loads(args)})
        data: dict[str, Any] = {
            "id": f"msg_{self._next_id():08d}", "type": "message", "role": "assistant",
            "model": model, "content": content,
            "stop_reason": reply.finish_reason or ("tool_use" if reply.calls else "end_turn"),
            "stop_sequence": None,
        }
        if usage is not None:
            data["usage"] = {"input_tokens": usage[0], "output_tokens": usage[1]}
        return data

    def _stream_events(self, rec: RecordedRequest, reply: Reply, model: str,
                       usage: tuple[int, int] | None) -> list[bytes]:
        finish = reply.finish_reason or ("tool_use" if reply.calls else "end_turn")
        return wire.anthropic_events(self._rendered(reply, model, usage, finish, "toolu_"))

    def _error(self, reply: Reply) -> _Response:
        kind = reply.error_type or _ANTHROPIC_ERROR_TYPES.get(
            reply.status, "api_error" if reply.status >= 500 else "invalid_request_error")
        body = {"type": "error", "error": {"type": kind, "message": reply.message}}
        return _Response(reply.status, _json_bytes(body), dict(reply.headers))
