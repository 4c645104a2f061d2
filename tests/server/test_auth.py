"""Access tokens: the store, ``benchwright token`` through the real CLI, the API's guard and the
admin routes for tokens (in-process FastAPI apps)."""

from __future__ import annotations

import json
import re
import stat
import threading
from pathlib import Path
from typing import Annotated

import pytest
from fastapi import Depends, FastAPI, Request, WebSocket
from fastapi.responses import JSONResponse
from fastapi.testclient import TestClient
from starlette.testclient import WebSocketDenialResponse

from benchwright.errors import UserError
from benchwright.server.auth import (
    ROLES,
    Auth,
    AuthError,
    Role,
    TokenInfo,
    TokenStore,
    allows,
    check_role,
    require,
    router,
)
from benchwright.workspace import Workspace
from tests.conftest import Runner

TOKEN_RE = re.compile(r"bw_([0-9a-f]{8})_[A-Za-z0-9_-]{43}")


@pytest.fixture
def store(tmp_path: Path) -> TokenStore:
    return TokenStore(Workspace(root=tmp_path / "ws"))


# --- the store -------------------------------------------------------------------------------


def test_create_keeps_only_the_hash(store: TokenStore) -> None:
    token, info = store.create("editor", "ci bot")
    m = TOKEN_RE.fullmatch(token)
    assert m is not None, token
    assert info.id == m.group(1) and info.role == "editor" and info.name == "ci bot"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", info.created)
    text = store.path.read_text()
    assert token not in text and token.split("_", 2)[2] not in text
    (entry,) = json.loads(text)["tokens"]
    assert set(entry) == {"id", "role", "name", "sha256", "created"}
    assert len(entry["sha256"]) == 64 and entry["id"] == info.id
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    # what may be shown has no secret and no hash
    assert set(TokenInfo.model_fields) == {"id", "role", "name", "created"}
    assert "sha256" not in info.model_dump() and "token" not in info.model_dump()


def test_file_stays_0600_after_changes(store: TokenStore) -> None:
    _, a = store.create("viewer")
    store.create("admin")
    assert store.revoke(a.id)
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600


def test_verify_good_bad_malformed_revoked(store: TokenStore, tmp_path: Path) -> None:
    token, info = store.create("viewer", "me")
    other, _ = store.create("admin")
    assert store.verify(token) == info
    assert store.verify(other) is not None and store.verify(other).role == "admin"  # type: ignore[union-attr]
    token_id, secret = token[3:].split("_", 1)
    flipped = secret[:-1] + ("A" if secret[-1] != "A" else "B")
    for bad in (
        f"bw_{token_id}_{flipped}",          # wrong secret
        f"bw_{'0' * 8}_{secret}",            # secret under another id
        f"bw_{other[3:11]}_{secret}",        # secret under a real, different id
        token + "x", token[:-1], " " + token, token.upper(),
        "", "bw_", "bw__", "garbage", f"bw_{token_id}", f"bw_{token_id}_", "Bearer " + token,
        f"bw_{token_id}_{'é' * 43}", "bw_" + token_id + "_" + "a" * 5000,
    ):
        assert store.verify(bad) is None, bad
    # a token of another workspace
    elsewhere, _ = TokenStore(Workspace(root=tmp_path / "other")).create("admin")
    assert store.verify(elsewhere) is None
    # revoked
    assert store.revoke(info.id) is True
    assert store.verify(token) is None
    assert store.revoke(info.id) is False
    assert [t.role for t in store.list()] == ["admin"]
    assert store.verify(other) is not None


def test_no_file_means_no_tokens(store: TokenStore) -> None:
    assert store.list() == []
    assert store.verify("bw_0123abcd_" + "x" * 43) is None
    assert store.revoke("0123abcd") is False
    assert not store.path.exists()


def test_a_second_store_sees_changes_at_once(store: TokenStore) -> None:
    """A server's store and the CLI's are two objects on one file."""
    token, info = store.create("editor")
    server = TokenStore(Workspace(root=store.path.parent.parent))
    assert server.verify(token) == info
    assert store.revoke(info.id)
    assert server.verify(token) is None
    # same size, same role: a new token made right after must not make the old one valid again
    token2, info2 = store.create("editor")
    assert server.verify(token) is None and server.verify(token2) == info2


def test_concurrent_creates_lose_nothing(store: TokenStore) -> None:
    root = store.path.parent.parent
    made: list[str] = []
    lock = threading.Lock()

    def work() -> None:
        mine = TokenStore(Workspace(root=root))
        for _ in range(5):
            _, info = mine.create("viewer")
            with lock:
                made.append(info.id)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(t.id for t in store.list()) == sorted(made) and len(set(made)) == 20


def test_unreadable_file_fails_closed(store: TokenStore) -> None:
    token, _ = store.create("admin")
    store.path.write_text("{not json")
    with pytest.raises(UserError, match="unreadable"):
        store.verify(token)
    store.path.write_text('{"version": 1, "tokens": [{"id": "x"}]}')
    with pytest.raises(UserError, match="unreadable"):
        store.list()


