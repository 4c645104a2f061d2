"""The LiveCodeBench importer on rows in code_generation_lite's published format."""

from __future__ import annotations

import base64
import datetime as dt
import json
import pickle
import shutil
import zlib
from pathlib import Path
from typing import Any

import pytest

from benchwright.errors import InputError, UserError
from benchwright.importers.base import ImportRequest, RowProblem
from benchwright.importers.livecodebench import IMPORT_HEADER, LiveCodeBenchImporter, private_tests
from benchwright.task.model import TaskSource

FIXTURES = Path(__file__).parent.parent / "fixtures" / "livecodebench"


def load(**kwargs: Any) -> TaskSource:
    return LiveCodeBenchImporter().load(ImportRequest(**kwargs))


def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (FIXTURES / "test.jsonl").read_text().splitlines()]


def write(tmp_path: Path, items: list[dict[str, Any]]) -> Path:
    path = tmp_path / "test.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in items))
    return path


def test_public_and_private_tests_apart_with_release_date_and_difficulty() -> None:
    source = load(data=FIXTURES / "test.jsonl")
    assert source.name == "livecodebench-release_latest"
    tasks = {t.name: t for t in source.tasks}
    assert list(tasks) == ["atcoder/abc900_a", "leetcode/9001", "codeforces/1900_A"]
    atcoder = tasks["atcoder/abc900_a"]
    assert atcoder.release_date == dt.date(2023, 5, 13)
    assert atcoder.difficulty == "easy"
    assert atcoder.type == "stdin"
    assert atcoder.time_limit_s == 6.0
    assert atcoder.golden_solution == {}  # the dataset has no solutions
    spec = atcoder.spec("python")
    assert [(c.name, c.stdin, c.stdout) for c in spec.public_tests] == [
        ("public-1", "3 2\n1 2 3\n", "3\n"), ("public-2", "1 1\n100\n", "100\n")]
    assert [c.name for c in spec.hidden_tests] == ["private-1", "private-2", "private-3"]
    assert spec.hidden_tests[2].stdin == "2 2\n1000000000 1000000000\n"
    assert all(not c.code for c in spec.public_tests + spec.hidden_tests)
    assert spec.solution_header == IMPORT_HEADER
    assert "Read the inputs from stdin" in spec.description
    assert "Sample Input 1" in spec.description


def test_leetcode_tests_call_the_method_with_json_arguments() -> None:
    task = next(t for t in load(data=FIXTURES / "test.jsonl").tasks if t.name == "leetcode/9001")
    spec = task.spec("python")
    assert task.type == "functional"
    assert spec.entry_point == "Solution"
    assert [c.code for c in spec.public_tests] == [
        "assert Solution().pairSum([2, 7, 11, 15], 9) == [0, 1]",
        "assert Solution().pairSum([3, 2, 4], 6) == [1, 2]"]
    assert [c.code for c in spec.hidden_tests] == [
        "assert Solution().pairSum([3, 3], 6) == [0, 1]",
        "assert Solution().pairSum([1, 5, 8, 3], 11) == [2, 3]"]
    assert "class Solution:\n    def pairSum" in spec.description
    assert "from typing import *" in (spec.solution_header or "")


def test_json_literals_become_python_literals(tmp_path: Path) -> None:
    row = rows()[1]
    row["public_test_cases"] = json.dumps([{"input": 'true\nnull\n"a\\"b"\n{"k": [1.5]}',
                                            "output": "false", "testtype": "functional"}])
    task = load(data=write(tmp_path, [row])).tasks[0]
    assert task.spec("python").public_tests[0].code == (
        "assert Solution().pairSum(True, None, 'a\"b', {'k': [1.5]}) == False")


def test_subsets_choose_the_release_files_of_a_folder(tmp_path: Path) -> None:
    assert [t.name for t in load(data=FIXTURES, subset="v2").tasks] == ["atcoder/abc950_b"]
    both = load(data=FIXTURES, subset="release_v2")
    assert both.name == "livecodebench-release_v2"
    assert len(both.tasks) == 4
    assert load(data=FIXTURES, subset="v1_v2").tasks == both.tasks
    assert len(load(data=FIXTURES, subset="release_v1").tasks) == 3
    with pytest.raises(InputError) as err:
        load(data=FIXTURES)  # release_latest: six files
    assert "no test3.jsonl, test4.jsonl, test5.jsonl, test6.jsonl" in str(err.value.problems[0])
    with pytest.raises(UserError, match="--subset chooses the files of a release"):
        load(data=FIXTURES / "test.jsonl", subset="v1")
    with pytest.raises(UserError, match="no subset 'release_v9'"):
        load(data=FIXTURES, subset="release_v9")


