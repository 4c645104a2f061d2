"""``python-coverage``: line and branch coverage of the extracted solution by the task's tests.

The tests run again, in the sample's sandbox, under coverage.py (``coverage run --branch``,
the tools' environment's interpreter), as the Python runner runs them: the solution and the
prelude in one namespace (``__name__ == "solution"``), then every test case in a copy of it,
each on its own (a failing, crashing or timed-out test does not stop the others). Only
``solution.py`` is measured. Two processes: a trusted driver starts the instrumented one, which
saves its data after each step, so that what ran before a crash or a time-out still counts.
When the instrumented process has run every step it also writes the report (coverage.py is
loaded there already); the driver takes it only then, and otherwise makes the report from the
saved data, as it always did. Either way the report comes from data the code's own process
wrote: the code could forge the data file as easily as the report.

Where the sandbox keeps long-lived sessions, the same functions run warm instead
(:mod:`.coverageserver`): one server per executor thread imports coverage.py once and forks the
instrumented process for each sample (about 40 ms a sample instead of 300); it kills what the
sample left, empties its folders, and is replaced by a new sandbox when the sample changed it or
left anything behind. A server that fails on a sample sends that sample to the driver.
``details["measured_by"]`` says which measured it. The tests run a second time either way, never
in the process whose CPU time and memory ``unit-test`` reports: tracing slows them down.

The score is coverage.py's own total: ``(covered lines + covered branches) / (statements +
branches)``. An ``if __name__ == "__main__":`` block is left out (the tests never run it);
``# pragma: no cover`` comments are not honoured.
"""

from __future__ import annotations

import functools
import inspect
import json
import textwrap
from importlib import resources
from typing import Any

from benchwright.criteria.base import Criterion, Measurement, SampleContext
from benchwright.criteria.toolbox import missing_file, python_tool, tools_python
from benchwright.criteria.toolserver import ToolServer
from benchwright.errors import InfraError
from benchwright.lang.pyserver import RUNNER, SCRATCH
from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.sandbox.servers import ThreadServers
from benchwright.task.model import Task
from benchwright.task.render import RenderedTask

SOLUTION = "solution.py"
SLOWDOWN = 3.0
"""How much longer than its limit a step may take under coverage (tracing branches is slower)."""
MAX_WALL_S = 300.0
"""The most the instrumented run of one sample may take, however many tests it has."""
DRIVER_MARGIN_S = 30.0
"""The driver's own time around the instrumented run (start, report)."""
WARM = "warm server"
"""``details["measured_by"]``: in a process forked from this thread's warm server."""
PER_SAMPLE = "per-sample driver"
"""``details["measured_by"]``: by a driver and an interpreter started for this sample."""
SERVER_MARGIN_S = 75.0
"""The warm server's own time around the instrumented run (its collector may take 60 s)."""
RCFILE = r"""[run]
branch = True
data_file = .bw_coverage
source = .
omit = bw_*.py
patch = _exit
disable_warnings = no-data-collected

[report]
exclude_lines =
    ^\s*if\s+__name__\s*==\s*['"]__main__['"]\s*:
"""
"""coverage.py's whole configuration (``--rcfile``): nothing else is read. ``patch = _exit``
saves the data when the code calls ``os._exit``."""


