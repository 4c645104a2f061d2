"""A small HTTP/1.1 server on asyncio streams, standard library only: under the fake services
(:mod:`benchwright.testing.servers`) and the model proxy agents reach their model through
(:mod:`benchwright.agents.proxy`).

:class:`HTTPServerBase` listens on TCP (by default ``127.0.0.1``, an ephemeral port), on a Unix
socket, or both at once, and runs its own asyncio event loop in a background thread. It serves
keep-alive connections and ``Content-Length`` request bodies (no chunked uploads; a body larger
than :attr:`HTTPServerBase.max_body` is refused with 413), records every request it reads (unless
:attr:`HTTPServerBase.record` is off), and sends whatever its subclass's
:meth:`~HTTPServerBase._respond` returns: a whole body, or a stream of byte chunks sent with
``Transfer-Encoding: chunked`` (server-sent events: :func:`sse`). What the responses say (routes,
wire formats, answers) is up to the subclass.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import json
import os
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, Self

__all__ = ["HTTPServerBase", "RecordedRequest", "Response", "http_reason", "sse"]

_HEAD_LIMIT = 64 * 1024
"""Largest request line + headers accepted (bytes)."""


@dataclass
class Response:
    """What the server sends for one request: ``body`` as a whole (``Content-Length``), or,
    when ``stream`` is set, the chunks it yields (``Transfer-Encoding: chunked``; ``body`` is
    then ignored). A stream that raises ends the connection without the closing chunk, so the
    client sees a truncated response, never a complete-looking one."""

    status: int
    body: bytes
    headers: dict[str, str]
    content_type: str = "application/json"
    close: bool = False
    stream: AsyncIterator[bytes] | None = field(default=None, repr=False)


_Response = Response
"""The old private name (kept for subclasses written against it)."""


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


def http_reason(status: int) -> str:
    """The reason phrase of ``status`` (``529`` -> ``Overloaded``)."""
    if status == 529:
        return "Overloaded"
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def sse(data: Any, event: str | None = None) -> bytes:
    """One server-sent event: ``event: NAME`` (when given) and ``data: JSON`` (a string is sent
    as it is, e.g. ``[DONE]``), then the blank line that ends it."""
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {text}\n\n".encode()


class HTTPServerBase:
    """A loopback HTTP/1.1 server on its own event loop thread (use a subclass).

    Start it with ``with`` (or :meth:`start` / :meth:`stop`). A subclass decides every response
    (:meth:`_respond`) and the shape of the errors the server sends about requests it cannot
    read (:meth:`_plain`).
    """

    name: ClassVar[str] = "http"
    """Names the server's thread and its ``Server`` header."""
    max_body: ClassVar[int] = 1 << 62
    """The largest request body read (bytes); a larger one gets 413 and the connection closes."""
    record: ClassVar[bool] = True
    """Whether every request is kept in :attr:`requests` (a long-lived server turns it off)."""
    head_timeout_s: ClassVar[float] = 60.0
    """A connection that sends no complete request head within this many seconds (a new one,
    or an idle kept-alive one) is closed."""
    body_timeout_s: ClassVar[float] = 120.0
    """A request body must arrive within this many seconds."""
    max_connections: ClassVar[int] = 256
    """Connections served at once; more are closed at once (a client cannot exhaust the
    harness's file descriptors)."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, unix_socket: Path | None = None,
                 tcp: bool = True, socket_mode: int = 0o600) -> None:
        """
        Args:
            host, port: where to listen on TCP (default: loopback, an ephemeral port).
            unix_socket: also (or only, with ``tcp=False``) listen on this Unix socket; a stale
                socket file there is replaced, and the file is removed on :meth:`stop`.
            tcp: whether to listen on TCP at all.
            socket_mode: the permissions the Unix socket file is given.
        """
        if not tcp and unix_socket is None:
            raise ValueError("a server needs TCP or a Unix socket to listen on")
        self._host = host
        self._want_port = port
        self._tcp = tcp
        self._unix = unix_socket
        self._socket_mode = socket_mode
        self._unix_server: asyncio.Server | None = None
        self._port: int | None = None
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._errors: list[str] = []
        self._connections = 0
        self._in_flight = 0
        self._peak_in_flight = 0
        self._open_now = 0
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
            if self._tcp:
                self._server = loop.run_until_complete(asyncio.start_server(
                    self._handle, self._host, self._want_port, backlog=1024, limit=_HEAD_LIMIT))
                self._port = int(self._server.sockets[0].getsockname()[1])
            if self._unix is not None:
                if self._unix.is_socket():
                    self._unix.unlink()
                self._unix_server = loop.run_until_complete(asyncio.start_unix_server(
                    self._handle, str(self._unix), backlog=1024, limit=_HEAD_LIMIT))
                os.chmod(self._unix, self._socket_mode)
        except BaseException as exc:
            if self._server is not None:
                self._server.close()
                self._server = None
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
        servers = [s for s in (self._server, self._unix_server) if s is not None]
        for server in servers:
            server.close()
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for server in servers:
            await server.wait_closed()
        if self._unix is not None and self._unix_server is not None:
            with contextlib.suppress(OSError):
                self._unix.unlink()
        self._server = self._unix_server = None

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
    def unix_socket(self) -> Path | None:
        """The Unix socket listened on, if any."""
        return self._unix

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
            self._open_now += 1
            crowded = self._open_now > self.max_connections
        try:
            while not crowded and await self._one(reader, writer):
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
            with self._lock:
                self._open_now -= 1
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; whether the connection stays open."""
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.head_timeout_s)
        except (asyncio.IncompleteReadError, TimeoutError):
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
        where = target.partition("?")[0]
        if "chunked" in headers.get("transfer-encoding", "").lower():
            await self._send(writer, self._refuse(where, 501, "chunked uploads are not supported"))
            return False
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            length = -1
        if length < 0:
            await self._send(writer, self._refuse(where, 400, "bad Content-Length"))
            return False
        if length > self.max_body:
            await self._send(writer, self._refuse(
                where, 413, f"the request body is {length} bytes, more than the {self.max_body} accepted"))
            await self._discard(reader, length)
            return False
        refused = self._admit(method.upper(), where, headers, target.partition("?")[2])
        if refused is not None:  # refused on its head: the body is never read
            refused.close = True
            await self._send(writer, refused)
            return False
        try:
            body = await asyncio.wait_for(reader.readexactly(length), self.body_timeout_s) if length > 0 else b""
        except TimeoutError:
            return False
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
            if self.record:
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

    @staticmethod
    async def _discard(reader: asyncio.StreamReader, length: int) -> None:
        """Read and drop a refused body (a while, up to 256 MiB), so that a client still sending
        it reads the refusal instead of a reset connection."""
        left = min(length, 256 << 20)
        with contextlib.suppress(TimeoutError, ConnectionError, OSError):
            async with asyncio.timeout(10):
                while left > 0:
                    data = await reader.read(min(left, 1 << 20))
                    if not data:
                        return
                    left -= len(data)

    async def _send(self, writer: asyncio.StreamWriter, response: Response) -> None:
        head = [f"HTTP/1.1 {response.status} {http_reason(response.status)}",
                f"Content-Type: {response.content_type}",
                "Transfer-Encoding: chunked" if response.stream is not None
                else f"Content-Length: {len(response.body)}",
                f"Connection: {'close' if response.close else 'keep-alive'}",
                f"Server: benchwright-{self.name}"]
        if response.stream is not None:
            head.append("Cache-Control: no-cache")
        head.extend(f"{k}: {v}" for k, v in response.headers.items())
        start = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
        if response.stream is None:
            writer.write(start + response.body)
            await writer.drain()
            return
        writer.write(start)
        await writer.drain()
        async for chunk in response.stream:
            if chunk:  # an empty chunk would end the body
                writer.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                await writer.drain()
        writer.write(b"0\r\n\r\n")
        await writer.drain()

    # -- what a subclass decides ---------------------------------------------------------------

    def _admit(self, method: str, path: str, headers: dict[str, str], query: str) -> Response | None:
        """A response refusing the request on its head alone (before its body is read), or
        None to read it (the default)."""
        return None

    async def _respond(self, rec: RecordedRequest) -> Response | None:
        """The response to ``rec``; ``None`` to drop the connection."""
        raise NotImplementedError

    def _plain(self, status: int, message: str, *, close: bool = False) -> Response:
        """An error response (``status``, ``message``) in the service's error shape."""
        raise NotImplementedError

    def _refuse(self, path: str, status: int, message: str) -> Response:
        """The error refusing a request to ``path`` before its body is read (the connection then
        closes); by default :meth:`_plain`."""
        return self._plain(status, message, close=True)
