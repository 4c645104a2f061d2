"""Files made and settings changed through the REST API (in-process, FastAPI's TestClient): new
files from a starter, names checked, the user's umask on every written file, and
``benchwright.yaml`` edited by an admin only, validated first, with conflict detection."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from benchwright.server.api import create_app
from benchwright.server.auth import TokenStore
from benchwright.server.service import TEMPLATES, Service
from benchwright.workspace import Workspace


@pytest.fixture
def client(workspace: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Workspace.open(workspace)), base_url="http://localhost") as c:
        yield c


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("path", ["configs/mine.yaml", "tasks/sub/mine.yaml", "scenarios/mine.yaml"])
def test_a_new_file_from_its_starter_validates_and_is_never_made_twice(
        client: TestClient, workspace: Path, path: str, umask_022: None) -> None:
    made = client.post("/api/files", json={"path": path})
    assert made.status_code == 201, made.text
    body = made.json()
    assert body["path"] == path and body["etag"] == made.headers["ETag"]
    assert (workspace / path).read_text() == body["text"] == TEMPLATES[body["kind"]]
    assert _mode(workspace / path) == 0o644
    check = client.post("/api/validate", json={"path": path, "text": body["text"]}).json()
    assert check == {"ok": True, "problems": []}
    again = client.post("/api/files", json={"path": path})
    assert again.status_code == 412 and "exists already" in again.json()["error"]["message"]
    assert (workspace / path).read_text() == TEMPLATES[body["kind"]]


@pytest.mark.parametrize(("path", "says"), [
    ("tasks/mine.txt", "ends with .yaml"),
    ("tasks/", "goes in tasks/"),
    ("tasks/.hidden.yaml", "hidden"),
    ("tasks/../configs/x.yaml", "'..'"),
    ("/etc/x.yaml", "configs/, tasks/, scenarios/"),
    ("results/x.yaml", "configs/, tasks/, scenarios/"),
    ("benchwright.yaml", "configs/, tasks/, scenarios/"),
])
def test_a_bad_name_for_a_new_file_says_what_to_write(client: TestClient, workspace: Path, path: str,
                                                      says: str) -> None:
    before = sorted(p for p in workspace.rglob("*"))
    got = client.post("/api/files", json={"path": path})
    assert got.status_code == 400, got.text
    assert says in got.json()["error"]["message"]
    assert sorted(p for p in workspace.rglob("*")) == before


def test_a_symlinked_folder_cannot_take_a_new_file_outside(client: TestClient, workspace: Path,
                                                           tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "tasks" / "link").symlink_to(outside)
    got = client.post("/api/files", json={"path": "tasks/link/x.yaml"})
    assert got.status_code == 400 and "outside" in got.json()["error"]["message"]
    assert list(outside.iterdir()) == []


def test_written_files_follow_the_umask_and_keep_their_own_mode(client: TestClient, workspace: Path) -> None:
    text = TEMPLATES["config"]
    old = os.umask(0o022)
    try:
        assert client.put("/api/files/configs/a.yaml", json={"text": text},
                          headers={"If-Match": "*"}).status_code == 200
        assert _mode(workspace / "configs" / "a.yaml") == 0o644
        os.umask(0o027)
        assert client.put("/api/files/configs/b.yaml", json={"text": text}).status_code == 200
        assert _mode(workspace / "configs" / "b.yaml") == 0o640
        # an existing file keeps the mode its owner gave it
        os.chmod(workspace / "configs" / "a.yaml", 0o664)
        tag = client.get("/api/files/configs/a.yaml").headers["ETag"]
        assert client.put("/api/files/configs/a.yaml", json={"text": text + "# edited\n"},
                          headers={"If-Match": tag}).status_code == 200
        assert _mode(workspace / "configs" / "a.yaml") == 0o664
    finally:
        os.umask(old)


def test_settings_are_read_validated_and_saved_only_from_the_latest(client: TestClient, workspace: Path,
                                                                     umask_022: None) -> None:
    file = workspace / "benchwright.yaml"
    before = file.read_text()
    got = client.get("/api/settings")
    assert got.status_code == 200 and got.json()["text"] == before
    tag = got.json()["etag"]
    bad = client.put("/api/settings", json={"text": before + "allowed_folders: [relative/folder]\n"},
                     headers={"If-Match": tag})
    assert bad.status_code == 422, bad.text
    problems = bad.json()["error"]["problems"]
    assert problems[0]["file"] == "benchwright.yaml" and problems[0]["path"] == "allowed_folders[0]"
    assert problems[0]["line"] == before.count("\n") + 1
    assert file.read_text() == before
    edited = before.replace("default_provider: openrouter", "default_provider: openai")
    ok = client.put("/api/settings", json={"text": edited}, headers={"If-Match": tag})
    assert ok.status_code == 200, ok.text
    assert file.read_text() == edited
    stale = client.put("/api/settings", json={"text": before}, headers={"If-Match": tag})
    assert stale.status_code == 412 and stale.json()["error"]["etag"] == ok.json()["etag"]
    assert file.read_text() == edited


def test_settings_changed_take_effect_in_the_server(workspace: Path) -> None:
    service = Service(Workspace.open(workspace))
    got = service.read_settings()
    service.write_settings(got.text.replace("default_provider: openrouter", "default_provider: openai"),
                           got.etag)
    assert service.ws.settings.default_provider == "openai"


def test_only_an_admin_may_change_the_settings(workspace: Path) -> None:
    store = TokenStore(Workspace.open(workspace))
    editor, _ = store.create("editor")
    admin, _ = store.create("admin")
    file = workspace / "benchwright.yaml"
    before = file.read_text()
    app = create_app(Workspace.open(workspace), auth_on=True)
    with TestClient(app, base_url="http://localhost") as c:
        as_editor = {"Authorization": f"Bearer {editor}"}
        got = c.get("/api/settings", headers=as_editor)
        assert got.status_code == 200
        text = before + "# a comment\n"
        refused = c.put("/api/settings", json={"text": text},
                        headers={**as_editor, "If-Match": got.json()["etag"]})
        assert refused.status_code == 403, refused.text
        assert file.read_text() == before
        # the editor may still make and write workspace files
        assert c.post("/api/files", json={"path": "configs/new.yaml"}, headers=as_editor).status_code == 201
        done = c.put("/api/settings", json={"text": text},
                     headers={"Authorization": f"Bearer {admin}", "If-Match": got.json()["etag"]})
        assert done.status_code == 200, done.text
        assert file.read_text() == text
