from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from benchwright.errors import InputError
from benchwright.importers.jsonl import JsonlMapping, import_jsonl
from benchwright.task.model import TaskSource

MBPP = JsonlMapping(
    name="task_id",
    prompt="text",
    tests="test_list",
    golden="code",
    entry_point="fn",
    difficulty="level",
    tags="tags",
    source_name="google-research/mbpp",
    name_prefix="mbpp/",
)


def _write(path: Path, rows: list[Any], gz: bool = False) -> Path:
    text = "\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n"
    if gz:
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text, encoding="utf-8")
    return path


ROWS: list[Any] = [
    {
        "task_id": 2,
        "text": "Write a function to find shared elements of two lists, e.g. ${x} {% y %}.",
        "code": "def similar(a, b):\n    return tuple(set(a) & set(b))\n",
        "fn": "similar",
        "level": "easy",
        "tags": "sets, lists",
        "test_list": [
            "assert set(similar((3, 4), (4, 5))) == {4}",
            {"name": "empty", "code": "assert similar((), ()) == ()"},
        ],
    },
    {
        "task_id": 3,
        "text": "Add two numbers.",
        "test_list": "assert add(1, 2) == 3",
        "tags": ["math"],
    },
]


@pytest.mark.parametrize("gz", [False, True])
def test_mapping(tmp_path: Path, gz: bool) -> None:
    path = _write(tmp_path / ("t.jsonl.gz" if gz else "t.jsonl"), ROWS, gz=gz)
    source = import_jsonl(path, MBPP)
    assert source.name == "google-research/mbpp"
    first, second = source.tasks
    assert first.name == "mbpp/2" and second.name == "mbpp/3"
    assert first.languages == ["python"] and first.mode == "instruct"
    assert first.difficulty == "easy" and first.tags == ["sets", "lists"]
    assert second.tags == ["math"]
    assert first.source == "google-research/mbpp"
    spec = first.spec("python")
    assert spec.entry_point == "similar"
    assert [t.name for t in spec.hidden_tests] == [None, "empty"]
    assert first.golden_solution == {"python": ROWS[0]["code"]}
    assert [t.code for t in second.spec("python").hidden_tests] == ["assert add(1, 2) == 3"]
    assert second.golden_solution == {}
    env = ImmutableSandboxedEnvironment(
        variable_start_string="${", variable_end_string="}", undefined=jinja2.StrictUndefined
    )
    assert env.from_string(spec.description).render() == ROWS[0]["text"]
    again = TaskSource.model_validate(source.model_dump(mode="json", exclude_none=True))
    assert again == source


def test_language_key_mode_and_continuation(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "p": "def f():\n", "lang": "python", "sol": "    return 1\n"},
        {"id": "b", "p": "int f() {\n", "sol": "  return 1;\n}\n"},
    ]
    mapping = JsonlMapping(
        name="id",
        prompt="p",
        language="lang",
        language_value="cpp",
        golden="sol",
        golden_is_continuation=True,
        mode="complete",
    )
    source = import_jsonl(_write(tmp_path / "c.jsonl", rows), mapping)
    assert [t.languages for t in source.tasks] == [["python"], ["cpp"]]
    assert source.tasks[0].golden_solution == {"python": "def f():\n    return 1\n"}
    assert all(t.mode == "complete" for t in source.tasks)


def test_bad_lines_are_all_reported(tmp_path: Path) -> None:
    rows: list[Any] = [
        ROWS[0],
        {"text": "no id"},
        "",
        "{broken json",
        {"task_id": 9, "text": "  "},
        [1, 2],
        {"task_id": 10, "text": "bad tests", "test_list": [3]},
        {"task_id": 2, "text": "repeat"},
    ]
    path = _write(tmp_path / "bad.jsonl", rows)
    with pytest.raises(InputError) as caught:
        import_jsonl(path, MBPP)
    problems = caught.value.problems
    assert [p.line for p in problems] == [2, 4, 5, 6, 7, 8]
    assert all(p.file == str(path) for p in problems)
    assert [p.path for p in problems] == [f"line {p.line}" for p in problems]
    assert "'task_id'" in problems[0].message and problems[0].hint
    assert "'text'" in problems[2].message
    assert "repeats line 1" in problems[5].message
    assert f"{path}:2:" in str(caught.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        import_jsonl(tmp_path / "nope.jsonl", MBPP)


def test_test_prelude_and_tests_are_escaped(tmp_path: Path) -> None:
    row = {
        "id": "t",
        "p": "Fill {% this %}",
        "pre": "FMT = '${x}'\n",
        "tests": ["assert FMT == '${x}'  # {# not a comment #}"],
        "src": "mine",
    }
    mapping = JsonlMapping(name="id", prompt="p", tests="tests", test_prelude="pre", source="src")
    task = import_jsonl(_write(tmp_path / "e.jsonl", [row]), mapping).tasks[0]
    env = ImmutableSandboxedEnvironment(
        variable_start_string="${",
        variable_end_string="}",
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    spec = task.spec("python")
    assert spec.test_prelude is not None
    assert env.from_string(spec.test_prelude).render() == row["pre"]
    assert env.from_string(spec.hidden_tests[0].code).render() == row["tests"][0]
    assert env.from_string(spec.description).render() == row["p"]
    assert task.source == "mine"