def test_roles_order() -> None:
    assert ROLES == ("viewer", "editor", "admin")
    expected: dict[tuple[Role, Role], bool] = {("viewer", "viewer"): True, ("viewer", "editor"): False, ("viewer", "admin"): False,
                ("editor", "viewer"): True, ("editor", "editor"): True, ("editor", "admin"): False,
                ("admin", "viewer"): True, ("admin", "editor"): True, ("admin", "admin"): True}
    for (have, need), ok in expected.items():
        assert allows(have, need) is ok, (have, need)
    assert check_role("editor") == "editor"
    with pytest.raises(UserError, match="viewer, editor, admin"):
        check_role("root")
    with pytest.raises(UserError):
        require("owner")  # type: ignore[arg-type]


def test_create_refuses_unknown_role(store: TokenStore) -> None:
    with pytest.raises(UserError, match="unknown role"):
        store.create("superuser")  # type: ignore[arg-type]
    assert not store.path.exists()


# --- the CLI ---------------------------------------------------------------------------------


def test_cli_create_list_revoke(bw: Runner, workspace: Path) -> None:
    proc = bw("token", "create", "--role", "viewer", "--name", "dashboard", "--workspace", workspace)
    assert proc.returncode == 0, proc.stderr
    token = proc.stdout.strip()
    m = TOKEN_RE.fullmatch(token)
    assert m is not None, proc.stdout
    token_id = m.group(1)
    assert "only time" in proc.stderr and token not in proc.stderr
    tokens_json = workspace / ".benchwright" / "tokens.json"
    assert token not in tokens_json.read_text()
    assert stat.S_IMODE(tokens_json.stat().st_mode) == 0o600
    info = TokenStore(Workspace.open(workspace)).verify(token)
    assert info is not None and info.role == "viewer" and info.name == "dashboard"

    proc = bw("token", "create", "--role", "admin", cwd=workspace)  # the workspace found from cwd
    assert proc.returncode == 0, proc.stderr
    admin = proc.stdout.strip()

    proc = bw("token", "list", "--format", "json", "-w", workspace)
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)
    assert [(t["role"], t["name"]) for t in listed] == [("viewer", "dashboard"), ("admin", None)]
    assert set(listed[0]) == {"id", "role", "name", "created"}
    assert token not in proc.stdout and admin not in proc.stdout

    proc = bw("token", "list", "-w", workspace)
    assert proc.returncode == 0 and token_id in proc.stdout and "dashboard" in proc.stdout

    proc = bw("token", "revoke", token_id, "-w", workspace)
    assert proc.returncode == 0, proc.stderr
    assert TokenStore(Workspace.open(workspace)).verify(token) is None
    assert TokenStore(Workspace.open(workspace)).verify(admin) is not None

    proc = bw("token", "revoke", token_id, "-w", workspace)
    assert proc.returncode == 2 and "no token" in proc.stderr and "Traceback" not in proc.stderr


def test_cli_bad_role_and_empty_list(bw: Runner, tmp_path: Path) -> None:
    proc = bw("token", "create", "--role", "root", "-w", tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "viewer, editor, admin" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / ".benchwright" / "tokens.json").exists()
    proc = bw("token", "list", "-w", tmp_path)
    assert proc.returncode == 0 and "no tokens" in proc.stdout


# --- the guard -------------------------------------------------------------------------------

Viewer = Annotated[TokenInfo | None, Depends(require("viewer"))]
Editor = Annotated[TokenInfo | None, Depends(require("editor"))]


def make_app(store: TokenStore | None) -> FastAPI:
    """An app guarded like the real one: the one JSON error shape for AuthError."""
    app = FastAPI()
    app.state.auth = Auth(store)

    @app.exception_handler(AuthError)
    async def _auth(request: Request, exc: AuthError) -> JSONResponse:
        return JSONResponse({"error": {"status": exc.status, "code": exc.code, "message": exc.message}},
                            status_code=exc.status, headers=exc.headers)

    @app.get("/api/things")
    def read(who: Viewer) -> dict[str, str | None]:
        return {"who": who.id if who else None}

    @app.post("/api/things")
    def write(who: Editor) -> dict[str, str | None]:
        return {"who": who.id if who else None}

    @app.websocket("/api/live")
    async def live(ws: WebSocket, who: Viewer) -> None:
        await ws.accept()
        await ws.send_json({"who": who.id if who else None})
        await ws.close()

    app.include_router(router)
    return app


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_missing_and_wrong_tokens_get_401(store: TokenStore) -> None:
    viewer, _ = store.create("viewer")
    client = TestClient(make_app(store))
    tid = viewer[3:11]
    for headers in ({}, bearer("nope"), bearer(f"bw_{tid}_" + "A" * 43), {"Authorization": "Bearer"},
                    {"Authorization": f"Basic {viewer}"}, {"X-Benchwright-Token": "wrong"},
                    {"Authorization": "Bearer wrong", "X-Benchwright-Token": viewer}):
        for method in ("GET", "POST"):
            r = client.request(method, "/api/things", headers=headers)
            assert r.status_code == 401, (method, headers, r.text)
            assert r.json()["error"]["code"] == "unauthorized" and r.json()["error"]["status"] == 401
            assert r.headers["www-authenticate"].startswith("Bearer")
    assert "benchwright token create" in client.get("/api/things").json()["error"]["message"]


