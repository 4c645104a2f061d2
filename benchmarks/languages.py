"""What one sample costs in each of the nine languages: the path a run takes, beside the
per-sample baseline (a fresh compiler and a fresh process for every sample) in the same run.

For every language, the golden solutions of the example workspace's tasks in that language (and
of HumanEval-X's first five tasks where it has the language: the example workspace's Python and
Java, the repository's test fixtures for C++, Go, Rust and JavaScript), ``--samples`` copies of
each, go through the
language's own ``run_tests`` in the best sandbox, on ``--workers`` threads (one per core), as a
run's worker calls it: build or load, every test case, CPU and memory measured. Printed per
language and path: the wall time a sample (the run's throughput), the machine's CPU time a sample
(every process of the machine, from ``/proc/stat``: servers that live across samples included,
so keep the machine otherwise idle), how many samples passed (all should: they are golden
solutions), the count of test cases, and the speed-up of the run's path over the baseline, with
whether every test case got the same verdict on both paths. Usage::

    PYTHONPATH=src .venv/bin/python benchmarks/languages.py [--samples 3] [--repeats 1] [--only java,c]

The baselines (a fresh compiler and process a sample): Python without its fork server (a fresh
interpreter a sample), Java without its javac server (``javac`` then ``java`` in one sandbox call
a sample), C and C++ compiling every sample (no kept program of an earlier sample; C++ also
without precompiled headers), Go with a cold build cache, a full link and no kept program, Rust
compiling its driver into every sample and every sample, TypeScript loading the compiler in
every sample's node. JavaScript and Bash have one path only, printed once. The "distinct" rows make every copy
differ by a comment line at its end, so that no cache of an earlier compile answers. Warm servers start inside the timing (``close()`` after each repeat). No
figure here is asserted by a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from benchwright.config.model import ExecConfig, ModelSpec, Toggle
from benchwright.config.settings import Settings
from benchwright.lang.base import Language
from benchwright.lang.c import CLanguage, CppLanguage
from benchwright.lang.golang import GoLanguage
from benchwright.lang.java import JavaLanguage
from benchwright.lang.javascript import TypeScriptLanguage
from benchwright.lang.python import PythonLanguage
from benchwright.lang.rust import RustLanguage
from benchwright.registry import registry
from benchwright.run.plan import build_plan, execution_order
from benchwright.run.worker import extract
from benchwright.sandbox.base import SandboxLimits
from benchwright.sandbox.select import best_sandbox
from benchwright.task.load import load_task_source
from benchwright.workspace.workspace import init_workspace

SOURCES: tuple[tuple[str, str], ...] = (
    ("python", "basics.yaml"), ("python", "humaneval-x-python.yaml"),
    ("java", "basics.yaml"), ("java", "humaneval-x-java.yaml"),
    ("c", "c.yaml"), ("cpp", "cpp.yaml"), ("cpp", "humaneval-x-cpp.yaml"), ("go", "go.yaml"),
    ("go", "humaneval-x-go.yaml"), ("rust", "rust.yaml"), ("rust", "humaneval-x-rust.yaml"),
    ("javascript", "javascript.yaml"), ("javascript", "humaneval-x-js.yaml"),
    ("typescript", "typescript.yaml"), ("bash", "bash.yaml"),
)
"""(language, the example workspace's task source) measured, in this order."""

IMPORTED = {"cpp": "cpp", "go": "go", "rust": "rust", "js": "javascript"}
"""HumanEval-X's first five tasks of these languages (the repository's test fixtures,
``tests/fixtures/humaneval-x``), imported into the benchmark's workspace as
``humaneval-x-<name>.yaml`` with ``benchwright import humaneval-x`` (the example workspace
ships only Python's and Java's)."""
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "humaneval-x"

BASELINES = {
    "python": lambda: PythonLanguage(fork_server=False),
    "java": lambda: JavaLanguage(compile_server=False),
    "c": lambda: CLanguage(build_cache=False),
    "cpp": lambda: CppLanguage(precompiled_headers=False, build_cache=False),
    "go": lambda: GoLanguage(warm_cache=False, build_cache=False),
    "rust": lambda: RustLanguage(driver_crate=False, build_cache=False),
    "typescript": lambda: TypeScriptLanguage(warm_transpiler=False),
}
"""The per-sample path of each language that has a faster one."""

COMMENTS = {"python": "#", "java": "//", "c": "//", "cpp": "//", "go": "//", "rust": "//",
            "javascript": "//", "typescript": "//", "bash": "#"}
"""How to make a copy of a sample differ from the others (a comment line): the "distinct" rows
measure samples that no cache of an earlier compile can answer."""


@dataclass
class Figure:
    language: str
    source: str
    samples: int
    tests: int
    passed: int
    wall_s: list[float]
    cpu_s: list[float]
    verdicts: list[tuple[str, ...]]
    """Every test case's status, sample by sample (the last repeat)."""


def machine_cpu() -> float:
    """CPU seconds the whole machine has spent busy (``/proc/stat``: user, nice, system, irq,
    softirq, steal), summed over its cores."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def measure(ws: Path, language: str, source: str, samples: int, workers: int, repeats: int,
            lang: Language, distinct: bool = False) -> Figure:
    config = ExecConfig(criteria=[Toggle(name="unit-test")], llms=[ModelSpec(id="reference")],
                        samples=samples, languages=[language])
    plan = build_plan(config, "bench", [load_task_source(ws / "tasks" / source)], Settings())
    jobs = []
    for unit in execution_order(plan.units):  # the order a run takes them in
        if unit.language != language or unit.golden is None:
            continue
        code = extract(unit, unit.golden, lang)
        assert code is not None, unit.task.name
        if distinct:
            code += f"{COMMENTS[language]} copy {unit.sample}\n"
        jobs.append((code, unit.rendered.tests, unit.rendered.prelude))
    sandbox = best_sandbox()
    limits = SandboxLimits(memory_mb=2048)

    def run(job: tuple[str, list, str | None]) -> tuple[str, ...]:
        code, tests, prelude = job
        result = lang.run_tests(sandbox, code, tests, prelude=prelude, limits=limits, test_timeout_s=10.0)
        return tuple(t.status for t in result.tests)

    walls, cpus, passed, verdicts = [], [], len(jobs), []
    for _ in range(repeats):
        cpu0, start = machine_cpu(), time.perf_counter()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            verdicts = list(pool.map(run, jobs))
        lang.close()  # a fork server or a warm compiler starts inside the timing again
        walls.append(time.perf_counter() - start)
        cpus.append(machine_cpu() - cpu0)
        passed = min(passed, sum(bool(v) and all(s == "pass" for s in v) for v in verdicts))
    return Figure(language, source, len(jobs), sum(len(t) for _, t, _ in jobs), passed, walls, cpus,
                  verdicts)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=3, help="copies of each golden solution")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--only", default="", help="comma-separated languages (default: all nine)")
    args = parser.parse_args()
    ws = Path(tempfile.mkdtemp(prefix="bw-lang-bench-")) / "ws"
    init_workspace(ws)
    for name, language in IMPORTED.items():
        subprocess.run([sys.executable, "-m", "benchwright", "import", "humaneval-x", "--language", language,
                        "--data", str(FIXTURES / f"humaneval_{name}_first5.jsonl"),
                        "--out", str(ws / "tasks" / f"humaneval-x-{name}.yaml")],
                       check=True, capture_output=True)
    wanted = set(filter(None, args.only.split(",")))
    print(f"golden solutions x {args.samples}, unit-test with CPU and memory, {best_sandbox().name} sandbox, "
          f"{args.workers} workers, median of {args.repeats}; load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs")
    print(f"  {'language':<11} {'task source':<24} {'path':<10} {'samples':>7} {'tests':>6} {'passed':>7} "
          f"{'wall/sample':>12} {'CPU/sample':>11} {'speed-up (wall, CPU)':>21}")
    for language, source in SOURCES:
        if wanted and language not in wanted:
            continue
        paths: list[tuple[str, Language, bool]] = []
        if language in BASELINES:
            paths.append(("per-sample", BASELINES[language](), False))
        run_path = registry.create("language", language)
        assert isinstance(run_path, Language)
        paths.append(("run" if paths else "run (only)", run_path, False))
        if language in BASELINES:
            paths.append(("distinct", run_path, True))
        figures = [(name, measure(ws, language, source, args.samples, args.workers, args.repeats, lang,
                                  distinct)) for name, lang, distinct in paths]
        base = figures[0][1]
        for name, f in figures:
            if not f.samples:
                continue
            wall, cpu = statistics.median(f.wall_s), statistics.median(f.cpu_s)
            ratio = ""
            if f is not base:
                same = "same verdicts" if f.verdicts == base.verdicts else "VERDICTS DIFFER"
                if name == "distinct":
                    same += ", no sample a copy of another"
                ratio = (f"{statistics.median(base.wall_s) / wall:5.1f}x {statistics.median(base.cpu_s) / cpu:5.1f}x"
                         f"  {same}")
            print(f"  {f.language:<11} {f.source:<24} {name:<10} {f.samples:>7} {f.tests:>6} {f.passed:>7} "
                  f"{wall / f.samples * 1000:9.0f} ms {cpu / f.samples * 1000:8.0f} ms  {ratio}", flush=True)


if __name__ == "__main__":
    main()
