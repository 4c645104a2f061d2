"""HumanEval-X's Java rows as tasks.

A row's ``prompt`` is ``import java.util.*; import java.lang.*;`` (and the task's other
imports), then ``class Solution {`` with the method to complete. Its ``test`` is a program,
``public class Main { public static void main(String[] args) { ... } }``, that CodeGeeX's
harness appends to the solution in ``Main.java``. Its usual body::

    Solution s = new Solution();
    List<Boolean> correct = Arrays.asList(
            s.hasCloseElements(..., 0.3),
            !s.hasCloseElements(..., 0.05)
    );
    if (correct.contains(false)) {
        throw new AssertionError();
    }

In benchwright a Java test case is the statements of a static method of a test class compiled
beside the solution (``Solution.java``), run with ``-ea``. So every element of such a list
becomes a case ``assert <element>;`` (``check-1``, ``check-2``...), and every other top-level
statement of ``main`` that checks something (an ``if (...) throw new AssertionError()``, an
``assert``, a loop of random inputs with a check inside) a case of its own; each case starts
with the earlier statements it needs (``Solution s = new Solution();``, the maps it passes). The
prelude has the prompt's imports (the test class is another file) and ``Main``'s other members
(a helper method, a seeded ``Random``). A test that cannot be read this way is one case of the
whole ``main`` body, marked ``unsplit``.
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
    top_level_split,
)
from benchwright.task.model import Task, TestCase

__all__ = ["convert", "split_program"]

_METHOD = re.compile(
    r"(?P<name>[A-Za-z_$][\w$]*)\s*\([^;{}()]*\)\s*(?:throws\s+[\w$.,\s]+?)?\s*\{")
"""A method definition's head in a declaration: ``name(params) {``."""
_MAIN_CLASS = re.compile(r"(?:\b(?:public|final)\s+)*\bclass\s+Main\b[^{;]*\{")
_MAIN_METHOD = re.compile(r"\bstatic\s+void\s+main\s*\(")
_IMPORT = re.compile(r"^[ \t]*import[ \t]+(?:static[ \t]+)?[\w$.]+(?:[ \t]*\.[ \t]*\*)?[ \t]*;", re.M)
_RESULTS = re.compile(r"^List\s*<\s*Boolean\s*>\s+(?P<name>[A-Za-z_$][\w$]*)\s*=\s*"
                      r"Arrays\s*\.\s*asList\s*\(")
"""``List<Boolean> correct = Arrays.asList(`` -- a list of checks."""
_CHECKS_RESULTS = (r"^if\s*\(\s*{name}\s*\.\s*contains\s*\(\s*false\s*\)\s*\)\s*\{{?\s*"
                   r"throw\s+new\s+AssertionError\s*\(\s*\)\s*;\s*\}}?$")
"""The statement that throws when one of the list's checks is false."""
_CHECK = re.compile(r"\bassert\b|\bAssertionError\b")


def _unsplit(prelude: str, code: str, why: str) -> tuple[str, list[TestCase]]:
    return prelude, [TestCase(name="main", code=code.strip("\n") or ";", unsplit=why)]


def _results(statement: Statement, following: list[Statement]) -> tuple[list[str], int] | None:
    """The checks of a ``List<Boolean> correct = Arrays.asList(...)`` statement, and the index
    in ``following`` of the ``if (correct.contains(false)) throw ...`` that asserts them."""
    blanked = blank(statement.text)
    m = _RESULTS.match(blanked)
    if m is None:
        return None
    open_paren = m.end() - 1
    depth = 0
    close = None
    for i in range(open_paren, len(blanked)):
        if blanked[i] in "([{":
            depth += 1
        elif blanked[i] in ")]}":
            depth -= 1
            if depth == 0:
                close = i
                break
    if close is None or blanked[close + 1 :].strip() != ";":
        return None
    consumer = re.compile(_CHECKS_RESULTS.format(name=re.escape(m.group("name"))), re.S)
    where = next((k for k, s in enumerate(following) if consumer.match(blank(s.text))), None)
    if where is None:
        return None
    elements = [e.strip() for e in top_level_split(statement.text[open_paren + 1 : close])]
    if not elements or not all(elements):
        return None
    return elements, where


def split_program(test: str, imports: list[str]) -> tuple[str, list[TestCase]]:
    """The prelude and the test cases of a HumanEval-X Java test program (source text);
    ``imports`` are the prompt's import lines, which the test class needs too."""
    blanked = blank(test)
    found = _MAIN_CLASS.search(blanked)
    span = block_body(blanked, found.end() - 1) if found else None
    outside = (test[: found.start()] + test[span[1] + 1 :]) if found and span else ""
    imports = [*imports, *(m.group().strip() for m in _IMPORT.finditer(outside))]
    header = "\n".join(dict.fromkeys(imports))
    if found is None or span is None:
        return _unsplit(header, test, "no `class Main {...}` found: the whole test is one case")
    members = split_statements(test[span[0] : span[1]])
    mains = [m for m in members if _MAIN_METHOD.search(blank(m.text))]
    helpers = "\n".join(m.text for m in members if m not in mains)
    prelude = "\n".join(p for p in (header, helpers) if p.strip())
    if len(mains) != 1:
        return _unsplit(prelude, test, "no single `static void main` in class Main: the whole "
                                       "test is one case")
    main = mains[0].text
    main_blanked = blank(main)
    brace = main_blanked.find("{", _MAIN_METHOD.search(main_blanked).end())  # type: ignore[union-attr]
    body_span = block_body(main_blanked, brace) if brace >= 0 else None
    if body_span is None:
        return _unsplit(prelude, main, "main() has no body: the whole test is one case")
    statements = split_statements(main[body_span[0] : body_span[1]])
    if len(statements) > MAX_STATEMENTS:
        return _unsplit(prelude, main[body_span[0] : body_span[1]], (
            f"main() has more than {MAX_STATEMENTS} statements: its whole body is one case"))
    cases: list[TestCase] = []
    before: list[Statement] = []
    consumed: set[int] = set()
    for k, statement in enumerate(statements):
        if k in consumed:
            continue
        results = _results(statement, statements[k + 1 :])
        if results is not None:
            elements, where = results
            consumed.add(k + 1 + where)
            for element in elements:
                check = split_statements(f"assert {element};")[0]
                cases.append(_case(len(cases), before, check))
        elif _CHECK.search(blank(statement.text)):
            cases.append(_case(len(cases), before, statement))
        else:
            before.append(statement)
    if not cases:
        return _unsplit(prelude, main[body_span[0] : body_span[1]],
                        "main() holds no check to split on: its whole body is one case")
    return prelude, cases


def _case(index: int, before: list[Statement], check: Statement) -> TestCase:
    code = "\n".join([*(s.text for s in needed(before, check)), check.text])
    return TestCase(name=f"check-{index + 1}", code=code)


def convert(row: dict[str, Any]) -> Task:
    """One task from one Java row.

    Raises:
        RowProblem: a field is not text, or the declaration defines no method.
    """
    entry = entry_point(blank(text_field(row, "declaration")), _METHOD)
    prompt = text_field(row, "prompt")
    imports = [m.group().strip() for m in _IMPORT.finditer(blank(prompt))]
    prelude, cases = split_program(text_field(row, "test"), imports)
    return make_task(row, "java", entry, cases, prelude)
