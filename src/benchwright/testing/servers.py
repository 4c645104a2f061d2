"""Fake model services on loopback: real HTTP, the real wire formats, scripted answers.

:class:`OpenAIServer` speaks the OpenAI wire format (``POST /v1/chat/completions``,
``POST /v1/completions``, ``GET /v1/models``); :class:`AnthropicServer` speaks the Anthropic
Messages format (``POST /v1/messages``, ``GET /v1/models``). Each listens on ``127.0.0.1`` on an
ephemeral port and runs its own asyncio event loop in a background thread, so it serves
synchronous and asynchronous clients alike (including a client running its own event loop in
the test's thread). The HTTP/1.1 implementation is small, on asyncio streams and the standard
library only: keep-alive connections, ``Content-Length`` bodies (no chunked uploads), JSON
responses, no streaming.

What each generation request gets is decided by an *answer function*: it receives the parsed
JSON body the client sent and returns a :class:`Reply` (or a plain string, the answer's text)::

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
import contextlib
import http
import inspect
import itertools
import json
import re
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar, Literal, Self

__all__ = [
    "AnswerFn",
    "AnthropicServer",
    "FakeServer",
    "OpenAIServer",
    "RecordedRequest",
    "Reply",
]

ReplyKind = Literal["answer", "error", "raw", "drop"]

_HEAD_LIMIT = 64 * 1024
"""Largest request line + headers accepted (bytes)."""


@dataclass(frozen=True)
class Reply:
    """What the server does with one generation request.

    Build one with the class methods; ``Reply()`` is a normal answer ``"ok"``.

    * ``answer``: a normal 200 answer in the server's wire format.
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

    @classmethod
    def answer(cls, text: str = "ok", *, finish_reason: str | None = None,
               usage: tuple[int, int] | Literal["auto"] | None = "auto", model: str | None = None,
               delay_s: float = 0.0, headers: Mapping[str, str] | None = None) -> Reply:
        """A normal answer."""
        return cls("answer", text=text, finish_reason=finish_reason, usage=usage, model=model,
                   delay_s=delay_s, headers=dict(headers or {}))

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


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it."""

    method: str
    path: str
    """The path without the query string, e.g. ``/v1/chat/completions``."""
    query: str
    headers: dict[str, str]
    """Header names in lower case (a repeated header keeps its last value)."""
    json: Any
    """The parsed JSON body; ``None`` when there was no body or it was not JSON."""
    body: bytes
    time: float
    """``time.time()`` when the request was complete."""


@dataclass
class _Response:
    status: int
    body: bytes
    headers: dict[str, str]
    content_type: str = "application/json"
    close: bool = False


def http_reason(status: int) -> str:
    """The reason phrase of ``status`` (``529`` -> ``Overloaded``)."""
    if status == 529:
        return "Overloaded"
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


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


class FakeServer:
    """The HTTP machinery shared by the fake services (use a subclass).

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
        self.answer: AnswerFn | None = answer
        self.delay_s = delay_s
        self.expected_key = expected_key
        self.models = tuple(models)
        self._host = host
        self._want_port = port
        self._port: int | None = None
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._errors: list[str] = []
        self._connections = 0
        self._in_flight = 0
        self._peak_in_flight = 0
        self._ids = itertools.count(1)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None

    # -- life cycle --------------------------------------------------------------------------

    def start(self) -> Self:
        """Start listening (returns when the port is bound)."""
        if self._thread is not None:
            raise RuntimeError(f"{type(self).__name__} is already started")
        self._ready.clear()
        self._thread = threading.Thread(target=self._run, name=f"{self.name}-server", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._startup_error is not None:
            self._thread.join()
            self._thread = None
            raise RuntimeError(f"{type(self).__name__} could not start") from self._startup_error
        return self

    def stop(self) -> None:
        """Close every connection and the listening socket; stop the thread."""
        loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=10)
        self._thread = None
        self._loop = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        try:
            self._server = loop.run_until_complete(asyncio.start_server(
                self._handle, self._host, self._want_port, backlog=1024, limit=_HEAD_LIMIT))
            self._port = int(self._server.sockets[0].getsockname()[1])
        except BaseException as exc:
            self._startup_error = exc
            loop.close()
            self._ready.set()
            return
        self._loop = loop
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _shutdown(self) -> None:
        if self._server is not None:
            self._server.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    # -- what tests look at ------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        return self._port

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT`` (no path)."""
        return f"http://{self._host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What to give the service's SDK as its base URL."""
        return self.url

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in order (a copy; safe from any thread)."""
        with self._lock:
            return list(self._requests)

    @property
    def count(self) -> int:
        """How many requests have been received."""
        with self._lock:
            return len(self._requests)

    @property
    def errors(self) -> list[str]:
        """Exceptions raised by the answer function (they were answered with 500)."""
        with self._lock:
            return list(self._errors)

    @property
    def connections(self) -> int:
        """How many TCP connections have been accepted (keep-alive reuses them)."""
        with self._lock:
            return self._connections

    @property
    def peak_in_flight(self) -> int:
        """The most requests being answered at the same moment."""
        with self._lock:
            return self._peak_in_flight

    def reset(self) -> None:
        """Forget recorded requests, errors and counters."""
        with self._lock:
            self._requests.clear()
            self._errors.clear()
            self._connections = 0
            self._peak_in_flight = self._in_flight

    # -- HTTP ----------------------------------------------------------------------------------

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        with self._lock:
            self._connections += 1
        try:
            while await self._one(reader, writer):
                pass
        except (ConnectionError, OSError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass  # the server is stopping (ending normally keeps asyncio from logging it)
        except Exception as exc:  # a bug here must not kill the loop silently
            with self._lock:
                self._errors.append(f"server: {type(exc).__name__}: {exc}")
        finally:
            if task is not None:
                self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; whether the connection stays open."""
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return False
        except asyncio.LimitOverrunError:
            await self._send(writer, self._plain(431, "request head too large", close=True))
            return False
        lines = head.decode("latin-1").split("\r\n")
        try:
            method, target, version = lines[0].split(" ", 2)
        except ValueError:
            await self._send(writer, self._plain(400, "bad request line", close=True))
            return False
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            await self._send(writer, self._plain(501, "chunked uploads are not supported", close=True))
            return False
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            await self._send(writer, self._plain(400, "bad Content-Length", close=True))
            return False
        body = await reader.readexactly(length) if length > 0 else b""
        conn = headers.get("connection", "").lower()
        keep_alive = "close" not in conn if version == "HTTP/1.1" else "keep-alive" in conn
        path, _, query = target.partition("?")
        parsed: Any = None
        if body:
            try:
                parsed = json.loads(body)
            except ValueError:
                parsed = None
        rec = RecordedRequest(method.upper(), path, query, headers, parsed, body, time.time())
        with self._lock:
            self._requests.append(rec)
            self._in_flight += 1
            self._peak_in_flight = max(self._peak_in_flight, self._in_flight)
        try:
            response = await self._respond(rec)
        finally:
            with self._lock:
                self._in_flight -= 1
        if response is None:  # drop the connection
            transport = writer.transport
            transport.abort()
            return False
        response.close = response.close or not keep_alive
        await self._send(writer, response)
        return not response.close

    async def _send(self, writer: asyncio.StreamWriter, response: _Response) -> None:
        head = [f"HTTP/1.1 {response.status} {http_reason(response.status)}",
                f"Content-Type: {response.content_type}",
                f"Content-Length: {len(response.body)}",
                f"Connection: {'close' if response.close else 'keep-alive'}",
                f"Server: benchwright-{self.name}"]
        head.extend(f"{k}: {v}" for k, v in response.headers.items())
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + response.body)
        await writer.drain()

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
            usage = (_words(_request_text(rec.json)), _words(reply.text))
        model = reply.model or str(rec.json.get("model", self.models[0]))
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

    # -- what a wire format decides ------------------------------------------------------------

    def _route(self, path: str) -> str | None:
        """The method allowed on ``path``; ``None`` for an unknown path."""
        raise NotImplementedError

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

    def _error(self, reply: Reply) -> _Response:
        raise NotImplementedError


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

    def _route(self, path: str) -> str | None:
        if path in self.generation_paths:
            return "POST"
        return "GET" if path == "/v1/models" else None

    def _authorized(self, rec: RecordedRequest) -> bool:
        if self.expected_key is None:
            return True
        return rec.headers.get("authorization", "") == f"Bearer {self.expected_key}"

    def _validate(self, rec: RecordedRequest) -> str | None:
        body = rec.json
        if not body.get("model"):
            return "you must provide a model parameter"
        if body.get("stream"):
            return "streaming is not supported by this fake server"
        if rec.path == "/v1/chat/completions" and not isinstance(body.get("messages"), list):
            return "'messages' is a required property"
        if rec.path == "/v1/completions" and "prompt" not in body:
            return "'prompt' is a required property"
        return None

    def _models_body(self) -> dict[str, Any]:
        return {"object": "list", "data": [
            {"id": m, "object": "model", "created": 0, "owned_by": "benchwright"}
            for m in self.models]}

    def _answer_body(self, rec: RecordedRequest, reply: Reply, model: str,
                     usage: tuple[int, int] | None) -> dict[str, Any]:
        n = self._next_id()
        finish = reply.finish_reason or "stop"
        data: dict[str, Any]
        if rec.path == "/v1/chat/completions":
            data = {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
                    "model": model, "choices": [{
                        "index": 0, "message": {"role": "assistant", "content": reply.text},
                        "logprobs": None, "finish_reason": finish}]}
        else:
            data = {"id": f"cmpl-{n}", "object": "text_completion", "created": int(time.time()),
                    "model": model, "choices": [{
                        "index": 0, "text": reply.text, "logprobs": None, "finish_reason": finish}]}
        if usage is not None:
            data["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                             "total_tokens": usage[0] + usage[1]}
        return data

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

    def _route(self, path: str) -> str | None:
        if path in self.generation_paths:
            return "POST"
        return "GET" if path == "/v1/models" else None

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
        if body.get("stream"):
            return "streaming is not supported by this fake server"
        return None

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
        data: dict[str, Any] = {
            "id": f"msg_{self._next_id():08d}", "type": "message", "role": "assistant",
            "model": model, "content": [{"type": "text", "text": reply.text}],
            "stop_reason": reply.finish_reason or "end_turn", "stop_sequence": None,
        }
        if usage is not None:
            data["usage"] = {"input_tokens": usage[0], "output_tokens": usage[1]}
        return data

    def _error(self, reply: Reply) -> _Response:
        kind = reply.error_type or _ANTHROPIC_ERROR_TYPES.get(
            reply.status, "api_error" if reply.status >= 500 else "invalid_request_error")
        body = {"type": "error", "error": {"type": kind, "message": reply.message}}
        return _Response(reply.status, _json_bytes(body), dict(reply.headers))
