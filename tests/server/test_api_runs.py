"""Run control through the REST API (in-process, FastAPI's TestClient, with real run processes):
the launch preview (sizes, cache hits found with the run's own keys, cost with "no price" for an
unpriced model), run names, the Runs list, cancel / resume / retry-errors, and the same state and
counts in the API and ``benchwright status``, also for a run this server did not start."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from benchwright.server.api import create_app
from benchwright.testing import OpenAIServer
from benchwright.workspace import Workspace
from tests.conftest import Runner, read_jsonl

KEY = "sk-bw-runs-4d1f9e"
QUICK = ("version: 1\ntask_sources: [tasks/basics.yaml]\nlanguages: [python]\ndifficulties: [easy]\n"
         "criteria: [unit-test]\nllms: [reference]\n")
SLEEPER = ("version: 1\nscenarios: [scenarios/parser-fixes.yaml]\nagents:\n"
           "  - {name: sleeper, command: 'sleep 120', timeout_s: 300, network: false}\n")


@pytest.fixture
def client(workspace: Path) -> Iterator[TestClient]:
    (workspace / "configs" / "quick.yaml").write_text(QUICK)
    (workspace / "configs" / "slow.yaml").write_text(SLEEPER)
    with TestClient(create_app(Workspace.open(workspace)), base_url="http://localhost") as c:
        yield c


def _wait(client: TestClient, run_id: str, states: set[str], timeout_s: float = 240) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    got: dict[str, Any] = {}
    while time.monotonic() < deadline:
        got = client.get(f"/api/runs/{run_id}").json()
        if got["state"] in states:
            return got
        time.sleep(0.2)
    raise AssertionError(f"run {run_id} did not reach {states}: {got}")


def _cli_status(bw: Runner, ws: Path, run_id: str) -> dict[str, Any]:
    proc = bw("status", run_id, "--workspace", ws)
    assert proc.returncode == 0, proc.stderr
    shown: dict[str, Any] = json.loads(proc.stdout)
    return shown


def _agree(client: TestClient, bw: Runner, ws: Path, run_id: str) -> dict[str, Any]:
    """The API and `benchwright status` say the same state and counts; the API's answer."""
    api = client.get(f"/api/runs/{run_id}").json()
    cli = _cli_status(bw, ws, run_id)
    assert cli["state"] == api["state"], (cli, api)
    for key in ("total", "done", "errors"):
        assert cli["progress"][key] == api["progress"][key], key
    listing = bw("status", "--workspace", ws)
    assert api["state"] in listing.stdout and f"{api['progress']['done']}/{api['progress']['total']}" in listing.stdout
    return api


