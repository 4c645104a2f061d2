"""What `benchwright serve` refuses before the API or the UI see a request, and what the UI
keeps of a sign-in: each against the real server on loopback (and Chromium for the sign-in)."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from playwright.sync_api import Browser

from tests.conftest import BIN
from tests.server.conftest import serving

FRAME_HEADERS = {"x-frame-options": "DENY", "content-security-policy": "frame-ancestors 'none'",
                 "x-content-type-options": "nosniff"}
SOCKET_IO = "/ui/_nicegui_ws/socket.io/?EIO=4&transport=polling"


def error_of(response: httpx.Response) -> dict[str, object]:
    body = response.json()
    assert set(body) == {"error"}, body  # the API's one error shape
    error: dict[str, object] = body["error"]
    assert error["status"] == response.status_code
    return error


def test_without_auth_only_loopback_host_names_are_answered(server: str) -> None:
    """DNS rebinding: a page on evil.example that resolves to 127.0.0.1 reaches the server with
    its own name in Host; it gets nothing."""
    port = urlsplit(server).port
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example", "10.0.0.1"):
        for path in ("/api/health", "/api/files", "/ui/", SOCKET_IO):
            got = httpx.get(f"{server}{path}", headers={"Host": host})
            assert got.status_code == 421, (host, path, got.status_code)
            assert error_of(got)["code"] == "host_not_allowed"
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}", "localhost"):
        assert httpx.get(f"{server}/api/health", headers={"Host": host}).status_code == 200, host


def test_cross_origin_browser_requests_are_refused(server: str) -> None:
    """A page of another site may make the user's browser send requests (a form, fetch, a
    websocket): the server answers only its own pages (and clients that send no Origin)."""
    check = {"path": "configs/x.yaml", "text": "version: 1\n"}
    foreign = {"Origin": "http://evil.example"}
    got = httpx.post(f"{server}/api/validate", json=check, headers=foreign)
    assert got.status_code == 403 and error_of(got)["code"] == "cross_origin"
    assert httpx.post(f"{server}/api/validate", json=check, headers={"Origin": "null"}).status_code == 403
    assert httpx.get(f"{server}{SOCKET_IO}", headers=foreign).status_code == 403
    own = {"Origin": server}
    assert httpx.post(f"{server}/api/validate", json=check, headers=own).status_code == 200
    assert httpx.post(f"{server}/api/validate", json=check).status_code == 200  # curl, the CLI
    handshake = httpx.get(f"{server}{SOCKET_IO}", headers=own)
    assert handshake.status_code == 200 and '"sid"' in handshake.text
    assert _websocket_status(server, "http://evil.example") != 101
    assert _websocket_status(server, server) == 101


def _websocket_status(base: str, origin: str) -> int:
    """The status line of a socket.io websocket upgrade from ``origin``."""
    url = urlsplit(base)
    assert url.hostname is not None and url.port is not None
    request = (f"GET /ui/_nicegui_ws/socket.io/?EIO=4&transport=websocket HTTP/1.1\r\n"
               f"Host: {url.netloc}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
               f"Origin: {origin}\r\n\r\n")
    with socket.create_connection((url.hostname, url.port), timeout=10) as s:
        s.sendall(request.encode())
        head = s.recv(4096).decode("latin-1")
    return int(head.split()[1])


def test_bodies_over_the_limit_get_413_and_the_server_goes_on(workspace: Path) -> None:
    with serving(workspace, "--max-body-mb", "1") as (base, _):
        text = "version: 1\n# " + "x" * (3 * 1024 * 1024) + "\n"
        got = httpx.post(f"{base}/api/validate", json={"path": "configs/x.yaml", "text": text},
                         timeout=60)
        assert got.status_code == 413 and error_of(got)["code"] == "too_large"
        assert "--max-body-mb" in str(error_of(got)["message"])

        def chunks() -> object:  # no Content-Length: the limit is counted as the body arrives
            yield b'{"path": "configs/x.yaml", "text": "'
            for _ in range(3 * 1024):
                yield b"x" * 1024
            yield b'"}'

        streamed = httpx.post(f"{base}/api/validate", content=chunks(),  # type: ignore[arg-type]
                              headers={"Content-Type": "application/json"}, timeout=60)
        assert streamed.status_code == 413
        written = httpx.put(f"{base}/api/files/configs/big.yaml", json={"text": text}, timeout=60)
        assert written.status_code == 413 and not (workspace / "configs" / "big.yaml").exists()
        small = httpx.post(f"{base}/api/validate", json={"path": "configs/x.yaml", "text": "version: 1\n"})
        assert small.status_code == 200


def test_a_yaml_nested_past_what_the_parser_survives_is_a_problem_not_a_crash(server: str) -> None:
    """The C YAML parser recurses on the C stack: 100,000 ``[`` used to kill the server."""
    for text in ("tasks: " + "[" * 100_000 + "]" * 100_000, "tasks:\n" + "- " * 100_000 + "x\n"):
        got = httpx.post(f"{server}/api/validate", json={"path": "tasks/x.yaml", "text": text},
                         timeout=120)
        assert got.status_code == 200, got.text[:300]
        assert any("deep" in p["message"] for p in got.json()["problems"]), got.text[:500]
    assert httpx.get(f"{server}/api/health").status_code == 200


def test_every_response_refuses_to_be_framed(server: str) -> None:
    for path in ("/api/health", "/ui/", "/api/files/configs/nope.yaml", "/api/docs"):
        got = httpx.get(f"{server}{path}")
        for name, value in FRAME_HEADERS.items():
            assert got.headers.get(name) == value, (path, name, got.headers)


def test_a_ui_sign_in_keeps_no_token_and_ends_with_the_token(workspace: Path, browser: Browser) -> None:
    made = subprocess.run([str(BIN), "token", "create", "--role", "viewer", "--workspace", str(workspace)],
                          capture_output=True, text=True, check=True)
    token = next(w for w in made.stdout.split() if w.startswith("bw_"))
    token_id = token.split("_")[1]
    with serving(workspace, "--auth") as (base, _):
        page = browser.new_page()
        page.goto(f"{base}/ui/")
        page.wait_for_selector("[data-testid=sign-in]")
        page.fill("[data-testid=token]", token)
        page.click("[data-testid=sign-in-button]")
        page.wait_for_selector("text=configs/example.yaml")
        page.goto(f"{base}/ui/")  # a new page of the same browser session: still signed in
        page.wait_for_selector("text=configs/example.yaml")
        state = workspace / ".benchwright"
        secret = token.split("_", 2)[2]
        for path in state.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                assert token.encode() not in data and secret.encode() not in data, path
        ui = state / "ui"
        assert stat.S_IMODE(os.stat(ui).st_mode) == 0o700
        for path in ui.rglob("*"):
            if path.is_file():
                assert stat.S_IMODE(os.stat(path).st_mode) & 0o077 == 0, path
        assert stat.S_IMODE(os.stat(state / "ui-secret").st_mode) == 0o600
        subprocess.run([str(BIN), "token", "revoke", token_id, "--workspace", str(workspace)],
                       capture_output=True, text=True, check=True)
        page.goto(f"{base}/ui/")
        page.wait_for_selector("[data-testid=sign-in]")  # the session ended with its token
        assert json.loads((state / "tokens.json").read_text())["tokens"] == []
