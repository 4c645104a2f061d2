"""What every request to ``benchwright serve`` passes before the API or the UI sees it.

One pure ASGI middleware (:class:`Guard`), outside FastAPI and NiceGUI, so that it covers the
API, the UI's pages and its socket.io channel alike:

* **Host** (without ``--auth``): only loopback names are answered (``localhost``,
  ``127.0.0.1``, ``[::1]``, any port). A web page on another name that resolves to 127.0.0.1
  (DNS rebinding) gets ``421``, its websocket is refused.
* **Origin**: a request that carries an ``Origin`` (browsers add it to cross-site requests,
  to every POST and to websockets) must come from the host it is sent to; anything else gets
  ``403`` and its websocket is refused. Requests without one (curl, the CLI, scripts) pass: they
  are not a browser acting for someone else.
* **Body size** (Starlette's ``RequestBodyLimitMiddleware``, added next to this one): a body
  larger than the limit (``serve --max-body-mb``, :data:`MAX_BODY_MB` by default) gets ``413``
  before it is read into memory: at once when ``Content-Length`` says so, else as soon as the
  streamed body passes it.
* **Headers**: every response says ``X-Frame-Options: DENY`` and ``Content-Security-Policy:
  frame-ancestors 'none'`` (no page of the server inside another site's frame),
  ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: same-origin``.

Refusals have the API's one JSON error shape.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY_MB = 4
"""The default limit on a request's body (``serve --max-body-mb``)."""
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (b"x-frame-options", b"DENY"),
    (b"content-security-policy", b"frame-ancestors 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
)


def host_name(value: str) -> str:
    """The name of a ``Host`` header or an origin's netloc, without the port, lower case."""
    value = value.strip().lower()
    if value.startswith("["):  # [::1]:8765
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class Guard:
    """The middleware (see the module's docstring)."""

    def __init__(self, app: ASGIApp, *, loopback_only: bool, max_body: int) -> None:
        self.app = app
        self.loopback_only = loopback_only
        self.max_body = max_body
        """A ``Content-Length`` above this is refused here, in the API's error shape; a body
        streamed without one is counted by ``RequestBodyLimitMiddleware`` further in."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(headers.get("host", ""), headers.get("origin"))
        if refusal is not None:
            status, code, message = refusal
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008, "reason": message[:120]})
            else:
                await _error(send, status, code, message)
            return
        if scope["type"] == "websocket":
            await self.app(scope, receive, send)
            return
        length = headers.get("content-length", "0")
        if not length.isdigit() or int(length) > self.max_body:
            await _error(send, 413, "too_large", f"the request body is larger than "
                         f"{self.max_body / 1024 / 1024:g} MiB (benchwright serve --max-body-mb)")
            return

        async def marked(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, marked)

    def _refusal(self, host: str, origin: str | None) -> tuple[int, str, str] | None:
        if self.loopback_only and host_name(host) not in LOOPBACK_NAMES:
            return (421, "host_not_allowed",
                    f"this server answers loopback names only (not {host[:100]!r}); "
                    "to serve other names, start it with --auth")
        if origin is not None and (origin == "null" or urlsplit(origin).netloc.lower() != host.lower()):
            return (403, "cross_origin", f"requests from {origin[:100]!r} are not accepted: the "
                                         "server only answers its own pages and non-browser clients")
        return None


async def _error(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps({"error": {"status": status, "code": code, "message": message,
                                 "problems": []}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body})
