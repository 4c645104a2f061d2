"""``benchwright import jsonl``: any JSONL with a field mapping, then validated and run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import Runner, only_run, read_jsonl


def test_jsonl_import_validate_and_run(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    (ws / "configs").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text("version: 1\n")
    rows = [
        {"id": "sq", "text": "Write square(x).", "checks": ["assert square(3) == 9", "assert square(-2) == 4"],
         "ref": "def square(x):\n    return x * x\n", "level": "easy"},
        {"id": "neg", "text": "Write neg(x).", "checks": ["assert neg(3) == -3"],
         "ref": "def neg(x):\n    return x\n", "level": "easy"},
    ]
    data = ws / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = bw("import", "jsonl", data, "--out", ws / "tasks" / "mine.yaml",
              "-m", "name=id", "-m", "prompt=text", "-m", "tests=checks", "-m", "golden=ref",
              "-m", "difficulty=level", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    assert bw("validate", "tasks/mine.yaml", cwd=ws).returncode == 0
    (ws / "configs" / "c.yaml").write_text(
        "version: 1\ntask_sources: [tasks/mine.yaml]\nllms: [reference]\n"
        "criteria: [unit-test]\n")
    assert bw("run", "configs/c.yaml", cwd=ws).returncode == 0
    records = read_jsonl(only_run(ws) / "records.jsonl")
    outcomes = {r["task"]: r["outcome"] for r in records}
    assert outcomes == {"sq": "pass", "neg": "fail"}


def test_jsonl_bad_lines_are_all_reported(tmp_path: Path, bw: Runner) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text('{"id": "a", "text": "x"}\nnot json\n{"text": "no id"}\n')
    proc = bw("import", "jsonl", data, "--out", tmp_path / "out.yaml", "-m", "name=id", "-m", "prompt=text")
    assert proc.returncode == 2
    assert f"{data}:2" in proc.stderr and f"{data}:3" in proc.stderr
    assert not (tmp_path / "out.yaml").exists()
    bad_map = bw("import", "jsonl", data, "--out", tmp_path / "out.yaml", "-m", "name")
    assert bad_map.returncode == 2 and "KEY=FIELD" in bad_map.stderr
