"""HumanEval-X's Python rows as tasks.

A row's ``test`` is HumanEval's: ``def check(<entry point>):`` with one assert a line, after
``METADATA`` and helpers, then ``check(<entry point>)``. :func:`split_check` makes every
statement of ``check`` that asserts its own test case (``assert-1``, ``assert-2``...; a loop of
asserts over random inputs is one case), after the other statements since the first assert
(``lst = ...`` before ``assert f(lst) == ...``); the rest of the module, without the call of
``check``, and the statements before the first assert are the prelude. The entry point is the last function the row's ``declaration``
defines.
"""

from __future__ import annotations

import re
from typing import Any

from benchwright.importers.humaneval import split_check
from benchwright.importers.humaneval_x import entry_point, make_task, text_field
from benchwright.task.model import Task, TestCase

__all__ = ["convert"]

_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(?P<name>[A-Za-z_]\w*)[ \t]*\(", re.M)

UNSPLIT = ("check() could not be split into its asserts (it returns early, or does not parse): "
           "it runs as one case, the first failing assert failing it")


def convert(row: dict[str, Any]) -> Task:
    """One task from one Python row.

    Raises:
        RowProblem: a field is not text, or the declaration defines no function.
    """
    entry = entry_point(text_field(row, "declaration"), _DEF)
    tests = split_check(text_field(row, "test"), entry, finest=True)
    cases = tests.cases if tests.split else [
        TestCase(name=c.name, code=c.code, unsplit=UNSPLIT) for c in tests.cases]
    return make_task(row, "python", entry, cases, tests.prelude)
