"""Every Python criterion on HumanEval: the wall time of one whole run and each criterion's share.

The 164 HumanEval tasks, answered by the ``reference`` model (the canonical solutions), with every
registered criterion that applies to Python enabled; the LLM-judge criteria ask a judge served by
a loopback OpenAI-compatible server (benchwright's test server: real HTTP, an instant fixed
answer), so no API key is needed and the judge's own latency is not what is measured. The named
baseline is the same run with ``unit-test`` only. Usage::

    .venv/bin/python benchmarks/criteria.py [--limit N] [--workers N]

Prints the wall time of both runs and their ratio, and per criterion the summed time of its
sample records (``time_ms``) and that sum's share of all criteria's (criteria run on every core
at once, so the shares split the run's busy time, not its wall time).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from benchwright.criteria.base import Criterion
from benchwright.registry import registry
from benchwright.testing import OpenAIServer, Reply

BIN = Path(sys.executable).parent / "benchwright"
JUDGE = "solution_correctness: 8\ncode_quality: 7\ncomment_quality: 5\nstyle_quality: 7\nexplanation: ok\n"


def python_criteria() -> list[str]:
    """Every registered criterion for Python, ``unit-test`` first (the sample's tests run once,
    for whichever criterion asks first: so their time is charged to ``unit-test``)."""
    out = ["unit-test"]
    for name in registry.names("criterion"):
        c: Criterion = registry.create("criterion", name)
        if (not c.languages or "python" in c.languages) and name not in out:
            out.append(name)
    return out


def run(ws: Path, config: str, criteria: list[str], workers: int | None) -> float:
    limits = f"limits: {{concurrency: {workers}}}\n" if workers else ""
    (ws / "configs" / f"{config}.yaml").write_text(
        "version: 1\ntask_sources: [tasks/he.yaml]\n"
        f"criteria: [{', '.join(criteria)}]\nllm-judge: judge/judge-1\nllms: [reference]\n{limits}")
    start = time.perf_counter()
    proc = subprocess.run([str(BIN), "run", f"configs/{config}.yaml", "--run-id", config], cwd=ws,
                          capture_output=True, text=True, env={**os.environ, "BW_JUDGE_KEY": "sk-local"})
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"benchwright run failed:\n{proc.stdout}\n{proc.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None, help="the first N HumanEval tasks (all: 164)")
    parser.add_argument("--workers", type=int, default=None, help="limits.concurrency (default: the cores)")
    args = parser.parse_args()
    ws = Path(tempfile.mkdtemp(prefix="bw-criteria-")) / "ws"
    (ws / "configs").mkdir(parents=True)
    limit = ["--limit", str(args.limit)] if args.limit else []
    subprocess.run([str(BIN), "import", "humaneval", *limit, "--out", str(ws / "tasks" / "he.yaml")],
                   check=True, capture_output=True)
    criteria = python_criteria()
    with OpenAIServer(answer=lambda body: Reply.answer(JUDGE, usage=(400, 40))) as judge:
        (ws / "benchwright.yaml").write_text(
            f"version: 1\nproviders:\n  judge:\n    type: openai-compatible\n    base_url: {judge.base_url}\n"
            "    api_key_env: BW_JUDGE_KEY\n    concurrency: 8\n")
        base = run(ws, "unit-test-only", ["unit-test"], args.workers)
        every = run(ws, "every-criterion", criteria, args.workers)
    spent: dict[str, float] = defaultdict(float)
    counted: dict[str, int] = defaultdict(int)
    outcomes: dict[str, int] = defaultdict(int)
    seen = set()
    with (ws / "results" / "every-criterion" / "records.jsonl").open() as f:
        for line in f:
            r = json.loads(line)
            if r["execution_id"] not in seen:
                seen.add(r["execution_id"])
                outcomes[r["outcome"]] += 1
            if r["test_case"] is None and r["time_ms"] is not None:
                spent[r["criterion"]] += r["time_ms"]
                counted[r["criterion"]] += 1
    total = sum(spent.values())
    n = len(seen)
    print(f"HumanEval, {n} samples (reference model), {len(criteria)} criteria: {', '.join(criteria)}")
    print(f"  outcomes: {dict(outcomes)}")
    print(f"  unit-test only (baseline): {base:7.1f} s wall")
    print(f"  every Python criterion:    {every:7.1f} s wall  ({every / base:.1f}x the baseline, "
          f"{every / n * 1000:.0f} ms a sample)")
    print(f"  {'criterion':34} {'summed time':>12} {'share':>7} {'per sample':>11}")
    for name, ms in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"  {name:34} {ms / 1000:10.1f} s {ms / total * 100:6.1f} % {ms / counted[name]:8.1f} ms")
    print(f"  results: {ws / 'results'}")


if __name__ == "__main__":
    main()
