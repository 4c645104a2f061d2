"""The result protocol shared by the test drivers that run inside the sandbox.

A driver writes one line per event to a channel the harness reads (its stdout, or a pipe the
solution cannot reach), each ``BWR `` followed by one JSON object:

* first ``{"build": "ok"|"error"|"timeout", "message": ..., "line": ..., "output": ...}``: whether
  the solution compiled and loaded (``line`` in the solution's code, 1-based);
* then, per test case ``i`` (0-based, in the order given), ``{"i": i, "status":
  "pass"|"fail"|"error"|"timeout"|"not_run", "message": ..., "line": ..., "time_ms": ...,
  "output": ...}``; optional ``"judged"`` and ``"details"``;
* last ``{"done": true, "cpu_ms": ..., "max_rss_bytes": ...}``: the sample's own usage.

:func:`collect` turns those lines and the process result into an :class:`ExecutionResult`:
a test case with no line of its own is ``timeout`` (the process was killed for time) or
``error`` (it ended first) -- never a pass.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from benchwright.lang.base import ExecutionResult, TestOutcome, TestSpec, TestStatus
from benchwright.sandbox.base import ProcessResult

PREFIX = "BWR "
STATUSES: frozenset[str] = frozenset({"pass", "fail", "error", "timeout", "not_run"})


def parse_lines(data: bytes | str, prefix: str = PREFIX) -> list[dict[str, Any]]:
    """Every protocol record in ``data``, in order; stops at a line cut short by a kill."""
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    records: list[dict[str, Any]] = []
    for raw in text.splitlines():
        if not raw.startswith(prefix):
            continue
        try:
            rec = json.loads(raw[len(prefix):])
        except json.JSONDecodeError:
            break  # cut by a kill; what follows is unknown
        if isinstance(rec, dict):
            records.append(rec)
    return records


def death(proc: ProcessResult | None) -> str:
    """Why a process ended, for messages."""
    if proc is None:
        return "the process ended"
    if proc.timed_out:
        return "the process timed out"
    if proc.signal is not None:
        return f"the process was killed by signal {proc.signal}"
    return f"the process ended (exit {proc.exit_code})"


def all_tests(
    tests: list[TestSpec], code: Callable[[int], str], status: TestStatus, message: str,
    proc: ProcessResult | None, *, build_error: str, line: int | None = None, output: str = "",
    extra: dict[str, object] | None = None,
) -> ExecutionResult:
    """Every test case with the same status: the solution did not build or load."""
    outcomes = [
        TestOutcome(t.name, status, message, line, code(i), None, output=output if i == 0 else "")
        for i, t in enumerate(tests)
    ]
    return ExecutionResult(outcomes, proc, build_error=build_error, extra=extra or {})


def collect(
    tests: list[TestSpec],
    records: list[dict[str, Any]],
    proc: ProcessResult | None,
    code: Callable[[int], str],
    *,
    timed_out: bool | None = None,
    line_of: Callable[[int, int | None], int | None] | None = None,
) -> ExecutionResult:
    """The outcome of every test case from a driver's records (see the module's doc).

    ``code(i)``: the exact code executed for test ``i`` (what its ``line`` refers to);
    ``line_of(i, line)``: maps a line the driver reported to that code (default: as is);
    ``timed_out``: the sample was stopped for time (default: ``proc.timed_out``).
    """
    killed = proc.timed_out if timed_out is None and proc is not None else bool(timed_out)
    if not records:
        if killed:
            return all_tests(tests, code, "timeout", "the process timed out before any test ran",
                             proc, build_error="timeout while loading the solution")
        why = f"{death(proc)} before reporting"
        return all_tests(tests, code, "error", why, proc, build_error=why)
    head = records[0]
    if head.get("build") != "ok":
        status: TestStatus = "timeout" if head.get("build") == "timeout" else "error"
        msg = str(head.get("message") or "the solution did not build")
        return all_tests(tests, code, status, msg, proc, build_error=msg,
                         line=_int(head.get("line")), output=str(head.get("output") or ""))
    load_output = str(head.get("output") or "")
    by_index: dict[int, dict[str, Any]] = {}
    for rec in records[1:]:
        index = rec.get("i")
        if isinstance(index, int) and index not in by_index:
            by_index[index] = rec  # the first word on a test counts; later lines cannot overturn it
    outcomes: list[TestOutcome] = []
    for i, t in enumerate(tests):
        r = by_index.get(i)
        if r is None or r.get("status") not in STATUSES:
            missing: TestStatus = "timeout" if killed else "error"
            msg = (death(proc) if killed else f"{death(proc)} before this test reported")
            outcomes.append(TestOutcome(t.name, missing, msg, None, code(i), None,
                                        output=load_output if i == 0 else ""))
            continue
        line = _int(r.get("line"))
        if line_of is not None:
            line = line_of(i, line)
        outcomes.append(TestOutcome(
            name=t.name, status=r["status"], message=_opt_str(r.get("message")), line=line,
            code=code(i), time_ms=_num(r.get("time_ms")),
            output=(load_output if i == 0 else "") + str(r.get("output") or ""),
            judged=_opt_str(r.get("judged")), suspicious=_opt_str(r.get("suspicious")),
        ))
    done = next((r for r in records if r.get("done")), None)
    extra: dict[str, object] = {}
    if done is not None:
        for key in ("cpu_ms", "max_rss_bytes"):
            value = done.get(key)
            if _num(value) is not None:
                extra[key] = value
    suspicious = {i: r["suspicious"] for i, r in by_index.items() if r.get("suspicious")}
    if suspicious:
        extra["suspicious"] = {tests[i].name: why for i, why in suspicious.items() if i < len(tests)}
    return ExecutionResult(outcomes, proc, extra=extra)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _num(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _opt_str(value: object) -> str | None:
    return None if value is None else str(value)
