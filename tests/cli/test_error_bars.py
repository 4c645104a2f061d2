"""Every figure carries its uncertainty, through the real CLI: a small benchmark answered by the
reference model (the golden solution), some of whose golden solutions are wrong, run with
several samples a task; then ``report`` in every format, ``export --format json`` and
``compare``."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from tests.conftest import Runner

RIGHT = "def f(x):\n    return x + 1\n"
WRONG = "def f(x):\n    return x\n"


def _source(path: Path, wrong: set[int], tasks: int) -> Path:
    """``tasks`` tasks named t0, t1, ... (one source, ``bench``); those in ``wrong`` have a
    golden solution that fails its test."""
    doc = {"version": 1, "name": "bench", "tasks": [{
        "name": f"t{i}", "difficulty": "easy", "languages": ["python"],
        "task": {"common_prompt": "Write f(x) returning x + 1.",
                 "languages_specific": {"python": {"public_tests": [{"code": "assert f(1) == 2\n"}]}}},
        "golden_solution": {"python": WRONG if i in wrong else RIGHT},
    } for i in range(tasks)]}
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        YAML().dump(doc, f)
    return path


def _run(bw: Runner, ws: Path, run_id: str, wrong: set[int], tasks: int, samples: int) -> dict[str, Any]:
    source = _source(ws / "tasks" / f"{run_id}.yaml", wrong, tasks)
    (ws / "configs").mkdir(parents=True, exist_ok=True)
    config = ws / "configs" / f"{run_id}.yaml"
    config.write_text(f"version: 1\ntask_sources: [{source}]\ncriteria: [unit-test]\nllms: [reference]\n"
                      f"samples: {samples}\n")
    proc = bw("run", f"configs/{run_id}.yaml", "--run-id", run_id, cwd=ws)
    assert proc.returncode in (0, 1), proc.stderr  # 1: a threshold or a test failed
    summary = YAML(typ="safe").load((ws / "results" / run_id / "summary.yaml").read_text())
    assert isinstance(summary, dict)
    return summary


def test_summary_report_and_export_carry_standard_errors_and_intervals(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    summary = _run(bw, ws, "mixed", wrong={1, 4}, tasks=6, samples=2)
    ref = summary["by_model"]["reference"]
    ut = ref["criteria"]["unit-test"]
    assert ut["mean"] == 4 / 6 and ut["n"] == 12  # every existing key is still there
    # every task's two samples agree: the clustered SE is that of the six task means
    assert abs(ut["se"] - ((4 / 6) * (2 / 6) / 5) ** 0.5) < 1e-9
    assert ut["ci_method"] == "wilson-clustered" and 0 < ut["ci95"][0] < 4 / 6 < ut["ci95"][1] < 1
    assert ref["pass_rate"]["mean"] == 4 / 6 and ref["pass_rate"]["tasks"] == 6
    assert ref["pass_at_k_ci"]["pass@1"]["ci_method"] == "bootstrap-tasks"
    assert [t["delta"] for t in ref["power"]["tasks_needed"]] == [0.05, 0.10]

    md = bw("report", "mixed", "--format", "markdown", cwd=ws).stdout
    assert "| unit-test ± SE [95 % CI] |" in md and "wilson-clustered for unit-test" in md
    rows = {r[0]: r for r in csv.reader(io.StringIO(bw("report", "mixed", "--format", "csv", cwd=ws).stdout))}
    assert abs(float(rows["unit-test[se]"][2]) - ut["se"]) < 1e-9
    assert float(rows["unit-test[ci95_lo]"][2]) == ut["ci95"][0]
    assert rows["unit-test[ci_method]"][2] == "wilson-clustered"
    as_json = json.loads(bw("report", "mixed", "--format", "json", cwd=ws).stdout)
    assert as_json["by_model"]["reference"]["criteria"]["unit-test"]["ci95"] == ut["ci95"]
    table = bw("report", "mixed", "--power", cwd=ws)
    assert table.returncode == 0, table.stderr
    assert "± SE [95 % CI]" in table.stdout and "Tasks for 10 points" in table.stdout
    exported = json.loads(bw("export", "mixed", "--format", "json", cwd=ws).stdout)
    assert exported["summary"]["by_model"]["reference"]["criteria"]["unit-test"]["se"] == ut["se"]


def test_compare_says_when_two_runs_cannot_be_told_apart(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    _run(bw, ws, "a", wrong={1, 4}, tasks=6, samples=2)
    _run(bw, ws, "b", wrong={1, 4}, tasks=6, samples=2)
    _run(bw, ws, "c", wrong={0, 1, 2, 3, 4}, tasks=6, samples=2)
    same = json.loads(bw("compare", "a", "b", "--format", "json", cwd=ws).stdout)
    rate = next(p for p in same["paired"] if p["criterion"] == "pass_rate")
    assert rate["diff"] == 0 and not rate["significant"] and rate["tasks"] == 6
    md = bw("compare", "a", "b", "--format", "markdown", cwd=ws).stdout
    assert "pass rate B - A = +0.0 pp" in md and "no difference" in md

    # three of six tasks broken (67 % -> 17 %): a -50 pp drop, but six tasks are too few to
    # tell it from noise (t interval with 5 degrees of freedom: about [-107, +7] pp)
    close = json.loads(bw("compare", "a", "c", "--format", "json", cwd=ws).stdout)
    ut = next(d for d in close["deltas"] if d["criterion"] == "unit-test")
    assert ut["change"] == "worse" and ut["verdict"] == "no significant difference", ut["paired"]
    table = bw("compare", "a", "c", cwd=ws).stdout
    assert "no significant difference" in table


def test_compare_finds_a_large_difference_over_enough_tasks(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    _run(bw, ws, "good", wrong={0}, tasks=16, samples=2)
    _run(bw, ws, "bad", wrong=set(range(12)), tasks=16, samples=2)
    result = json.loads(bw("compare", "good", "bad", "--format", "json", cwd=ws).stdout)
    rate = next(p for p in result["paired"] if p["criterion"] == "pass_rate")
    assert rate["tasks"] == 16 and rate["significant"] and rate["verdict"] == "worse"
    assert rate["ci95"][1] < 0 and rate["p_value"] < 0.001 and rate["test"] == "paired-t"
    ut = next(d for d in result["deltas"] if d["criterion"] == "unit-test")
    assert ut["verdict"] == "worse"
    md = bw("compare", "good", "bad", "--format", "markdown", cwd=ws).stdout
    assert "pass rate B - A = -68.8 pp" in md and ": worse" in md
