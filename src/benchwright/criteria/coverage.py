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

import json
from typing import Any

from benchwright.criteria.base import Criterion, Measurement, SampleContext
from benchwright.criteria.coveragerun import (
    MAX_WALL_S,
    PER_SAMPLE,
    SERVER_MARGIN_S,
    SOLUTION,
    WARM,
    driver_argv,
    driver_files,
    driver_limits,
    make_job,
    server_argv,
    server_request,
)
from benchwright.criteria.toolserver import ToolServer
from benchwright.errors import InfraError
from benchwright.sandbox.base import Sandbox
from benchwright.sandbox.servers import ThreadServers
from benchwright.task.model import Task
from benchwright.task.render import RenderedTask
from benchwright.toolbox import missing_file, python_tool


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
        return ToolServer(sandbox, server_argv(sandbox), {}, "BWV", MAX_WALL_S + SERVER_MARGIN_S, self.tool)

    def close(self) -> None:
        self._servers.close()

    def missing(self) -> str | None:
        return missing_file(python_tool("coverage"), "coverage.py")

    def applies(self, task: Task, language: str, rendered: RenderedTask) -> bool:
        return language in self.languages and bool(rendered.tests)

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        job = make_job([(t.name, t.code, t.timeout_s) for t in ctx.rendered.tests],
                       ctx.rendered.prelude, ctx.test_timeout_s(), self.self_report)
        steps = ["load", *(["prelude"] if ctx.rendered.prelude else []), *(t.name for t in ctx.rendered.tests)]
        server = self._servers.get(ctx.sandbox) if self.warm else None
        if server is not None:
            answer = server.request(server_request(ctx.code, job, ctx.limits.memory_mb),
                                    job["wall"] + SERVER_MARGIN_S)
            result = answer.get("result") if isinstance(answer, dict) else None
            if isinstance(answer, dict) and answer.get("restart") is not None:
                server.close()  # the sample left something: the next one gets a new sandbox
            if isinstance(result, dict) and "failed" not in result:
                return [self.measurement(result, steps, WARM)]
            server.close()  # it failed on this sample: the per-sample path measures it
        proc = ctx.sandbox.run(driver_argv(), files=driver_files(ctx.code, job),
                               limits=driver_limits(job, ctx.limits.memory_mb))
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
