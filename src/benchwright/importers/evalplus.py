"""Import EvalPlus's HumanEval+ and MBPP+ (``HumanEvalPlus.jsonl.gz``, ``MbppPlus.jsonl.gz``).

Each row has ``task_id``, ``prompt``, ``entry_point``, ``canonical_solution`` (the golden solution
is ``prompt + canonical_solution``, as EvalPlus runs it), ``base_input`` (the original
benchmark's inputs), ``plus_input`` (EvalPlus's), ``atol`` and more (``contract``, ``assertion``,
which EvalPlus does not test with). Every input becomes its own test case, ``base-<i>`` for
``base_input[i]`` and ``plus-<i>`` for ``plus_input[i]``, holding the expected output that the
canonical solution gives on it: computed at import time **in the sandbox**
(:mod:`.evalplus_oracle`), as EvalPlus computes its ground truth, never in the harness.

A case compares as EvalPlus's ``unsafe_execute`` does: ``assert f(<args>) == <expected>`` when
that is all EvalPlus checks (the judge process compares; the sample never sees the expected
value); a tolerance check (``_bw_close``: exact, else same type, same length and
``numpy.allclose(rtol=1e-07, atol)``) where ``atol`` is set or the expected value is floats; and
EvalPlus's special oracles for the tasks it names (a set comparison, "not None", a polynomial's
root, ...). The task's ``time_limit_s`` is EvalPlus's per-test rule ``max(4 s, 4 x the canonical
time)`` for its slowest input.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from benchwright.errors import InfraError, Problem, UserError
from benchwright.importers.base import Importer, ImportRequest, RowProblem
from benchwright.importers.escape import escape_template
from benchwright.importers.evalplus_inputs import mbpp_arguments
from benchwright.importers.evalplus_oracle import Outcome, ReferenceRunner
from benchwright.importers.pyliteral import NotLiteral, to_source
from benchwright.importers.rows import Row
from benchwright.task.model import LanguageSpec, Task, TaskBody, TestCase

__all__ = ["HumanEvalPlusImporter", "MbppPlusImporter"]

MIN_TIME_LIMIT_S = 4.0
"""EvalPlus's ``DEFAULT_MIN_TIME_LIMIT``."""
TIME_LIMIT_FACTOR = 4.0
"""EvalPlus's ``DEFAULT_GT_TIME_LIMIT_FACTOR``."""
FLOAT_ATOL = 1e-6
"""The tolerance EvalPlus uses for float outputs when the task's ``atol`` is 0."""

# -- the helpers a test case may call (the prelude holds those its cases use) -----------------

_HELPERS: dict[str, str] = {
    "_bw_close": '''\
def _bw_allclose(out, exp, atol):
    if isinstance(exp, (list, tuple)):
        return (isinstance(out, (list, tuple)) and len(out) == len(exp)
                and all(_bw_allclose(o, e, atol) for o, e in zip(out, exp)))
    if out == exp:
        return True
    return abs(out - exp) <= atol + 1e-07 * abs(exp)


def _bw_close(out, exp, atol, near=None):
    """EvalPlus's comparison: equal; else (with a tolerance) the same type, the same length
    and numpy.allclose(out, exp, rtol=1e-07, atol=atol)."""
    if out == exp:
        return True
    if near is not None and abs(out - near) <= atol:
        return True
    if atol == 0:
        return False
    if type(out) != type(exp):
        return False
    if isinstance(exp, (list, tuple)) and len(out) != len(exp):
        return False
    try:
        return _bw_allclose(out, exp, atol)
    except (TypeError, ValueError):
        return False
''',
    "_bw_not_none": '''\
def _bw_not_none(out):
    """EvalPlus's oracle for outputs it cannot store: a bool as it is, else "is not None"."""
    return out if isinstance(out, bool) else out is not None
''',
    "_bw_poly": '''\
def _bw_poly(xs, x):
    """EvalPlus's _poly: the polynomial with coefficients xs at x (HumanEval/32)."""
    import math
    return sum(coeff * math.pow(x, i) for i, coeff in enumerate(xs))
''',
}

