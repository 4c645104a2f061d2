"""HumanEval-X's Rust rows as tasks (``benchwright import humaneval-x --language rust``).

A Rust row's ``prompt`` is only the doc comment: the signature is in ``declaration`` (with
``use`` lines), and the dataset's own harness compiles ``declaration + prompt + completion +
test``. So the task's prompt is ``declaration + prompt`` (the doc comment then sits inside the
function, as there) and its golden solution ``declaration + prompt + canonical_solution``.
Every declaration starts with ``use rand::Rng; use regex::Regex; use md5;``: crates (the
harness's Cargo.toml has them) that benchwright's sandbox does not have (rustc and std only).
Those ``use`` lines are left out of the prompt unless the canonical solution or the tests name
what they import (Rust/91 uses ``Regex``, Rust/162 ``md5``): a build then fails only for the
crate, and the sample is reported as needing it (``unsupported``), not as broken. (A model's
solution that uses a crate whose ``use`` line was left out is the model's build error.)

The ``test`` module is split by :func:`benchwright.importers.rust_tests.split_rust_tests`: one
case per check of each ``#[test]`` function, with the ``let`` bindings it needs.
"""

from __future__ import annotations

import re
from typing import Any

from benchwright.importers.base import RowProblem
from benchwright.importers.braces import RUST, identifiers, mask, tested_function
from benchwright.importers.completion import completion_task
from benchwright.importers.humaneval_x import SOURCE, text_fields
from benchwright.importers.rust_tests import split_rust_tests
from benchwright.task.model import Task

__all__ = ["convert", "without_crates"]

_USE = re.compile(r"(?m)^[ \t]*use\s+(?:::)?(\w+)[^;]*;[ \t]*\n?")
_OWN = {"std", "core", "alloc", "crate", "self", "super"}
_ENTRY = re.compile(r"\bfn\s+(\w+)")


def without_crates(declaration: str, code: str = "") -> str:
    """``declaration`` without its ``use`` lines of crates (``use rand::Rng;``) that ``code``
    (the canonical solution and the tests) does not name: ``std``, ``core``, ``alloc`` and the
    crate's own paths stay, and so does ``use regex::Regex;`` for a solution that uses
    ``Regex`` (its build then says it needs the crate)."""
    names = identifiers(mask(code, RUST))

    def keep(m: re.Match[str]) -> str:
        used = identifiers(mask(m.group(0), RUST)) - {"use", "self", "super", "crate"}
        return m.group(0) if m.group(1) in _OWN or used & names else ""

    return _USE.sub(keep, declaration)


def convert(row: dict[str, Any]) -> Task:
    """One HumanEval-X Rust row as a task.

    Raises:
        RowProblem: a field is not text, or the declaration declares no function.
    """
    fields = text_fields(row, "Rust")
    declaration = without_crates(fields["declaration"],
                                 fields["canonical_solution"] + "\n" + fields["test"])
    m = _ENTRY.search(mask(declaration, RUST))
    if m is None:
        raise RowProblem(f"the declaration declares no function: {declaration.strip()[:80]!r}")
    prompt = declaration + fields["prompt"]
    golden = prompt + fields["canonical_solution"]
    tests = split_rust_tests(fields["test"])
    return completion_task(name=fields["task_id"], source=SOURCE, language="rust", prompt=prompt,
                           golden=golden, entry_point=tested_function(
                               m.group(1), _ENTRY.findall(mask(golden, RUST)),
                               [c.code for c in tests.cases], RUST),
                           cases=tests.cases, prelude=tests.prelude)

