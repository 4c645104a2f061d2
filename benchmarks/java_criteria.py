"""What Java's quality criteria cost a sample: each criterion's run path (a warm JVM per worker
where it has one) beside its per-sample baseline (the command line, a JVM a sample), measured in
the same invocation on the same samples.

The samples are the golden solutions of the example workspace's Java tasks (``basics.yaml`` and
its HumanEval-X excerpt), ``--samples`` copies of each, evaluated by each criterion on
``--workers`` threads (one per core) in the best sandbox, as a run's workers call it. Printed per
criterion and path: the wall time a sample, the machine's CPU time a sample (every process, from
``/proc/stat``: keep the machine otherwise idle), and the speed-up over the baseline, with whether
every sample got the same score, findings and output on both paths. Warm servers start inside
the timing. Usage::

    PYTHONPATH=src .venv/bin/python benchmarks/java_criteria.py [--samples 4] [--only java-pmd]

No figure here is asserted by a test.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from languages import machine_cpu  # this folder is the script's: on sys.path

from benchwright.config.model import ExecConfig, Limits, ModelSpec, Toggle
from benchwright.config.settings import Settings
from benchwright.criteria.base import Criterion, SampleContext
from benchwright.criteria.java_analysis import JavaCheckstyle, JavaPmd
from benchwright.criteria.java_coverage import JavaJacoco
from benchwright.lang.java import JavaLanguage
from benchwright.results.record import Generation
from benchwright.run.plan import build_plan
from benchwright.run.worker import extract
from benchwright.sandbox.select import best_sandbox
from benchwright.task.load import load_task_source
from benchwright.workspace.workspace import init_workspace

SOURCES = ("basics.yaml", "humaneval-x-java.yaml")
PATHS: dict[str, list[tuple[str, Callable[[], Criterion]]]] = {
    "java-checkstyle": [("per-sample", lambda: JavaCheckstyle(warm=False)), ("run", JavaCheckstyle)],
    "java-pmd": [("per-sample", lambda: JavaPmd(warm=False)), ("run", JavaPmd)],
    "java-jacoco": [("per-sample", lambda: JavaJacoco(warm=False)), ("run", JavaJacoco)],
}
"""Each criterion's paths, the per-sample baseline first."""


def contexts(ws: Path, samples: int) -> list[Callable[[], SampleContext]]:
    """A fresh context per sample (a criterion may keep what it worked out in one)."""
    lang = JavaLanguage()
    config = ExecConfig(criteria=[Toggle(name="unit-test")], llms=[ModelSpec(id="reference")],
                        samples=samples, languages=["java"])
    sources = [load_task_source(ws / "tasks" / s) for s in SOURCES]
    plan = build_plan(config, "bench", sources, Settings())
    sandbox = best_sandbox()
    out = []
    for unit in plan.units:
        if unit.language != "java" or unit.golden is None:
            continue
        code = extract(unit, unit.golden, lang)
        assert code is not None, unit.task.name

        def make(unit: Any = unit, code: str = code) -> SampleContext:
            gen = Generation(run_id="bench", execution_id="e", task_source="s", task=unit.task.name,
                             language="java", model="reference", provider="reference",
                             sample=unit.sample, code=code)
            return SampleContext(task=unit.task, language="java", rendered=unit.rendered, generation=gen,
                                 code=code, lang=lang, sandbox=sandbox, limits=Limits())

        out.append(make)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=4, help="copies of each golden solution")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--only", default="", help="comma-separated criteria (default: all three)")
    args = parser.parse_args()
    ws = Path(tempfile.mkdtemp(prefix="bw-java-criteria-")) / "ws"
    init_workspace(ws)
    jobs = contexts(ws, args.samples)
    wanted = set(filter(None, args.only.split(",")))
    print(f"Java golden solutions ({', '.join(SOURCES)}) x {args.samples}: {len(jobs)} samples, "
          f"{best_sandbox().name} sandbox, {args.workers} workers; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"  {'criterion':<16} {'path':<11} {'wall/sample':>12} {'CPU/sample':>11}  speed-up (wall, CPU)")
    for name, paths in PATHS.items():
        if wanted and name not in wanted:
            continue
        base: tuple[float, float, list[Any]] | None = None
        for path, make in paths:
            criterion = make()

            def one(job: Callable[[], SampleContext], criterion: Criterion = criterion) -> Any:
                [m] = criterion.evaluate(job())
                return (m.score, m.verdict, m.output, m.details.get("findings"))

            cpu0, start = machine_cpu(), time.perf_counter()
            with ThreadPoolExecutor(max_workers=args.workers) as pool:
                results = list(pool.map(one, jobs))
            criterion.close()
            wall, cpu = time.perf_counter() - start, machine_cpu() - cpu0
            ratio = ""
            if base is not None:
                same = "same measurements" if results == base[2] else "MEASUREMENTS DIFFER"
                ratio = f"{base[0] / wall:5.1f}x {base[1] / cpu:5.1f}x  {same}"
            else:
                base = (wall, cpu, results)
            print(f"  {name:<16} {path:<11} {wall / len(jobs) * 1000:9.0f} ms {cpu / len(jobs) * 1000:8.0f} ms  "
                  f"{ratio}", flush=True)


if __name__ == "__main__":
    main()
