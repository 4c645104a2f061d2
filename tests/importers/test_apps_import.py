"""The APPS importer on rows in codeparrot/apps's published format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchwright.errors import InputError, UserError
from benchwright.importers.apps import IMPORT_HEADER, AppsImporter
from benchwright.importers.base import ImportRequest
from benchwright.task.model import TaskSource

FIXTURES = Path(__file__).parent.parent / "fixtures" / "apps"


def load(**kwargs: Any) -> TaskSource:
    return AppsImporter().load(ImportRequest(**kwargs))


def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / "test.jsonl").read_text().splitlines()]


def write(tmp_path: Path, items: list[dict[str, Any]]) -> Path:
    path = tmp_path / "test.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in items))
    return path


def test_stdin_problems_become_stdin_stdout_cases_with_the_first_solution_golden() -> None:
    source = load(data=FIXTURES / "test.jsonl")
    assert source.name == "apps-test"
    tasks = {t.name: t for t in source.tasks}
    assert list(tasks) == ["apps/4000", "apps/4001", "apps/4002", "apps/4003"]  # 4004: no tests
    task = tasks["apps/4000"]
    spec = task.spec("python")
    assert task.type == "stdin" and task.difficulty == "introductory"
    assert task.tags == ["codeforces.com"]
    assert task.time_limit_s == 4.0
    assert task.golden_solution == {"python": "a, b = map(int, input().split())\nprint(a + b)\n"}
    assert not spec.public_tests
    assert [(c.name, c.stdin, c.stdout) for c in spec.hidden_tests] == [
        ("test-1", "1 2\n", "3\n"), ("test-2", "-5 5\n", "0\n"),
        ("test-3", "1000000000000 1\n", "1000000000001\n")]
    assert spec.solution_header == IMPORT_HEADER
    assert "standard input" in spec.description


def test_inputs_and_outputs_given_as_lists_of_lines_are_joined() -> None:
    spec = load(data=FIXTURES / "test.jsonl").tasks[1].spec("python")
    assert [(c.stdin, c.stdout) for c in spec.hidden_tests] == [
        ("2\na b\nc d e\n", "b a\ne d c\n"), ("1\nx", "x")]


def test_call_based_problems_accept_the_value_or_its_one_item_list() -> None:
    tasks = {t.name: t for t in load(data=FIXTURES / "test.jsonl").tasks}
    function = tasks["apps/4002"].spec("python")
    assert tasks["apps/4002"].type == "call-based"
    assert function.entry_point == "largest"
    assert [c.code for c in function.hidden_tests] == [
        "assert largest([1, 5, 2]) in ([[5, 1]], [5, 1])",
        "assert largest([-1]) in ([[-1, 0]], [-1, 0])"]
    method = tasks["apps/4003"].spec("python")
    assert method.entry_point == "Solution"
    assert [c.code for c in method.hidden_tests] == [
        "assert Solution().maxProfit([7, 1, 5, 3, 6, 4]) == 5",
        "assert Solution().maxProfit([7, 6, 4, 3, 1]) == 0"]


def test_difficulty_option_and_split_subset(tmp_path: Path) -> None:
    interview = load(data=FIXTURES / "test.jsonl", options={"difficulty": "interview"})
    assert [t.name for t in interview.tasks] == ["apps/4001", "apps/4003"]
    assert interview.name == "apps-test-interview"
    with pytest.raises(UserError, match="choose from introductory, interview, competition"):
        load(data=FIXTURES / "test.jsonl", options={"difficulty": "hard"})
    importer = AppsImporter()
    hub = importer.hub(importer.check(ImportRequest(hf=True, subset="train")))
    assert (hub.path, hub.data_files) == ("codeparrot/apps", ["train.jsonl"])


def test_a_problem_without_solutions_has_no_golden(tmp_path: Path) -> None:
    row = {**rows()[0], "solutions": ""}
    assert load(data=write(tmp_path, [row])).tasks[0].golden_solution == {}


@pytest.mark.parametrize(("field", "value", "message"), [
    ("input_output", "{not json", "input_output: not valid JSON"),
    ("input_output", json.dumps({"inputs": ["1"], "outputs": []}), "1 inputs and 0 outputs"),
    ("input_output", json.dumps({"inputs": [1], "outputs": ["1"]}), "the input is a int, not text"),
    ("input_output", json.dumps({"fn_name": "f(); import os", "inputs": [[1]], "outputs": [1]}),
     "is not a Python name"),
    ("input_output", json.dumps({"fn_name": "f", "inputs": [[float("nan")]], "outputs": [1]}),
     "is not plain JSON data"),
    ("solutions", json.dumps({"a": 1}), "solutions: not a JSON list"),
])
def test_bad_rows_are_named_with_their_line(tmp_path: Path, field: str, value: str,
                                            message: str) -> None:
    good = rows()[0]
    bad = {**good, "problem_id": 1, field: value}
    with pytest.raises(InputError) as err:
        load(data=write(tmp_path, [good, bad]))
    problems = err.value.problems
    assert len(problems) == 1
    assert problems[0].line == 2
    assert message in problems[0].message


def test_solutions_are_never_run_at_import(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    row = {**rows()[0], "solutions": json.dumps([f"open({str(marker)!r}, 'w')"]),
           "question": "${__import__('os').system('touch " + str(marker) + "')}"}
    task = load(data=write(tmp_path, [row])).tasks[0]
    assert not marker.exists()
    assert task.spec("python").description.startswith("{% raw %}")  # a template stays text