# -- how a case checks one output -------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    """What a test case compares for one input: EvalPlus's rule for the task."""

    call: str
    """``f(<args>)``."""
    args: list[Any]
    expected: str
    """The expected output as source (or an expression computing it in the test process)."""
    floats: bool
    atol: float
    literal: bool = True
    """The expected output is a literal (the judge can compare it)."""


def _huge(source: str) -> bool:
    return "0x" in source


def _default(c: Check) -> tuple[str, tuple[str, ...]]:
    atol = c.atol or (FLOAT_ATOL if c.floats else 0.0)
    if atol or not c.literal or _huge(c.expected):
        return f"assert _bw_close({c.call}, {c.expected}, {atol!r})", ("_bw_close",)
    return f"assert {c.call} == {c.expected}", ()


def _set_equal(c: Check) -> tuple[str, tuple[str, ...]]:
    return f"assert set({c.call}) == set({c.expected})", ()


def _not_none(c: Check) -> tuple[str, tuple[str, ...]]:
    return f"assert _bw_not_none({c.call}) == {c.expected}", ("_bw_not_none",)


def _any_output(c: Check) -> tuple[str, tuple[str, ...]]:
    return f"{c.call}  # EvalPlus accepts any output that is returned (Mbpp/164)", ()


def _or_zero(c: Check) -> tuple[str, tuple[str, ...]]:
    return f"assert {c.call} in ({c.expected}, 0)  # EvalPlus accepts 0 too (Mbpp/295)", ()


def _surface_area(args: list[Any]) -> float:
    """EvalPlus's ``_surface_Area`` oracle (Mbpp/581), on plain numbers."""
    base_edge, height = args
    slant = math.sqrt((base_edge / 2) ** 2 + height**2)
    return float(round(base_edge**2 + 4 * (base_edge * slant) / 2))


def _near_surface_area(c: Check) -> tuple[str, tuple[str, ...]]:
    near = _surface_area(c.args)
    atol = c.atol or (FLOAT_ATOL if c.floats else 0.0)
    return (f"assert _bw_close({c.call}, {c.expected}, {atol!r}, near={to_source(near)})",
            ("_bw_close",))


def _digit_distance(args: list[Any]) -> int:
    """EvalPlus's ``_digit_distance_nums`` oracle (Mbpp/558), on plain integers."""
    a, b = str(args[0]), str(args[1])
    width = max(len(a), len(b))
    return sum(abs(int(x) - int(y)) for x, y in zip(a.zfill(width), b.zfill(width), strict=True))


def _either_digit_distance(c: Check) -> tuple[str, tuple[str, ...]]:
    return f"assert {c.call} in ({c.expected}, {to_source(_digit_distance(c.args))})", ()


def _polynomial_root(c: Check) -> tuple[str, tuple[str, ...]]:
    xs = to_source(c.args[0])
    return f"assert abs(_bw_poly({xs}, {c.call})) <= {c.atol!r}", ("_bw_poly",)


Rule = Callable[[Check], tuple[str, tuple[str, ...]]]

HUMANEVAL_ORACLES: dict[str, Rule] = {"find_zero": _polynomial_root}
"""EvalPlus's special oracles of HumanEval+, by entry point (``evalplus/eval/__init__.py``)."""

MBPP_SET_EQUAL = ("similar_elements", "find_char_long", "common_in_nested_lists", "extract_singly",
                  "larg_nnum", "intersection_array", "find_dissimilar", "Diff")
"""``MBPP_OUTPUT_SET_EQ_TASKS``: outputs compared as sets."""
MBPP_NOT_NONE = ("check_str", "text_match_three", "text_starta_endb")
"""``MBPP_OUTPUT_NOT_NONE_TASKS``: only whether the output is None counts."""
MBPP_ORACLES: dict[str, Rule] = {
    "are_equivalent": _any_output, "sum_div": _or_zero, "surface_Area": _near_surface_area,
    "digit_distance_nums": _either_digit_distance,
    **dict.fromkeys(MBPP_SET_EQUAL, _set_equal), **dict.fromkeys(MBPP_NOT_NONE, _not_none),
}
"""EvalPlus's special oracles of MBPP+, by entry point."""

