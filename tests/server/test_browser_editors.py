"""Editing from the web UI in a real browser (Debian's Chromium via Playwright) against
`benchwright serve` on the example workspace, at a 1280 px wide window: the task editor's
layout, fields, added, copied and deleted tasks and its problems; new files from the Files page;
the workspace settings. Screenshots go to test-artifacts/ui/."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from benchwright import yamldoc
from benchwright.task.model import TaskSource
from tests.server.conftest import shot

WIDTH = 1280
SLOW = 60_000
"""How long a redraw or a change of the whole file may take on a loaded machine (ms)."""

ALIGNMENT = """(id) => {
  const box = document.querySelector(`[data-testid="${id}"]`);
  const outer = box.getBoundingClientRect();
  const editor = box.querySelector('.cm-editor').getBoundingClientRect();
  const numbers = [...box.querySelectorAll('.cm-lineNumbers .cm-gutterElement')].filter(e => e.offsetHeight > 0);
  const lines = [...box.querySelectorAll('.cm-content .cm-line')];
  const n = Math.min(numbers.length, lines.length, 8);
  let drift = 0;
  for (let k = 0; k < n; k++) {
    drift = Math.max(drift, Math.abs(numbers[k].getBoundingClientRect().top - lines[k].getBoundingClientRect().top));
    if (numbers[k].textContent.trim() !== String(k + 1)) drift = 999;
  }
  return {n, drift, inside: editor.top >= outer.top - 1 && editor.bottom <= outer.bottom + 1
          && editor.right <= outer.right + 1, bottom: outer.bottom};
}"""


@pytest.fixture(autouse=True)
def patient() -> Iterator[None]:
    """Expectations wait up to :data:`SLOW`: a page redrawn on a loaded machine (the suite runs
    beside other work) may take longer than Playwright's 5 s."""
    expect.set_options(timeout=SLOW)
    yield
    expect.set_options(timeout=5_000)


def _shot(page: Page, name: str) -> None:
    """A screenshot as a user sees the page after scrolling through it (CodeMirror measures an
    editor's lines once it has been in view), taken from the top."""
    for editor in page.locator(".cm-editor").all():
        editor.scroll_into_view_if_needed()
    page.wait_for_timeout(200)
    page.evaluate("window.scrollTo(0, 0)")
    shot(page, name)


def _fits(page: Page) -> None:
    """The page has no horizontal scroll at 1280 px."""
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= WIDTH, f"the page is {width} px wide"


def _aligned(page: Page, testid: str) -> dict[str, Any]:
    """The code editor ``testid`` shows its line numbers beside their lines, inside its box."""
    box = page.get_by_test_id(testid)
    box.locator(".cm-line").first.wait_for()
    box.scroll_into_view_if_needed()  # CodeMirror measures its lines once they are in view
    got: dict[str, Any] = {}
    for _ in range(20):
        got = page.evaluate(ALIGNMENT, testid)
        if got["n"] >= 1 and got["drift"] <= 2 and got["inside"]:
            return got
        page.wait_for_timeout(100)
    raise AssertionError((testid, got))


def _tab_is_aligned(page: Page, lang: str, hidden: int) -> None:
    """Every code editor of the language tab ``lang`` is aligned, and "Run golden solution" sits
    below the golden solution's editor."""
    for tag in (f"description-{lang}", f"public-{lang}-0", *(f"hidden-{lang}-{n}" for n in range(hidden)),
                f"golden-{lang}"):
        _aligned(page, tag)
    golden = _aligned(page, f"golden-{lang}")
    button = page.get_by_test_id(f"run-golden-{lang}").bounding_box()
    assert button is not None and button["y"] >= golden["bottom"]


def _open_tab(page: Page, lang: str) -> None:
    tab = page.get_by_test_id(f"lang-{lang}")
    tab.click()
    expect(tab).to_have_attribute("aria-selected", "true")
    expect(page.get_by_test_id(f"description-{lang}")).to_be_visible()


def _names(path: Path) -> list[str]:
    return [t.name for t in TaskSource.model_validate(yamldoc.load(path).data).tasks]


