"""Import LiveCodeBench's code generation problems (LeetCode, AtCoder, Codeforces) as tasks.

The Hub dataset ``livecodebench/code_generation_lite`` publishes one JSON Lines file per
release window (``test.jsonl``, ``test2.jsonl`` ... ``test6.jsonl``); LiveCodeBench's release
versions are sets of those files (``release_v3`` = the first three, ``v3`` = the third alone,
``v2_v4`` = the second to the fourth). Each row is a problem: ``question_content`` (the
statement), ``starter_code`` (a ``class Solution`` for LeetCode, empty otherwise),
``public_test_cases`` (a JSON string), ``private_test_cases`` (base64 of zlib of a pickled JSON
string in the lite dataset), ``metadata`` (a JSON string; ``func_name`` for LeetCode) and
``contest_date`` (the task's ``release_date``: run configs filter on it).

A problem with a ``func_name`` is *functional*: each test gives the method's arguments as JSON
values, one per line, and the JSON value it must return; each becomes an assert on
``Solution().<func_name>(...)``. Any other problem reads standard input: each test becomes a
stdin/stdout case. Public tests are ``public_tests``, private ones ``hidden_tests``. Every
solution runs after LiveCodeBench's own import header (``solution_header``), as in its harness.
The dataset has no solutions: the tasks have no golden solution.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import pickle
import zlib
from pathlib import Path
from typing import Any

from benchwright.errors import InputError, Problem, UserError
from benchwright.importers.base import Importer, ImportRequest, RowProblem
from benchwright.importers.escape import escape_template
from benchwright.importers.iocases import (
    MAX_DECODED_BYTES,
    call_case,
    called_function,
    json_field,
    literal,
    restricted_loads,
    stdio_case,
)
from benchwright.importers.rows import HubLocation, Row, read_rows
from benchwright.task.model import LanguageSpec, Task, TaskBody, TestCase

__all__ = ["IMPORT_HEADER", "LiveCodeBenchImporter", "private_tests", "release_files"]

HUB_ID = "livecodebench/code_generation_lite"
FILES = ("test.jsonl", "test2.jsonl", "test3.jsonl", "test4.jsonl", "test5.jsonl", "test6.jsonl")
"""The published files, one per release window, oldest first."""
LATEST = "release_latest"


def _releases() -> dict[str, tuple[str, ...]]:
    """Every version tag LiveCodeBench's loader knows, with its files."""
    tags: dict[str, tuple[str, ...]] = {}
    for n in range(1, len(FILES) + 1):
        tags[f"release_v{n}"] = FILES[:n]
    tags[LATEST] = FILES
    for n in range(1, len(FILES) + 1):
        tags[f"v{n}"] = (FILES[n - 1],)
    for start in range(1, len(FILES) + 1):
        for end in range(start + 1, len(FILES) + 1):
            tags[f"v{start}_v{end}"] = FILES[start - 1:end]
    return tags


RELEASES = _releases()

IMPORT_HEADER = "".join(f"from {m} import *\n" for m in (
    "string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random",
    "statistics", "itertools", "functools", "operator", "io", "sys", "json", "builtins",
    "typing")) + "".join(f"import {m}\n" for m in (
        "string", "re", "datetime", "collections", "heapq", "bisect", "copy", "math", "random",
        "statistics", "itertools", "functools", "operator", "io", "sys", "json")) + (
    "sys.setrecursionlimit(50000)\n")
"""What LiveCodeBench's harness runs before every solution (``import_string`` in
``lcb_runner/evaluation/testing_util.py``): LeetCode starter code uses ``List`` unimported."""

TIME_LIMIT_S = 6.0
"""LiveCodeBench's per-test time-out."""

INSTRUCTION = ("You will be given a question (problem specification) and will generate a correct "
               "Python program that matches the specification and passes all tests.")
STARTER = ("You will use the following starter code to write the solution to the problem and "
           "enclose your code within delimiters.")
