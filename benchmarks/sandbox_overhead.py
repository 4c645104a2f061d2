"""What each sandbox backend adds per sample: medians over N runs, one after another.

Three workloads per backend available here:

* ``true``: the bare cost of the backend (namespaces, mounts, its PID 1);
* ``python -I -S -c pass``: plus an interpreter start (the interpreter the backend offers:
  the harness's venv Python for rlimit, ``/usr/bin/python3`` for the isolating backends);
* ``python sample``: a trivial Python sample with one test case through the Python language
  plug-in, as a run executes it (runner, judge and sample processes, the JSON job on stdin).

``rlimit+sys`` is the rlimit backend with ``/usr/bin/python3``: the difference between it and
bwrap/unshare is the sandbox alone. Backends and workloads take turns (round robin).

Usage::

    .venv/bin/python benchmarks/sandbox_overhead.py [--runs 50]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

from benchwright.lang.base import TestSpec
from benchwright.lang.python import PythonLanguage
from benchwright.registry import registry
from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.sandbox.isolated import SYSTEM_PYTHON
from benchwright.sandbox.rlimit import RlimitSandbox
from benchwright.sandbox.select import PREFERENCE, availability

SOLUTION = "def add(a, b):\n    return a + b\n"
TESTS = [TestSpec("t", "assert add(1, 2) == 3")]


class SystemPythonRlimit(RlimitSandbox):
    """rlimit with the isolating backends' interpreter: separates the sandbox's cost from the
    interpreter's (the venv's pyenv build and Debian's 3.11 do not start equally fast)."""

    name = "rlimit+sys"

    @property
    def python(self) -> str:
        return SYSTEM_PYTHON


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    lang = PythonLanguage()
    limits = SandboxLimits(wall_s=30)
    backends: list[Sandbox] = []
    for name in PREFERENCE:
        why = availability(name)
        if why is not None:
            print(f"{name}: not available ({why})")
            continue
        backends.append(registry.create("sandbox", name))
    if os.access(SYSTEM_PYTHON, os.X_OK):
        backends.append(SystemPythonRlimit())

    def workloads(sb: Sandbox) -> list[Callable[[], object]]:
        def true() -> object:
            return sb.run(["true"], files={}, limits=limits)

        def bare() -> object:
            return sb.run([sb.python, "-I", "-S", "-c", "pass"], files={}, limits=limits)

        def sample() -> object:
            result = lang.run_tests(sb, SOLUTION, TESTS, prelude=None, limits=limits,
                                    test_timeout_s=5)
            assert result.tests[0].status == "pass", result.tests
            return result

        return [true, bare, sample]

    jobs = {sb.name: workloads(sb) for sb in backends}
    times: dict[str, list[list[float]]] = {name: [[], [], []] for name in jobs}
    for fns in jobs.values():  # warm the page cache
        for fn in fns:
            fn()
    for _ in range(args.runs):  # round robin, so that drift in the machine's load hits all alike
        for name, fns in jobs.items():
            for i, fn in enumerate(fns):
                start = time.perf_counter()
                fn()
                times[name][i].append((time.perf_counter() - start) * 1000)
    med = {name: [statistics.median(t) for t in ts] for name, ts in times.items()}
    base = med.get("rlimit")
    print(f"medians of {args.runs} runs each, ms (in brackets: added over rlimit)")
    print(f"{'backend':<12}{'python':<18}{'true':>14}{'python -c pass':>18}{'python sample':>18}")
    for sb in backends:
        cells = []
        for i, value in enumerate(med[sb.name]):
            extra = f" ({value - base[i]:+.1f})" if base is not None and sb.name != "rlimit" else ""
            cells.append(f"{value:.1f}{extra}")
        print(f"{sb.name:<12}{sb.python:<18}{cells[0]:>14}{cells[1]:>18}{cells[2]:>18}")


if __name__ == "__main__":
    main()