@pytest.mark.slow
def test_the_task_editor_stays_aligned_and_adds_copies_deletes_and_checks_tasks(
        server: str, browser: Any, workspace: Path) -> None:
    file = workspace / "tasks" / "basics.yaml"
    before = file.read_text()
    names = _names(file)
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    page.goto(f"{server}/ui/tasks?path=tasks/basics.yaml")
    page.wait_for_selector("[data-testid=task-collapse-runs]")
    _fits(page)
    # switch tasks and language tabs: every editor keeps its line numbers beside its lines
    page.get_by_test_id("task-bracket-depth").click()
    expect(page.get_by_test_id("field-name")).to_have_value("bracket-depth")
    _tab_is_aligned(page, "python", 6)
    _open_tab(page, "java")
    _tab_is_aligned(page, "java", 6)
    page.get_by_test_id("task-cheapest-grid-path").click()
    expect(page.get_by_test_id("field-time_limit_s")).to_have_value("10")
    _open_tab(page, "java")
    _tab_is_aligned(page, "java", 6)
    _open_tab(page, "python")
    _tab_is_aligned(page, "python", 6)
    _fits(page)
    _shot(page, "editors-01-task-editor-aligned")
    # add a task, copy it, and give the copy an impossible time limit: Validate shows it there
    page.get_by_test_id("add-task").click()
    expect(page.get_by_test_id("field-name")).to_have_value("new-task")
    expect(page.get_by_test_id("pending")).to_contain_text("added a task")
    page.get_by_test_id("duplicate-task").click()
    expect(page.get_by_test_id("field-name")).to_have_value("new-task-copy")
    page.get_by_test_id("field-time_limit_s").fill("-1")
    page.get_by_test_id("field-release_date").fill("2026-03-04")
    page.get_by_test_id("field-python-entry_point").fill("solve")
    page.get_by_test_id("validate").click()
    expect(page.get_by_test_id("problem-count")).to_have_text("1 problem(s)")
    found = page.get_by_test_id("task-problems")
    expect(found).to_contain_text(f"tasks[{len(names) + 1}].time_limit_s")
    expect(page.get_by_test_id("task-new-task-copy")).to_contain_text("1 problem(s)")
    page.get_by_test_id("save").click()  # refused: nothing is written
    expect(page.get_by_test_id("problem-count")).to_have_text("1 problem(s)")
    _fits(page)
    _shot(page, "editors-02-task-problem-shown-where-it-is")
    assert file.read_text() == before
    page.get_by_test_id("field-time_limit_s").fill("2.5")
    page.get_by_test_id("validate").click()
    expect(page.get_by_test_id("problem-count")).to_have_text("no problems")
    # delete a task of the file: asked first, cancelled, then confirmed
    page.get_by_test_id("task-chunked").click()
    expect(page.get_by_test_id("field-name")).to_have_value("chunked")
    page.get_by_test_id("delete-task").click()
    expect(page.get_by_test_id("delete-name")).to_have_text("chunked")
    _shot(page, "editors-03-delete-asks-first")
    page.get_by_test_id("cancel-delete").click()
    expect(page.get_by_test_id("task-chunked")).to_be_visible()
    page.get_by_test_id("delete-task").click()
    page.get_by_test_id("confirm-delete").click()
    expect(page.get_by_test_id("pending")).to_contain_text("deleted chunked")
    expect(page.get_by_test_id("task-chunked")).to_have_count(0)
    page.get_by_test_id("save").click()
    expect(page.get_by_test_id("saved")).to_be_visible()
    after = file.read_text()
    assert _names(file) == [n for n in names if n != "chunked"] + ["new-task", "new-task-copy"]
    start, end = before.index("  - name: chunked\n"), before.index("  - name: top-words\n")
    assert after.startswith(before[:start] + before[end:])  # every other line as it was
    copy = TaskSource.model_validate(yamldoc.load(file).data).tasks[-1]
    assert (copy.time_limit_s, str(copy.release_date), copy.spec("python").entry_point) == \
        (2.5, "2026-03-04", "solve")
    assert stat.S_IMODE(file.stat().st_mode) == stat.S_IMODE(os.stat(workspace / "tasks" / "c.yaml").st_mode)
    _shot(page, "editors-04-tasks-saved")


@pytest.mark.slow
def test_files_lists_sizes_and_dates_makes_files_and_settings_are_edited(
        server: str, browser: Any, workspace: Path) -> None:
    page = browser.new_page(viewport={"width": WIDTH, "height": 900})
    page.goto(f"{server}/ui/")
    size = (workspace / "tasks" / "basics.yaml").stat().st_size
    expect(page.get_by_test_id("size-tasks/basics.yaml")).to_have_text(f"{size / 1000:.1f} kB")
    expect(page.get_by_test_id("modified-tasks/basics.yaml")).to_contain_text(" UTC")
    _fits(page)
    _shot(page, "editors-05-files")
    # a bad name says what to write, and nothing is made
    page.get_by_test_id("new-name").fill("../configs/x.yaml")
    page.get_by_test_id("create").click()
    expect(page.get_by_test_id("problem")).to_contain_text("'..'")
    page.get_by_test_id("new-name").fill("made.txt")
    page.get_by_test_id("create").click()
    expect(page.get_by_test_id("problem")).to_contain_text("ends with .yaml")
    page.get_by_test_id("new-name").fill("basics.yaml")
    page.get_by_test_id("create").click()
    expect(page.get_by_test_id("problem")).to_contain_text("exists already")
    _shot(page, "editors-06-new-file-refused")
    # a new task source opens in the task editor
    page.get_by_test_id("new-name").fill("made.yaml")
    page.get_by_test_id("create").click()
    page.wait_for_url("**/ui/tasks?path=tasks%2Fmade.yaml")
    expect(page.get_by_test_id("field-name")).to_have_value("add-two")
    made = workspace / "tasks" / "made.yaml"
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(made.stat().st_mode) == 0o666 & ~umask
    _shot(page, "editors-07-new-task-source")
    # the workspace settings: a bad value is shown with its line and not saved, a good one is
    settings = workspace / "benchwright.yaml"
    before = settings.read_text()
    page.goto(f"{server}/ui/settings")
    page.locator("[data-testid=settings-editor] .cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.insert_text("\nallowed_folders: [not/absolute]\n")
    page.get_by_test_id("save").click()
    expect(page.get_by_test_id("problem")).to_contain_text("allowed_folders[0]")
    assert settings.read_text() == before
    _shot(page, "editors-08-settings-problem")
    page.locator("[data-testid=settings-editor] .cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(before + "# edited in the browser\n")
    page.get_by_test_id("save").click()
    expect(page.get_by_test_id("saved")).to_be_visible()
    assert settings.read_text() == before + "# edited in the browser\n"
