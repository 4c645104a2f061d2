"""Time limits derived from the golden solutions' measured time (``limits.golden_factor``).

With ``golden_factor`` set, a run starts by running each (task, language)'s golden solution
through the same language runner, sandbox and limits as its samples, and gives every test case
the limit ``min(ceiling, max(golden_floor_s, golden_factor x golden time))`` -- EvalPlus's rule,
per test case. The ceiling is the task's ``time_limit_s``, else ``limits.test_timeout_s``.
A (task, language) without a golden solution, without a language plug-in, or whose golden
solution does not pass its own tests keeps the ceiling; the reason is recorded and reported.

The golden time of a test is the **median** over up to :data:`RUNS` runs, each in a fresh
process (a solution that memoises would make repeats inside one process free). The median is
robust to one outlier in either direction -- a cold first run, a scheduler hiccup, a lucky
fast run -- so two runs of the same benchmark derive the same limits; the slowest run would
let one burst of load during the measurement loosen the limits of that task for the whole run,
the fastest would let one lucky run tighten them. Headroom for load while the samples run comes
from the factor and the floor, not from the statistic.

Most test cases take microseconds, far below the floor. When every test of the first run is
so fast that ``factor x time`` is at most half the floor, one run decides: the median of three
could only lift a limit above the floor if both other runs were more than twice as slow. So the
measurement costs about one execution per (task, language), spread over the cores.

The measured times and the limits go into the run folder's ``limits.yaml`` before any sample
is evaluated; ``--resume`` reads them back and measures nothing.
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any

from benchwright.config.model import Limits
from benchwright.criteria.base import ceiling_s, execute_tests
from benchwright.errors import BenchwrightError
from benchwright.lang.base import ExecutionResult, Language
from benchwright.registry import registry
from benchwright.run.plan import SampleUnit
from benchwright.sandbox.base import Sandbox

RUNS = 3
"""Runs of a golden solution at most; the median of their times counts."""
STATISTIC = f"median of up to {RUNS} runs"

Key = tuple[str, str, str]
"""(task source, task, language)."""
MeasureProgress = Callable[[int, int, str | None], None]
"""``(finished, total, what)``: golden solutions measured so far."""


def derive(golden_s: float, factor: float, floor_s: float, ceiling: float) -> float:
    """A test's limit: ``min(ceiling, max(floor_s, factor x golden_s))``, to the millisecond (what
    ``limits.yaml`` holds is exactly what applies)."""
    return round(min(ceiling, max(floor_s, factor * golden_s)), 3)


def key_of(unit: SampleUnit) -> Key:
    return (unit.task_source, unit.task.name, unit.language)


@dataclass
class TestLimit:
    """One test case: the golden solution's time in each run and the limit derived from it."""

    __test__ = False

    name: str
    golden_ms: list[float | None]
    limit_s: float

    def to_data(self) -> dict[str, Any]:
        return {"name": self.name, "golden_ms": [None if t is None else round(t, 3) for t in self.golden_ms],
                "limit_s": self.limit_s}


@dataclass
class TaskLimits:
    """The limits of one (task, language); ``kept_ceiling`` says why none were derived."""

    task_source: str
    task: str
    language: str
    ceiling_s: float
    tests: list[TestLimit] = field(default_factory=list)
    runs: int = 0
    kept_ceiling: str | None = None

    @property
    def key(self) -> Key:
        return (self.task_source, self.task, self.language)

    @property
    def label(self) -> str:
        return f"{self.task_source}/{self.task} [{self.language}]"

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"task_source": self.task_source, "task": self.task,
                                "language": self.language, "ceiling_s": self.ceiling_s}
        if self.kept_ceiling is not None:
            data["kept_ceiling"] = self.kept_ceiling
        else:
            data["runs"] = self.runs
            data["tests"] = [t.to_data() for t in self.tests]
        return data

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> TaskLimits:
        tests = [TestLimit(str(t["name"]), [None if v is None else float(v) for v in t.get("golden_ms") or []],
                           float(t["limit_s"])) for t in data.get("tests") or []]
        kept = data.get("kept_ceiling")
        return cls(str(data["task_source"]), str(data["task"]), str(data["language"]),
                   float(data["ceiling_s"]), tests, int(data.get("runs") or 0),
                   None if kept is None else str(kept))