def test_the_preview_counts_prices_and_finds_the_cached_generations(client: TestClient, workspace: Path,
                                                                    bw: Runner) -> None:
    with OpenAIServer() as srv:  # answers "ok": code that crashes, so every sample is an error
        settings = workspace / "benchwright.yaml"
        settings.write_text(settings.read_text().replace(
            "providers:\n", f"providers:\n  fake: {{type: openai-compatible, base_url: '{srv.base_url}', "
            "api_key_env: BW_FAKE_KEY}\n", 1))
        (workspace / "configs" / "priced.yaml").write_text(
            "version: 1\ntask_sources: [tasks/basics.yaml]\nlanguages: [python]\ndifficulties: [easy]\n"
            "criteria: [unit-test]\nsamples: 2\nllms: [fake/gpt-4o-mini, fake/mystery-1]\n")
        body = {"config": "configs/priced.yaml"}
        first = client.post("/api/runs/preview", json=body)
        assert first.status_code == 200, first.text
        p = first.json()
        assert p["languages"] == ["python"] and p["models"] == ["fake/gpt-4o-mini", "fake/mystery-1"]
        assert p["samples"] == 2 and p["tasks"] >= 2
        assert p["generations"] == p["tasks"] * 1 * 2 * 2
        assert p["executions"] > p["generations"]  # several tests per sample
        assert p["cached"] == 0 and p["cache_used"] is True
        priced, unpriced = p["by_model"]
        assert priced["price_known"] and priced["cost_usd"] > 0 and priced["cached"] == 0
        assert not unpriced["price_known"] and unpriced["cost_usd"] is None  # no price, never $0
        assert p["unpriced"] == ["fake/mystery-1"] and p["cost_usd"] == pytest.approx(priced["cost_usd"])
        assert srv.count == 0  # a preview asks no provider

        ran = bw("run", "configs/priced.yaml", "--run-id", "paid", cwd=workspace, env={"BW_FAKE_KEY": KEY})
        assert ran.returncode == 0, ran.stderr
        sent = srv.count
        again = client.post("/api/runs/preview", json=body).json()
        assert again["cached"] == again["generations"] == sent  # the run's own cache keys
        assert again["by_model"][0]["cost_usd"] == 0.0 and again["by_model"][1]["cost_usd"] is None

    # every crashed sample is done (completed), and counted apart as an error
    outcomes = [r["outcome"] for r in read_jsonl(workspace / "results" / "paid" / "records.jsonl")
                if r["record_index"] == 0]
    crashed = [o for o in outcomes if o in ("error", "infra_error")]
    assert outcomes and set(outcomes) <= {"error", "infra_error", "fail"} and crashed
    api = client.get("/api/runs/paid").json()
    assert api["state"] == "completed"
    assert api["progress"]["done"] == api["progress"]["total"] == len(outcomes)
    assert api["progress"]["errors"] == len(crashed)
    assert {m: (c["done"], c["total"]) for m, c in api["progress"]["models"].items()} == {
        "fake/gpt-4o-mini": (len(outcomes) // 2, len(outcomes) // 2),
        "fake/mystery-1": (len(outcomes) // 2, len(outcomes) // 2)}
    assert api["pass_rate"] == 0.0 and api["models"] == ["fake/gpt-4o-mini", "fake/mystery-1"]
    _agree(client, bw, workspace, "paid")


def test_run_names_are_checked_before_anything_starts(client: TestClient, workspace: Path) -> None:
    bad = client.post("/api/runs/preview", json={"config": "configs/quick.yaml", "run_id": "../up"})
    assert bad.status_code == 400 and "letters, digits" in bad.json()["error"]["message"]
    (workspace / "results" / "taken").mkdir(parents=True)
    taken = client.post("/api/runs", json={"config": "configs/quick.yaml", "run_id": "taken"})
    assert taken.status_code == 400, taken.text
    assert "already exists" in taken.json()["error"]["message"] and "taken" in taken.json()["error"]["message"]
    assert not (workspace / ".benchwright" / "server" / "taken.log").exists()  # nothing started


@pytest.mark.slow
def test_cancel_resume_and_a_second_resume_refused_agree_with_the_cli(client: TestClient, workspace: Path,
                                                                      bw: Runner) -> None:
    started = client.post("/api/runs", json={"config": "configs/slow.yaml", "run_id": "slow"})
    assert started.status_code == 202, started.text
    running = _wait(client, "slow", {"running"})
    assert running["progress"]["models"] == {"sleeper": {"total": 1, "done": 0, "errors": 0, "eta_s": None}}
    assert running["progress"]["estimating"] is True  # no sample done yet: no rate to estimate from
    assert not running["resumable"]
    _error = client.post("/api/runs/slow/resume")
    assert _error.status_code == 400 and "already running" in _error.json()["error"]["message"]

    cancelled = client.post("/api/runs/slow/cancel").json()
    assert cancelled["state"] == "interrupted" and cancelled["exit_code"] is None, cancelled
    assert cancelled["resumable"] and "cancelled" in cancelled["reason"]
    assert cancelled["status"]["state"] == "interrupted"
    _agree(client, bw, workspace, "slow")
    assert client.post("/api/runs/slow/cancel").status_code == 400  # nothing to cancel

    resumed = client.post("/api/runs/slow/resume")
    assert resumed.status_code == 202, resumed.text
    assert resumed.json()["state"] in ("starting", "running")
    twice = client.post("/api/runs/slow/resume")
    assert twice.status_code == 400 and "already running" in twice.json()["error"]["message"]
    _wait(client, "slow", {"running"})
    assert client.post("/api/runs/slow/cancel").json()["state"] == "interrupted"
    listed = client.get("/api/runs").json()
    assert [r["run_id"] for r in listed] == ["slow"] and listed[0]["config"] == "slow.yaml"


@pytest.mark.slow
def test_a_run_this_server_did_not_start_is_read_from_its_folder_and_resumed(
        client: TestClient, workspace: Path, bw: Runner) -> None:
    """A run started elsewhere whose process died while it said 'running' (a server restart, a
    kill): the API and the CLI call it interrupted, and the API resumes it to the end."""
    ran = bw("run", "configs/quick.yaml", "--run-id", "elsewhere", cwd=workspace)
    assert ran.returncode == 0, ran.stderr
    folder = workspace / "results" / "elsewhere"
    dead = subprocess.Popen(["true"])
    dead.wait()
    status = folder / "status.yaml"
    status.write_text(status.read_text().replace("state: completed", "state: running")
                      .replace("pid: ", f"pid: {dead.pid}\nold_pid: ", 1))
    (folder / "summary.yaml").unlink()
    # a line of records lost in the kill: that sample runs again
    records = (folder / "records.jsonl").read_text().splitlines(keepends=True)
    last = json.loads(records[-1])["execution_id"]
    (folder / "records.jsonl").write_text("".join(r for r in records if json.loads(r)["execution_id"] != last))
    got = _agree(client, bw, workspace, "elsewhere")
    assert got["state"] == "interrupted" and got["resumable"] and "ended without finishing" in got["reason"]
    assert client.post("/api/runs/elsewhere/cancel").status_code == 400
    assert client.post("/api/runs/elsewhere/resume").status_code == 202
    done = _wait(client, "elsewhere", {"completed", "failed", "interrupted"})
    assert done["state"] == "completed" and done["progress"]["done"] == done["progress"]["total"] > 0, done
    assert done["pass_rate"] == 1.0  # the reference passes everything
    assert client.post("/api/runs/elsewhere/resume").status_code == 400  # completed: nothing to resume
