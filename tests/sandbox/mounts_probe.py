"""Mounts and the loopback bridge of ``Sandbox.run_in``, probed from a harness.

Standard library and benchwright's sandbox modules only: this file also runs as a script
(``python mounts_probe.py SCENARIO BACKEND``, printing JSON) under an unprivileged user, next to
a copy of the package (see :mod:`tests.unprivileged`). Each scenario lays out host folders in a
temporary folder of its own, runs sandboxed commands against them and checks from the host what
they did; it returns ``{"problems": [...]}`` (empty: all held) with what it saw.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socketserver
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

SANDBOX_CLASSES = {
    "bwrap": "benchwright.sandbox.bwrap.BwrapSandbox",
    "unshare": "benchwright.sandbox.unshare.UnshareSandbox",
}
PY = "/usr/bin/python3"


def make_sandbox(backend: str, tmp_root: str) -> Any:
    import importlib

    module, name = SANDBOX_CLASSES[backend].rsplit(".", 1)
    return getattr(importlib.import_module(module), name)(tmp_root=tmp_root)


def limits() -> Any:
    from benchwright.sandbox.base import SandboxLimits

    return SandboxLimits(wall_s=30, memory_mb=0)


def _folder(path: Path, mode: int = 0o755) -> Path:
    path.mkdir(parents=True)
    os.chmod(path, mode)
    return path


def _tree(folder: Path) -> dict[str, str]:
    """What is in ``folder`` on the host: file contents, link targets, folders."""
    seen: dict[str, str] = {}
    for top, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(top) / name
            rel = str(path.relative_to(folder))
            if path.is_symlink():
                seen[rel] = "-> " + os.readlink(path)
            elif path.is_dir():
                seen[rel] = "/"
            else:
                seen[rel] = path.read_text(errors="replace")
    return seen


def _digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


# -- scenarios ----------------------------------------------------------------------------------


def programs(sandbox: Any, base: Path) -> dict[str, Any]:
    """A program in a read-only mount runs (at its host path, and remapped); one missing from
    it fails before the run, naming the mounts; the read-only mount cannot be written."""
    from benchwright.errors import InfraError
    from benchwright.sandbox.base import Mount

    problems: list[str] = []
    ws = _folder(base / "ws")
    tools = _folder(base / "tools")
    _folder(tools / "bin")
    tool = tools / "bin" / "tool"
    tool.write_text("#!/bin/sh\necho tool ran as $0\n")
    tool.chmod(0o755)
    (tools / "data.txt").write_text("kept\n")
    (tools / "data.txt").chmod(0o644)
    before = _tree(tools)
    r = sandbox.run_in(ws, [str(tool)], limits=limits(), mounts=[Mount(tools)])
    if (r.exit_code, r.stdout) != (0, f"tool ran as {tool}\n".encode()):
        problems.append(f"tool at its host path: {r}")
    r = sandbox.run_in(ws, ["tool"], limits=limits(), mounts=[Mount(tools, "/opt/bw-tools")],
                       env={"PATH": "/opt/bw-tools/bin:/usr/bin:/bin"})
    if (r.exit_code, r.stdout) != (0, b"tool ran as /opt/bw-tools/bin/tool\n"):
        problems.append(f"tool remapped, found on PATH: {r}")
    try:
        sandbox.run_in(ws, ["/opt/bw-tools/bin/missing"], limits=limits(),
                       mounts=[Mount(tools, "/opt/bw-tools")])
        problems.append("a program missing from the mount did not fail early")
    except InfraError as e:
        if "/opt/bw-tools" not in str(e):
            problems.append(f"the error about a missing program does not name the mounts: {e}")
    attack = (
        "import os, subprocess\n"
        "tries = {}\n"
        "def attempt(name, f):\n"
        "    try:\n"
        "        f(); tries[name] = 'done'\n"
        "    except OSError as e:\n"
        "        tries[name] = type(e).__name__\n"
        "T = '/opt/bw-tools'\n"
        "attempt('write', lambda: open(T + '/data.txt', 'a').write('changed'))\n"
        "attempt('create', lambda: open(T + '/new.txt', 'w').write('new'))\n"
        "attempt('remove', lambda: os.remove(T + '/bin/tool'))\n"
        "attempt('chmod', lambda: os.chmod(T + '/data.txt', 0o777))\n"
        "attempt('mkdir', lambda: os.mkdir(T + '/d'))\n"
        "attempt('rename', lambda: os.rename(T + '/data.txt', T + '/moved'))\n"
        "attempt('unmount-rename', lambda: os.rename(T, '/tmp/x'))\n"
        "tries['remount'] = subprocess.run(['mount', '-o', 'remount,rw,bind', T], "
        "capture_output=True).returncode if os.path.exists('/usr/bin/mount') else 1\n"
        "attempt('after-remount', lambda: open(T + '/new2.txt', 'w').write('new'))\n"
        "print(__import__('json').dumps(tries))\n"
    )
    r = sandbox.run_in(ws, [PY, "-c", attack], limits=limits(),
                       mounts=[Mount(tools, "/opt/bw-tools")])
    tries = json.loads(r.stdout) if r.exit_code == 0 else {"failed": r.stderr.decode()}
    if any(v == "done" for k, v in tries.items()) or tries.get("remount") == 0 or "failed" in tries:
        problems.append(f"a read-only mount was changed: {tries}")
    if _tree(tools) != before:
        problems.append(f"the read-only folder changed on the host: {_tree(tools)}")
    return {"problems": problems, "tries": tries}


def writable(sandbox: Any, base: Path) -> dict[str, Any]:
    """A writable mount is written and the host sees it; links and ``..`` stay inside; the
    rest of the host (the mount's parent, its siblings, /root) is invisible."""
    from benchwright.sandbox.base import Mount

    problems: list[str] = []
    ws = _folder(base / "ws")
    parent = _folder(base / "agent")
    rw = _folder(parent / "home", 0o700)
    (rw / "old.txt").write_text("old\n")
    secret = _folder(parent / "secret")
    (secret / "s.txt").write_text("bw-secret-never-seen\n")
    (secret / "s.txt").chmod(0o644)
    passwd = _digest("/etc/passwd"), os.stat("/etc/passwd").st_uid
    for inside in (None, "/data"):
        where = inside or str(rw)
        script = (
            f"cd {where} && echo made > f.txt && cat old.txt && rm old.txt && mkdir -p sub && "
            "echo deep > sub/deep.txt && ln -s /etc/passwd link && "
            "(echo pwned >> link; echo pwned > ../escape.txt; echo pwned > sub/../../esc2.txt;"
            f" rmdir {where}; mv {where} {where}.moved; ls {parent}/secret;"
            " cat /root/.bashrc; ls /root) 2>/dev/null;"
            f" ls {parent}; ls {base}; true"
        )
        r = sandbox.run_in(ws, ["/bin/sh", "-c", script], limits=limits(),
                           mounts=[Mount(rw, inside, writable=True)])
        seen = r.stdout.decode().split()
        if r.exit_code != 0 or seen[:1] != ["old"]:
            problems.append(f"the writable mount at {where}: {r}")
        if "secret" in seen or "bw-secret-never-seen" in seen or "ws" in seen:
            problems.append(f"the mount's parent or siblings were visible at {where}: {seen}")
        got = _tree(rw)
        want = {"f.txt": "made\n", "sub": "/", "sub/deep.txt": "deep\n", "link": "-> /etc/passwd"}
        if got != want:
            problems.append(f"the host folder holds {got} after a run with the mount at {where}")
        if sorted(os.listdir(parent)) != ["home", "secret"] or sorted(os.listdir(base)) != [
                "agent", "ws"] or os.listdir(ws):
            problems.append(f"something escaped the mount at {where}: {os.listdir(parent)}, "
                            f"{os.listdir(base)}, {os.listdir(ws)}")
        if os.getuid() == 0:
            owners = {os.lstat(rw / rel).st_uid for rel in got} | {os.stat(rw).st_uid}
            if len(owners) != 1 or owners.pop() < 1 << 30:
                problems.append("a root harness did not hand the writable mount to the run's uid")
        # the next run (another uid when the harness is root) writes in it too
        again = sandbox.run_in(ws, ["/bin/sh", "-c", f"cd {where} && cat f.txt && rm -r f.txt sub"
                                    " link && echo old > old.txt"], limits=limits(),
                               mounts=[Mount(rw, inside, writable=True)])
        if (again.exit_code, again.stdout) != (0, b"made\n"):
            problems.append(f"a second run could not change the writable mount: {again}")
    if (_digest("/etc/passwd"), os.stat("/etc/passwd").st_uid) != passwd:
        problems.append("the host's /etc/passwd changed")
    try:  # the harness can clear what the runs left
        shutil.rmtree(rw)
    except OSError as e:
        problems.append(f"the harness could not remove the writable folder: {e}")
    return {"problems": problems}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def address_string(self) -> str:
        return "unix"

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/stream":
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(3):
                piece = f"piece{i}\n".encode()
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                self.wfile.flush()
                time.sleep(0.4)
            self.wfile.write(b"0\r\n\r\n")
            return
        body = f"answer to {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        data = self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[::-1])


class _Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    # socketserver's default backlog is 5: an 8-way connect under load then failed at once (a
    # Unix socket refuses past its backlog), which is this stand-in's limit, not the bridge's
    # (benchwright's own model endpoint listens with a backlog of 1024)
    request_queue_size = 64


CLIENT = r'''
import http.client, json, socket, sys, threading, time, urllib.request
port = int(sys.argv[1])
seen = {}
seen["get"] = urllib.request.urlopen(f"http://127.0.0.1:{port}/x", timeout=10).read().decode()
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
answers = []
for i in range(3):  # keep-alive: one connection, three requests
    conn.request("GET", f"/k{i}")
    answers.append(conn.getresponse().read().decode())
big = bytes(range(256)) * 4096  # 1 MiB each way
conn.request("POST", "/echo", body=big)
answers.append(conn.getresponse().read() == big[::-1])
seen["keep-alive"] = answers
start = time.monotonic()
seen["stream"] = [(round(time.monotonic() - start, 2), line.decode())
                  for line in urllib.request.urlopen(f"http://127.0.0.1:{port}/stream", timeout=10)]
results = {}
def one(i):
    results[i] = urllib.request.urlopen(f"http://127.0.0.1:{port}/c{i}", timeout=20).read().decode()
threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
for t in threads: t.start()
for t in threads: t.join()
seen["concurrent"] = [results.get(i) for i in range(8)]
def reach(host, p):
    s = socket.socket(); s.settimeout(3)
    try:
        s.connect((host, p)); return "connected"
    except OSError as e:
        return type(e).__name__
seen["other-port"] = reach("127.0.0.1", port + 1)
seen["external"] = reach("1.1.1.1", 80)
seen["external-by-name"] = reach("example.com", 443)
print(json.dumps(seen))
'''


def bridge(sandbox: Any, base: Path) -> dict[str, Any]:
    """127.0.0.1:PORT inside reaches the host's Unix socket (requests, keep-alive, a streamed
    answer, concurrent connections) and nothing else; without the bridge the port is closed."""
    from benchwright.sandbox.base import Bridge

    problems: list[str] = []
    ws = _folder(base / "ws")
    private = _folder(base / "sock", 0o711)
    path = private / "api.sock"
    server = _Server(str(path), _Handler)
    os.chmod(path, 0o666)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = 18000 + os.getpid() % 20000
    try:
        r = sandbox.run_in(ws, [PY, "-I", "-S", "-c", CLIENT, str(port)], limits=limits(),
                           bridge=Bridge(port, path))
        seen = json.loads(r.stdout) if r.exit_code == 0 else {"failed": r.stderr.decode()}
        if seen.get("get") != "answer to /x":
            problems.append(f"a request through the bridge: {seen}")
        if seen.get("keep-alive") != ["answer to /k0", "answer to /k1", "answer to /k2", True]:
            problems.append(f"keep-alive requests: {seen.get('keep-alive')}")
        stream = seen.get("stream") or []
        if [line for _t, line in stream] != ["piece0\n", "piece1\n", "piece2\n"] or (
                stream[-1][0] - stream[0][0] < 0.6):
            problems.append(f"a streamed answer did not arrive in pieces: {stream}")
        if seen.get("concurrent") != [f"answer to /c{i}" for i in range(8)]:
            problems.append(f"concurrent connections: {seen.get('concurrent')}")
        for key in ("other-port", "external", "external-by-name"):
            if seen.get(key) == "connected":
                problems.append(f"the bridge let through more than its socket: {key}")
        without = sandbox.run_in(ws, [PY, "-I", "-S", "-c", CLIENT, str(port)], limits=limits())
        if without.exit_code == 0 or b"ConnectionRefused" not in without.stderr:
            problems.append(f"without the bridge the port was not closed: {without}")
        status = sandbox.run_in(ws, ["/bin/sh", "-c", "echo out; echo err >&2; exit 7"],
                                limits=limits(), bridge=Bridge(port, path))
        if (status.exit_code, status.stdout, status.stderr) != (7, b"out\n", b"err\n"):
            problems.append(f"the command's streams or status changed under the bridge: {status}")
        shared = sandbox.run_in(ws, ["/bin/sh", "-c", "ls /bw-bridge"], limits=limits(),
                                network=True, bridge=Bridge(port, path))
        if shared.exit_code == 0:
            problems.append("with the network granted the bridge still showed its folder")
    finally:
        server.shutdown()
        server.server_close()
    return {"problems": problems, "seen": seen}


SCENARIOS = {"programs": programs, "writable": writable, "bridge": bridge}


def main(argv: list[str]) -> None:
    scenario, backend = argv[1], argv[2]
    base = Path(tempfile.mkdtemp(prefix="bw-mounts-"))
    os.chmod(base, 0o755)  # a root harness's sandbox uid passes through it
    try:
        tmp_root = _folder(base / "sbx")
        sandbox = make_sandbox(backend, str(tmp_root))
        scene = _folder(base / "scene")
        print(json.dumps(SCENARIOS[scenario](sandbox, scene)))
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, os.environ.get("BW_PACKAGE_PATH", ""))
    main(sys.argv)
