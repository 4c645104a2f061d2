"""`benchwright serve` as a user starts it: a real process on a real port."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import httpx

from tests.conftest import BIN, Runner


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _up(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"the server did not answer at {url}")


def test_serve_answers_on_loopback_and_says_there_is_no_authentication(workspace: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen([str(BIN), "serve", str(workspace), "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _up(f"http://127.0.0.1:{port}/api/health", proc)
        health = httpx.get(f"http://127.0.0.1:{port}/api/health").json()
        assert health["ok"] is True and health["auth"] is False
        assert httpx.get(f"http://127.0.0.1:{port}/api/openapi.json").json()["info"]["title"] == "benchwright"
        files = httpx.get(f"http://127.0.0.1:{port}/api/files").json()
        assert any(f["path"] == "configs/example.yaml" for f in files)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert b"no authentication: loopback only" in err


def test_serve_refuses_other_addresses_without_auth(workspace: Path, bw: Runner) -> None:
    proc = bw("serve", workspace, "--host", "0.0.0.0", "--port", str(_free_port()))
    assert proc.returncode == 2
    assert "--auth" in proc.stderr


def test_with_auth_every_route_wants_a_token(workspace: Path, bw: Runner) -> None:
    made = bw("token", "create", "--role", "viewer", "--workspace", workspace)
    assert made.returncode == 0, made.stderr
    token = next(w for w in made.stdout.split() if w.startswith("bw_"))
    port = _free_port()
    proc = subprocess.Popen([str(BIN), "serve", str(workspace), "--port", str(port), "--auth"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}/api"
    try:
        _up(f"{base}/health", proc)
        for method, path in (("GET", "/health"), ("GET", "/files"), ("GET", "/files/configs/example.yaml"),
                             ("GET", "/runs"),
                             ("GET", "/runs/x/records"), ("PUT", "/files/configs/example.yaml"),
                             ("POST", "/runs"), ("GET", "/tokens")):
            for headers in ({}, {"Authorization": "Bearer bw_nope_wrong"}):
                r = httpx.request(method, base + path, headers=headers, json={"text": "x", "config": "x"})
                assert r.status_code == 401, (method, path, r.text)
                assert r.json()["error"]["code"] == "unauthorized"
        good = {"Authorization": f"Bearer {token}"}
        assert httpx.get(f"{base}/files", headers=good).status_code == 200
        tag = httpx.get(f"{base}/files/configs/example.yaml", headers=good).headers["ETag"]
        write = httpx.put(f"{base}/files/configs/example.yaml", headers={**good, "If-Match": tag},
                          json={"text": "version: 1\n"})
        assert write.status_code == 403 and write.json()["error"]["code"] == "forbidden"
        assert httpx.post(f"{base}/runs", headers=good, json={"config": "configs/example.yaml"}).status_code == 403
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
