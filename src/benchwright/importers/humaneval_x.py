"""Import HumanEval-X (THUDM/CodeGeeX): HumanEval's 164 tasks in C++, Go, Java, JavaScript,
Python and Rust.

Each row has ``task_id``, ``prompt`` (code to complete: the signature and its doc comment),
``declaration``, ``canonical_solution`` (the golden solution is ``prompt + canonical_solution``),
``test`` (a whole test program: a C++ ``main``, a Go test function using testify, a Java
``Main``, a JavaScript function of ``console.assert`` calls, a Python ``check``, a Rust
``#[cfg(test)]`` module) and ``example_test``. Each language's module
(``humaneval_x_<language>``) splits that program into one test case per check, in benchwright's
test format for the language; a program it cannot split becomes one case that says so
(``TestCase.unsplit``). What every language shares (the task around the split tests, the entry
point read from the declaration) is here.
"""

from __future__ import annotations

import importlib
import re
from typing import Any, Protocol

from benchwright.importers.base import Importer, ImportRequest, RowProblem
from benchwright.importers.completion import completion_task
from benchwright.importers.rows import HubLocation
from benchwright.task.model import Task, TestCase

__all__ = ["SOURCE", "HumanEvalXImporter", "entry_point", "make_task", "text_field"]

SOURCE = "THUDM/humaneval-x"
"""Every task's ``source``: the dataset's Hub id, by which it is known."""

LANGUAGES = {"cpp": "cpp", "go": "go", "java": "java", "js": "javascript", "python": "python",
             "rust": "rust"}
"""HumanEval-X's language names, each with benchwright's."""

ON_THE_HUB = ("cpp", "go", "java", "js", "python")
"""The languages of the Hub copy (it has no Rust)."""

HUB_REVISION = "refs/convert/parquet"
"""The Hub's Parquet export of the dataset. Its ``main`` branch holds the JSON Lines files
(``data/<language>/data/humaneval.jsonl``) and a loading script; ``datasets`` 4 and later refuse
any repository with a loading script, whatever ``data_files`` say, so ``--hf`` reads the export
(``<language>/test/0000.parquet``), which has the same rows and fields."""

_MODULES = {own: f"benchwright.importers.humaneval_x_{own}" for own in LANGUAGES}
"""The module converting each language's rows (it has ``convert(row) -> Task``)."""


class _Converter(Protocol):
    def convert(self, row: dict[str, Any]) -> Task: ...


ROW_FIELDS = ("task_id", "prompt", "declaration", "canonical_solution", "test")
"""The text fields of every HumanEval-X row."""


def text_fields(row: dict[str, Any], language: str, optional: tuple[str, ...] = ()) -> dict[str, str]:
    """The row's :data:`ROW_FIELDS` and ``optional`` ones (missing: empty) as text.

    Raises:
        RowProblem: naming every field that is not text.
    """
    values = {k: row.get(k) for k in ROW_FIELDS} | {k: row.get(k) or "" for k in optional}
    bad = [k for k, v in values.items() if not isinstance(v, str)]
    if bad:
        raise RowProblem(f"{', '.join(bad)} must be text", hint=f"is this a HumanEval-X {language} row?")
    return {k: str(v) for k, v in values.items()}


def text_field(row: dict[str, Any], key: str) -> str:
    """``row[key]``, which must be text.

    Raises:
        RowProblem: it is not a string.
    """
    value = row.get(key)
    if not isinstance(value, str):
        raise RowProblem(f"{key} is {type(value).__name__}, not text",
                         hint="each HumanEval-X field is a string")
    return value


def entry_point(declaration: str, pattern: re.Pattern[str]) -> str:
    """The function to complete: the last definition ``pattern`` (group ``name``) finds in the
    row's ``declaration`` (helpers the task gives come before it).

    Raises:
        RowProblem: the declaration defines no function.
    """
    names = [m.group("name") for m in pattern.finditer(declaration)]
    if not names:
        raise RowProblem("declaration defines no function to complete",
                         hint="declaration should end with the signature of the function to write")
    return names[-1]


HEADERS: dict[str, tuple[str, ...]] = {
    "python": ("import math", "import re", "import sys", "import copy", "import datetime",
               "import itertools", "import collections", "import heapq", "import statistics",
               "import functools", "import hashlib", "import string", "from typing import *",
               "from collections import *"),
    "cpp": ("#include<stdlib.h>", "#include<algorithm>", "#include<math.h>", "#include<stdio.h>",
            "#include<vector>", "#include<string>", "#include<climits>", "#include<cstring>",
            "#include<iostream>"),
}
"""What HumanEval-X's own harness (CodeGeeX's ``IMPORT_HELPER``) puts before every Python and
C++ program, so a completion that relies on it passes here as it does there. numpy is left out:
the sandbox's Python has no third-party packages."""


def solution_header(language: str, prompt: str) -> str | None:
    """The lines of :data:`HEADERS` the prompt lacks, as the task's ``solution_header``."""
    lines = [line for line in HEADERS.get(language, ()) if line not in prompt]
    return "\n".join(lines) + "\n" if lines else None


def make_task(row: dict[str, Any], language: str, entry: str, cases: list[TestCase],
              prelude: str | None = None) -> Task:
    """A completion task for one row: the prompt is the row's ``prompt``, the golden solution
    ``prompt + canonical_solution``; ``cases`` and ``prelude`` are source text (escaped there).
    The harness's imports (:data:`HEADERS`) go before the solution, as CodeGeeX puts them."""
    prompt = text_field(row, "prompt")
    return completion_task(name=text_field(row, "task_id"), source=SOURCE, language=language,
                           prompt=prompt, golden=prompt + text_field(row, "canonical_solution"),
                           entry_point=entry, cases=cases, prelude=prelude or "",
                           header=solution_header(language, prompt))


class HumanEvalXImporter(Importer):
    """HumanEval-X: 164 tasks in C++, Go, Java, JavaScript, Python and Rust, checks split."""

    name = "humaneval-x"
    dataset = "HumanEval-X (THUDM/CodeGeeX)"
    download = ("https://github.com/THUDM/CodeGeeX/tree/main/codegeex/benchmark/humaneval-x "
                "(<language>/data/humaneval_<language>.jsonl.gz)")
    file_name = "humaneval_{language}.jsonl.gz"
    licence = "Apache-2.0"
    languages = LANGUAGES
    fields = ("task_id", "prompt", "declaration", "canonical_solution", "test")

    def hub(self, request: ImportRequest) -> HubLocation | None:
        own = request.language or "python"
        if own not in ON_THE_HUB:
            return None
        # a single file given as a string is the split "train" to ``datasets``
        return HubLocation(SOURCE, split="train", revision=HUB_REVISION,
                           data_files=f"{own}/test/0000.parquet")

    def task(self, row: dict[str, Any], request: ImportRequest) -> Task:
        own = request.language or "python"
        converter: _Converter = importlib.import_module(_MODULES[own])
        return converter.convert(row)


IMPORTERS = (HumanEvalXImporter,)
