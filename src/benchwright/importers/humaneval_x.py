"""Import HumanEval-X (THUDM/CodeGeeX): HumanEval's 164 tasks in C++, Go, Java, JavaScript,
Python and Rust.

Each row has ``task_id``, ``prompt`` (code to complete: the signature and its doc comment),
``declaration``, ``canonical_solution`` (the golden solution is ``prompt + canonical_solution``),
``test`` (a whole test program: a C++ ``main``, a Go test function using testify, a Java
``Main``, a JavaScript function of ``console.assert`` calls, a Python ``check``, a Rust
``#[cfg(test)]`` module) and ``example_test``. Each language's module
(``humaneval_x_<language>``) splits that program into one test case per check, in benchwright's
test format for the language; a program it cannot split becomes one case that says so
(``TestCase.unsplit``).
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from benchwright.importers.base import Importer, ImportRequest
from benchwright.importers.rows import HubLocation
from benchwright.task.model import Task

__all__ = ["HumanEvalXImporter"]

LANGUAGES = {"cpp": "cpp", "go": "go", "java": "java", "js": "javascript", "python": "python",
             "rust": "rust"}
"""HumanEval-X's language names, each with benchwright's."""

_MODULES = {own: f"benchwright.importers.humaneval_x_{own}" for own in LANGUAGES}
"""The module converting each language's rows (it has ``convert(row) -> Task``)."""


class _Converter(Protocol):
    def convert(self, row: dict[str, Any]) -> Task: ...


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

    def hub(self, request: ImportRequest) -> HubLocation:
        return HubLocation("THUDM/humaneval-x", name=request.language or "python", split="test")

    def task(self, row: dict[str, Any], request: ImportRequest) -> Task:
        own = request.language or "python"
        converter: _Converter = importlib.import_module(_MODULES[own])
        return converter.convert(row)


IMPORTERS = (HumanEvalXImporter,)
