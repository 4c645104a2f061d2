"""The small HTTP/1.1 server under the fake services: asyncio streams, standard library only.

:class:`HTTPServerBase` listens (by default on ``127.0.0.1``, an ephemeral port) and runs its
own asyncio event loop in a background thread. It serves keep-alive connections and
``Content-Length`` bodies (no chunked uploads), records every request it reads, and sends
whatever its subclass's :meth:`~HTTPServerBase._respond` returns, with no streaming. What the
responses say (routes, wire formats, answers) is up to the subclass: see
:class:`benchwright.testing.servers.FakeServer`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any, ClassVar, Self

from benchwright.testing.reply import RecordedRequest, http_reason

__all__ = ["HTTPServerBase"]

_HEAD_LIMIT = 64 * 1024
"""Largest request line + headers accepted (bytes)."""


@dataclass
class _Response:
    status: int
    body: bytes
    headers: dict[str, str]
    content_type: str = "application/json"
    close: bool = False


class HTTPServerBase:
    """A loopback HTTP/1.1 server on its own event loop thread (use a subclass).

    Start it with ``with`` (or :meth:`start` / :meth:`stop`). A subclass decides every response
    (:meth:`_respond`) and the shape of the errors the server sends about requests it cannot
    read (:meth:`_plain`).
    """

    name: ClassVar[str] = "http"
    """Names the server's thread and its ``Server`` header."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0) -> None:
        """
        Args:
            host, port: where to listen (default: loopback, an ephemeral port).
        """
        self._host = host
        self._want_port = port
        self._port: int | None = None
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._errors: list[str] = []
        self._connections = 0
        self._in_flight = 0
        self._peak_in_flight = 0
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

    # -- what a subclass decides ---------------------------------------------------------------

    async def _respond(self, rec: RecordedRequest) -> _Response | None:
        """The response to ``rec``; ``None`` to drop the connection."""
        raise NotImplementedError

    def _plain(self, status: int, message: str, *, close: bool = False) -> _Response:
        """An error response (``status``, ``message``) in the service's error shape."""
        raise NotImplementedError