STDIN = ("Read the inputs from stdin, solve the problem and write the answer to stdout (do not "
         "directly test on the sample inputs). Enclose your code within delimiters as follows. "
         "Ensure that when the python program runs, it reads the inputs, runs the algorithm and "
         "writes output to STDOUT.")
TESTTYPES = ("stdin", "functional")


def release_files(subset: str | None) -> tuple[str, ...]:
    """The files of a release version (default: the latest release, every file)."""
    return RELEASES[subset or LATEST]


def private_tests(value: Any) -> list[Any]:
    """The private tests of a row: plain JSON (the full dataset), or base64 of zlib of a pickle
    of a JSON string (the lite dataset), unpickled with every class and function refused.

    Raises:
        RowProblem: the field cannot be decoded, or its pickle names a class or function.
    """
    if value is None or value == "":
        return []
    if isinstance(value, list):
        return value
    if not isinstance(value, str):
        raise RowProblem(f"private_test_cases is a {type(value).__name__}, not text")
    try:
        tests = json.loads(value)
    except json.JSONDecodeError:
        pass
    else:
        if isinstance(tests, list):
            return tests
    try:
        packed = base64.b64decode(value.encode("ascii"), validate=True)
        inflater = zlib.decompressobj()
        data = inflater.decompress(packed, MAX_DECODED_BYTES)
    except (binascii.Error, UnicodeEncodeError, zlib.error) as exc:
        raise RowProblem(f"private_test_cases: neither JSON nor base64 of zlib data ({exc})",
                         hint="give the file as the Hub publishes it") from None
    if inflater.unconsumed_tail:
        raise RowProblem(f"private_test_cases: inflates past {MAX_DECODED_BYTES >> 20} MiB; not read")
    try:
        text = restricted_loads(data)
    except pickle.UnpicklingError as exc:
        raise RowProblem(f"private_test_cases: {exc}",
                         hint="the lite dataset pickles a JSON string and nothing else") from None
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if not isinstance(text, str):
        raise RowProblem(f"private_test_cases: the pickle holds a {type(text).__name__}, not the "
                         "JSON string of the tests")
    try:
        tests = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RowProblem(f"private_test_cases: the unpickled text is not JSON ({exc.msg})") from None
    if not isinstance(tests, list):
        raise RowProblem("private_test_cases: not a list of tests")
    return tests


def _date(value: Any) -> dt.date | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.datetime.fromisoformat(str(value)).date()
    except ValueError:
        raise RowProblem(f"contest_date: {str(value)[:40]!r} is not an ISO date",
                         hint="contest_date looks like 2023-08-21T00:00:00") from None


def _prompt(row: dict[str, Any]) -> str:
    starter = str(row.get("starter_code") or "")
    text = f"{INSTRUCTION}\n\nQuestion: {row['question_content']}\n\n"
    if starter.strip():
        return text + f"{STARTER}\n```python\n{starter}\n```\n"
    return text + f"{STDIN}\n```python\n# YOUR CODE HERE\n```\n"


def _cases(tests: list[Any], kind: str, func: str | None, call: str) -> list[TestCase]:
    cases = []
    for n, test in enumerate(tests, start=1):
        name = f"{kind}-{n}"
        what = f"{kind} test {n}"
        if not (isinstance(test, dict) and isinstance(test.get("input"), str)
                and isinstance(test.get("output"), str)):
            raise RowProblem(f"{what}: not an object with input and output texts")
        testtype = test.get("testtype", "functional" if func else "stdin")
        if testtype not in TESTTYPES:
            raise RowProblem(f"{what}: testtype {testtype!r} (expected stdin or functional)")
        if testtype == "functional" and func is None:
            raise RowProblem(f"{what}: a functional test, and metadata names no func_name")
        if func is None:
            cases.append(stdio_case(name, test["input"], test["output"], what))
            continue
        try:  # as LiveCodeBench reads them: a JSON value per line, the output one JSON value
            args = [json.loads(line) for line in test["input"].split("\n")]
            expected = json.loads(test["output"])
        except json.JSONDecodeError as exc:
            raise RowProblem(f"{what}: the arguments or the output are not JSON ({exc.msg})") from None
        cases.append(call_case(name, call, args, "== " + literal(expected, f"{what} output"), what))
    return cases


