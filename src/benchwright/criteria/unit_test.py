"""``unit-test``: every test case on its own, then the sample's success."""

from __future__ import annotations

from benchwright.criteria.base import Criterion, Measurement, SampleContext
from benchwright.task.model import Task
from benchwright.task.render import RenderedTask


class UnitTest(Criterion):
    """Runs each public and hidden test case: pass/fail/error/timeout, message, line, code.

    A sample that no test case applies to is still compiled or loaded: ``error`` when that
    fails, else ``untested`` (a record with verdict ``n/a``, never a pass). A sample that needed
    what the sandbox cannot offer (an npm package: ``ExecutionResult.unsupported``) keeps its
    test records, and its last record says so (verdict ``n/a``, ``details.unsupported``)."""

    name = "unit-test"
    unit = "success"
    executes = True

    def applies(self, task: Task, language: str, rendered: RenderedTask) -> bool:
        return True  # with no test case the solution is still compiled or loaded (the sample is untested)

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        result = ctx.execution()
        out: list[Measurement] = []
        for t in result.tests:
            details: dict[str, object] = {"judged": t.judged} if t.judged else {}
            if t.suspicious:  # a pass that looks forged (see TestOutcome.suspicious)
                details["suspicious"] = t.suspicious
            spec = next((s for s in ctx.rendered.tests if s.name == t.name), None)
            if spec is not None and spec.unsplit:  # a whole test program: says why it is one case
                details["unsplit"] = spec.unsplit
            limit = ctx.limit_of(t)
            if limit is not None:  # which limit struck, for the summary's list of timed-out samples
                details["limit"], details["limit_s"] = limit
            out.append(Measurement(
                score=1.0 if t.status == "pass" else 0.0,
                unit=self.unit,
                verdict="pass" if t.status == "pass" else "fail",
                required=True,
                output=t.output or None,
                error=t.message,
                time_ms=t.time_ms,
                test_case=t.name,
                code=t.code,
                status=t.status,
                line=t.line,
                hidden=None if spec is None else spec.hidden,
                details=details or None,
            ))
        passed = sum(t.status == "pass" for t in result.tests)
        total = len(result.tests)
        counts: dict[str, int] = {}
        for t in result.tests:
            counts[t.status] = counts.get(t.status, 0) + 1
        if total == 0 and result.build_error is None:
            out.append(Measurement(
                score=None, unit=self.unit, verdict="n/a", required=True,
                output=f"untested: no test case applies to {ctx.language}",
                time_ms=result.process.wall_ms if result.process else None,
                details={"passed": 0, "total": 0, "statuses": {}, "build_error": False, "untested": True},
            ))
            return out
        all_pass = total > 0 and passed == total
        if result.unsupported:  # the sandbox lacks what the code needs: not the model's failure
            out.append(Measurement(
                score=None, unit=self.unit, verdict="n/a", required=True,
                output=f"{passed}/{total} test cases passed",
                error=f"unsupported: {result.unsupported}",
                time_ms=result.process.wall_ms if result.process else None,
                details={"passed": passed, "total": total, "statuses": counts,
                         "build_error": result.build_error is not None,
                         "unsupported": result.unsupported},
            ))
            return out
        out.append(Measurement(
            score=1.0 if all_pass else 0.0,
            unit=self.unit,
            verdict="pass" if all_pass else "fail",
            required=True,
            output=f"{passed}/{total} test cases passed",
            error=result.build_error,
            time_ms=result.process.wall_ms if result.process else None,
            details={"passed": passed, "total": total, "statuses": counts,
                     "build_error": result.build_error is not None,
                     **({"suspicious": [t.name for t in result.tests if t.suspicious]}
                        if any(t.suspicious for t in result.tests) else {})},
        ))
        return out



CRITERIA = (UnitTest,)
