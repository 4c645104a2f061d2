"""The humaneval-plus and mbpp-plus importers: one case per input, expected outputs from the
canonical solution run in the sandbox, EvalPlus's comparisons; literals written and read back
without eval; bad and hostile rows."""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path
from typing import Any

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from benchwright.errors import InputError, UserError
from benchwright.importers.base import ImportRequest
from benchwright.importers.evalplus import HumanEvalPlusImporter, MbppPlusImporter
from benchwright.importers.evalplus_inputs import mbpp_arguments
from benchwright.importers.pyliteral import NotLiteral, from_source, to_source
from benchwright.sandbox.select import best_sandbox
from benchwright.task.model import Task, TaskSource
from tests.conftest import FIXTURES

HUMANEVAL_PLUS = FIXTURES / "evalplus" / "HumanEvalPlus.jsonl.gz"
MBPP_PLUS = FIXTURES / "evalplus" / "MbppPlus.jsonl.gz"


def _rows(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f if line.strip()]


def _write(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "Plus.jsonl.gz"
    path.write_bytes(gzip.compress("".join(json.dumps(r) + "\n" for r in rows).encode()))
    return path


def _render(text: str) -> str:
    env = ImmutableSandboxedEnvironment(variable_start_string="${", variable_end_string="}",
                                        undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(text).render()


def _cases(task: Task) -> dict[str, str]:
    return {str(c.name): _render(c.code) for c in task.spec("python").hidden_tests}


@pytest.fixture(scope="module")
def humaneval_plus() -> TaskSource:
    return HumanEvalPlusImporter().load(ImportRequest(data=HUMANEVAL_PLUS))


@pytest.fixture(scope="module")
def mbpp_plus() -> TaskSource:
    return MbppPlusImporter().load(ImportRequest(data=MBPP_PLUS))


# -- literals -----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [
    None, True, 0, -7, 1.5, -0.0, float("inf"), float("-inf"), 1e-300,
    complex(1, -2), "a'\"\n\\", b"\x00\xff", [], (), (1,), [1, (2, [3])], {1: "a", (1, 2): [None]},
    set(), {1, 2}, frozenset(), frozenset({"a"}),
])
def test_to_source_round_trips_without_eval(value: Any) -> None:
    text = to_source(value)
    back = from_source(text)
    assert back == value and type(back) is type(value)


def test_nan_round_trips() -> None:
    assert math.isnan(from_source(to_source(float("nan"))))


def test_huge_integers_are_hexadecimal() -> None:
    huge = 2**20000  # more digits than Python converts to decimal text
    assert to_source(huge).startswith("0x") and to_source(-huge).startswith("-0x")
    assert from_source(to_source(-huge)) == -huge
    assert to_source(10**100) == str(10**100)


@pytest.mark.parametrize("text", [
    "__import__('os').system('true')", "open('x')", "x", "[1, y]", "(lambda: 1)()", "1 + 2",
    "float('1e5')", "set([[]])", "{**d}", "f'{1}'", "...", "not 1",
])
def test_from_source_refuses_anything_but_literals(text: str) -> None:
    with pytest.raises(NotLiteral):
        from_source(text)


def test_to_source_refuses_objects_that_only_look_like_data() -> None:
    from collections import OrderedDict, deque

    for value in (deque([1]), OrderedDict(a=1), object(), [1, deque()]):
        with pytest.raises(NotLiteral):
            to_source(value)


def test_mbpp_plus_inputs_become_tuples_sets_and_complex_as_evalplus_makes_them() -> None:
    assert mbpp_arguments(2, [[1, 2], [3]]) == [(1, 2), (3,)]
    assert mbpp_arguments(106, [[5, 6], [9, 10]]) == [[5, 6], (9, 10)]
    assert mbpp_arguments(115, [[[1, 2], []]]) == [[{1, 2}, {}]]
    assert mbpp_arguments(252, ["(1+2j)"]) == [complex(1, 2)]
    assert mbpp_arguments(580, [[1, [2, [3]]]]) == ((1, (2, (3,))),)
    assert mbpp_arguments(11, [["x"]]) == [["x"]]  # not in the table: unchanged


# -- HumanEval+ ---------------------------------------------------------------------------------


def test_humaneval_plus_one_case_per_input(humaneval_plus: TaskSource) -> None:
    rows = {r["task_id"]: r for r in _rows(HUMANEVAL_PLUS)}
    assert humaneval_plus.name == "humaneval-plus"
    for task in humaneval_plus.tasks:
        row = rows[task.name]
        assert list(_cases(task)) == ([f"base-{i}" for i in range(len(row["base_input"]))]
                                      + [f"plus-{i}" for i in range(len(row["plus_input"]))])
        assert task.golden_solution["python"] == row["prompt"] + row["canonical_solution"]
        assert task.mode == "complete" and task.spec("python").entry_point == row["entry_point"]
        assert task.time_limit_s is not None and task.time_limit_s >= 4.0


def test_humaneval_plus_expected_outputs_and_comparisons(humaneval_plus: TaskSource) -> None:
    tasks = {t.name: t for t in humaneval_plus.tasks}
    exact = _cases(tasks["HumanEval/0"])
    assert exact["base-0"] == "assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True"
    assert exact["plus-3"] == "assert has_close_elements([], 0.5) == False"
    assert tasks["HumanEval/0"].spec("python").test_prelude is None
    floats = _cases(tasks["HumanEval/2"])  # floats: EvalPlus's tolerance (1e-6 when atol is 0)
    assert floats["base-0"] == "assert _bw_close(truncate_number(3.5), 0.5, 1e-06)"
    assert "def _bw_close" in _render(tasks["HumanEval/2"].spec("python").test_prelude or "")
    root = _cases(tasks["HumanEval/32"])  # the special oracle: |poly(xs, x)| <= atol
    assert root["plus-0"] == "assert abs(_bw_poly([1, 2], find_zero([1, 2]))) <= 1e-06"
    big = _cases(tasks["HumanEval/139"])
    assert big["base-0"] == "assert special_factorial(4) == 288"
    assert big["plus-2"].startswith("assert _bw_close(special_factorial(150), 0x")


