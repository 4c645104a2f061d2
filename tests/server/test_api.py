"""The REST API in-process (FastAPI's TestClient): files with ETag/If-Match and validation,
paths that cannot leave the workspace, runs launched, watched and cancelled, records filtered and
paged, summaries and comparisons, one JSON error shape."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from benchwright.server.api import create_app
from benchwright.workspace import Workspace
from tests.conftest import Runner

CONFIG = ("version: 1\ntask_sources: [tasks/basics.yaml]\nlanguages: [python]\ndifficulties: [easy]\n"
          "criteria: [unit-test, cpu-usage]\nllms: [reference]\n")


@pytest.fixture
def client(workspace: Path) -> Iterator[TestClient]:
    (workspace / "configs" / "quick.yaml").write_text(CONFIG)
    with TestClient(create_app(Workspace.open(workspace)), base_url="http://localhost") as c:
        yield c


def _error(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()["error"]
    assert body["status"] == status and body["code"] == code and body["message"]
    return body


def test_files_are_listed_read_with_a_version_and_written_only_from_the_latest(client: TestClient,
                                                                              workspace: Path) -> None:
    listed = client.get("/api/files", params={"kind": "config"}).json()
    assert {"kind": "config", "path": "configs/quick.yaml"}.items() <= next(
        f for f in listed if f["path"] == "configs/quick.yaml").items()
    kinds = {f["kind"] for f in client.get("/api/files").json()}
    assert kinds == {"config", "task-source", "scenario"}
    first = client.get("/api/files/configs/quick.yaml")
    assert first.status_code == 200 and first.json()["text"] == CONFIG
    tag = first.headers["ETag"]
    assert first.json()["etag"] == tag
    # two people edit the same file: the first write wins, the second is refused with 412
    mine = CONFIG.replace("difficulties: [easy]", "difficulties: [easy, medium]")
    theirs = CONFIG.replace("cpu-usage", "ram-usage")
    ok = client.put("/api/files/configs/quick.yaml", json={"text": mine}, headers={"If-Match": tag})
    assert ok.status_code == 200, ok.text
    assert ok.headers["ETag"] != tag
    late = client.put("/api/files/configs/quick.yaml", json={"text": theirs}, headers={"If-Match": tag})
    body = _error(late, 412, "conflict")
    assert body["etag"] == ok.headers["ETag"]
    assert (workspace / "configs" / "quick.yaml").read_text() == mine  # nothing lost
    blind = client.put("/api/files/configs/quick.yaml", json={"text": theirs})
    _error(blind, 412, "conflict")  # no If-Match on an existing file is no blind overwrite
    # a new file: If-Match * (or none)
    new = client.put("/api/files/configs/new.yaml", json={"text": CONFIG}, headers={"If-Match": "*"})
    assert new.status_code == 200 and (workspace / "configs" / "new.yaml").read_text() == CONFIG


def test_a_broken_edit_is_refused_with_the_validate_messages_and_nothing_written(client: TestClient,
                                                                                workspace: Path) -> None:
    tag = client.get("/api/files/configs/quick.yaml").headers["ETag"]
    broken = CONFIG.replace("llms: [reference]", "llms: [reference]\nsamplez: 3")
    body = _error(client.put("/api/files/configs/quick.yaml", json={"text": broken}, headers={"If-Match": tag}),
                  422, "invalid")
    (problem,) = [p for p in body["problems"] if p["severity"] == "error"]
    assert problem["file"] == "configs/quick.yaml" and problem["line"] == 7 and "samplez" in problem["message"]
    assert (workspace / "configs" / "quick.yaml").read_text() == CONFIG
    task_tag = client.get("/api/files/tasks/basics.yaml").headers["ETag"]
    text = (workspace / "tasks" / "basics.yaml").read_text()
    body = _error(client.put("/api/files/tasks/basics.yaml", json={"text": text.replace("tasks:", "taskz:", 1)},
                             headers={"If-Match": task_tag}), 422, "invalid")
    assert any("taskz" in p["message"] or "tasks" in p["message"] for p in body["problems"])
    checked = client.post("/api/validate", json={"path": "configs/quick.yaml", "text": broken}).json()
    assert checked["ok"] is False and checked["problems"][0]["line"] == 7
    assert client.post("/api/validate", json={"path": "configs/quick.yaml", "text": CONFIG}).json()["ok"] is True


@pytest.mark.parametrize("path", ["configs/../../outside.yaml", "configs/%2e%2e/%2e%2e/outside.yaml",
                                  "tasks/%2e%2e/configs/quick.yaml", "results/x.yaml", "benchwright.yaml"])
def test_paths_never_leave_the_workspace_or_their_folder(client: TestClient, workspace: Path, path: str) -> None:
    response = client.put(f"/api/files/{path}", json={"text": CONFIG}, headers={"If-Match": "*"})
    assert response.status_code in (400, 404), response.text
    assert response.json()["error"]["code"] in ("bad_request", "not_found")
    assert not (workspace.parent / "outside.yaml").exists()


def test_a_symlink_out_of_the_workspace_is_refused(client: TestClient, workspace: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.yaml"
    secret.write_text("version: 1\n")
    (workspace / "configs" / "link.yaml").symlink_to(secret)
    _error(client.get("/api/files/configs/link.yaml"), 400, "bad_request")
    assert all(f["path"] != "configs/link.yaml" for f in client.get("/api/files").json())


def test_a_run_id_names_a_folder_of_results_only(client: TestClient, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI takes a run folder's path as a run id; an API caller's run id never leaves
    results/ (a run-like folder where the server was started is not served)."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "run.yaml").write_text("run_id: elsewhere\n")
    (elsewhere / "summary.yaml").write_text("secret: bw-not-in-the-workspace\n")
    monkeypatch.chdir(tmp_path)
    for route in ("/api/runs/elsewhere", "/api/runs/elsewhere/summary", "/api/runs/elsewhere/records"):
        got = client.get(route)
        assert got.status_code == 404 and "bw-not-in-the-workspace" not in got.text, route


LONG = "n" * 300   # one name longer than the file system takes (ENAMETOOLONG)


@pytest.mark.parametrize(("method", "route", "body"), [
    ("GET", f"/api/files/configs/{LONG}.yaml", None),
    ("PUT", f"/api/files/configs/{LONG}.yaml", {"text": "version: 1\n"}),
    ("GET", f"/api/runs/{LONG}", None),
    ("GET", f"/api/runs/{LONG}/records", None),
    ("GET", f"/api/runs/{LONG}/summary", None),
    ("POST", f"/api/runs/{LONG}/cancel", None),
    ("GET", f"/api/compare?a={LONG}&b={LONG}", None),
    ("POST", "/api/validate", {"path": f"configs/{LONG}.yaml", "text": "version: 1\n"}),
    ("POST", "/api/runs", {"config": f"configs/{LONG}.yaml"}),
    ("POST", "/api/runs", {"config": "configs/quick.yaml", "task_sources": [LONG]}),
])
def test_a_name_too_long_for_the_file_system_is_the_callers_error(
        client: TestClient, method: str, route: str, body: dict[str, Any] | None) -> None:
    got = client.request(method, route, json=body)
    assert got.status_code in (400, 404), got.text
    assert LONG not in got.text   # the name is shortened in the message, never echoed whole


def _wait(client: TestClient, run_id: str, states: set[str], timeout_s: float = 240) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got: dict[str, Any] = client.get(f"/api/runs/{run_id}").json()
        if got["state"] in states:
            return got
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} did not reach {states}: {got}")


@pytest.mark.slow
def test_a_run_is_launched_watched_and_its_results_read(client: TestClient) -> None:
    bad = client.post("/api/runs", json={"config": "configs/nope.yaml"})
    _error(bad, 404, "not_found")
    started = client.post("/api/runs", json={"config": "configs/quick.yaml", "run_id": "api-1"})
    assert started.status_code == 202, started.text
    assert started.json()["run_id"] == "api-1"
    done = _wait(client, "api-1", {"completed", "failed"})
    assert done["state"] == "completed", done
    assert done["status"]["taskSourceStatuses"]["benchwright-basics"]["completed"] == 4
    assert "api-1" in [r["run_id"] for r in client.get("/api/runs").json()]
    summary = client.get("/api/runs/api-1/summary").json()
    assert summary["by_model"]["reference"]["criteria"]["unit-test"]["mean"] == 1.0
    everything = client.get("/api/runs/api-1/records", params={"limit": 1000}).json()
    tests = client.get("/api/runs/api-1/records", params={"criterion": "unit-test", "limit": 2}).json()
    assert tests["limit"] == 2 and len(tests["records"]) == 2
    assert tests["total"] == sum(r["criterion"] == "unit-test" for r in everything["records"])
    second = client.get("/api/runs/api-1/records", params={"criterion": "unit-test", "limit": 2, "offset": 2}).json()
    assert {r["record_index"] for r in second["records"]} != {r["record_index"] for r in tests["records"]} or \
        second["records"] != tests["records"]
    cpu = client.get("/api/runs/api-1/records", params={"criterion": "cpu-usage", "verdict": "fail"}).json()
    assert cpu["total"] == 0
    _error(client.get("/api/runs/api-1/records", params={"limit": 0}), 422, "invalid_request")
    _error(client.get("/api/runs/nope/summary"), 404, "not_found")
    again = client.post("/api/runs", json={"config": "configs/quick.yaml", "run_id": "api-2"})
    assert again.status_code == 202
    _wait(client, "api-2", {"completed", "failed"})
    compared = client.get("/api/compare", params={"a": "api-1", "b": "api-2"}).json()
    assert compared["run_a"] == "api-1" and compared["regressions"] == []


@pytest.mark.slow
def test_a_run_can_be_cancelled_and_is_left_resumable(client: TestClient, workspace: Path) -> None:
    (workspace / "configs" / "slow.yaml").write_text(
        "version: 1\nscenarios: [scenarios/parser-fixes.yaml]\nagents:\n"
        "  - {name: sleeper, command: 'sleep 120', timeout_s: 300, network: false}\n")
    started = client.post("/api/runs", json={"config": "configs/slow.yaml", "run_id": "api-slow"})
    assert started.status_code == 202, started.text
    _wait(client, "api-slow", {"running"})
    cancelled = client.post("/api/runs/api-slow/cancel").json()
    assert cancelled["state"] == "interrupted", cancelled
    _error(client.post("/api/runs/api-slow/cancel"), 400, "bad_request")


@pytest.mark.slow
def test_a_run_killed_by_cancel_before_it_could_stop_is_interrupted(
        client: TestClient, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that does not stop within the grace period is killed; the API, status.yaml and
    'benchwright status' then agree that it was interrupted (resumable), not still running."""
    import benchwright.server.service as service_module

    monkeypatch.setattr(service_module, "CANCEL_GRACE_S", 0.0)  # no time to stop: killed at once
    (workspace / "configs" / "slow.yaml").write_text(
        "version: 1\nscenarios: [scenarios/parser-fixes.yaml]\nagents:\n"
        "  - {name: sleeper, command: 'sleep 120', timeout_s: 300, network: false}\n")
    started = client.post("/api/runs", json={"config": "configs/slow.yaml", "run_id": "api-kill"})
    assert started.status_code == 202, started.text
    _wait(client, "api-kill", {"running"})
    cancelled = client.post("/api/runs/api-kill/cancel").json()
    assert cancelled["state"] == "interrupted" and cancelled["status"]["state"] == "interrupted"
    assert client.get("/api/runs/api-kill").json()["state"] == "interrupted"