def _cover_tests(cov: Any = None) -> None:  # pragma: no cover  (runs in the sandbox, under coverage)
    """The instrumented process: load the solution and prelude, then run every test case.
    Writes a line to ``bw_steps.jsonl`` when it starts and after each step. ``cov``: the
    measurement running (None: the one ``coverage run`` started)."""
    import importlib
    import json
    import os
    import signal

    class StepTimeout(BaseException):
        pass

    tool = importlib.import_module("coverage")
    inside = os.path.dirname(str(tool.__file__)) + os.sep

    def alarm(signum: int, frame: Any) -> None:
        # up to the step that runs the code (``coverage run`` itself calls this process's main)
        while frame is not None and frame.f_code is not step.__code__:
            if frame.f_code.co_filename.startswith(inside):  # in coverage.py's own code, maybe
                signal.setitimer(signal.ITIMER_REAL, 0.001)  # holding its lock: raising there
                return  # would leave it held and the next save hang; a moment later instead
            frame = frame.f_back
        raise StepTimeout()

    if cov is None:
        cov = tool.Coverage.current()
    with open("bw_job.json") as f:
        job = json.load(f)
    path = os.path.abspath("solution.py")
    with open(path, "rb") as fb:
        source = fb.read()
    steps = open("bw_steps.jsonl", "a", buffering=1)  # noqa: SIM115  (open to the end)
    steps.write(json.dumps({"step": "start", "status": "pass", "message": None}) + "\n")
    signal.signal(signal.SIGALRM, alarm)
    ns: dict[str, object] = {"__name__": "solution", "__builtins__": __builtins__}

    def step(name: str, code: str | bytes, filename: str, where: dict[str, object],
             timeout: float) -> bool:
        status, message = "pass", None
        try:
            compiled = compile(code, filename, "exec")
            signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                exec(compiled, where)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
        except StepTimeout:
            status, message = "timeout", f"took more than {timeout:g} s"
        except AssertionError as e:
            status, message = "fail", str(e) or "AssertionError"
        except BaseException as e:
            status, message = "error", f"{type(e).__name__}: {e}"
        if cov is not None:
            cov.save()  # what ran so far counts, whatever the next step does
        steps.write(json.dumps({"step": name, "status": status,
                                "message": None if message is None else message[:300]}) + "\n")
        return status == "pass"

    loaded = step("load", source, path, ns, job["load_timeout"])
    if loaded and job["prelude"]:
        loaded = step("prelude", job["prelude"], "<prelude>", ns, job["load_timeout"])
    if loaded:
        for test in job["tests"]:
            step(test["name"], test["code"], "<test>", dict(ns), test["timeout"])
    if cov is not None and job["self_report"]:  # the report, here where coverage.py is loaded: the driver
        try:  # then need not load it (about 0.1 s of a sample), unless this process dies first
            cov.stop()
            cov.save()
            cov.json_report(morfs=[path], outfile="bw_report.part")
            os.replace("bw_report.part", "bw_report.json")
        except BaseException:
            pass


def _cover_driver() -> None:  # pragma: no cover  (runs in the sandbox)
    """The trusted process: check that the solution compiles, run :func:`_cover_tests` under
    coverage with a time limit, then print one JSON object: the report of ``solution.py``,
    the steps and how the instrumented process ended (see :func:`_collect`)."""
    import contextlib
    import json
    import os
    import signal
    import subprocess
    import sys

    with open("bw_job.json") as f:
        job = json.load(f)
    path = os.path.abspath("solution.py")
    with open(path, "rb") as fb:
        source = fb.read()
    out: dict[str, object] = {"report": None, "steps": [], "started": False, "exit": None,
                              "timed_out": False}
    try:
        compile(source, path, "exec")
    except SyntaxError as e:
        out["syntax_error"] = {"line": e.lineno, "message": e.msg}
        print(json.dumps(out))
        return
    with open("bw_output.txt", "wb") as err:  # what coverage.py (and the code) printed
        child = subprocess.Popen(
            [sys.executable, "-I", "-m", "coverage", "run", "--rcfile=bw_coverage.ini", "bw_tests.py"],
            stdin=subprocess.DEVNULL, stdout=err, stderr=err, start_new_session=True)
        try:
            out["exit"] = child.wait(timeout=job["wall"])
        except subprocess.TimeoutExpired:
            out["timed_out"] = True
        with contextlib.suppress(OSError):
            os.killpg(child.pid, signal.SIGKILL)  # and whatever the code left running
        child.wait()
    print(json.dumps(_collect(out, job)))