@dataclass
class TimeLimits:
    """Every (task, language)'s limits in one run (``limits.yaml``)."""

    golden_factor: float
    golden_floor_s: float
    tasks: dict[Key, TaskLimits]
    measured_at: str = ""
    sandbox: str | None = None

    def kept_ceiling(self) -> list[TaskLimits]:
        return [t for t in self.tasks.values() if t.kept_ceiling is not None]

    def apply(self, units: Sequence[SampleUnit]) -> list[SampleUnit]:
        """``units`` with each test's ``timeout_s`` set to its derived limit (where one was)."""
        rendered: dict[Key, Any] = {}
        out = []
        for unit in units:
            limits = self.tasks.get(key_of(unit))
            if limits is None or limits.kept_ceiling is not None:
                out.append(unit)
                continue
            key = key_of(unit)
            if key not in rendered:
                names = [t.name for t in unit.rendered.tests]
                if names != [t.name for t in limits.tests]:  # the tests are not those measured
                    rendered[key] = unit.rendered
                else:
                    tests = [replace(t, timeout_s=lim.limit_s)
                             for t, lim in zip(unit.rendered.tests, limits.tests, strict=True)]
                    rendered[key] = replace(unit.rendered, tests=tests)
            out.append(replace(unit, rendered=rendered[key]))
        return out

    def to_data(self) -> dict[str, Any]:
        return {
            "golden_factor": self.golden_factor,
            "golden_floor_s": self.golden_floor_s,
            "statistic": STATISTIC,
            "measured_at": self.measured_at,
            "sandbox": self.sandbox,
            "tasks": [t.to_data() for t in self.tasks.values()],
        }

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> TimeLimits:
        tasks = [TaskLimits.from_data(t) for t in data.get("tasks") or []]
        return cls(float(data["golden_factor"]), float(data["golden_floor_s"]), {t.key: t for t in tasks},
                   str(data.get("measured_at") or ""), data.get("sandbox"))

    def summary(self) -> dict[str, Any]:
        """What ``summary.yaml`` says about the limits (``report`` prints it)."""
        measured = [t for t in self.tasks.values() if t.kept_ceiling is None]
        return {
            "golden_factor": self.golden_factor,
            "golden_floor_s": self.golden_floor_s,
            "measured": len(measured),
            "kept_ceiling": [{"task_source": t.task_source, "task": t.task, "language": t.language,
                              "reason": t.kept_ceiling} for t in self.kept_ceiling()],
        }


# -- measuring ---------------------------------------------------------------------------------


def _executes(criterion: str, known: dict[str, bool]) -> bool:
    if criterion not in known:
        known[criterion] = registry.has("criterion", criterion) and bool(
            registry.create("criterion", criterion).executes)
    return known[criterion]


def golden_code(unit: SampleUnit) -> str | None:
    """The golden solution as the ``reference`` model's sample would run it."""
    golden = unit.golden
    if golden is None:
        return None
    prompt = unit.rendered.prompt
    if unit.task.mode == "complete" and not golden.startswith(prompt):
        return prompt + golden
    return golden


def _failure(result: ExecutionResult) -> str | None:
    """Why a golden run cannot give limits, or None when every test passed."""
    if result.infra_error:
        return f"infra_error: {result.infra_error}"
    if result.build_error:
        return f"the golden solution does not build: {result.build_error.strip()[:300]}"
    for t in result.tests:
        if t.status != "pass":
            msg = f": {t.message.strip()[:300]}" if t.message else ""
            return f"the golden solution fails test {t.name!r} ({t.status}{msg})"
    if not result.tests:
        return "no test ran"
    return None