# -- rows --------------------------------------------------------------------------------------


def _text(row: Mapping[str, Any], key: str) -> str:
    value = row[key]
    if not isinstance(value, str):
        raise RowProblem(f"{key} is a {type(value).__name__}, not text")
    return value


def _inputs(row: Mapping[str, Any], key: str) -> list[list[Any]]:
    value = row.get(key)
    if value is None and key == "plus_input":
        return []
    if not isinstance(value, list) or not all(isinstance(v, list) for v in value):
        raise RowProblem(f"{key} is not a list of argument lists",
                         hint="each input is a JSON list of the function's arguments")
    return value


def _atol(row: Mapping[str, Any]) -> float:
    value = row.get("atol") or 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
        raise RowProblem(f"atol is {value!r}, not a number >= 0")
    return float(value)


def _entry_point(row: Mapping[str, Any]) -> str:
    import keyword

    entry = _text(row, "entry_point")
    if not entry.isidentifier() or keyword.iskeyword(entry):
        raise RowProblem(f"entry_point {entry[:80]!r} is not a Python function name")
    return entry


class EvalPlusImporter(Importer):
    """What HumanEval+ and MBPP+ share: rows, reference runs, test cases."""

    licence = "Apache-2.0"
    fields = ("task_id", "prompt", "entry_point", "canonical_solution", "base_input")
    option_keys = ("sandbox",)
    oracles: ClassVar[Mapping[str, Rule]] = {}
    not_none: ClassVar[tuple[str, ...]] = ()
    source: ClassVar[str] = ""

    def __init__(self) -> None:
        self._runner: ReferenceRunner | None = None

    hub_copy: ClassVar[str] = ""
    """The Hub's copy, which has no inputs to import (a generated test program instead)."""

    def rows(self, request: ImportRequest, problems: list[Problem]) -> tuple[str, list[Row]]:
        """The release file's rows; ``--hf`` is refused with the reason.

        Raises:
            UserError: ``--hf`` or ``--hf-path``, or what :meth:`Importer.rows` refuses.
        """
        if request.hf or request.hf_path:
            raise UserError(f"import {self.name}: the Hub copy ({self.hub_copy}) has no base_input "
                            f"and plus_input to import; download {self.file_for(request)} from "
                            f"{self.download} and give it with --data")
        return super().rows(request, problems)

    def runner(self, request: ImportRequest) -> ReferenceRunner:
        """The sandbox runner of canonical solutions (``--map sandbox=NAME`` picks the backend)."""
        if self._runner is None:
            name = request.options.get("sandbox")
            self._runner = ReferenceRunner(sandbox_name=str(name) if name else None)
        return self._runner

    def arguments(self, task_id: str, inp: list[Any]) -> Any:
        """One argument list as EvalPlus passes it (MBPP+ turns some lists into tuples)."""
        return inp

    def task(self, row: dict[str, Any], request: ImportRequest) -> Task:
        task_id = str(row["task_id"])
        prompt, solution = _text(row, "prompt"), _text(row, "canonical_solution")
        entry = _entry_point(row)
        atol = _atol(row)
        groups = [("base", _inputs(row, "base_input")), ("plus", _inputs(row, "plus_input"))]
        try:
            args = [(kind, i, self.arguments(task_id, inp)) for kind, inputs in groups
                    for i, inp in enumerate(inputs)]
            sources = [", ".join(to_source(a) for a in arg) for _, _, arg in args]
        except (TypeError, ValueError, KeyError, IndexError, AttributeError, NotLiteral) as exc:
            raise RowProblem(f"an input does not have the shape EvalPlus gives it: {exc}") from None
        golden = prompt + solution
        try:
            outcomes = self.runner(request).run(golden, entry, [f"[{s}]" for s in sources],
                                                not_none=entry in self.not_none)
        except ValueError as exc:
            raise RowProblem(str(exc)) from None
        except InfraError as exc:
            raise RowProblem(f"computing the expected outputs failed: {exc}",
                             hint="a sandbox limit? try --map sandbox=NAME") from None
        cases: list[TestCase] = []
        helpers: set[str] = set()
        reference = False
        rule = self.oracles.get(entry, _default)
        for (kind, i, arg), source, outcome in zip(args, sources, outcomes, strict=True):
            if outcome.error is not None:
                raise RowProblem(f"the canonical solution fails on {kind}_input[{i}]: {outcome.error}")
            literal = outcome.source is not None
            expected = outcome.source if outcome.source is not None else f"_bw_reference({source})"
            reference = reference or not literal
            code, needs = rule(Check(f"{entry}({source})", list(arg), expected, outcome.floats,
                                     atol, literal))
            helpers.update(needs)
            cases.append(TestCase(name=f"{kind}-{i}", code=escape_template(code)))
        if not cases:
            raise RowProblem("no base_input and no plus_input: nothing to test")
        spec = LanguageSpec(description=escape_template(prompt), entry_point=entry,
                            hidden_tests=cases,
                            test_prelude=_prelude(helpers, golden, entry, reference))
        return Task(name=task_id, type="completion", source=self.source, languages=["python"],
                    mode="complete", time_limit_s=_time_limit(outcomes),
                    task=TaskBody(common_prompt="", languages_specific={"python": spec}),
                    golden_solution={"python": golden})


