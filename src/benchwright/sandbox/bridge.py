"""The loopback bridge's forwarder: run inside a sandbox without network, before the command.

``python3 -I -S -c SOURCE PORT SOCKET -- COMMAND...`` (standard library only: it runs on the
sandbox's system interpreter, see :meth:`benchwright.sandbox.base.Sandbox.run_in`):

1. binds and listens on ``127.0.0.1:PORT`` (a failure is exit status 125 with a message on
   stderr, before the command starts);
2. forks a server that is orphaned at once (a grandchild: the command never has it as a child,
   so a command that waits for all its children does not wait for it; it is reparented to the
   sandbox's PID 1 and dies with the sandbox's PID namespace). The server holds none of the
   standard streams. For each connection it accepts it connects to the Unix socket SOCKET and
   copies bytes both ways (with half-closes), many connections at a time, without threads;
3. executes COMMAND in its own process (the one the sandbox started), with the signal
   dispositions Python changed put back, so the command starts only once the port listens and
   its exit status is the command's own.

The harness reads this file's text (:func:`source`) and passes it with ``-c``: nothing has to
be mounted for it.
"""

from __future__ import annotations

import os
import signal
import socket
import sys

BACKLOG = 128
CHUNK = 1 << 16


def _serve(listener: socket.socket, path: str) -> None:
    import asyncio

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                data = await reader.read(CHUNK)
                if not data:
                    break
                writer.write(data)
                await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()
        except (OSError, asyncio.IncompleteReadError):
            writer.close()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_unix_connection(path)
        except OSError as e:
            print(f"bw-bridge: cannot connect to {path}: {e}", file=sys.stderr)
            writer.close()
            return
        try:
            await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        finally:
            writer.close()
            up_writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, sock=listener, limit=CHUNK)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def main(argv: list[str]) -> None:
    if len(argv) < 5 or argv[3] != "--":
        print("usage: forward PORT SOCKET -- COMMAND...", file=sys.stderr)
        os._exit(125)
    port, path, command = int(argv[1]), argv[2], argv[4:]
    try:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", port))
        listener.listen(BACKLOG)
    except OSError as e:
        print(f"bw-bridge: cannot listen on 127.0.0.1:{port}: {e}", file=sys.stderr)
        os._exit(125)
    child = os.fork()
    if child == 0:
        try:
            if os.fork() != 0:
                os._exit(0)
            os.setsid()  # out of the command's process group and session
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            os.close(null)
            _serve(listener, path)
        finally:
            os._exit(0)
    os.waitpid(child, 0)
    listener.close()
    for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores them; exec would keep that
        signal.signal(sig, signal.SIG_DFL)
    try:
        os.execvp(command[0], command)
    except OSError as e:
        print(f"bw-bridge: cannot run {command[0]!r}: {e}", file=sys.stderr)
        os._exit(127 if isinstance(e, FileNotFoundError) else 126)


def source() -> str:
    """This module's text, for ``python3 -c``."""
    from importlib.resources import files

    return files("benchwright.sandbox").joinpath("bridge.py").read_text(encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv)
