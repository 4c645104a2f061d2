"""HumanEval-X's Go rows as tasks (``benchwright import humaneval-x --language go``).

A row's ``test`` is a ``go test`` function using testify: ``func TestX(t *testing.T) { assert :=
assert.New(t); assert.Equal(...) ... }``, and ``test_setup`` its file's ``package`` and imports.
Each check (a statement calling ``assert.Something``, or one holding such calls, like a loop)
becomes a test case, with the earlier statements of the function it needs (``assert :=
assert.New(t)``, the ``:=``/``var`` bindings it uses and what changes them: Go refuses unused
variables, so only those). ``test_setup``'s imports (but ``testing``) make the test prelude;
benchwright's Go driver offers a testify-compatible ``assert`` package (see docs/languages/go.md),
so nothing is fetched. A program of another shape is one case, marked ``unsplit``.
"""

from __future__ import annotations

import re
from typing import Any

from benchwright.importers.base import RowProblem
from benchwright.importers.braces import (
    GO,
    Statement,
    block_end,
    check_cases,
    identifiers,
    mask,
    tested_function,
)
from benchwright.importers.completion import completion_task
from benchwright.importers.humaneval_x import SOURCE, text_fields
from benchwright.task.model import Task, TestCase

__all__ = ["convert", "split_go_test"]

_TEST_FUNC = re.compile(r"(?m)^func\s+(Test\w*)\s*\(\s*(\w+)\s+\*\s*testing\s*\.\s*T\s*\)\s*\{")
_CHECK = re.compile(r"\b(?:assert|require)\s*\.\s*(?!New\b)[A-Z]\w*\s*\(|\bt\s*\.\s*(?:Error|Fatal|Fail)\w*\s*\(")
_IMPORT_BLOCK = re.compile(r"(?ms)^import\s*\((.*?)\)|^import\s+(\"[^\"]+\"|\w+\s+\"[^\"]+\")")
_ENTRY = re.compile(r"(?m)^func\s+(\w+)\s*\(")
UNSPLIT = "the test is not a `func TestX(t *testing.T)` of statements, so it runs whole"


def _declared(statement: Statement) -> set[str]:
    m = re.match(r"\s*((?:[A-Za-z_]\w*\s*,\s*)*[A-Za-z_]\w*)\s*:=", statement.masked)
    if m is not None:
        return identifiers(m.group(1)) - {"_"}
    m = re.match(r"\s*(?:var|const)\s+((?:[A-Za-z_]\w*\s*,\s*)*[A-Za-z_]\w*)", statement.masked)
    return identifiers(m.group(1)) - {"_"} if m else set()


def imports(test_setup: str) -> list[str]:
    """The import specs of ``test_setup`` (``"math"``, ``rand "math/rand"``), but ``testing``."""
    masked = mask(test_setup, GO)
    specs: list[str] = []
    for m in _IMPORT_BLOCK.finditer(masked):
        start, end = (m.start(1), m.end(1)) if m.group(1) is not None else (m.start(2), m.end(2))
        for line in test_setup[start:end].split("\n"):
            spec = line.split("//")[0].strip()
            if spec and spec != '"testing"':
                specs.append(spec)
    return specs


def split_go_test(test: str, test_setup: str = "") -> tuple[str, list[TestCase]]:
    """The prelude and test cases of a HumanEval-X Go test (source text)."""
    masked = mask(test, GO)
    found = list(_TEST_FUNC.finditer(masked))
    spec_lines = imports(test_setup)
    header = ("import (\n" + "".join(f"\t{s}\n" for s in spec_lines) + ")\n") if spec_lines else ""
    if not found:
        return header, [TestCase(name="test", code=test.strip("\n"), unsplit=UNSPLIT)]
    cases: list[TestCase] = []
    rest: list[str] = []
    previous = 0
    for m in found:
        close = block_end(masked, m.end() - 1)
        rest.append(test[previous:m.start()])
        previous = close
        param = m.group(2)
        prefix = f"{m.group(1)}/" if len(found) > 1 else ""
        lead = [] if param == "t" else [f"{param} := t"]
        cases += check_cases(test[m.end():close - 1], GO, _CHECK, _declared, whole=f"{prefix}test",
                             prefix=prefix, lead=lead)
    rest.append(test[previous:])
    helpers = "\n".join(r.strip("\n") for r in rest if r.strip())
    prelude = header + ("\n" + helpers + "\n" if helpers else "")
    return prelude, cases


def convert(row: dict[str, Any]) -> Task:
    """One HumanEval-X Go row as a task (golden: ``prompt + canonical_solution``).

    Raises:
        RowProblem: a field is not text, or the declaration declares no function.
    """
    fields = text_fields(row, "Go", optional=("test_setup",))
    m = _ENTRY.search(mask(fields["declaration"], GO))
    if m is None:
        raise RowProblem(f"the declaration declares no function: {fields['declaration'].strip()[:80]!r}")
    prompt = fields["prompt"]
    prelude, cases = split_go_test(fields["test"], fields["test_setup"])
    golden = prompt + fields["canonical_solution"]
    ep = tested_function(m.group(1), _ENTRY.findall(mask(golden, GO)), [c.code for c in cases], GO)
    return completion_task(name=fields["task_id"], source=SOURCE, language="go", prompt=prompt,
                           golden=golden, entry_point=ep, cases=cases, prelude=prelude)
