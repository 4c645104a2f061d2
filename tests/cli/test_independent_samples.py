"""Through ``benchwright run`` on both executors: in every language, a hostile sample of one
model, then a wrong and a correct sample of another task (from two models), one after another in
one worker (for Python, one fork server): the wrong is ``fail``, the correct ``pass``, with
figures that are not the hostile sample's forged ones (see :mod:`tests.sandbox.hostile`)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Runner, read_jsonl
from tests.sandbox.hostile import FORGED_CPU_MS, FORGED_RSS, LANGUAGES, task_source

CONFIG = ("version: 1\ntask_sources: [tasks/t.yaml]\nllms: {llms}\n"
          "criteria: [unit-test, cpu-usage, ram-usage]\n"
          "limits: {{test_timeout_s: 10, memory_mb: 1024, concurrency: 1}}\n")


def hostile_workspace(tmp_path: Path, bw: Runner) -> Path:
    """A workspace whose ``recorded`` provider replays a run in which the reference model
    answered A with the hostile program and B wrongly; ``tasks/t.yaml`` now has the hostile A
    and the correct B as golden solutions."""
    ws = tmp_path / "ws"
    (ws / "tasks").mkdir(parents=True)
    (ws / "configs").mkdir()
    (ws / "benchwright.yaml").write_text(
        "version: 1\nsandbox: bwrap\nproviders:\n"
        "  reference: {type: reference}\n"
        "  recorded: {type: replay, path: results/recorded}\n")
    (ws / "tasks" / "t.yaml").write_text(json.dumps(task_source("hostile", "wrong"), indent=1))
    (ws / "configs" / "record.yaml").write_text(CONFIG.format(llms="[reference]"))
    proc = bw("run", "configs/record.yaml", "--run-id", "recorded", cwd=ws, timeout=900)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    (ws / "tasks" / "t.yaml").write_text(json.dumps(task_source("hostile", "right"), indent=1))
    (ws / "configs" / "c.yaml").write_text(CONFIG.format(llms="[reference, recorded/reference]"))
    return ws


def verdicts(run: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    """(task, language, model) -> the unit-test verdicts and the CPU and memory figures."""
    out: dict[tuple[str, str, str], dict[str, Any]] = defaultdict(
        lambda: {"unit-test": [], "cpu-usage": [], "ram-usage": []})
    for rec in read_jsonl(run / "records.jsonl"):
        key = (rec["task"], rec["language"], rec["model"])
        if rec["criterion"] == "unit-test" and rec["test_case"] in ("t0", "t1"):
            out[key]["unit-test"].append(rec["outcome"])
        elif rec["criterion"] in ("cpu-usage", "ram-usage"):
            out[key][rec["criterion"]].append(rec["score"])
    return out


def check_run(run: Path) -> None:
    found = verdicts(run)
    problems = []
    for lang in LANGUAGES:
        hostile = found[("A", lang, "reference")]["unit-test"]
        wrong = found[("B", lang, "recorded/reference")]
        right = found[("B", lang, "reference")]
        if not hostile or "pass" in hostile:
            problems.append(f"{lang}: the hostile sample passed or was not recorded: {hostile}")
        if wrong["unit-test"] != ["fail", "fail"]:
            problems.append(f"{lang}: the wrong sample after it: {wrong}")
        if right["unit-test"] != ["pass", "pass"]:
            problems.append(f"{lang}: the correct sample after it: {right}")
        for sample in (wrong, right):
            if FORGED_CPU_MS in sample["cpu-usage"] or FORGED_RSS in sample["ram-usage"]:
                problems.append(f"{lang}: forged figures: {sample}")
    assert problems == []


@pytest.fixture(scope="module")
def hostile_ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import run_cli

    return hostile_workspace(tmp_path_factory.mktemp("independent"), run_cli)


def test_on_the_local_executor(hostile_ws: Path, bw: Runner) -> None:
    proc = bw("run", "configs/c.yaml", "--run-id", "local", "--executor", "local", cwd=hostile_ws,
              timeout=900)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    check_run(hostile_ws / "results" / "local")
