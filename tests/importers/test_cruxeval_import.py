"""The cruxeval importer: output and input prediction as a completed ``check()`` assertion, the
dataset's answer as the golden solution, rows that are not literals refused, and the two test
cases judged by the real Python runner in the sandbox."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchwright.errors import InputError
from benchwright.importers.base import ImportRequest
from benchwright.importers.cruxeval import CruxEvalImporter
from benchwright.lang.base import TestSpec
from benchwright.lang.python import PythonLanguage
from benchwright.sandbox.base import SandboxLimits
from benchwright.sandbox.select import best_sandbox
from benchwright.task.model import Task, TaskSource
from tests.conftest import FIXTURES

DATA = FIXTURES / "cruxeval" / "cruxeval.jsonl"


def _load(path: Path = DATA, subset: str | None = None) -> TaskSource:
    return CruxEvalImporter().load(ImportRequest(data=path, subset=subset))


def _rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in DATA.read_text().splitlines()]


def _write(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "cruxeval.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_output_prediction_completes_the_assertion() -> None:
    source = _load()
    assert source.name == "cruxeval-output"
    task = source.tasks[3]
    spec = task.spec("python")
    assert task.name == "sample_3" and task.mode == "complete" and task.time_limit_s == 3.0
    assert spec.description.endswith("\n\ndef check():\n    assert f('bcksrut', 'q') == ")
    assert task.golden_solution["python"] == spec.description + "'bcksrutq'\n"
    assert spec.test_prelude == _rows()[3]["code"] + "\n"
    assert [c.name for c in spec.hidden_tests] == ["asserts", "assertion"]


def test_input_prediction_completes_the_call() -> None:
    task = _load(subset="input").tasks[1]
    spec = task.spec("python")
    assert spec.description.endswith("\n\ndef check():\n    assert {1: None, 2: None} == f(")
    assert task.golden_solution["python"].endswith("== f((1, ), (1, ), (1, 2))\n")
    assert task.tags == ["cruxeval-I"]


@pytest.mark.parametrize("key,value", [
    ("input", "__import__('os').system('true')"),
    ("output", "open('/etc/passwd').read()"),
    ("output", "[1,\n2]"),
])
def test_inputs_and_outputs_must_be_literals(tmp_path: Path, key: str, value: str) -> None:
    rows = _rows()[:2]
    rows[1][key] = value
    with pytest.raises(InputError, match=r"line 2: .*(not a Python literal|one line)"):
        _load(_write(tmp_path, rows))


def test_a_row_without_an_id_is_located(tmp_path: Path) -> None:
    rows = _rows()[:2]
    del rows[0]["id"]
    with pytest.raises(InputError, match=r"line 1: not a CRUXEval .* missing id"):
        _load(_write(tmp_path, rows))


def _run(task: Task, solution: str) -> dict[str, str]:
    spec = task.spec("python")
    tests = [TestSpec(name=str(c.name), code=c.code, hidden=True) for c in spec.hidden_tests]
    lang = PythonLanguage(fork_server=False)
    try:
        result = lang.run_tests(best_sandbox(), solution, tests, prelude=spec.test_prelude,
                                limits=SandboxLimits(wall_s=20), test_timeout_s=3.0)
    finally:
        lang.close()
    return {t.name: t.status for t in result.tests}


def test_an_answer_is_checked_against_the_given_function() -> None:
    task = _load().tasks[3]
    prompt = task.spec("python").description
    assert _run(task, task.golden_solution["python"]) == {"asserts": "pass", "assertion": "pass"}
    assert _run(task, prompt + "'qbcksrut'\n") == {"asserts": "pass", "assertion": "fail"}
    # a chat answer that changes f to fit its wrong prediction: the given f is restored
    cheat = prompt.replace("return ''.join(text_list)", "return 'qbcksrut'") + "'qbcksrut'\n"
    assert _run(task, cheat) == {"asserts": "pass", "assertion": "fail"}
    # a chat answer that drops the assertion would pass check(); the other case fails it
    dropped = prompt.replace("    assert f(", "    f(") + "'bcksrutq'\n"
    assert _run(task, dropped) == {"asserts": "fail", "assertion": "pass"}
