"""Import APPS (Hendrycks et al.): 10,000 Python problems from Codeforces, AtCoder, Kattis,
Codewars, LeetCode and others, in ``train.jsonl`` and ``test.jsonl``.

Each row has ``problem_id``, ``question`` (the statement), ``solutions`` (a JSON string: a list
of Python programs), ``input_output`` (a JSON string: ``inputs``, ``outputs`` and, for a
call-based problem, ``fn_name``), ``difficulty`` (introductory, interview, competition),
``url`` and ``starter_code``.

A problem without ``fn_name`` reads standard input: each (input, output) pair becomes a
stdin/stdout case (a list of lines is joined with newlines, as APPS's harness does). A
call-based problem's inputs are the function's arguments; APPS accepts the value itself or
the value wrapped in a one-item list, so each case asserts ``f(...) in (expected,
expected[0])`` where the expected value is a non-empty list. The golden solution is the first
solution that exists. Problems with no test case (some rows have an empty ``input_output``)
are left out: nothing could judge them.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from benchwright.errors import UserError
from benchwright.importers.base import Importer, ImportRequest, RowProblem
from benchwright.importers.escape import escape_template
from benchwright.importers.iocases import (
    call_case,
    called_function,
    json_field,
    literal,
    stdio_case,
)
from benchwright.importers.rows import HubLocation
from benchwright.task.model import LanguageSpec, Task, TaskBody, TestCase

__all__ = ["IMPORT_HEADER", "AppsImporter"]

HUB_ID = "codeparrot/apps"
IMPORT_HEADER = (
    "import sys\nimport time\nimport itertools\n"
    "from itertools import accumulate, product, permutations, combinations\nimport collections\n"
    "from collections import Counter, OrderedDict, deque, defaultdict, ChainMap\n"
    "from functools import lru_cache\nimport math\n"
    "from math import sqrt, sin, cos, tan, ceil, fabs, floor, gcd, exp, log, log2\n"
    "import fractions\nfrom typing import List, Tuple\nimport random\nimport heapq\n"
    "from heapq import *\n")
"""What APPS's harness (``eval/testing_util.py``) puts before every solution, without its
``import numpy as np``: the sandbox's Python has no numpy."""
TIME_LIMIT_S = 4.0
"""APPS's per-test time-out."""
DIFFICULTIES = ("introductory", "interview", "competition")

STDIN = ("Write a Python 3 program that reads the input from standard input and writes the "
         "answer to standard output. Answer with the whole program in one ```python block.")
STARTER = ("Complete the following starter code (the tests call it), and answer with the code in "
           "one ```python block:")


def _prompt(question: str, starter: str) -> str:
    if starter.strip():
        return f"{question.rstrip()}\n\n{STARTER}\n```python\n{starter.rstrip()}\n```\n"
    return f"{question.rstrip()}\n\n{STDIN}\n"


def _expected(value: Any, what: str) -> str:
    """The comparison APPS makes of a call's value: equal to the output, or to its only item."""
    if isinstance(value, list) and value:
        return f"in ({literal(value, what)}, {literal(value[0], what)})"
    return "== " + literal(value, what)


def _cases(tests: dict[str, Any], func: str | None, call: str) -> list[TestCase]:
    inputs, outputs = tests.get("inputs"), tests.get("outputs")
    if not isinstance(inputs, list) or not isinstance(outputs, list):
        raise RowProblem("input_output: inputs and outputs must be lists")
    if len(inputs) != len(outputs):
        raise RowProblem(f"input_output: {len(inputs)} inputs and {len(outputs)} outputs")
    cases = []
    for n, (given, expected) in enumerate(zip(inputs, outputs, strict=True), start=1):
        what = f"test {n}"
        if func is None:
            cases.append(stdio_case(f"test-{n}", given, expected, what))
            continue
        if not isinstance(given, list):
            raise RowProblem(f"{what}: the arguments of a call-based test must be a list")
        cases.append(call_case(f"test-{n}", call, given, _expected(expected, f"{what} output"), what))
    return cases


class AppsImporter(Importer):
    """APPS: stdin/stdout programs and call-based functions, golden = the first solution."""

    name = "apps"
    dataset = "APPS (hendrycks/apps)"
    download = f"https://huggingface.co/datasets/{HUB_ID}/tree/main (train.jsonl, test.jsonl)"
    file_name = "{subset}.jsonl"
    licence = "MIT"
    subsets = ("test", "train")
    default_subset = "test"
    fields = ("problem_id", "question", "solutions", "input_output", "difficulty", "starter_code")
    option_keys = ("difficulty",)

    def hub(self, request: ImportRequest) -> HubLocation:
        return HubLocation(HUB_ID, split="train", data_files=[f"{request.subset or 'test'}.jsonl"])

    def source_name(self, request: ImportRequest) -> str:
        wanted = request.options.get("difficulty")
        return f"{self.name}-{request.subset or 'test'}" + (f"-{wanted}" if wanted else "")

    def check(self, request: ImportRequest) -> ImportRequest:
        request = super().check(request)
        wanted = request.options.get("difficulty")
        if wanted is not None and wanted not in DIFFICULTIES:
            raise UserError(f"import {self.name}: --map difficulty={wanted}: choose from "
                            f"{', '.join(DIFFICULTIES)}")
        return request

    def task(self, row: dict[str, Any], request: ImportRequest) -> Task | None:
        wanted = request.options.get("difficulty")
        difficulty = str(row.get("difficulty") or "") or None
        if wanted is not None and difficulty != wanted:
            return None
        tests = json_field(row, "input_output", {})
        if not isinstance(tests, dict):
            raise RowProblem("input_output: not a JSON object")
        if not tests.get("inputs"):
            return None  # no test case: nothing could judge a solution
        starter = str(row.get("starter_code") or "")
        func, method, call = called_function(tests.get("fn_name"), starter, "input_output.fn_name")
        solutions = json_field(row, "solutions", [])
        if not isinstance(solutions, list):
            raise RowProblem("solutions: not a JSON list")
        golden = next((s for s in solutions if isinstance(s, str) and s.strip()), None)
        spec = LanguageSpec(
            description=escape_template(_prompt(str(row["question"]), starter)),
            entry_point=("Solution" if method else func) if func else None,
            hidden_tests=_cases(tests, func, call),
            solution_header=IMPORT_HEADER,
        )
        return Task(
            name=f"apps/{row['problem_id']}",
            type="call-based" if func else "stdin",
            difficulty=difficulty,
            source="apps",
            languages=["python"],
            tags=[host] if (host := urlparse(str(row.get("url") or "")).netloc) else [],
            time_limit_s=TIME_LIMIT_S,
            task=TaskBody(common_prompt="", languages_specific={"python": spec}),
            golden_solution={"python": golden} if golden is not None else {},
        )


IMPORTERS = (AppsImporter,)