def _prelude(helpers: set[str], golden: str, entry: str, reference: bool) -> str | None:
    parts = [_HELPERS[h] for h in sorted(helpers | ({"_bw_close"} if reference else set()))]
    if reference:  # outputs that are not plain data: the canonical solution computes them here
        parts.append(f"_bw_canonical = {{'__name__': 'canonical'}}\n"
                     f"exec(compile({golden!r}, '<canonical>', 'exec'), _bw_canonical)\n"
                     f"_bw_reference = _bw_canonical[{entry!r}]\n")
    return escape_template("\n\n".join(parts)) if parts else None


def _time_limit(outcomes: list[Outcome]) -> float:
    slowest = max((o.seconds for o in outcomes), default=0.0)
    return math.ceil(max(MIN_TIME_LIMIT_S, TIME_LIMIT_FACTOR * slowest) * 10) / 10


class HumanEvalPlusImporter(EvalPlusImporter):
    """HumanEval+ (EvalPlus): HumanEval's 164 tasks with about 80 times as many test inputs."""

    name = "humaneval-plus"
    dataset = "HumanEval+ (EvalPlus, evalplus/humanevalplus_release)"
    download = ("https://github.com/evalplus/humanevalplus_release/releases "
                "(v0.1.10/HumanEvalPlus.jsonl.gz)")
    file_name = "HumanEvalPlus.jsonl.gz"
    oracles = HUMANEVAL_ORACLES
    source = "evalplus/humanevalplus"
    hub_copy = "evalplus/humanevalplus"


class MbppPlusImporter(EvalPlusImporter):
    """MBPP+ (EvalPlus): 378 sanitized MBPP tasks with about 35 times as many test inputs."""

    name = "mbpp-plus"
    dataset = "MBPP+ (EvalPlus, evalplus/mbppplus_release)"
    download = "https://github.com/evalplus/mbppplus_release/releases (v0.2.0/MbppPlus.jsonl.gz)"
    file_name = "MbppPlus.jsonl.gz"
    oracles = MBPP_ORACLES
    not_none = MBPP_NOT_NONE
    source = "evalplus/mbppplus"
    hub_copy = "evalplus/mbppplus"

    def arguments(self, task_id: str, inp: list[Any]) -> Any:
        number = task_id.rsplit("/", 1)[-1]
        return mbpp_arguments(int(number) if number.isdigit() else -1, inp)


IMPORTERS = (HumanEvalPlusImporter, MbppPlusImporter)
