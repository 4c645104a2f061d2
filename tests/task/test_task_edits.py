"""The task editor's edits of a task source, on the example task sources and files of other
forms: only the edited task's lines change, every other byte of the file stays, and a task is
added, copied and deleted the same way."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from benchwright import yamldoc
from benchwright.errors import InputError
from benchwright.task.editor import edit_task, task_fields
from benchwright.task.model import TaskSource
from tests.conftest import FIXTURES


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


def _names(text: str) -> list[str]:
    return [t.name for t in _source(text).tasks]


def _outside(text: str, new: str, name: str, following: str | None) -> None:
    """Everything before task ``name``'s block and from ``following`` on is the same text."""
    start = text.index(f"  - name: {name}\n")
    assert new.startswith(text[:start])
    if following is not None:
        assert new.endswith(text[text.index(f"  - name: {following}\n"):])


def test_a_task_is_added_duplicated_and_deleted_keeping_every_other_line(workspace: Path) -> None:
    from benchwright.server.service import Service
    from benchwright.task.editor import delete_task, duplicate_task, new_task
    from benchwright.workspace import Workspace

    file = workspace / "tasks" / "basics.yaml"
    text = file.read_text()
    names = _names(text)
    added, name = new_task(text, "basics.yaml")
    assert name == "new-task" and _names(added) == [*names, "new-task"]
    assert added.startswith(text) and "  - name: new-task\n" in added
    again, second = new_task(added, "basics.yaml")
    assert second == "new-task-2"
    copied, copy = duplicate_task(text, "basics.yaml", 1)
    assert copy == f"{names[1]}-copy" and _names(copied) == [*names[:2], copy, *names[2:]]
    _outside(text, copied, names[2], names[2])
    original, duplicate = _source(copied).tasks[1], _source(copied).tasks[2]
    assert duplicate.model_copy(update={"name": original.name}) == original
    assert duplicate_task(copied, "basics.yaml", 1)[1] == f"{names[1]}-copy-2"
    removed = delete_task(text, "basics.yaml", 1)
    assert _names(removed) == [names[0], *names[2:]]
    assert removed == text[:text.index(f"  - name: {names[1]}\n")] + text[text.index(f"  - name: {names[2]}\n"):]
    last = delete_task(text, "basics.yaml", len(names) - 1)
    assert _names(last) == names[:-1] and text.startswith(last)
    # every result validates as `benchwright validate` sees it
    service = Service(Workspace.open(workspace))
    for made in (added, again, copied, removed, last):
        assert [p for p in service.check_text("tasks/basics.yaml", made, "task-source")
                if p.severity == "error"] == []
    with pytest.raises(InputError):
        delete_task(text, "basics.yaml", len(names))


def test_tasks_in_a_file_of_other_forms_are_added_and_deleted(tmp_path: Path) -> None:
    from benchwright.task.editor import delete_task, duplicate_task, new_task

    flow = "version: 1\ntasks: [{name: a, languages: [python]}]\n"
    assert _names(new_task(flow, "f.yaml")[0]) == ["a", "new-task"]
    assert _names(delete_task(flow, "f.yaml", 0)) == []
    none = "# only a comment\nversion: 1\nname: empty\n"
    made = new_task(none, "f.yaml")[0]
    assert _names(made) == ["new-task"] and made.startswith("# only a comment\n")
    one = "version: 1\ntasks:\n  - name: a  # the only one\n    languages: [python]\n"
    assert _names(delete_task(one, "f.yaml", 0)) == []
    assert _names(duplicate_task(one, "f.yaml", 0)[0]) == ["a", "a-copy"]
    with pytest.raises(InputError):
        new_task("version: 1\ntasks: 3\n", "f.yaml")


def test_every_field_of_the_format_is_edited(workspace: Path) -> None:
    text = (workspace / "tasks" / "basics.yaml").read_text()
    source = _source(text)
    fields = task_fields(source.tasks[0])
    assert fields["release_date"] == "2025-02-03"
    fields.update(type="bug fix", source="me", mode="complete", release_date="2026-01-02", time_limit_s="2.5",
                  listed_languages=["python"], available_parameters=[], available_criteria=["unit-test"],
                  llm_judge_prompt="Judge ${solution_code}")
    py = fields["languages"]["python"]
    py.update(entry_point="collapse", test_prelude="import math", solution_header="from typing import *",
              completion_suffix="\n", stop=["\ndef ", "\nclass "])
    py["public_tests"].append({"name": "io", "code": "", "stdin": "1 2\n", "stdout": "3\n"})
    py["hidden_tests"][0]["name"] = "renamed"
    new = edit_task(text, "basics.yaml", 0, fields)
    task = _source(new).tasks[0]
    assert (task.type, task.source, task.mode, str(task.release_date), task.time_limit_s) == \
        ("bug fix", "me", "complete", "2026-01-02", 2.5)
    assert task.languages == ["python"] and task.available_parameters is None
    assert task.available_criteria == ["unit-test"] and task.llm_judge_prompt == "Judge ${solution_code}"
    spec = task.spec("python")
    assert (spec.entry_point, spec.test_prelude, spec.solution_header, spec.completion_suffix, spec.stop) == \
        ("collapse", "import math", "from typing import *", "\n", ["\ndef ", "\nclass "])
    io = spec.public_tests[-1]
    assert io.is_stdio and (io.stdin, io.stdout, io.code) == ("1 2\n", "3\n", "")
    assert spec.hidden_tests[0].name == "renamed"
    assert "    release_date: 2026-01-02\n" in new and "    time_limit_s: 2.5\n" in new
    # a test turned from stdin/stdout back to code, and fields emptied, leave no trace
    after = task_fields(task)
    after["languages"]["python"]["public_tests"][-1].update(code="assert True", stdin=None, stdout=None)
    after.update(release_date="", time_limit_s="", source="")
    back = _source(edit_task(new, "basics.yaml", 0, after)).tasks[0]
    assert back.spec("python").public_tests[-1].code == "assert True"
    assert (back.release_date, back.time_limit_s, back.source) == (None, None, None)
