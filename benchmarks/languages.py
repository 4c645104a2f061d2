"""What one sample costs in each of the nine languages, on the path a run takes today.

For every language, the golden solutions of the example workspace's tasks in that language (and
of its HumanEval-X excerpts, for Python and Java), ``--samples`` copies of each, go through the
language's own ``run_tests`` in the best sandbox, on ``--workers`` threads (one per core), as a
run's worker calls it: build or load, every test case, CPU and memory measured. Printed per
language: the wall time a sample (the run's throughput), the CPU time a sample (what it costs the
machine), how many samples passed (all should: they are golden solutions), and the count of test
cases. Usage::

    PYTHONPATH=src .venv/bin/python benchmarks/languages.py [--samples 3] [--repeats 1] [--only java,c]

These are the figures the fork-server work for every language is measured against: a change
that makes a language faster prints its new figure beside this one in the same run (see the
issue on fork-server speed for the targets). No figure here is asserted by a test.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from benchwright.config.model import ExecConfig, ModelSpec, Toggle
from benchwright.config.settings import Settings
from benchwright.lang.base import Language
from benchwright.registry import registry
from benchwright.run.plan import build_plan
from benchwright.run.worker import extract
from benchwright.sandbox.base import SandboxLimits
from benchwright.sandbox.select import best_sandbox
from benchwright.task.load import load_task_source
from benchwright.workspace.workspace import init_workspace

SOURCES: tuple[tuple[str, str], ...] = (
    ("python", "basics.yaml"), ("python", "humaneval-x-python.yaml"),
    ("java", "basics.yaml"), ("java", "humaneval-x-java.yaml"),
    ("c", "c.yaml"), ("cpp", "cpp.yaml"), ("go", "go.yaml"), ("rust", "rust.yaml"),
    ("javascript", "javascript.yaml"), ("typescript", "typescript.yaml"), ("bash", "bash.yaml"),
)
"""(language, the example workspace's task source) measured, in this order."""


@dataclass
class Figure:
    language: str
    source: str
    samples: int
    tests: int
    passed: int
    wall_s: list[float]
    cpu_s: list[float]


def children_cpu() -> float:
    """CPU seconds of this process and every child it has waited for (the sandboxes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def measure(ws: Path, language: str, source: str, samples: int, workers: int, repeats: int) -> Figure:
    config = ExecConfig(criteria=[Toggle(name="unit-test")], llms=[ModelSpec(id="reference")],
                        samples=samples, languages=[language])
    plan = build_plan(config, "bench", [load_task_source(ws / "tasks" / source)], Settings())
    lang = registry.create("language", language)
    assert isinstance(lang, Language)
    jobs = []
    for unit in plan.units:
        if unit.language != language or unit.golden is None:
            continue
        code = extract(unit, unit.golden, lang)
        assert code is not None, unit.task.name
        jobs.append((code, unit.rendered.tests, unit.rendered.prelude))
    sandbox = best_sandbox()
    limits = SandboxLimits(memory_mb=2048)

    def run(job: tuple[str, list, str | None]) -> bool:
        code, tests, prelude = job
        result = lang.run_tests(sandbox, code, tests, prelude=prelude, limits=limits, test_timeout_s=10.0)
        return bool(result.tests) and all(t.status == "pass" for t in result.tests)

    walls, cpus, passed = [], [], len(jobs)
    for _ in range(repeats):
        cpu0, start = children_cpu(), time.perf_counter()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            outcomes = list(pool.map(run, jobs))
        lang.close()  # a fork server or a warm compiler starts inside the timing again
        walls.append(time.perf_counter() - start)
        cpus.append(children_cpu() - cpu0)
        passed = min(passed, sum(outcomes))
    return Figure(language, source, len(jobs), sum(len(t) for _, t, _ in jobs), passed, walls, cpus)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=3, help="copies of each golden solution")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--only", default="", help="comma-separated languages (default: all nine)")
    args = parser.parse_args()
    ws = Path(tempfile.mkdtemp(prefix="bw-lang-bench-")) / "ws"
    init_workspace(ws)
    wanted = set(filter(None, args.only.split(",")))
    print(f"golden solutions x {args.samples}, unit-test with CPU and memory, {best_sandbox().name} sandbox, "
          f"{args.workers} workers, median of {args.repeats}; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs")
    print(f"  {'language':<11} {'task source':<24} {'samples':>7} {'tests':>6} {'passed':>7} "
          f"{'wall/sample':>12} {'CPU/sample':>11}")
    for language, source in SOURCES:
        if wanted and language not in wanted:
            continue
        f = measure(ws, language, source, args.samples, args.workers, args.repeats)
        if not f.samples:
            continue
        wall, cpu = statistics.median(f.wall_s), statistics.median(f.cpu_s)
        print(f"  {f.language:<11} {f.source:<24} {f.samples:>7} {f.tests:>6} {f.passed:>7} "
              f"{wall / f.samples * 1000:9.0f} ms {cpu / f.samples * 1000:8.0f} ms", flush=True)


if __name__ == "__main__":
    main()