def test_hub_location_names_the_release_files() -> None:
    importer = LiveCodeBenchImporter()
    hub = importer.hub(importer.check(ImportRequest(hf=True, subset="release_v3")))
    assert hub.path == "livecodebench/code_generation_lite"
    assert hub.data_files == ["test.jsonl", "test2.jsonl", "test3.jsonl"]


def test_hf_path_loads_a_local_copy_of_the_hub_files(tmp_path: Path) -> None:
    import datasets  # noqa: F401  (--hf reads through it; a missing install fails, never skips)
    folder = tmp_path / "code_generation_lite"
    folder.mkdir()
    for name in ("test.jsonl", "test2.jsonl"):
        shutil.copy(FIXTURES / name, folder / name)
    via_hub = load(hf=True, hf_path=str(folder), subset="release_v2")
    assert via_hub.tasks == load(data=FIXTURES, subset="release_v2").tasks


def _evil_pickle(marker: Path) -> bytes:
    class Evil:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            import os

            return os.system, (f"touch {marker}",)

    return pickle.dumps(Evil())


def test_a_hostile_pickle_is_refused_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    row = rows()[0]
    row["private_test_cases"] = base64.b64encode(zlib.compress(_evil_pickle(marker))).decode()
    with pytest.raises(InputError) as err:
        load(data=write(tmp_path, [row]))
    assert not marker.exists()
    problem = err.value.problems[0]
    assert problem.line == 1
    assert "refused: the pickle names" in problem.message and "system" in problem.message
    # and directly: the unpickler refuses any class, even a harmless one
    harmless = base64.b64encode(zlib.compress(pickle.dumps(dt.date(2024, 1, 1)))).decode()
    with pytest.raises(RowProblem, match=r"refused: the pickle names datetime\.date"):
        private_tests(harmless)


def test_private_tests_in_either_published_encoding() -> None:
    tests = [{"input": "1\n", "output": "2\n", "testtype": "stdin"}]
    assert private_tests(json.dumps(tests)) == tests  # the full dataset: plain JSON
    lite = base64.b64encode(zlib.compress(pickle.dumps(json.dumps(tests)))).decode()
    assert private_tests(lite) == tests
    assert private_tests("") == []


@pytest.mark.parametrize(("field", "value", "message"), [
    ("public_test_cases", "[{oops", "public_test_cases: not valid JSON"),
    ("private_test_cases", "@@not base64@@", "private_test_cases: neither JSON nor base64"),
    ("private_test_cases", base64.b64encode(zlib.compress(pickle.dumps([1, 2]))).decode(),
     "the pickle holds a list"),
    ("contest_date", "last tuesday", "contest_date: 'last tuesday' is not an ISO date"),
    ("metadata", '{"func_name": "os.system"}', "is not a Python name"),
    ("public_test_cases", json.dumps([{"input": "1", "output": "1", "testtype": "functional"}]),
     "a functional test, and metadata names no func_name"),
    ("public_test_cases", json.dumps([{"input": 1, "output": "1"}]),
     "not an object with input and output texts"),
])
def test_bad_rows_are_named_with_their_line(tmp_path: Path, field: str, value: str,
                                            message: str) -> None:
    good = rows()[0]
    bad = {**good, "question_id": "x", field: value}
    with pytest.raises(InputError) as err:
        load(data=write(tmp_path, [good, bad]))
    problems = err.value.problems
    assert len(problems) == 1
    assert problems[0].line == 2 and problems[0].file.endswith("test.jsonl")
    assert message in problems[0].message


def test_a_row_without_the_fields_says_what_is_missing(tmp_path: Path) -> None:
    row = rows()[0]
    del row["private_test_cases"]
    with pytest.raises(InputError) as err:
        load(data=write(tmp_path, [row]))
    assert "missing private_test_cases" in err.value.problems[0].message


def test_functional_arguments_that_are_not_json_are_refused(tmp_path: Path) -> None:
    row = rows()[1]
    row["public_test_cases"] = json.dumps([{"input": "__import__('os')", "output": "1",
                                            "testtype": "functional"}])
    with pytest.raises(InputError, match="not JSON"):
        load(data=write(tmp_path, [row]))
