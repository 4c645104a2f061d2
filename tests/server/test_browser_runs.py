"""Run control in Chromium against a real ``benchwright serve``: the launch preview and a named
launch, live progress per model and task source, cancel and resume from the run page, the Runs
list; then the server restarted under a running run, which its page still shows and cancels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.conftest import run_cli
from tests.server.conftest import serving, shot

MIXED = ("version: 1\ntask_sources: [tasks/basics.yaml]\nlanguages: [python]\ndifficulties: [easy]\n"
         "criteria: [unit-test]\nllms: [reference]\nscenarios: [scenarios/parser-fixes.yaml]\nagents:\n"
         "  - {name: sleeper, command: 'sleep 120', timeout_s: 300, network: false}\n")
QUICK = ("version: 1\ntask_sources: [tasks/basics.yaml]\nlanguages: [python]\ndifficulties: [easy]\n"
         "criteria: [unit-test]\nllms: [reference]\n")


def _launch(page: Page, server: str, config: str, name: str) -> None:
    page.goto(f"{server}/ui/launch")
    page.get_by_test_id("config").click()
    page.get_by_text(config, exact=True).click()
    expect(page.get_by_test_id("preview-size")).to_contain_text("x 1 languages x", timeout=30_000)
    page.get_by_test_id("run-name").fill(name)
    page.get_by_test_id("start").click()


def _state(page: Page, state: str, timeout_s: float = 120) -> None:
    expect(page.get_by_test_id("run-state")).to_have_text(f"state: {state}", timeout=timeout_s * 1000)


def _cli_state(ws: Path, run_id: str) -> tuple[str, int, int]:
    proc = run_cli("status", run_id, "--workspace", ws)
    assert proc.returncode == 0, proc.stderr
    shown = json.loads(proc.stdout)
    return shown["state"], shown["progress"]["done"], shown["progress"]["total"]


@pytest.mark.slow
def test_preview_launch_progress_cancel_resume_and_the_runs_list(workspace: Path, browser: Browser) -> None:
    (workspace / "configs" / "quick.yaml").write_text(QUICK)
    (workspace / "configs" / "mixed.yaml").write_text(MIXED)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    with serving(workspace) as (server, _):
        # the preview before anything starts: sizes, cache, cost ("no price" for the reference)
        page.goto(f"{server}/ui/launch")
        page.get_by_test_id("config").click()
        page.get_by_text("configs/quick.yaml", exact=True).click()
        size = page.get_by_test_id("preview-size")
        # the first preview loads the plan's modules: slow on a loaded machine
        expect(size).to_contain_text("x 1 languages x 1 models x 1 samples = ", timeout=30_000)
        expect(page.get_by_test_id("preview-cost")).to_have_text("estimated cost: no price")
        expect(page.get_by_test_id("preview-model")).to_have_text("reference")
        expect(page.get_by_test_id("preview-cached")).to_contain_text("0 of ")
        page.get_by_test_id("run-name").fill("first-quick")
        page.get_by_test_id("run-name").blur()
        page.wait_for_timeout(500)  # Quasar's field animation (its label rising) ends before the shot
        shot(page, "runs-01-launch-preview")
        page.get_by_test_id("start").click()
        page.wait_for_url("**/ui/run/first-quick", timeout=60_000)
        _state(page, "completed")
        expect(page.get_by_test_id("run-pass-rate")).to_have_text("pass rate 100.0%")
        expect(page.get_by_test_id("run-errors")).to_have_text("0 with errors")
        done = page.get_by_test_id("run-done").inner_text()
        assert not page.get_by_test_id("cancel").is_visible() and not page.get_by_test_id("resume").is_visible()
        page.wait_for_selector("[data-testid=summary]")
        shot(page, "runs-02-completed")

        # a name a run has is refused, with the reason, and nothing starts
        _launch(page, server, "configs/quick.yaml", "first-quick")
        expect(page.get_by_test_id("problem")).to_contain_text("already exists")
        assert "/ui/launch" in page.url

        # a run with two models: the reference finishes, the sleeping agent keeps it running
        _launch(page, server, "configs/mixed.yaml", "mixed")
        page.wait_for_url("**/ui/run/mixed", timeout=60_000)
        _state(page, "running")
        names = page.get_by_test_id("model-name")
        expect(names).to_have_text(["reference", "sleeper"])
        counts = page.get_by_test_id("model-done")
        expect(counts.nth(1)).to_have_text("0 / 1")
        expect(counts.nth(0)).not_to_have_text("0 / 0")
        reference_total = counts.nth(0).inner_text().split(" / ")[1]
        expect(counts.nth(0)).to_have_text(f"{reference_total} / {reference_total}", timeout=60_000)
        # the reference is done; the agent has no rate yet, so neither has the run
        expect(page.get_by_test_id("model-eta")).to_have_text(["done", "estimating"])
        expect(page.get_by_test_id("run-eta")).to_have_text("estimating")
        expect(page.get_by_test_id("source-name")).to_have_count(2)
        shot(page, "runs-03-running")

        # cancel: the page, the API and `benchwright status` say the same
        page.get_by_test_id("cancel").click()
        _state(page, "interrupted", 60)
        expect(page.get_by_text("cancelled at")).to_be_visible()
        api = page.request.get(f"{server}/api/runs/mixed").json()
        assert api["state"] == "interrupted" and api["exit_code"] is None
        cli = _cli_state(workspace, "mixed")
        assert cli == ("interrupted", api["progress"]["done"], api["progress"]["total"])
        assert page.get_by_test_id("run-done").inner_text() == f"{cli[1]} of {cli[2]} samples done"
        shot(page, "runs-04-cancelled")

        # resume from the page: it runs again (the agent starts over), then cancel it again
        page.get_by_test_id("resume").click()
        _state(page, "running", 60)
        expect(page.get_by_test_id("resume")).to_have_count(0)
        page.get_by_test_id("cancel").click()
        _state(page, "interrupted", 60)

        # the Runs list: newest first, with date, config, models, state, counts and pass rate
        page.goto(f"{server}/ui/runs")
        links = page.get_by_test_id("run-link")
        expect(links).to_have_text(["mixed", "first-quick"])
        expect(page.get_by_test_id("run-state")).to_have_text(["interrupted", "completed"])
        expect(page.get_by_text("100.0%")).to_be_visible()
        expect(page.get_by_text("reference, sleeper")).to_be_visible()
        shot(page, "runs-05-list")
        links.nth(1).click()
        page.wait_for_url("**/ui/run/first-quick")
        expect(page.get_by_test_id("run-done")).to_have_text(done)

        # resume again and leave it running while the server stops
        page.goto(f"{server}/ui/run/mixed")
        page.get_by_test_id("resume").click()
        _state(page, "running", 60)

    # a new server: the run it did not start is still running, shown and cancelled from its page
    with serving(workspace) as (server, _):
        page.goto(f"{server}/ui/run/mixed")
        _state(page, "running")
        page.get_by_test_id("cancel").click()
        _state(page, "interrupted", 60)
        assert _cli_state(workspace, "mixed")[0] == "interrupted"
        shot(page, "runs-06-after-restart")
    page.close()
