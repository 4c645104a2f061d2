"""HumanEval-X's C++ rows as tasks.

A row's ``test`` is a program: ``#undef NDEBUG``, ``#include<assert.h>``, maybe helpers (an
``issame`` comparing two vectors), then ``int main(){ ... }`` of declarations and
``assert (...);`` statements, sometimes a loop of random inputs with an assert inside. It is
appended to the solution in CodeGeeX's harness, so it uses the prompt's includes and ``using
namespace std;``.

In benchwright a C++ test case is the body of a ``void`` function compiled after the solution
and the prelude, with the driver's ``assert``. So the helpers become the prelude (without
``#undef NDEBUG`` and ``#include<assert.h>``: the driver's ``assert`` reports the failing
expression instead of aborting), and every top-level statement of ``main`` holding an
``assert`` becomes a case (``assert-1``, ``assert-2``...), after the earlier statements it needs
(the declarations of the variables it uses, and what fills them). A ``main`` that cannot be
found or holds no assert is one case of its whole body, marked ``unsplit``.
"""

from __future__ import annotations

import re
from typing import Any

from benchwright.importers.humaneval_x import entry_point, make_task, text_field
from benchwright.importers.statements import (
    MAX_STATEMENTS,
    Statement,
    blank,
    block_body,
    needed,
    split_statements,
)
from benchwright.task.model import Task, TestCase

__all__ = ["convert", "split_program"]

_FUNCTION = re.compile(
    r"(?P<name>[A-Za-z_]\w*)\s*\([^;{}()]*(?:\([^;{}()]*\)[^;{}()]*)*\)\s*(?:const\s*)?\{")
"""A function definition's head in a declaration: ``name(params){``."""
_MAIN = re.compile(r"\bint\s+main\s*\(\s*(?:void\s*)?\)\s*\{")
_ASSERT_SETUP = re.compile(r"^[ \t]*(?:#[ \t]*undef[ \t]+NDEBUG|#[ \t]*include[ \t]*<assert\.h>)[ \t]*\n?",
                           re.M)
_ASSERT = re.compile(r"\bassert\b")
_RETURN = re.compile(r"^return\b")


def _is_check(statement: Statement) -> bool:
    return _ASSERT.search(blank(statement.text)) is not None


def split_program(test: str) -> tuple[str, list[TestCase]]:
    """The prelude and the test cases of a HumanEval-X C++ test program (source text)."""
    blanked = blank(test)
    found = _MAIN.search(blanked)
    span = block_body(blanked, found.end() - 1) if found else None
    if found is None or span is None:
        return "", [TestCase(name="main", code=test.strip(), unsplit=(
            "no `int main(){...}` found: the whole test is one case"))]
    head = test[: found.start()] + test[span[1] + 1 :]
    prelude = _ASSERT_SETUP.sub("", head).strip("\n")
    prelude = prelude + "\n" if prelude.strip() else ""
    body = test[span[0] : span[1]]
    statements = split_statements(body)
    if len(statements) > MAX_STATEMENTS:
        return prelude, [TestCase(name="main", code=body.strip("\n"), unsplit=(
            f"main() has more than {MAX_STATEMENTS} statements: its whole body is one case"))]
    checks = [s for s in statements if _is_check(s)]
    if not checks:
        code = "\n".join(s.text for s in statements if not _RETURN.match(s.text)) or ";"
        return prelude, [TestCase(name="main", code=code, unsplit=(
            "main() holds no assert statement to split on: its whole body is one case"))]
    cases: list[TestCase] = []
    before: list[Statement] = []
    for statement in statements:
        if _is_check(statement):
            setup = needed(before, statement)
            code = "\n".join([*(s.text for s in setup), statement.text])
            cases.append(TestCase(name=f"assert-{len(cases) + 1}", code=code))
        elif not _RETURN.match(statement.text):
            before.append(statement)
    return prelude, cases


def convert(row: dict[str, Any]) -> Task:
    """One task from one C++ row.

    Raises:
        RowProblem: a field is not text, or the declaration defines no function.
    """
    entry = entry_point(blank(text_field(row, "declaration")), _FUNCTION)
    prelude, cases = split_program(text_field(row, "test"))
    return make_task(row, "cpp", entry, cases, prelude)