def _collect(out: dict[str, Any], job: dict[str, Any]) -> dict[str, Any]:  # pragma: no cover  (in the sandbox)
    """What the instrumented process left in the current folder, added to ``out`` (how it
    ended: ``exit``, ``timed_out``): its ``steps``, whether it ``started``, and the ``report``
    on ``solution.py``: its own when it ran every step, else made here from the data it saved
    (or its ``output`` when it never started). Every file here was written by the code: read
    with care."""
    import contextlib
    import importlib
    import json
    import os

    path = os.path.abspath("solution.py")
    steps: list[dict[str, object]] = []
    with contextlib.suppress(OSError), open("bw_steps.jsonl") as f:
        for line in f:  # written by the process that ran the code: read with care
            with contextlib.suppress(ValueError):
                item = json.loads(line)
                if isinstance(item, dict) and isinstance(item.get("step"), str) \
                        and isinstance(item.get("status"), str):
                    steps.append({k: item.get(k) for k in ("step", "status", "message")})
    out["started"] = bool(steps) and steps[0]["step"] == "start"
    out["steps"] = steps[1:] if out["started"] else steps
    if not out["started"]:
        with open("bw_output.txt", "rb") as fb:
            out["output"] = fb.read()[-2000:].decode(errors="replace")
        return out
    report = None
    whole = not out["timed_out"] and out["exit"] == 0 and len(steps) == 2 + bool(job["prelude"]) + len(job["tests"])
    if whole:  # the instrumented process ran every step and wrote the report itself
        with contextlib.suppress(OSError, ValueError, AttributeError, StopIteration, TypeError), \
                open("bw_report.json") as f:
            report = next(iter(json.load(f)["files"].values()))
    if not isinstance(report, dict):  # it did not: the report from the data it saved
        with contextlib.suppress(OSError):
            os.remove("bw_report.json")
        cov = importlib.import_module("coverage").Coverage(config_file="bw_coverage.ini")
        cov.load()
        cov.start()  # measures nothing: saving adds solution.py unexecuted if nothing ran
        cov.stop()
        cov.save()
        cov.json_report(morfs=[path], outfile="bw_report.json")
        with open("bw_report.json") as f:
            report = next(iter(json.load(f)["files"].values()), None)
    if report is not None:
        keep = ("summary", "missing_lines", "missing_branches", "excluded_lines")
        out["report"] = {k: report.get(k) for k in keep}
    return out


def _sources(*functions: str) -> str:
    """The source of these functions of this module, to run in the sandbox (their annotations
    are never evaluated there)."""
    return "from __future__ import annotations\n\n" + "\n\n".join(
        textwrap.dedent(inspect.getsource(globals()[f])) for f in functions)


@functools.cache
def _script(*functions: str) -> bytes:
    """A script of these functions that calls the last one."""
    return f"{_sources(*functions)}\n\n{functions[-1]}()\n".encode()


def _ranges(lines: list[int]) -> str:
    """``1, 3-5, 9`` from ``[1, 3, 4, 5, 9]``."""
    parts: list[str] = []
    for n in sorted(lines):
        if parts and parts[-1].split("-")[-1] == str(n - 1):
            parts[-1] = f"{parts[-1].split('-')[0]}-{n}"
        else:
            parts.append(str(n))
    return ", ".join(parts)


def _arc(arc: Any) -> str:
    """``3->5``, or ``3->exit`` where the code leaves a function or the module."""
    start, end = int(arc[0]), int(arc[1])
    return f"{start}->{end if end > 0 else 'exit'}"


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


