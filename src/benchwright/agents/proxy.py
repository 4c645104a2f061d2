"""The model proxy: the one way an agent CLI in a sandbox reaches its model.

A :class:`ModelProxy` serves, for a run, a loopback HTTP endpoint (TCP ``127.0.0.1:port``, and a
Unix socket a sandbox can be given) speaking the wire formats agent CLIs use, and forwards every
request through benchwright's own providers (:meth:`GenerationEngine.answer`): the agent gets the
run's keys, limits, retries, cache and price table, every request is metered
(:class:`Meter`: requests, tokens, cost, latency), and the real key never enters the sandbox.

Each agent run gets its own key (:meth:`ModelProxy.open`, ``bw-...``) bound to a provider and a
model; whatever model name the client sends, the request goes to the key's. A request without a
valid open key (``Authorization: Bearer KEY``, ``x-api-key``, ``x-goog-api-key`` or ``?key=``) is
answered 401 in its route's error shape and nothing is forwarded.

Routes:

* ``POST /v1/chat/completions`` (also ``/chat/completions``): OpenAI chat, streaming or not
  (``chat.completion.chunk`` events; the usage chunk when ``stream_options.include_usage``).
* ``POST /v1/messages``: Anthropic Messages, streaming or not; ``POST /v1/messages/count_tokens``
  answers an estimate (about four characters a token).
* ``POST /v1/responses`` (also ``/responses``): the OpenAI Responses API, streaming or not;
  ``previous_response_id`` is refused (400): the proxy keeps no conversation, send all of it.
* ``POST /v1beta/models/MODEL:generateContent`` and ``:streamGenerateContent`` (``alt=sse``:
  events; without: a JSON array): Gemini.
* ``GET /v1/models`` (also ``/models``, ``/v1beta/models``): the bound model.

A request is mapped to a :class:`GenerationRequest` (OpenAI-shaped messages and tools, see
:mod:`benchwright.model.wire`), answered by the engine, and the :class:`Answer` rendered in the
client's format; a stream is made from the complete answer. An upstream failure (the engine
already retried) is a 502 saying so, counted in :attr:`Meter.failed`. A body over 32 MiB is
refused (413), malformed JSON is 400. The proxy logs nothing and never echoes a key.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import re
import resource
import secrets
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, Self
from urllib.parse import parse_qs

from benchwright.errors import UserError
from benchwright.httpserve import HTTPServerBase, RecordedRequest, Response
from benchwright.model import wire
from benchwright.model.base import Answer, GenerationRequest
from benchwright.model.engine import GenerationEngine

__all__ = ["MAX_BODY", "Meter", "ModelProxy", "WireServer"]

MAX_BODY = 32 * 1024 * 1024
"""The largest request body the proxy reads (bytes); larger: 413."""
MAX_ERRORS = 5
MAX_PENDING = 8
"""Requests of one agent run answered at once; more fail at once (one agent cannot take every
slot of a provider from the others and the judge)."""
"""How many error messages a :class:`Meter` keeps (the last ones)."""

Flavour = Literal["openai", "anthropic", "responses", "gemini"]
_GEMINI = re.compile(r"^/v1(?:beta|alpha)?/models/([^/:]+):(generateContent|streamGenerateContent|countTokens)$")


@dataclass
class Meter:
    """What one agent run's model traffic cost (serialised into records)."""

    requests: int = 0
    """Generation requests forwarded to the provider (failed ones included)."""
    failed: int = 0
    """Of them, those the provider did not answer (after the engine's retries)."""
    cached: int = 0
    """Of them, those answered from the generation cache."""
    tokens_in: int = 0
    tokens_out: int = 0
    tokens_estimated: bool = False
    """Whether any answer's tokens were estimated (the service did not say)."""
    cost_usd: float | None = None
    """The sum of the answers' costs; None until a priced answer arrives."""
    latency_ms: float = 0.0
    """The sum of the answered requests' latency, as the agent waited for them."""
    errors: list[str] = field(default_factory=list)
    """The last few error messages (redacted by the engine), at most :data:`MAX_ERRORS`."""

    def to_dict(self) -> dict[str, Any]:
        return {"requests": self.requests, "failed": self.failed, "cached": self.cached,
                "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "tokens_estimated": self.tokens_estimated, "cost_usd": self.cost_usd,
                "latency_ms": round(self.latency_ms, 3), "errors": list(self.errors)}

    def copy(self) -> Meter:
        return Meter(**{**self.__dict__, "errors": list(self.errors)})


