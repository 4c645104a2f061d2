"""``complexity``: cyclomatic complexity, size and duplication of the solution, by lizard.

lizard reads the extracted solution as text (nothing is executed) in the harness process. The
sample's score is the cyclomatic complexity (CCN) of its most complex function: 1 for
straight-line code, one more for every decision (``if``, loop, ``case``, ``catch``, ``&&``,
``||``, ternary...). The maximum, not the sum, so that a solution is not penalised for splitting
its work into small helpers, and so that the figure compares across tasks whose solutions have
different numbers of functions. Code outside any function is not counted (lizard's rule).

The record's ``details`` carry the rest: each function (name, line, CCN, NLOC, tokens,
parameters), the totals (NLOC, tokens, function count, mean and total CCN) and
lizard's duplicate-code detection (blocks of at least 70 tokens that repeat, after renaming
identifiers and constants, and the share of the tokens they cover). There is one record per
sample; these figures are not records of their own, so only the CCN reaches the summary.
"""

from __future__ import annotations

import importlib
import sys
import threading
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any

from benchwright.criteria.base import Criterion, Measurement, SampleContext
from benchwright.task.model import Task
from benchwright.task.render import RenderedTask

__all__ = ["LIZARD_EXTENSIONS", "Complexity", "ComplexityReport", "FunctionMetrics", "analyse"]

LIZARD_EXTENSIONS: dict[str, str] = {
    "python": "py",
    "java": "java",
    "c": "c",
    "cpp": "cpp",
    "javascript": "js",
    "typescript": "ts",
    "go": "go",
    "rust": "rs",
    "csharp": "cs",
    "kotlin": "kt",
    "scala": "scala",
    "swift": "swift",
    "ruby": "rb",
    "php": "php",
    "lua": "lua",
    "perl": "pl",
    "r": "r",
    "erlang": "erl",
    "fortran": "f90",
    "solidity": "sol",
    "zig": "zig",
    "objective-c": "m",
}
"""benchwright language -> the file extension by which lizard picks its reader."""

MIN_DUPLICATE_TOKENS = 70
"""The shortest repeated block lizard reports as duplicate code (its own default)."""

INSTALL_HINT = "pip install 'benchwright[metrics]' (./scripts/setup installs it)"

_LOCK = threading.Lock()
_MODULES: dict[str, ModuleType] = {}


def _module(name: str) -> ModuleType:
    """A lizard module, imported once. ``lizard`` puts its own folder and the program's folder
    (``sys.argv[0]``) at the front of ``sys.path`` when imported; benchwright takes them out.

    Raises:
        ImportError: lizard is not installed.
    """
    with _LOCK:
        if name not in _MODULES:
            saved = list(sys.path)
            try:
                importlib.import_module("lizard")
                _MODULES[name] = importlib.import_module(name)
            finally:
                sys.path[:] = saved
        return _MODULES[name]


@dataclass(frozen=True)
class FunctionMetrics:
    """What lizard says about one function of the solution."""

    name: str
    line: int
    end_line: int
    ccn: int
    nloc: int
    tokens: int
    parameters: list[str]

    def render(self) -> str:
        params = len(self.parameters)
        return (f"line {self.line}: {self.name} ({params} parameter{'s' if params != 1 else ''}): "
                f"CCN {self.ccn}, NLOC {self.nloc}, {self.tokens} tokens")


