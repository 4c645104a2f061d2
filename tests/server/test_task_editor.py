"""The task source editor in a real browser (Debian's Chromium via Playwright): editing
tasks/basics.yaml, saving, and running a golden solution through the real pipeline; a long task
source listed a page at a time. Screenshots go to test-artifacts/ui/."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.server.conftest import shot
from tests.task.test_task_edits import _changed_lines, _source


@pytest.mark.slow
def test_edit_a_hidden_test_save_and_run_the_golden_solution(server: str, browser: Browser,
                                                            workspace: Path) -> None:
    file = workspace / "tasks" / "basics.yaml"
    before = file.read_text()
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{server}/ui/tasks?path=tasks/basics.yaml")
    page.wait_for_selector("[data-testid=task-collapse-runs]")
    total = len(_source(before).tasks)
    page.fill("[data-testid=filter-name]", "persist")
    page.wait_for_selector(f"text=1 of {total} tasks")
    assert not page.is_visible("[data-testid=task-collapse-runs]")
    shot(page, "10-task-list-filtered")
    page.click("[data-testid=task-additive-persistence]")
    expect(page.locator("[data-testid=field-name]")).to_have_value("additive-persistence")
    cm = page.locator("[data-testid=hidden-python-2] .cm-content")
    expect(cm).to_contain_text("additive_persistence(199)")
    cm.click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text('assert additive_persistence(199) == 3, "edited in the browser"')
    page.click("[data-testid=save]")
    page.wait_for_selector("[data-testid=saved]")
    shot(page, "11-task-saved")
    after = file.read_text()
    assert _changed_lines(before, after) == [
        '-              code: assert additive_persistence(199) == 3, "199 -> 19 -> 10 -> 1"',
        '+              code: assert additive_persistence(199) == 3, "edited in the browser"']
    assert after.startswith("# benchwright-basics: a small task source")
    page.click("[data-testid=run-golden-python]")
    outcome = page.wait_for_selector("[data-testid=golden-outcome]", timeout=120_000)
    assert "PASS" in outcome.inner_text()
    cases = page.locator("[data-testid=golden-results-python] [data-testid^=case-]")
    assert cases.count() == 7  # 2 public and 5 hidden test cases, each reported
    assert page.inner_text("[data-testid=case-three-steps]").startswith("PASS")
    shot(page, "12-golden-solution-passes")


@pytest.mark.slow
def test_a_long_task_source_lists_a_page_of_tasks_at_a_time(server: str, browser: Browser, workspace: Path) -> None:
    text = (workspace / "tasks" / "basics.yaml").read_text()
    head, tasks = text.split("\ntasks:\n", 1)
    first = "  - name: " + tasks.split("  - name: ")[1].split("\n", 1)[1]
    first = first.split("\n  - name: ")[0].rstrip("\n") + "\n"
    name = _source(text).tasks[0].name
    body = "".join(f"  - name: m{n:02d}\n" + first.split("\n", 1)[1].replace(name, f"m{n:02d}") for n in range(60))
    (workspace / "tasks" / "many.yaml").write_text(f"{head}\ntasks:\n{body}")
    assert len(_source(f"{head}\ntasks:\n{body}").tasks) == 60
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/ui/tasks?path=tasks/many.yaml")
    expect(page.get_by_test_id("task-count")).to_have_text("60 of 60 tasks")
    listed = page.locator("[data-testid^=task-m]")
    expect(listed).to_have_count(25)
    expect(page.get_by_test_id("tasks-span")).to_have_text("1-25")
    expect(page.get_by_test_id("tasks-previous")).to_be_disabled()
    page.get_by_test_id("tasks-next").click()
    expect(page.get_by_test_id("tasks-span")).to_have_text("26-50")
    expect(page.get_by_test_id("task-m00")).to_have_count(0)
    page.get_by_test_id("task-m30").click()
    expect(page.get_by_test_id("field-name")).to_have_value("m30")
    expect(page.get_by_test_id("tasks-span")).to_have_text("26-50")  # the chosen task's page stays
    page.get_by_test_id("tasks-next").click()
    expect(page.get_by_test_id("tasks-span")).to_have_text("51-60")
    expect(page.get_by_test_id("tasks-next")).to_be_disabled()
    page.fill("[data-testid=filter-name]", "m5")  # a filter starts again from the first page
    expect(page.get_by_test_id("task-count")).to_have_text("10 of 60 tasks")
    expect(page.get_by_test_id("tasks-span")).to_have_text("1-10")
    expect(listed).to_have_count(10)
    page.evaluate("window.scrollTo(0, 0)")  # the header is fixed: a full-page shot draws it where scrolled
    shot(page, "13-task-list-paged")