@dataclass
class _Call:
    """What a request resolved to: which route and format, what to ask."""

    flavour: Flavour
    kind: Literal["generate", "count", "models"]
    stream: bool = False
    sse: bool = True
    include_usage: bool = True
    model: str = ""


async def _chunks(events: list[bytes]) -> AsyncIterator[bytes]:
    for event in events:
        yield event
        await asyncio.sleep(0)


def _json(data: Any) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode()


class WireServer(HTTPServerBase):
    """Serves the model wire formats of :mod:`benchwright.agents.proxy` over an answering
    function (:meth:`_generate`); :class:`ModelProxy` forwards to the engine, the scripted model
    (:mod:`benchwright.testing.script`) answers from a file. Subclasses say who may ask
    (:meth:`_context`) and what the answer is."""

    name: ClassVar[str] = "model"
    max_body: ClassVar[int] = MAX_BODY
    record: ClassVar[bool] = False

    # -- what a subclass decides ---------------------------------------------------------------

    def _context(self, rec: RecordedRequest) -> Any:
        """What the request is allowed as (``None``: refused with 401)."""
        raise NotImplementedError

    def _model_name(self, context: Any) -> str:
        """The model ``GET /v1/models`` lists and answers name when the client named none."""
        raise NotImplementedError

    async def _generate(self, context: Any, request: GenerationRequest) -> tuple[Answer | None, str]:
        """The answer to ``request``, or ``(None, why it failed)``."""
        raise NotImplementedError

    def _bind(self, context: Any, request: GenerationRequest) -> GenerationRequest:
        """The request as it is sent (the model replaced by the bound one)."""
        return request

    # -- routing -------------------------------------------------------------------------------

    @staticmethod
    def _flavour(rec_path: str, headers: dict[str, str]) -> Flavour:
        path = rec_path.rstrip("/")
        if path.startswith("/v1/messages"):
            return "anthropic"
        if path in ("/v1/responses", "/responses"):
            return "responses"
        if path.startswith(("/v1beta/", "/v1alpha/")) or _GEMINI.match(path):
            return "gemini"
        if path in ("/v1/models", "/models") and "anthropic-version" in headers:
            return "anthropic"
        return "openai"

    def _resolve(self, rec: RecordedRequest) -> _Call | None:
        path = rec.path.rstrip("/")
        flavour = self._flavour(path, rec.headers)
        if rec.method == "GET" and path in ("/v1/models", "/models", "/v1beta/models"):
            return _Call(flavour, "models")
        if rec.method != "POST":
            return None
        if path in ("/v1/chat/completions", "/chat/completions"):
            return _Call("openai", "generate")
        if path == "/v1/messages":
            return _Call("anthropic", "generate")
        if path == "/v1/messages/count_tokens":
            return _Call("anthropic", "count")
        if path in ("/v1/responses", "/responses"):
            return _Call("responses", "generate")
        match = _GEMINI.match(path)
        if match:
            what = match.group(2)
            if what == "countTokens":
                return _Call("gemini", "count", model=match.group(1))
            stream = what == "streamGenerateContent"
            alt = parse_qs(rec.query).get("alt", [""])[-1]
            return _Call("gemini", "generate", stream=stream, sse=alt == "sse", model=match.group(1))
        return None

    # -- errors --------------------------------------------------------------------------------

    def _error_for(self, flavour: Flavour, status: int, message: str, *, close: bool = False) -> Response:
        body: dict[str, Any]
        if flavour == "anthropic":
            kind = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
                    405: "invalid_request_error", 413: "request_too_large"}.get(status, "api_error")
            body = {"type": "error", "error": {"type": kind, "message": message}}
        elif flavour == "gemini":
            kind = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 404: "NOT_FOUND",
                    413: "INVALID_ARGUMENT"}.get(status, "UNAVAILABLE")
            body = {"error": {"code": status, "message": message, "status": kind}}
        else:
            kind = {400: "invalid_request_error", 401: "invalid_request_error",
                    404: "invalid_request_error", 413: "invalid_request_error"}.get(status, "server_error")
            body = {"error": {"message": message, "type": kind, "param": None,
                              "code": "invalid_api_key" if status == 401 else None}}
        return Response(status, _json(body), {}, close=close)

    def _plain(self, status: int, message: str, *, close: bool = False) -> Response:
        return self._error_for("openai", status, message, close=close)

    def _refuse(self, path: str, status: int, message: str) -> Response:
        return self._error_for(self._flavour(path, {}), status, message, close=True)

    # -- answering -----------------------------------------------------------------------------

    async def _respond(self, rec: RecordedRequest) -> Response | None:
        flavour = self._flavour(rec.path, rec.headers)
        context = self._context(rec)
        if context is None:
            return self._error_for(flavour, 401, "invalid or missing API key (use the key this "
                                                 "run was given)")
        call = self._resolve(rec)
        if call is None:
            return self._error_for(flavour, 404, f"no route for {rec.method} {rec.path}")
        if call.kind == "models":
            return Response(200, _json(self._models(call.flavour, self._model_name(context))), {})
        if rec.json is None and rec.body:
            return self._error_for(call.flavour, 400, "the request body is not valid JSON")
        body = rec.json
        try:
            request = self._request(call, body)
        except wire.WireError as exc:
            return self._error_for(call.flavour, 400, str(exc))
        if call.kind == "count":
            said = "\n".join([json.dumps(request.tools or []),
                              *(json.dumps(m) for m in request.messages)])
            data = ({"input_tokens": wire.estimate_tokens(said)} if call.flavour == "anthropic"
                    else {"totalTokens": wire.estimate_tokens(said)})
            return Response(200, _json(data), {})
        if call.flavour != "gemini":
            call.stream = body.get("stream") is True
            options = body.get("stream_options")
            call.include_usage = (call.flavour != "openai" or
                                  (isinstance(options, dict) and options.get("include_usage") is True))
            call.model = str(body.get("model") or "")
        answer, why = await self._generate(context, self._bind(context, request))
        if answer is None:
            return self._error_for(call.flavour, 502, self._failure(why))
        return self._render(call, answer, call.model or self._model_name(context))

    def _failure(self, why: str) -> str:
        """What a client is told of a failed answer."""
        return f"the upstream model failed (after the harness's retries): {why}"

    def _request(self, call: _Call, body: Any) -> GenerationRequest:
        if not isinstance(body, dict):
            raise wire.WireError("the request body is not a JSON object")
        if call.flavour == "openai":
            return wire.openai_chat_request(body, "")
        if call.flavour == "anthropic":
            return wire.anthropic_request(body, "")
        if call.flavour == "responses":
            if body.get("previous_response_id"):
                raise wire.WireError("previous_response_id is not supported here: send the whole "
                                     "conversation as input (store: false)")
            return wire.responses_request(body, "")
        return wire.gemini_request(body, "")

    @staticmethod
    def _models(flavour: Flavour, model: str) -> dict[str, Any]:
        if flavour == "anthropic":
            return {"data": [{"type": "model", "id": model, "display_name": model,
                              "created_at": "2025-01-01T00:00:00Z"}],
                    "has_more": False, "first_id": model, "last_id": model}
        if flavour == "gemini":
            return {"models": [{"name": f"models/{model}", "displayName": model,
                                "supportedGenerationMethods": ["generateContent",
                                                               "streamGenerateContent"]}]}
        return {"object": "list", "data": [{"id": model, "object": "model", "created": 0,
                                            "owned_by": "benchwright"}]}

    @staticmethod
    def _render(call: _Call, answer: Answer, model: str) -> Response:
        r = wire.Rendered(answer.text, answer.tool_calls,
                          wire.finish_for(answer.finish_reason, bool(answer.tool_calls)), model,
                          answer.tokens_in or 0, answer.tokens_out or 0)
        events: list[bytes] | None = None
        body: Any = None
        if call.flavour == "openai":
            if call.stream:
                events = wire.openai_chat_events(r, include_usage=call.include_usage)
            else:
                body = wire.openai_chat_body(r)
        elif call.flavour == "anthropic":
            events, body = (wire.anthropic_events(r), None) if call.stream else (None, wire.anthropic_body(r))
        elif call.flavour == "responses":
            events, body = (wire.responses_events(r), None) if call.stream else (None, wire.responses_body(r))
        elif call.stream and call.sse:
            events = wire.gemini_events(r)
        elif call.stream:
            body = [json.loads(e.decode().removeprefix("data: ")) for e in wire.gemini_events(r)]
        else:
            body = wire.gemini_body(r)
        if events is not None:
            return Response(200, b"", {}, "text/event-stream", stream=_chunks(events))
        return Response(200, _json(body), {})


