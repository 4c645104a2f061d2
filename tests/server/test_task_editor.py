"""The task source editor: its YAML editing helper on the example task sources, and the page in a
real browser (Debian's Chromium via Playwright) editing tasks/basics.yaml and running a golden
solution through the real pipeline. Screenshots go to test-artifacts/ui/."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from benchwright import yamldoc
from benchwright.errors import InputError
from benchwright.server.ui.tasks import edit_task, task_fields
from benchwright.task.model import TaskSource
from tests.conftest import FIXTURES
from tests.server.conftest import shot


def _source(text: str) -> TaskSource:
    return TaskSource.model_validate(yamldoc.parse_text(text, "t.yaml").data)


def _changed_lines(before: str, after: str) -> list[str]:
    return [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_editing_one_hidden_test_changes_only_that_line(workspace: Path) -> None:
    text = (workspace / "tasks" / "basics.yaml").read_text()
    source = _source(text)
    index = next(i for i, t in enumerate(source.tasks) if t.name == "additive-persistence")
    fields = task_fields(source.tasks[index])
    hidden = fields["languages"]["python"]["hidden_tests"]
    hidden[2]["code"] = 'assert additive_persistence(199) == 3, "edited"'
    new = edit_task(text, "basics.yaml", index, fields)
    assert _changed_lines(text, new) == [
        '-              code: assert additive_persistence(199) == 3, "199 -> 19 -> 10 -> 1"',
        '+              code: assert additive_persistence(199) == 3, "edited"']
    after = _source(new)
    assert after.tasks[index].spec("python").hidden_tests[2].code == 'assert additive_persistence(199) == 3, "edited"'
    assert after.tasks[index].spec("python").hidden_tests[2].name == "three-steps"
    assert [t for i, t in enumerate(after.tasks) if i != index] == \
        [t for i, t in enumerate(source.tasks) if i != index]


def test_a_multiline_edit_and_new_test_keep_the_rest_of_the_file_byte_for_byte(workspace: Path) -> None:
    text = (workspace / "tasks" / "basics.yaml").read_text()
    source = _source(text)
    index = next(i for i, t in enumerate(source.tasks) if t.name == "bracket-depth")
    fields = task_fields(source.tasks[index])
    java = fields["languages"]["java"]
    java["hidden_tests"][0]["code"] = 'int d = Solution.bracketDepth("x");\nassert d == 0 : "x";'
    java["hidden_tests"].append({"name": "added", "code": 'assert Solution.bracketDepth("[") == -1 : "[";'})
    fields["difficulty"] = "hard"
    fields["tags"] = ["stack", "brackets", "edited"]
    new = edit_task(text, "basics.yaml", index, fields)
    # everything before and after the task's block is the same text
    start = text.index("  - name: bracket-depth\n")
    end = text.index("  - name: covered-length\n")
    assert new.startswith(text[:start])
    assert new.endswith(text[end:])
    assert "# benchwright-basics: a small task source" in new
    changed = _changed_lines(text, new)
    assert "-    difficulty: medium" in changed and "+    difficulty: hard" in changed
    assert "+    tags: [stack, brackets, edited]" in changed
    task = _source(new).tasks[index]
    assert task.spec("java").hidden_tests[0].code == 'int d = Solution.bracketDepth("x");\nassert d == 0 : "x";'
    assert task.spec("java").hidden_tests[-1].name == "added"
    assert task.llm_judge_prompt == source.tasks[index].llm_judge_prompt


def test_unchanged_fields_leave_every_file_as_it_was(workspace: Path) -> None:
    for path in [*sorted((workspace / "tasks").glob("*.yaml")), FIXTURES / "thesis" / "mbbp-sanitized-sample-1.yaml"]:
        text = path.read_text()
        for i, task in enumerate(_source(text).tasks):
            assert edit_task(text, path.name, i, task_fields(task)) == text, (path, i)


def test_the_last_task_and_a_removed_test(workspace: Path) -> None:
    text = (workspace / "tasks" / "basics.yaml").read_text()
    source = _source(text)
    last = len(source.tasks) - 1
    fields = task_fields(source.tasks[last])
    lang = next(iter(fields["languages"]))
    del fields["languages"][lang]["hidden_tests"][0]
    new = edit_task(text, "basics.yaml", last, fields)
    before = text[:text.index(f"  - name: {source.tasks[last].name}\n")]
    assert new.startswith(before)
    assert len(_source(new).tasks[last].spec(lang).hidden_tests) == len(source.tasks[last].spec(lang).hidden_tests) - 1


def test_no_such_task_is_an_input_error(workspace: Path) -> None:
    text = (workspace / "tasks" / "basics.yaml").read_text()
    with pytest.raises(InputError):
        edit_task(text, "basics.yaml", 999, {})


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