class PythonCoverage(Criterion):
    """Line and branch coverage of ``solution.py`` by the task's tests, with coverage.py."""

    name = "python-coverage"
    unit = "ratio"
    higher_is_better = True
    languages = ("python",)
    tool = "coverage.py 7.17.3"

    def __init__(self, self_report: bool = True, warm: bool = True) -> None:
        self.self_report = self_report
        """The instrumented process writes the report when it ran every step (the driver then
        need not load coverage.py); False: the driver always makes it from the saved data."""
        self.warm = warm
        """Measure in a process forked from a warm server (coverage.py imported once per
        executor thread, see :mod:`.coverageserver`) where the sandbox offers long-lived
        sessions; False: a driver and an instrumented interpreter started for every sample."""
        self._servers: ThreadServers[ToolServer] = ThreadServers(self._server)

    def _server(self, sandbox: Sandbox) -> ToolServer:
        program = (_sources("_cover_tests", "_collect") + "\n\n"
                   + resources.files("benchwright.criteria").joinpath("coverageserver.py").read_text())
        isolated = "hidden-tmp" in sandbox.guarantees
        config = {"scratch": list(SCRATCH) if isolated else [], "isolated": isolated}
        argv = [str(tools_python()), "-I", "-c", program, RUNNER.decode(), json.dumps(config)]
        return ToolServer(sandbox, argv, {}, "BWV", MAX_WALL_S + SERVER_MARGIN_S, self.tool)

    def close(self) -> None:
        self._servers.close()

    def missing(self) -> str | None:
        return missing_file(python_tool("coverage"), "coverage.py")

    def applies(self, task: Task, language: str, rendered: RenderedTask) -> bool:
        return language in self.languages and bool(rendered.tests)

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        ceiling = ctx.test_timeout_s()
        limits = [(t.timeout_s or ceiling) * SLOWDOWN for t in ctx.rendered.tests]
        tests = [{"name": t.name, "code": t.code, "timeout": limit}
                 for t, limit in zip(ctx.rendered.tests, limits, strict=True)]
        load = ceiling * SLOWDOWN
        wall = min(MAX_WALL_S, load * (2 if ctx.rendered.prelude else 1)
                   + sum(limit + 0.5 for limit in limits) + 5)
        job = {"tests": tests, "prelude": ctx.rendered.prelude, "load_timeout": load, "wall": wall,
               "self_report": self.self_report}
        steps = ["load", *(["prelude"] if ctx.rendered.prelude else []), *(t.name for t in ctx.rendered.tests)]
        server = self._servers.get(ctx.sandbox) if self.warm else None
        if server is not None:
            answer = server.request(
                {"code": ctx.code, "job": {**job, "rcfile": RCFILE, "memory_mb": ctx.limits.memory_mb}},
                wall + SERVER_MARGIN_S)
            result = answer.get("result") if isinstance(answer, dict) else None
            if isinstance(answer, dict) and answer.get("restart") is not None:
                server.close()  # the sample left something: the next one gets a new sandbox
            if isinstance(result, dict) and "failed" not in result:
                return [self.measurement(result, steps, WARM)]
            server.close()  # it failed on this sample: the per-sample path measures it
        files = {SOLUTION: ctx.code.encode(), "bw_job.json": json.dumps(job).encode(),
                 "bw_coverage.ini": RCFILE.encode(), "bw_driver.py": _script("_collect", "_cover_driver"),
                 "bw_tests.py": _script("_cover_tests")}
        proc = ctx.sandbox.run(
            [str(tools_python()), "-I", "bw_driver.py"], files=files,
            limits=SandboxLimits(wall_s=wall + DRIVER_MARGIN_S, memory_mb=ctx.limits.memory_mb,
                                 output_bytes=4 * 1024 * 1024, file_size_mb=64,
                                 processes=64))
        if proc.timed_out or proc.exit_code != 0:
            tail = proc.stderr.decode(errors="replace").strip()[-800:]
            how = "timed out" if proc.timed_out else f"failed (exit status {proc.exit_code}, signal {proc.signal})"
            raise InfraError(f"the coverage driver ({self.tool}) {how}: {tail}")
        try:
            result = json.loads(proc.stdout.decode().strip().splitlines()[-1])
        except (ValueError, IndexError):
            raise InfraError(f"the coverage driver ({self.tool}) wrote no result: "
                             f"{proc.stdout.decode(errors='replace')[-300:]}") from None
        return [self.measurement(result, steps, PER_SAMPLE)]

    def measurement(self, result: dict[str, Any], expected: list[str], how: str) -> Measurement:
        """The sample's record from the driver's result (``expected``: the steps of a whole
        run: ``load``, ``prelude`` if there is one, every test case; ``how``: :data:`WARM` or
        :data:`PER_SAMPLE`, kept as ``details["measured_by"]``)."""
        error = result.get("syntax_error")
        if error is not None:
            return Measurement(
                score=0.0, unit=self.unit, line=error.get("line"),
                output=f"the solution does not compile (line {error.get('line')}: "
                       f"{error.get('message')}): the tests ran none of it",
                details={"syntax_error": error, "measured_by": how})
        if not result.get("started"):
            raise InfraError(f"coverage.py ({self.tool}) did not start the tests: "
                             f"{str(result.get('output', '')).strip()[-800:]}")
        report = result.get("report")
        if not isinstance(report, dict):
            raise InfraError(f"the coverage driver ({self.tool}) reported nothing on {SOLUTION}")
        summary = report["summary"]
        lines, statements = int(summary["covered_lines"]), int(summary["num_statements"])
        branches_hit, branches = int(summary["covered_branches"]), int(summary["num_branches"])
        missing_lines = [int(n) for n in report["missing_lines"]]
        missing_branches = [_arc(a) for a in report["missing_branches"]]
        steps: list[dict[str, Any]] = result.get("steps") or []
        statuses: dict[str, int] = {}
        for s in steps:
            if s["step"] not in ("load", "prelude"):
                statuses[s["status"]] = statuses.get(s["status"], 0) + 1
        details: dict[str, Any] = {
            "line_ratio": _ratio(lines, statements), "branch_ratio": _ratio(branches_hit, branches),
            "covered_lines": lines, "statements": statements,
            "covered_branches": branches_hit, "branches": branches,
            "missing_lines": missing_lines, "missing_branches": missing_branches,
            "excluded_lines": report.get("excluded_lines", []),
            "tests": statuses, "steps": steps, "measured_by": how,
        }
        interrupted = None
        failed = next((s for s in steps if s["step"] in ("load", "prelude") and s["status"] != "pass"), None)
        if failed is not None:
            interrupted = (f"no test ran: {'loading the solution' if failed['step'] == 'load' else 'the prelude'}"
                           f" ended in {failed['status']} ({failed['message']})")
        elif len(steps) < len(expected):
            how = ("was stopped (out of time)" if result.get("timed_out")
                   else f"ended (exit status {result.get('exit')})")
            later = len(expected) - len(steps) - 1
            interrupted = f"the instrumented process {how} during {expected[len(steps)]}" + (
                f"; {later} later test case{'s' if later > 1 else ''} did not run" if later else "")
        if interrupted:
            details["interrupted"] = interrupted
        score = _ratio(lines + branches_hit, statements + branches)
        if score is None:
            return Measurement(score=None, unit=self.unit, verdict="n/a",
                               output="the solution has no statements to cover", details=details)
        text = [f"lines {lines}/{statements}, branches {branches_hit}/{branches}"]
        if missing_lines:
            text.append(f"missing lines: {_ranges(missing_lines)}")
        if missing_branches:
            text.append(f"missing branches: {', '.join(missing_branches)}")
        if interrupted:
            text.append(interrupted)
        firsts = missing_lines + [int(b.split("->")[0]) for b in missing_branches]
        return Measurement(score=score, unit=self.unit, output="\n".join(text),
                           line=min(firsts) if firsts else None, details=details)


CRITERIA = (PythonCoverage,)
"""The criteria of this module, registered by :mod:`benchwright.builtins`."""