@dataclass
class _Binding:
    provider: str
    model: str
    label: str
    meter: Meter
    budget: int | None = None
    """Prompt + completion tokens the run may use in all (None: no budget)."""
    pending: set[concurrent.futures.Future[Any]] = field(default_factory=set)
    """The engine calls of its requests being answered (cancelled when the key is closed)."""


class ModelProxy(WireServer):
    """Forwards an agent run's model requests through the generation engine (see the module)."""

    name: ClassVar[str] = "model-proxy"

    def __init__(self, engine: GenerationEngine, loop: asyncio.AbstractEventLoop, *,
                 socket_dir: Path | None = None, port: int = 0) -> None:
        """
        Args:
            engine: answers every request (its providers, keys, limits, retries, cache).
            loop: the engine's event loop, running in another thread: engine calls are made
                on it.
            socket_dir: when given, also listen on a Unix socket ``model.sock`` in this folder
                (made ``0o711`` so that a sandbox's user can reach the socket, ``0o666``,
                without listing the folder).
            port: the TCP port on ``127.0.0.1`` (0: an ephemeral one).
        """
        sock: Path | None = None
        if socket_dir is not None:
            socket_dir.mkdir(parents=True, exist_ok=True)
            os.chmod(socket_dir, 0o711)
            sock = socket_dir / "model.sock"
            if len(os.fsencode(sock)) > 100:
                raise UserError(f"the model proxy's socket path {sock} is too long for a Unix "
                                "socket (over 100 bytes): use a shorter socket folder")
        super().__init__(host="127.0.0.1", port=port, unix_socket=sock, socket_mode=0o666)
        self.engine = engine
        self.engine_loop = loop
        self._keys: dict[str, _Binding] = {}
        self._keys_lock = threading.Lock()

    @property
    def socket(self) -> Path | None:
        """The Unix socket, when a ``socket_dir`` was given."""
        return self.unix_socket

    def start(self) -> Self:
        """Listen; the process's soft limit of open files is raised (up to its hard limit, at
        most 8192) so that the proxy's connections (at most ``max_connections``) never take the
        descriptors the rest of the harness needs."""
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        want = 8192 if hard == resource.RLIM_INFINITY else min(hard, 8192)
        if soft != resource.RLIM_INFINITY and soft < want:
            with contextlib.suppress(ValueError, OSError):
                resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
        return super().start()

    # -- keys --------------------------------------------------------------------------------

    def open(self, provider: str, model: str, label: str = "", budget: int | None = None) -> tuple[str, Meter]:
        """A new key bound to ``provider``/``model`` (``bw-`` and 32 random bytes, URL-safe) and
        the :class:`Meter` its requests update; once its answers have used ``budget`` tokens
        (prompt + completion), its further requests fail without being forwarded."""
        if provider not in self.engine.providers:
            raise UserError(f"the model proxy has no provider named {provider!r} "
                            f"(known: {', '.join(sorted(self.engine.providers)) or 'none'})")
        key = "bw-" + secrets.token_urlsafe(32)
        meter = Meter()
        with self._keys_lock:
            self._keys[key] = _Binding(provider, model, label, meter, budget)
        return key, meter

    def close(self, key: str) -> Meter:
        """Stop ``key`` working; its meter (requests still being answered may add to it)."""
        with self._keys_lock:
            binding = self._keys.pop(key, None)
            if binding is None:
                raise KeyError("no open key like that")  # never the key itself
            pending = list(binding.pending)
            binding.pending.clear()
            if pending:  # the agent's run is over: what it still asked is not paid for, nor lost
                binding.meter.requests += len(pending)
                binding.meter.failed += len(pending)
                binding.meter.errors.append(f"{len(pending)} request(s) still being answered when the "
                                            "agent's run ended were cancelled")
                del binding.meter.errors[:-MAX_ERRORS]
        for future in pending:
            future.cancel()
        return binding.meter

    def meter(self, key: str) -> Meter:
        """A copy of ``key``'s meter as it is now (safe from any thread)."""
        with self._keys_lock:
            binding = self._keys.get(key)
            if binding is None:
                raise KeyError("no open key like that")
            return binding.meter.copy()

    # -- WireServer ------------------------------------------------------------------------------

    @staticmethod
    def _presented(rec: RecordedRequest) -> list[str]:
        found = []
        auth = rec.headers.get("authorization", "")
        if auth[:7].lower() == "bearer ":
            found.append(auth[7:].strip())
        for name in ("x-api-key", "x-goog-api-key"):
            if rec.headers.get(name):
                found.append(rec.headers[name].strip())
        found.extend(parse_qs(rec.query).get("key", []))
        return found

    def _context(self, rec: RecordedRequest) -> _Binding | None:
        with self._keys_lock:
            for key in self._presented(rec):
                binding = self._keys.get(key)
                if binding is not None:
                    return binding
        return None

    def _model_name(self, context: Any) -> str:
        binding: _Binding = context
        return binding.model

    def _bind(self, context: Any, request: GenerationRequest) -> GenerationRequest:
        binding: _Binding = context
        return GenerationRequest(model=binding.model, mode=request.mode, messages=request.messages,
                                 prompt=request.prompt, language=request.language,
                                 params=request.params, tools=request.tools)

    async def _generate(self, context: Any, request: GenerationRequest) -> tuple[Answer | None, str]:
        binding: _Binding = context
        start = time.perf_counter()
        why = ""
        answer: Answer | None = None
        cached = False
        with self._keys_lock:
            busy = len(binding.pending) >= MAX_PENDING
            spent = binding.budget is not None and \
                binding.meter.tokens_in + binding.meter.tokens_out >= binding.budget
            future = None if busy or spent or binding.meter is not self._meter_of(binding) else \
                asyncio.run_coroutine_threadsafe(self.engine.answer(binding.provider, request), self.engine_loop)
            if future is not None:
                binding.pending.add(future)
        if future is None:
            why = (f"more than {MAX_PENDING} requests at once from one agent run" if busy
                   else f"the agent's token budget ({binding.budget:,} tokens, max_tokens) is spent" if spent
                   else "the agent's run has ended")
            with self._keys_lock:
                self._count(binding.meter, None, why, False, 0.0)
            return None, why
        try:
            outcome = await asyncio.wrap_future(future)
        except (asyncio.CancelledError, concurrent.futures.CancelledError):
            raise asyncio.CancelledError from None  # its key was closed: counted there
        except Exception as exc:  # the engine's loop is gone, or a bug: the agent gets a 502
            why = f"{type(exc).__name__}: {exc}"
        else:
            answer, why, cached = outcome.answer, outcome.error or "no answer", outcome.cached
        finally:
            with self._keys_lock:
                binding.pending.discard(future)
        ms = (time.perf_counter() - start) * 1000
        with self._keys_lock:
            self._count(binding.meter, answer, why, cached, ms)
        return answer, why

    def _failure(self, why: str) -> str:
        """Only that it failed: the provider's address and the upstream's own words stay in the
        run's records (the meter's ``errors``), out of the agent's reach."""
        return "the upstream model failed (after the harness's retries); the run's records say why"

    def _meter_of(self, binding: _Binding) -> Meter | None:
        """The binding's meter while its key is open (the caller holds the lock)."""
        return binding.meter if any(b is binding for b in self._keys.values()) else None

    def _admit(self, method: str, path: str, headers: dict[str, str], query: str) -> Response | None:
        """A request without an open key is refused on its head: its body is never read."""
        head = RecordedRequest(method, path, query, headers, None, b"", 0.0)
        if self._context(head) is None:
            return self._error_for(self._flavour(path, headers), 401,
                                   "invalid or missing API key (use the key this run was given)", close=True)
        return None

    @staticmethod
    def _count(meter: Meter, answer: Answer | None, why: str, cached: bool, ms: float) -> None:
        meter.requests += 1
        if answer is None:
            meter.failed += 1
            meter.errors.append(why[:500])
            del meter.errors[:-MAX_ERRORS]
            return
        meter.cached += cached
        meter.latency_ms += ms
        meter.tokens_in += answer.tokens_in or 0
        meter.tokens_out += answer.tokens_out or 0
        meter.tokens_estimated = meter.tokens_estimated or answer.tokens_estimated
        if answer.cost_usd is not None:
            meter.cost_usd = (meter.cost_usd or 0.0) + answer.cost_usd