class _Measurement:
    """The runs of one (task, language) so far."""

    def __init__(self, unit: SampleUnit, limits: Limits, factor: float) -> None:
        self.unit = unit
        self.ceiling = ceiling_s(unit.task, limits)
        self.factor = factor
        self.floor = limits.golden_floor_s
        self.times: list[list[float | None]] = []
        self.failed: str | None = None

    def add(self, result: ExecutionResult) -> None:
        why = _failure(result)
        if why is not None:
            self.failed = self.failed or why
            return
        self.times.append([t.time_ms for t in result.tests])

    def decided(self) -> bool:
        """Whether more runs cannot change the limits (see the module's doc)."""
        if self.failed is not None or len(self.times) >= RUNS:
            return True
        if len(self.times) == 1:
            return all(t is None or self.factor * t / 1000 <= self.floor / 2 for t in self.times[0])
        return False

    def limits(self) -> TaskLimits:
        u = self.unit
        out = TaskLimits(u.task_source, u.task.name, u.language, self.ceiling, runs=len(self.times))
        if self.failed is not None:
            out.kept_ceiling = self.failed
            return out
        for i, spec in enumerate(u.rendered.tests):
            runs = [r[i] for r in self.times]
            known = [t for t in runs if t is not None]
            limit = (derive(statistics.median(known) / 1000, self.factor, self.floor, self.ceiling)
                     if len(known) == len(runs) else self.ceiling)  # a runner that gave no time: the ceiling
            out.tests.append(TestLimit(spec.name, runs, limit))
        return out


def measure(units: Sequence[SampleUnit], sandbox: Sandbox, limits: Limits, *,
            workers: int | None = None, progress: MeasureProgress | None = None) -> TimeLimits:
    """Run the golden solution of every (task, language) in ``units`` that executes tests, and
    derive the limits of its tests. Runs go to a pool of ``workers`` threads (default: cores)."""
    factor = limits.golden_factor
    if factor is None:
        raise ValueError("measure() needs limits.golden_factor")
    first: dict[Key, SampleUnit] = {}
    executes: dict[str, bool] = {}
    for unit in units:
        if key_of(unit) not in first and unit.rendered.tests and any(
                _executes(n, executes) for n in unit.criteria):
            first[key_of(unit)] = unit
    result: dict[Key, TaskLimits] = {}
    todo: dict[Key, _Measurement] = {}
    langs: dict[str, Language] = {}
    for key, unit in first.items():
        ceiling = ceiling_s(unit.task, limits)
        code = golden_code(unit)
        if code is None:
            result[key] = TaskLimits(*key, ceiling, kept_ceiling=f"no golden solution for {unit.language}")
        elif not registry.has("language", unit.language):
            result[key] = TaskLimits(*key, ceiling, kept_ceiling=f"benchwright cannot execute {unit.language}")
        else:
            if unit.language not in langs:
                langs[unit.language] = registry.create("language", unit.language)
            todo[key] = _Measurement(unit, limits, factor)
    total, finished = len(first), len(result)
    if progress and total:
        progress(finished, total, None)

    def one(m: _Measurement) -> ExecutionResult:
        code = golden_code(m.unit)
        assert code is not None
        res, _ = execute_tests(langs[m.unit.language], sandbox, code, m.unit.rendered, limits, m.ceiling)
        return res

    try:
        with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1,
                                thread_name_prefix="bw-golden") as pool:
            running: dict[Future[ExecutionResult], Key] = {pool.submit(one, m): k for k, m in todo.items()}
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in done:
                    key = running.pop(fut)
                    m = todo[key]
                    try:
                        m.add(fut.result())
                    except BenchwrightError as e:
                        m.failed = m.failed or f"infra_error: {e}"
                    if m.decided():
                        result[key] = m.limits()
                        finished += 1
                        if progress:
                            progress(finished, total, "/".join(key[:2]) + f" [{key[2]}]")
                    else:
                        running[pool.submit(one, m)] = key
    finally:
        for lang in langs.values():
            lang.close()
    ordered = {k: result[k] for k in first}
    return TimeLimits(factor, limits.golden_floor_s, ordered,
                      measured_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                      sandbox=sandbox.name)
