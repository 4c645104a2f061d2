"""Import CRUXEval (facebookresearch/cruxeval): 800 Python functions, predict an output or an input.

Each row of ``data/cruxeval.jsonl`` (Hub: ``cruxeval-org/cruxeval``) has ``code`` (a function
``f``), ``input`` (its arguments as Python source) and ``output`` (the ``repr`` of what ``f``
returns on them), and ``id`` (``sample_0`` ...). CRUXEval asks a model to complete
``assert f(<input>) == ??`` (CRUXEval-O, ``--subset output``) or ``assert f(??) == <output>``
(CRUXEval-I, ``--subset input``) and scores an answer by executing ``<code>\\nassert <output> ==
<answer>`` (``evaluation/utils_general.py``), where the answer is the literal (O) or the call
``f(...)`` (I), with a 3-second limit.

In benchwright a task is a completion: the prompt is the function followed by a ``check``
function whose assertion the model completes, exactly as CRUXEval evaluates it::

    def check():
        assert f(<input>) ==          # CRUXEval-O: the model writes the output literal
        assert <output> == f(         # CRUXEval-I: the model writes the arguments and ')'

The test case ``assertion`` (``check()``) runs that assertion; the test prelude defines the given
code again first, so the assertion runs against the given ``f`` even if an answer redefined it.
The case ``asserts`` fails a ``check`` that asserts nothing (an answer that dropped the
assertion would otherwise pass ``check()``). The
golden solution is the dataset's own answer. Inputs and outputs are checked to be Python
literals at import time (without evaluating them).
"""

from __future__ import annotations

from typing import Any

from benchwright.importers.base import Importer, ImportRequest, RowProblem
from benchwright.importers.escape import escape_template
from benchwright.importers.pyliteral import NotLiteral, from_source
from benchwright.importers.rows import HubLocation
from benchwright.task.model import LanguageSpec, Task, TaskBody, TestCase

__all__ = ["CruxEvalImporter"]

TIME_LIMIT_S = 3.0
"""CRUXEval's ``check_correctness(code, 3)``."""

ASSERTS = ("assert 'LOAD_ASSERTION_ERROR' in [i.opname for i in __import__('dis').get_instructions(check)], "
           "'check() has no assert: the answer must complete the assertion'")
"""The case that fails a ``check`` without an assertion (which would pass ``check()`` trivially)."""

_HEADS = {
    "output": ("# Complete the assertion with the output of f on the given input, as a literal.\n",
               "    assert f({input}) == ", "{output}\n"),
    "input": ("# Complete the assertion with an input on which f returns the given output.\n",
              "    assert {output} == f(", "{input})\n"),
}
"""Per subset: the comment before the code, the unfinished assertion, the golden completion."""


def _text(row: dict[str, Any], key: str) -> str:
    value = row[key]
    if not isinstance(value, str) or not value.strip():
        raise RowProblem(f"{key} is not text (a {type(value).__name__})")
    return value.replace("\r\n", "\n")


def _literal(text: str, what: str, wrap: str = "{}") -> None:
    try:
        from_source(wrap.format(text))
    except NotLiteral as exc:
        raise RowProblem(f"{what} is not a Python literal ({exc})",
                         hint="CRUXEval's inputs and outputs are literals; is this row changed?") from None


class CruxEvalImporter(Importer):
    """CRUXEval: 800 functions; predict the output (CRUXEval-O) or an input (CRUXEval-I)."""

    name = "cruxeval"
    dataset = "CRUXEval (facebookresearch/cruxeval)"
    download = "https://github.com/facebookresearch/cruxeval/tree/main/data (cruxeval.jsonl)"
    file_name = "cruxeval.jsonl"
    licence = "MIT"
    subsets = ("output", "input")
    default_subset = "output"
    fields = ("code", "input", "output", "id")

    def hub(self, request: ImportRequest) -> HubLocation:
        return HubLocation("cruxeval-org/cruxeval", split="test")

    def source_name(self, request: ImportRequest) -> str:
        return f"cruxeval-{request.subset or self.default_subset}"

    def task(self, row: dict[str, Any], request: ImportRequest) -> Task:
        subset = request.subset or "output"
        code, given, output = _text(row, "code"), _text(row, "input").strip(), _text(row, "output").strip()
        _literal(given, "input", "({},)")
        _literal(output, "output")
        if "\n" in given or "\n" in output:
            raise RowProblem("input and output must each be one line")
        comment, assertion, answer = _HEADS[subset]
        body = code.rstrip("\n") + "\n"
        prompt = comment + body + "\n\ndef check():\n" + assertion.format(input=given, output=output)
        spec = LanguageSpec(
            description=escape_template(prompt),
            entry_point="check",
            hidden_tests=[TestCase(name="asserts", code=ASSERTS), TestCase(name="assertion", code="check()")],
            test_prelude=escape_template(body),
        )
        return Task(name=str(row["id"]), type="prediction", source="facebookresearch/cruxeval",
                    languages=["python"], mode="complete", time_limit_s=TIME_LIMIT_S,
                    tags=[f"cruxeval-{subset[0].upper()}"],
                    task=TaskBody(common_prompt="", languages_specific={"python": spec}),
                    golden_solution={"python": prompt + answer.format(input=given, output=output)})


IMPORTERS = (CruxEvalImporter,)