def test_canonical_solution_that_fails_an_input_is_a_located_error(tmp_path: Path) -> None:
    rows = _rows(HUMANEVAL_PLUS)[:2]
    rows[1]["plus_input"].append([-1.0])  # truncate_number is fine; make the solution raise
    rows[1]["canonical_solution"] = "    assert number > 0\n    return number % 1.0\n"
    rows[0]["base_input"] = "not a list"
    with pytest.raises(InputError) as info:
        HumanEvalPlusImporter().load(ImportRequest(data=_write(tmp_path, rows)))
    text = str(info.value)
    assert "line 1: base_input is not a list of argument lists" in text
    assert "line 2: the canonical solution fails on plus_input[5]: AssertionError" in text


def test_an_entry_point_that_is_not_a_name_is_refused(tmp_path: Path) -> None:
    rows = _rows(HUMANEVAL_PLUS)[:1]
    rows[0]["entry_point"] = "__import__('os').system('true') or has_close_elements"
    with pytest.raises(InputError, match="is not a Python function name"):
        HumanEvalPlusImporter().load(ImportRequest(data=_write(tmp_path, rows)))


def test_hostile_canonical_code_runs_only_in_the_sandbox(tmp_path: Path) -> None:
    sandbox = best_sandbox()
    if "hidden-tmp" not in sandbox.guarantees:
        pytest.skip(f"the {sandbox.name} sandbox does not hide the host's /tmp")
    marker = tmp_path / "ran-in-the-harness"
    rows = _rows(HUMANEVAL_PLUS)[:1]
    rows[0]["canonical_solution"] = (  # tries to leave a file where the harness would see it
        f"    try:\n        open({str(marker)!r}, 'w').write('x')\n    except OSError:\n        pass\n"
        + rows[0]["canonical_solution"])
    rows[0]["plus_input"] = [[["__import__('os').system('touch x')"], 1.0]]  # a string, not code
    source = HumanEvalPlusImporter().load(ImportRequest(data=_write(tmp_path, rows)))
    assert not marker.exists()
    assert _cases(source.tasks[0])["plus-0"] == (
        "assert has_close_elements([\"__import__('os').system('touch x')\"], 1.0) == False")


# -- MBPP+ --------------------------------------------------------------------------------------


def test_mbpp_plus_oracles_and_input_types(mbpp_plus: TaskSource) -> None:
    tasks = {t.name: t for t in mbpp_plus.tasks}
    assert mbpp_plus.name == "mbpp-plus"
    sets = _cases(tasks["Mbpp/2"])  # MBPP_OUTPUT_SET_EQ_TASKS, with tuples as EvalPlus passes them
    assert sets["base-0"] == "assert set(similar_elements((3, 4, 5, 6), (5, 7, 4, 10))) == set((4, 5))"
    assert sets["plus-0"] == "assert set(similar_elements((), ())) == set(())"
    tuples = _cases(tasks["Mbpp/106"])
    assert tuples["base-0"] == "assert add_lists([5, 6, 7], (9, 10)) == (9, 10, 5, 6, 7)"
    volume = _cases(tasks["Mbpp/14"])  # a float output: tolerance
    assert volume["base-0"] == "assert _bw_close(find_Volume(10, 8, 6), 240.0, 1e-06)"
    assert _cases(tasks["Mbpp/3"])["plus-4"] == "assert is_not_prime(True) == True"
    escaped = tasks["Mbpp/16"].spec("python").hidden_tests[3].code
    assert escaped != _render(escaped)  # a template delimiter in the data, escaped
    assert _render(escaped) == "assert text_lowercase_underscore('${x}_{% raw %}') == False"


def test_mbpp_plus_prompt_and_golden(mbpp_plus: TaskSource) -> None:
    row = _rows(MBPP_PLUS)[0]
    task = mbpp_plus.tasks[0]
    assert _render(task.spec("python").description) == row["prompt"]
    assert task.golden_solution["python"] == row["prompt"] + row["canonical_solution"]


def test_an_output_that_is_not_plain_data_is_computed_in_the_test_process(tmp_path: Path) -> None:
    rows = _rows(MBPP_PLUS)[2:3]  # find_Volume
    rows[0]["canonical_solution"] = ("\nfrom collections import deque\n"
                                     "def find_Volume(l,b,h) : \n    return deque([l * b * h / 2])\n")
    source = MbppPlusImporter().load(ImportRequest(data=_write(tmp_path, rows)))
    spec = source.tasks[0].spec("python")
    assert _cases(source.tasks[0])["base-0"] == (
        "assert _bw_close(find_Volume(10, 8, 6), _bw_reference(10, 8, 6), 0.0)")
    assert "_bw_reference = _bw_canonical['find_Volume']" in _render(spec.test_prelude or "")


def test_the_hub_copy_is_refused_with_the_reason() -> None:
    with pytest.raises(UserError, match=r"evalplus/mbppplus\) has no base_input and plus_input"):
        MbppPlusImporter().load(ImportRequest(hf=True))
