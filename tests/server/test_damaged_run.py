"""`benchwright serve` on a workspace with damaged run folders (a real server on loopback, and
Chromium for the page): the records and summary say which lines were skipped, a damaged status
or summary names its file relative to the workspace, and no answer is a bare 500."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser

from tests.conftest import Runner, read_jsonl
from tests.server.conftest import serving, shot


@pytest.fixture
def runs(workspace: Path, bw: Runner) -> dict[str, int]:
    """Runs ``good``; ``torn`` (one record line not UTF-8, no summary.yaml); ``bad-status`` and
    ``bad-summary`` (that YAML file not YAML). Returns the damaged line and the record count."""
    proc = bw("run", "configs/python-only.yaml", "--run-id", "good", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    results = workspace / "results"
    for name in ("torn", "bad-status", "bad-summary"):
        shutil.copytree(results / "good", results / name)
    (results / "torn" / "summary.yaml").unlink()
    path = results / "torn" / "records.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    middle = next(i for i, raw in enumerate(lines) if b'"record_index":2,' in raw)
    lines[middle] = lines[middle].replace(b'"criterion"', b'"crit\xe8rion"')
    path.write_bytes(b"".join(lines))
    (results / "bad-status" / "status.yaml").write_bytes(b"state: [\n")
    (results / "bad-summary" / "summary.yaml").write_bytes(b"\xff\xfe")
    return {"line": middle + 1, "records": len(read_jsonl(results / "good" / "records.jsonl"))}


def test_the_api_says_which_lines_it_skipped_and_names_damaged_files(workspace: Path, runs: dict[str, int]) -> None:
    with serving(workspace) as (base, _):
        got = httpx.get(f"{base}/api/runs/torn/records", params={"limit": 1000}, timeout=30)
        assert got.status_code == 200, got.text
        body = got.json()
        assert body["total"] == runs["records"] - 1
        assert body["skipped_lines"]["count"] == 1
        assert body["skipped_lines"]["lines"][0]["line"] == runs["line"]
        assert body["skipped_lines"]["lines"][0]["reason"].startswith("not UTF-8")
        assert httpx.get(f"{base}/api/runs/good/records", timeout=30).json()["skipped_lines"] is None

        summary = httpx.get(f"{base}/api/runs/torn/summary", timeout=30)
        assert summary.status_code == 200, summary.text
        s = summary.json()
        assert s["skipped_lines"]["count"] == 1 and s["skipped_lines"]["samples"] == 1
        assert s["by_model"]["reference"]["outcomes"]["infra_error"] == 1
        assert s["by_model"]["reference"]["unreadable"] == 1

        compared = httpx.get(f"{base}/api/compare", params={"a": "good", "b": "torn"}, timeout=30)
        assert compared.status_code == 200, compared.text
        assert compared.json()["skipped_lines"]["b"]["lines"][0]["line"] == runs["line"]

        listed = httpx.get(f"{base}/api/runs", timeout=30)
        assert listed.status_code == 200, listed.text  # one damaged run does not hide the others
        states = {r["run_id"]: r for r in listed.json()}
        assert states["good"]["state"] == "completed"
        assert states["bad-status"]["state"] == "damaged"
        assert "results/bad-status/status.yaml" in states["bad-status"]["status"]["error"]

        broken = httpx.get(f"{base}/api/runs/bad-summary/summary", timeout=30)
        assert broken.status_code == 500
        error = broken.json()["error"]
        assert error["code"] == "infra_error"
        assert "results/bad-summary/summary.yaml" in error["message"] and "not UTF-8" in error["message"]
        for text in (error["message"], states["bad-status"]["status"]["error"]):
            assert str(workspace) not in text  # where the workspace lives stays on the host


@pytest.mark.slow
def test_the_run_page_shows_the_skipped_lines(workspace: Path, runs: dict[str, int], browser: Browser) -> None:
    with serving(workspace) as (base, _):
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.goto(f"{base}/ui/run/torn")
        notice = page.wait_for_selector("[data-testid=skipped-lines]", timeout=60_000)
        assert notice is not None
        text = notice.inner_text()
        assert f"records.jsonl:{runs['line']}" in text and "not scored" in text
        shot(page, "damaged-run")
        page.goto(f"{base}/ui/explorer?run=torn")
        page.wait_for_function(
            "document.querySelector('[data-testid=explorer-count]')?.innerText.includes('unreadable')",
            timeout=60_000)
        assert json.dumps(runs["line"]) in page.inner_text("[data-testid=explorer-count]")
        for run, file in (("bad-summary", "summary.yaml"), ("bad-status", "status.yaml")):
            page.goto(f"{base}/ui/run/{run}")
            said = page.wait_for_selector("[data-testid=problem]", timeout=60_000)
            assert said is not None and f"results/{run}/{file}" in said.inner_text()