def test_every_error_has_one_shape(client: TestClient) -> None:
    _error(client.get("/api/nowhere"), 404, "not_found")
    _error(client.get("/api/files/configs/missing.yaml"), 404, "not_found")
    _error(client.put("/api/files/configs/quick.yaml", json={"nope": 1}), 422, "invalid_request")
    _error(client.delete("/api/runs"), 405, "method_not_allowed")


@pytest.mark.slow
def test_the_explorer_filters_and_sorts_across_runs_with_the_judge_verdict(workspace: Path, bw: Runner) -> None:
    from benchwright.server.service import Service

    for run_id in ("x1", "x2"):
        proc = bw("run", "configs/agents.yaml", "--run-id", run_id, cwd=workspace)
        assert proc.returncode == 0, proc.stderr
    service = Service(Workspace.open(workspace))
    total, page = service.explore(["x1", "x2"], filters={"criterion": "objective"}, sort="model")
    assert total == 6 and [r["model"] for r in page] == sorted(r["model"] for r in page)
    assert {r["run"] for r in page} == {"x1", "x2"}
    verdicts = {(r["run"], r["model"]): r["judge_verdict"] for r in page}
    assert verdicts[("x1", "edits-the-test")] == "pass" and verdicts[("x2", "adds-a-skip")] == "fail"
    total, page = service.explore(["x1"], filters={"verdict": "fail", "model": "honest"})
    assert total == 0 and page == []
    total, page = service.explore(["x1"], filters={}, sort="score", descending=True, offset=2, limit=3)
    assert len(page) == 3 and total > 5
