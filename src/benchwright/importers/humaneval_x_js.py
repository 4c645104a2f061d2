"""HumanEval-X's JavaScript rows as tasks (``benchwright import humaneval-x --language js``).

A row's ``test`` is a program: ``const testX = () => { console.assert(...) ... }`` then
``testX()``. Each check in the test function (a statement calling ``console.assert``, or one
holding such calls, like a loop) becomes a test case, with the earlier statements of the function
it needs (the ``const``/``let`` bindings it uses); the program's other statements become the test
prelude. benchwright's JavaScript runner makes a failed ``console.assert`` fail its test case
(node's own only prints). A program of another shape is one case, marked ``unsplit``.
"""

from __future__ import annotations

import re
from typing import Any

from benchwright.importers.base import RowProblem
from benchwright.importers.braces import (
    JS,
    Statement,
    block_end,
    check_cases,
    identifiers,
    mask,
    statements,
    tested_function,
)
from benchwright.importers.completion import completion_task
from benchwright.importers.humaneval_x import SOURCE, text_fields
from benchwright.task.model import Task, TestCase

__all__ = ["convert", "split_js_test"]

_CHECK = re.compile(r"\bconsole\s*\.\s*assert\s*\(|\bassert\s*(?:\.\s*\w+\s*)?\(")
_ARROW = re.compile(r"\s*(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?\(\s*\)\s*=>\s*\{")
_FUNCTION = re.compile(r"\s*(?:async\s+)?function\s+([A-Za-z_$][\w$]*)\s*\(\s*\)\s*\{")
_CALL = re.compile(r"\s*([A-Za-z_$][\w$]*)\s*\(\s*\)\s*;?\s*")
_ENTRY = (re.compile(r"\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:\(|function\b)"),
          re.compile(r"\bfunction\s*\*?\s*([A-Za-z_$][\w$]*)\s*\("))
UNSPLIT = ("the test program is not one test function called once (`const testX = () => {...}; "
           "testX()`), so it runs whole")


def _declared(statement: Statement) -> set[str]:
    m = re.match(r"\s*(?:const|let|var)\s+(.*)", statement.masked, re.S)
    if m is not None:
        return identifiers(m.group(1).split("=", 1)[0])
    m = re.match(r"\s*(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)", statement.masked)
    return {m.group(1)} if m else set()


def split_js_test(test: str) -> tuple[str, list[TestCase]]:
    """The prelude and test cases of a HumanEval-X JavaScript test program (source text)."""
    stmts = statements(test, JS)
    called = {k: m.group(1) for k, s in enumerate(stmts) if (m := _CALL.fullmatch(s.masked))}
    for index, s in enumerate(stmts):
        m = _ARROW.match(s.masked) or _FUNCTION.match(s.masked)
        if m is None or m.group(1) not in called.values():
            continue
        open_at = m.end() - 1
        close = block_end(s.masked, open_at)
        if s.masked[close:].strip(" \t\n;"):
            continue
        cases = check_cases(test[s.start + open_at + 1:s.start + close - 1], JS, _CHECK, _declared,
                            whole="test")
        rest = [t.text for k, t in enumerate(stmts) if k != index and called.get(k) != m.group(1)]
        prelude = "\n".join(rest)
        if cases:
            return (prelude + "\n" if prelude else ""), cases
    return "", [TestCase(name="test", code=test.strip("\n"), unsplit=UNSPLIT)]


def entry_point(declaration: str) -> str | None:
    """The function a declaration declares (``const hasCloseElements = (numbers, threshold) =>``)."""
    masked = mask(declaration, JS)
    for pattern in _ENTRY:
        m = pattern.search(masked)
        if m is not None:
            return m.group(1)
    return None


def convert(row: dict[str, Any]) -> Task:
    """One HumanEval-X JavaScript row as a task (golden: ``prompt + canonical_solution``).

    Raises:
        RowProblem: a field is not text, or the declaration declares no function.
    """
    fields = text_fields(row, "JavaScript")
    prompt, test = fields["prompt"], fields["test"]
    ep = entry_point(fields["declaration"])
    if ep is None:
        raise RowProblem(f"the declaration declares no function: {fields['declaration'].strip()[:80]!r}")
    prelude, cases = split_js_test(test)
    golden = prompt + fields["canonical_solution"]
    defined = [m.group(1) for pattern in _ENTRY for m in pattern.finditer(mask(golden, JS))]
    return completion_task(name=fields["task_id"], source=SOURCE, language="javascript",
                           prompt=prompt, golden=golden,
                           entry_point=tested_function(ep, defined, [c.code for c in cases], JS),
                           cases=cases, prelude=prelude)
