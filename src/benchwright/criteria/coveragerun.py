"""How ``python-coverage`` measures, apart from what it makes of it: the functions that run in
the sandbox, and the two ways to run them.

* **Per sample**: :func:`cover_driver` (a trusted process) runs :func:`cover_tests` under
  ``coverage run`` in a second interpreter, then :func:`collect` on what it left; the driver
  prints one JSON object (:func:`driver_argv`, :func:`driver_files`).
* **Warm** (:mod:`.coverageserver`): one server per executor thread imports coverage.py once and
  forks the instrumented process for each sample; the same two functions measure
  (:func:`server_argv`, and :func:`server_request` for each sample).

This module needs only the standard library and the sandbox, so that tests can drive both ways
from an interpreter without the harness's dependencies.
"""

from __future__ import annotations

import functools
import inspect
import json
import textwrap
from importlib import resources
from typing import Any

from benchwright.lang.pyserver import RUNNER, SCRATCH
from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.toolbox import tools_python

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


def cover_tests(cov: Any = None) -> None:  # pragma: no cover  (runs in the sandbox, under coverage)
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


def cover_driver() -> None:  # pragma: no cover  (runs in the sandbox)
    """The trusted process: check that the solution compiles, run :func:`cover_tests` under
    coverage with a time limit, then print one JSON object: the report of ``solution.py``,
    the steps and how the instrumented process ended (see :func:`collect`)."""
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
    print(json.dumps(collect(out, job)))


def collect(out: dict[str, Any], job: dict[str, Any]) -> dict[str, Any]:  # pragma: no cover  (in the sandbox)
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


def make_job(tests: list[tuple[str, str, float | None]], prelude: str | None, ceiling: float,
             self_report: bool = True) -> dict[str, Any]:
    """The job of one sample: ``tests`` as (name, code, own time limit or None), ``prelude``,
    ``ceiling`` the time limit of a test without its own. Every limit is :data:`SLOWDOWN` times
    longer under coverage; ``wall`` bounds the whole instrumented run."""
    limits = [(timeout or ceiling) * SLOWDOWN for _, _, timeout in tests]
    load = ceiling * SLOWDOWN
    wall = min(MAX_WALL_S, load * (2 if prelude else 1) + sum(limit + 0.5 for limit in limits) + 5)
    return {"tests": [{"name": name, "code": code, "timeout": limit}
                      for (name, code, _), limit in zip(tests, limits, strict=True)],
            "prelude": prelude, "load_timeout": load, "wall": wall, "self_report": self_report}


def driver_argv() -> list[str]:
    """The per-sample driver's command line (in a folder of :func:`driver_files`)."""
    return [str(tools_python()), "-I", "bw_driver.py"]


def driver_files(code: str, job: dict[str, Any]) -> dict[str, bytes]:
    """The per-sample driver's folder."""
    return {SOLUTION: code.encode(), "bw_job.json": json.dumps(job).encode(),
            "bw_coverage.ini": RCFILE.encode(), "bw_driver.py": _script("collect", "cover_driver"),
            "bw_tests.py": _script("cover_tests")}


def driver_limits(job: dict[str, Any], memory_mb: int) -> SandboxLimits:
    """The per-sample driver's limits."""
    return SandboxLimits(wall_s=job["wall"] + DRIVER_MARGIN_S, memory_mb=memory_mb,
                         output_bytes=4 * 1024 * 1024, file_size_mb=64, processes=64)


def server_argv(sandbox: Sandbox) -> list[str]:
    """The warm server's command line: the program is this module's functions followed by
    :mod:`.coverageserver`; the Python fork server's runner and the configuration follow."""
    program = (_sources("cover_tests", "collect") + "\n\n"
               + resources.files("benchwright.criteria").joinpath("coverageserver.py").read_text())
    isolated = "hidden-tmp" in sandbox.guarantees
    config = {"scratch": list(SCRATCH) if isolated else [], "isolated": isolated, "rcfile": RCFILE}
    return [str(tools_python()), "-I", "-c", program, RUNNER.decode(), json.dumps(config)]


def server_request(code: str, job: dict[str, Any], memory_mb: int) -> dict[str, Any]:
    """The fields of one sample's request to the warm server."""
    return {"code": code, "job": {**job, "rcfile": RCFILE, "memory_mb": memory_mb}}