def test_roles_on_routes(store: TokenStore) -> None:
    viewer, vinfo = store.create("viewer")
    editor, einfo = store.create("editor")
    admin, ainfo = store.create("admin")
    client = TestClient(make_app(store))
    assert client.get("/api/things", headers=bearer(viewer)).json() == {"who": vinfo.id}
    assert client.get("/api/things", headers={"X-Benchwright-Token": viewer}).json() == {"who": vinfo.id}
    r = client.post("/api/things", headers=bearer(viewer))
    assert r.status_code == 403 and r.json()["error"]["code"] == "forbidden"
    assert "editor" in r.json()["error"]["message"] and "www-authenticate" not in r.headers
    r = client.post("/api/things", headers={"X-Benchwright-Token": viewer})
    assert r.status_code == 403
    for token, info in ((editor, einfo), (admin, ainfo)):
        assert client.get("/api/things", headers=bearer(token)).json() == {"who": info.id}
        assert client.post("/api/things", headers=bearer(token)).json() == {"who": info.id}
    assert client.post("/api/things", headers={"authorization": f"bearer {editor}"}).status_code == 200
    # revoked with the CLI's store while the server runs
    TokenStore(Workspace(root=store.path.parent.parent)).revoke(einfo.id)
    assert client.post("/api/things", headers=bearer(editor)).status_code == 401


def test_websocket_is_guarded_too(store: TokenStore) -> None:
    viewer, vinfo = store.create("viewer")
    client = TestClient(make_app(store))
    with client.websocket_connect("/api/live", headers=bearer(viewer)) as ws:
        assert ws.receive_json() == {"who": vinfo.id}
    with pytest.raises(WebSocketDenialResponse) as denied, client.websocket_connect("/api/live") as ws:
        ws.receive_json()
    assert denied.value.status_code == 401 and denied.value.json()["error"]["code"] == "unauthorized"


def test_auth_off_lets_everyone_in() -> None:
    client = TestClient(make_app(None))
    assert client.get("/api/things").json() == {"who": None}
    assert client.post("/api/things").json() == {"who": None}
    assert client.post("/api/things", headers=bearer("anything")).json() == {"who": None}
    r = client.get("/api/tokens")
    assert r.status_code == 404 and "--auth" in r.json()["error"]["message"]


def test_openapi_documents_the_schemes(store: TokenStore) -> None:
    spec = TestClient(make_app(store)).get("/openapi.json").json()
    schemes = spec["components"]["securitySchemes"]
    assert schemes["HTTPBearer"]["scheme"] == "bearer"
    assert schemes["APIKeyHeader"]["name"] == "X-Benchwright-Token"
    assert {"HTTPBearer": []} in spec["paths"]["/api/things"]["post"]["security"]


# --- the admin routes ------------------------------------------------------------------------


def test_admin_manages_tokens_over_the_api(store: TokenStore) -> None:
    admin, ainfo = store.create("admin", "root")
    client = TestClient(make_app(store))
    r = client.post("/api/tokens", json={"role": "editor", "name": "ci"}, headers=bearer(admin))
    assert r.status_code == 201, r.text
    made = r.json()
    assert set(made) == {"id", "role", "name", "created", "token"}
    assert made["role"] == "editor" and made["name"] == "ci" and TOKEN_RE.fullmatch(made["token"])
    assert made["token"] not in store.path.read_text()
    assert client.post("/api/things", headers=bearer(made["token"])).status_code == 200

    r = client.get("/api/tokens", headers=bearer(admin))
    assert r.status_code == 200
    listed = r.json()
    assert [(t["id"], t["role"]) for t in listed] == [(ainfo.id, "admin"), (made["id"], "editor")]
    assert all(set(t) == {"id", "role", "name", "created"} for t in listed)

    assert client.delete(f"/api/tokens/{made['id']}", headers=bearer(admin)).status_code == 204
    assert client.post("/api/things", headers=bearer(made["token"])).status_code == 401
    r = client.delete(f"/api/tokens/{made['id']}", headers=bearer(admin))
    assert r.status_code == 404 and r.json()["error"]["code"] == "not_found"

    r = client.post("/api/tokens", json={"role": "root"}, headers=bearer(admin))
    assert r.status_code == 422
    assert [t.id for t in store.list()] == [ainfo.id]


@pytest.mark.parametrize("role", ["viewer", "editor"])
def test_only_admins_manage_tokens(store: TokenStore, role: Role) -> None:
    token, info = store.create(role)
    client = TestClient(make_app(store))
    for method, url, body in (("GET", "/api/tokens", None), ("POST", "/api/tokens", {"role": "admin"}),
                              ("DELETE", f"/api/tokens/{info.id}", None)):
        r = client.request(method, url, json=body, headers=bearer(token))
        assert r.status_code == 403, (method, r.text)
        assert r.json()["error"]["code"] == "forbidden"
        assert client.request(method, url, json=body).status_code == 401
    assert [t.id for t in store.list()] == [info.id]