@dataclass(frozen=True)
class ComplexityReport:
    """lizard's analysis of one solution."""

    functions: list[FunctionMetrics]
    nloc: int
    tokens: int
    duplicates: list[list[tuple[int, int]]]
    """Each duplicated block: the (first, last) lines of every copy."""
    duplicate_rate: float
    """The share of the solution's tokens that lie in a duplicated block, 0-1."""

    @property
    def max_ccn(self) -> int | None:
        return max((f.ccn for f in self.functions), default=None)

    def details(self) -> dict[str, Any]:
        ccns = [f.ccn for f in self.functions]
        return {
            "functions": [asdict(f) for f in self.functions],
            "function_count": len(self.functions),
            "max_ccn": self.max_ccn,
            "total_ccn": sum(ccns),
            "average_ccn": sum(ccns) / len(ccns) if ccns else None,
            "nloc": self.nloc,
            "tokens": self.tokens,
            "duplication": {
                "rate": self.duplicate_rate,
                "min_tokens": MIN_DUPLICATE_TOKENS,
                "blocks": [[{"line": a, "end_line": b} for a, b in block] for block in self.duplicates],
            },
        }

    def render(self) -> str:
        lines = [f.render() for f in self.functions]
        lines.append(f"total: {len(self.functions)} function(s), NLOC {self.nloc}, "
                     f"{self.tokens} tokens")
        for block in self.duplicates:
            copies = ", ".join(f"lines {a}-{b}" for a, b in block)
            lines.append(f"duplicated code: {copies}")
        if self.duplicates:
            lines.append(f"duplication: {self.duplicate_rate:.0%} of the tokens")
        return "\n".join(lines)


def analyse(code: str, language: str) -> ComplexityReport:
    """Run lizard (with its duplicate-code extension) on ``code``.

    Raises:
        KeyError: lizard has no reader for ``language``.
        ImportError: lizard is not installed.
    """
    filename = f"solution.{LIZARD_EXTENSIONS[language]}"
    lizard = _module("lizard")
    duplicate = _module("lizard_ext.lizardduplicate").LizardExtension()
    analyzer = lizard.FileAnalyzer(lizard.get_extensions([duplicate]))
    info = analyzer.analyze_source_code(filename, code)
    list(duplicate.cross_file_process([info]))
    blocks = [[(int(s.start_line), int(s.end_line)) for s in snippets]
              for snippets in duplicate.get_duplicates(min_duplicate_tokens=MIN_DUPLICATE_TOKENS)]
    functions = [
        FunctionMetrics(
            name=str(f.name), line=int(f.start_line), end_line=int(f.end_line),
            ccn=int(f.cyclomatic_complexity), nloc=int(f.nloc), tokens=int(f.token_count),
            parameters=[str(p) for p in f.parameters],
        )
        for f in info.function_list
    ]
    functions.sort(key=lambda f: f.line)
    rate = float(duplicate.duplicate_rate() or 0.0) if blocks else 0.0
    return ComplexityReport(functions=functions, nloc=int(info.nloc), tokens=int(info.token_count),
                            duplicates=blocks, duplicate_rate=min(max(rate, 0.0), 1.0))


def _lizard_version() -> str:
    try:
        return version("lizard")
    except PackageNotFoundError:
        return "(not installed)"


class Complexity(Criterion):
    """The cyclomatic complexity of the solution's most complex function (lizard), with each
    function's figures, the totals and the duplicated code in the details."""

    name = "complexity"
    unit = "count"
    higher_is_better = False
    languages = tuple(LIZARD_EXTENSIONS)

    def __init__(self) -> None:
        self.tool = f"lizard {_lizard_version()}"

    def missing(self) -> str | None:
        try:
            _module("lizard")
            _module("lizard_ext.lizardduplicate")
        except ImportError as e:
            return f"complexity needs lizard ({e}): {INSTALL_HINT}"
        return None

    def applies(self, task: Task, language: str, rendered: RenderedTask) -> bool:
        return language in LIZARD_EXTENSIONS

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        try:
            report = analyse(ctx.code, ctx.language)
        except ImportError:
            raise
        except Exception as e:  # a tool's crash on odd text is about this text, not the harness
            return [Measurement(score=None, verdict="n/a", output=(
                f"lizard could not analyse the solution: {type(e).__name__}: {e}"))]
        worst = max(report.functions, key=lambda f: f.ccn, default=None)
        if worst is None:
            return [Measurement(score=None, verdict="n/a", details=report.details(), output=(
                f"lizard found no function in the solution ({ctx.language}); code outside "
                "functions is not measured"))]
        return [Measurement(score=float(worst.ccn), unit=self.unit, line=worst.line,
                            output=report.render(), details=report.details())]


CRITERIA: tuple[type[Criterion], ...] = (Complexity,)
"""The criteria of this module, registered by :mod:`benchwright.builtins`."""
