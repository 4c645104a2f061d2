"""The web UI in a real browser: Debian's Chromium driven by Playwright (no browser download)
against `benchwright serve` on the example workspace. Each step saves a screenshot under
test-artifacts/ui/ (BW_ARTIFACTS moves it)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from tests.conftest import BIN
from tests.server.conftest import serving, shot

TINY = """\
version: 1
name: tiny
tasks:
  - name: double
    difficulty: easy
    languages: [python]
    task:
      common_prompt: Write double(x) that returns 2 * x.
      languages_specific:
        python:
          description: ${common_prompt}
          public_tests:
            - code: assert double(2) == 4
          hidden_tests:
            - {name: hidden-one, code: "assert double(5) == 10"}
    golden_solution:
      python: |
        def double(x):
            return 2 * x
"""
CONFIG = "version: 1\ntask_sources: [tasks/tiny.yaml]\ncriteria: [unit-test]\nllms: [reference]\n"


@pytest.fixture
def server(workspace: Path) -> Iterator[str]:
    """The example workspace, with a tiny task source and its config, served."""
    (workspace / "tasks" / "tiny.yaml").write_text(TINY)
    (workspace / "configs" / "tiny.yaml").write_text(CONFIG)
    with serving(workspace) as (base, _):
        yield base


def replace_editor_text(page: Page, text: str) -> None:
    page.click(".cm-content")
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)


@pytest.mark.slow
def test_edit_validate_launch_and_drill_down_to_the_failing_test(server: str, browser: Browser,
                                                                  workspace: Path) -> None:
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(f"{server}/ui/")
    page.wait_for_selector("text=tasks/tiny.yaml")
    shot(page, "01-files")
    page.click("text=tasks/tiny.yaml")
    page.wait_for_selector("[data-testid=save]")
    # a broken edit: the validation messages show, with the line, and nothing is written
    replace_editor_text(page, TINY.replace("difficulty: easy", "difficulty: easy\n    colour: blue"))
    page.click("[data-testid=validate]")
    problem = page.wait_for_selector("[data-testid=problem]")
    assert "colour" in problem.inner_text() and "tiny.yaml:6" in problem.inner_text()
    page.click("[data-testid=save]")
    page.wait_for_selector("[data-testid=problem]")
    shot(page, "02-broken-edit")
    assert (workspace / "tasks" / "tiny.yaml").read_text() == TINY
    # edit the hidden test (it now expects the wrong value) and save
    replace_editor_text(page, TINY.replace("assert double(5) == 10", "assert double(5) == 11"))
    page.click("[data-testid=save]")
    page.wait_for_selector("[data-testid=saved]")
    shot(page, "03-saved")
    assert "double(5) == 11" in (workspace / "tasks" / "tiny.yaml").read_text()
    # launch with the reference model and watch it finish
    page.click("text=Launch")
    page.click("[data-testid=config]")
    page.click("text=configs/tiny.yaml")
    page.click("[data-testid=start]")
    page.wait_for_url("**/ui/run/**", timeout=60_000)
    page.wait_for_selector("text=state: completed", timeout=120_000)
    page.wait_for_selector("[data-testid=summary]")
    shot(page, "04-results")
    page.click("[data-testid='sample-double-python-reference-0']")
    line = page.wait_for_selector("[data-testid=error-line]", timeout=30_000)
    assert "double(5) == 11" in line.inner_text()  # the failing line of the exact code executed
    assert page.is_visible("text=Extracted code")
    shot(page, "05-failing-test")
    # the data explorer: records filtered on the server
    run_id = page.url.split("/ui/sample/")[1].split("/")[0]
    page.goto(f"{server}/ui/explorer?run={run_id}")
    everything = len((workspace / "results" / run_id / "records.jsonl").read_text().splitlines())
    page.wait_for_selector(f"text=1-{everything} of {everything} records")
    page.click("[data-testid=filter-verdict]")  # a dropdown of the verdicts the run holds
    page.get_by_role("option", name="fail", exact=True).click()
    page.click("[data-testid=apply]")
    page.wait_for_selector("text=1-2 of 2 records")
    assert page.locator("[data-testid=explorer] tbody tr").count() == 2
    shot(page, "07-explorer")


@pytest.mark.slow
def test_an_agent_trace_shows_the_scorers_and_the_judge(server: str, browser: Browser) -> None:
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(f"{server}/ui/launch")
    page.click("[data-testid=config]")
    page.click("text=configs/agents.yaml")
    page.click("[data-testid=start]")
    page.wait_for_url("**/ui/run/**", timeout=60_000)
    page.wait_for_selector("text=state: completed", timeout=120_000)
    gates = page.wait_for_selector("[data-testid=gates]")
    text = gates.inner_text()
    assert "Why the run badge failed" not in text  # no badge failed: the column is not shown empty
    for agent in ("honest", "edits-the-test", "adds-a-skip"):
        assert agent in text
    assert "≠ gates disagree" in text
    page.click("[data-testid='sample-empty-input-agent-edits-the-test-0']")
    scorers = page.wait_for_selector("[data-testid=scorers-card]")
    assert "OVERALL FAIL" in scorers.inner_text()
    assert "tests_unmodified" in scorers.inner_text()
    judge = page.wait_for_selector("[data-testid=judge-card]")
    assert "Judge verdict: PASS" in judge.inner_text()  # the recorded judge was fooled
    assert "task completion" in judge.inner_text()
    shot(page, "06-agent-trace")


@pytest.mark.slow
def test_with_auth_the_ui_asks_for_a_token_and_a_viewer_cannot_write(workspace: Path, browser: Browser) -> None:
    made = subprocess.run([str(BIN), "token", "create", "--role", "viewer", "--workspace", str(workspace)],
                          capture_output=True, text=True, check=True)
    token = next(w for w in made.stdout.split() if w.startswith("bw_"))
    with serving(workspace, "--auth") as (base, _):
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        page.goto(f"{base}/ui/edit?path=configs/example.yaml")
        page.wait_for_selector("[data-testid=sign-in]")
        assert not page.is_visible("[data-testid=save]")  # nothing of the page without a token
        page.fill("[data-testid=token]", "bw_00000000_wrong")
        page.click("[data-testid=sign-in-button]")
        page.wait_for_selector("text=this token is not valid here")
        page.fill("[data-testid=token]", token)
        page.click("[data-testid=sign-in-button]")
        page.wait_for_selector("[data-testid=save]")
        before = (workspace / "configs" / "example.yaml").read_text()
        page.click("[data-testid=save]")
        problem = page.wait_for_selector("[data-testid=problem]")
        assert "not write" in problem.inner_text()
        assert (workspace / "configs" / "example.yaml").read_text() == before
        shot(page, "08-viewer-cannot-write")


def _run_tiny(workspace: Path, run_id: str) -> None:
    """``benchwright run configs/tiny.yaml`` as ``run_id`` (a missed threshold is fine)."""
    proc = subprocess.run([str(BIN), "run", "configs/tiny.yaml", "--run-id", run_id], cwd=workspace,
                          capture_output=True, text=True)
    assert proc.returncode in (0, 1), proc.stderr


@pytest.mark.slow
def test_two_runs_compared_side_by_side(server: str, browser: Browser, workspace: Path) -> None:
    for run_id, expected in (("before", "10"), ("after", "11")):
        source = workspace / "tasks" / "tiny.yaml"
        source.write_text(TINY.replace("assert double(5) == 10", f"assert double(5) == {expected}"))
        _run_tiny(workspace, run_id)
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(f"{server}/ui/compare?a=before&b=after")
    page.wait_for_selector("[data-testid=deltas]")
    assert "regressions: 1" in page.inner_text("[data-testid=regressions]")
    assert "tiny/double [python] reference" in page.inner_text("body")
    deltas = page.inner_text("[data-testid=deltas]")
    assert "Paired Δ 95 % CI" in deltas and "no significant difference" in deltas, deltas  # one task, one flip
    shot(page, "09-compare")


@pytest.mark.slow
def test_the_run_page_says_why_samples_failed(server: str, browser: Browser, workspace: Path) -> None:
    (workspace / "tasks" / "tiny.yaml").write_text(TINY.replace("return 2 * x", "return (2 *"))
    _run_tiny(workspace, "broken")
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(f"{server}/ui/run/broken")
    page.wait_for_selector("[data-testid=failure-reason]")
    said = page.inner_text("[data-testid=failure-reason]")
    assert "1 error sample(s), did not build (a retry will not help)" in said, said
    assert "SyntaxError" in said and "tiny/double [python] sample 0" in said
    shot(page, "10-why-samples-failed")


@pytest.mark.slow
def test_the_run_page_shows_every_mean_with_its_interval(server: str, browser: Browser, workspace: Path) -> None:
    second = TINY.split("tasks:\n", 1)[1].replace("name: double", "name: double-again") \
        .replace("return 2 * x", "return 2 + x")  # wrong: a pass rate strictly between 0 and 1
    (workspace / "tasks" / "tiny.yaml").write_text(TINY + second)
    _run_tiny(workspace, "two")
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    page.goto(f"{server}/ui/run/two")
    page.wait_for_selector("[data-testid=interval-note]")
    table = page.inner_text("[data-testid=summary]")
    assert "unit-test ± SE [95 % CI]" in table and "± 50.0 [" in table, table
    assert "clustered by task" in page.inner_text("[data-testid=interval-note]")
    shot(page, "11-run-intervals")
