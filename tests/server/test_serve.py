"""`benchwright serve` as a user starts it: a real process on a real port."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.conftest import Runner
from tests.server.conftest import free_port, serving


def test_serve_answers_on_loopback_and_says_there_is_no_authentication(workspace: Path) -> None:
    with serving(workspace) as (base, proc):
        health = httpx.get(f"{base}/api/health").json()
        assert health["ok"] is True and health["auth"] is False
        assert httpx.get(f"{base}/api/openapi.json").json()["info"]["title"] == "benchwright"
        files = httpx.get(f"{base}/api/files").json()
        assert any(f["path"] == "configs/example.yaml" for f in files)
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert b"no authentication: loopback only" in err


def test_serve_refuses_other_addresses_without_auth(workspace: Path, bw: Runner) -> None:
    proc = bw("serve", workspace, "--host", "0.0.0.0", "--port", str(free_port()))
    assert proc.returncode == 2
    assert "--auth" in proc.stderr


def test_with_auth_every_route_wants_a_token(workspace: Path, bw: Runner) -> None:
    made = bw("token", "create", "--role", "viewer", "--workspace", workspace)
    assert made.returncode == 0, made.stderr
    token = next(w for w in made.stdout.split() if w.startswith("bw_"))
    with serving(workspace, "--auth") as (root, _):
        base = f"{root}/api"
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