class LiveCodeBenchImporter(Importer):
    """LiveCodeBench code generation: stdin/stdout programs and LeetCode methods, by release."""

    name = "livecodebench"
    dataset = "LiveCodeBench code generation (livecodebench.github.io)"
    download = f"https://huggingface.co/datasets/{HUB_ID}/tree/main"
    file_name = "test.jsonl"
    licence = "CC (the dataset card says cc; problems belong to LeetCode, AtCoder and Codeforces)"
    subsets = tuple(RELEASES)
    fields = ("question_title", "question_content", "platform", "question_id", "contest_date",
              "starter_code", "difficulty", "public_test_cases", "private_test_cases", "metadata")

    def file_for(self, request: ImportRequest) -> str:
        return ", ".join(release_files(request.subset))

    def hub(self, request: ImportRequest) -> HubLocation:
        return HubLocation(HUB_ID, split="train", data_files=list(release_files(request.subset)))

    def source_name(self, request: ImportRequest) -> str:
        return f"{self.name}-{request.subset or LATEST}"

    def rows(self, request: ImportRequest, problems: list[Problem]) -> tuple[str, list[Row]]:
        """A folder given with ``--data`` holds the published files: the release's are read."""
        folder = request.data
        if folder is None or not Path(folder).is_dir():
            if folder is not None and request.subset is not None:
                raise UserError(f"import {self.name}: --subset chooses the files of a release from "
                                f"a folder (or the Hub); {folder} is one file: give its folder, "
                                "or drop --subset")
            return super().rows(request, problems)
        names = release_files(request.subset)
        missing = [n for n in names if not (Path(folder) / n).is_file()]
        if missing:
            raise InputError([Problem(str(folder), f"no {', '.join(missing)} in this folder "
                                      f"({request.subset or LATEST} needs {', '.join(names)})",
                                      hint=f"download them from {self.download}")])
        rows: list[Row] = []
        for name in names:
            found: list[Problem] = []
            for row in read_rows(Path(folder) / name, found):
                rows.append(Row(row.data, f"{name} {row.where}", row.line))
            problems += [Problem(str(folder), p.message, f"{name} {p.path or ''}".strip(), p.line,
                                 p.hint) for p in found]
        return str(folder), rows

    def task(self, row: dict[str, Any], request: ImportRequest) -> Task:
        metadata = json_field(row, "metadata", {})
        if not isinstance(metadata, dict):
            raise RowProblem("metadata: not a JSON object")
        starter = str(row.get("starter_code") or "")
        func, method, call = called_function(metadata.get("func_name"), starter, "metadata.func_name")
        public = json_field(row, "public_test_cases", [])
        if not isinstance(public, list):
            raise RowProblem("public_test_cases: not a JSON list")
        public_cases = _cases(public, "public", func, call)
        hidden_cases = _cases(private_tests(row.get("private_test_cases")), "private", func, call)
        platform = str(row["platform"])
        spec = LanguageSpec(
            description=escape_template(_prompt(row)),
            entry_point=("Solution" if method else func) if func else None,
            public_tests=public_cases,
            hidden_tests=hidden_cases,
            solution_header=IMPORT_HEADER,
        )
        return Task(
            name=f"{platform}/{row['question_id']}",
            type="functional" if func else "stdin",
            difficulty=str(row["difficulty"]) if row.get("difficulty") else None,
            source="livecodebench",
            languages=["python"],
            release_date=_date(row["contest_date"]),
            tags=[platform, *([f"contest:{row['contest_id']}"] if row.get("contest_id") else [])],
            time_limit_s=TIME_LIMIT_S,
            task=TaskBody(common_prompt="", languages_specific={"python": spec}),
        )


IMPORTERS = (LiveCodeBenchImporter,)
