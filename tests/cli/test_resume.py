"""A run killed with SIGKILL at any moment and resumed has exactly the records of an unkilled run."""

from __future__ import annotations

import collections
import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import BIN, Runner, read_jsonl

N_TASKS = 10


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "tasks").mkdir(parents=True)
    (ws / "configs").mkdir()
    (ws / "benchwright.yaml").write_text("version: 1\n")
    tasks = ["version: 1\nname: slow\ntasks:\n"]
    for i in range(N_TASKS):
        # every third golden is wrong, so failing samples are resumed too
        op = "-" if i % 3 == 0 else "+"
        tasks.append(
            f"  - name: t{i}\n    languages: [python]\n"
            f"    task:\n      common_prompt: add\n      languages_specific:\n        python:\n"
            f"          hidden_tests:\n"
            f"            - code: |\n                import time; time.sleep(0.1)\n"
            f"                assert f({i}, 1) == {i + 1}, 'f({i}, 1)'\n"
            f"            - code: assert f(0, 0) == 0\n"
            f"    golden_solution:\n      python: |\n        def f(a, b):\n            return a {op} b\n"
        )
    (ws / "tasks" / "slow.yaml").write_text("".join(tasks))
    (ws / "configs" / "c.yaml").write_text(
        "version: 1\ntask_sources: [tasks/slow.yaml]\nllms: [reference]\nsamples: 2\n"
        "criteria: [unit-test, cpu-usage, token-count]\n"
    )
    return ws


def _key(r: dict[str, object]) -> tuple[object, ...]:
    return (r["execution_id"], r["criterion"], r["test_case"], r["status"], r["verdict"], r["outcome"],
            r["error"], r["line"])


def _canonical(run: Path) -> collections.Counter[tuple[object, ...]]:
    return collections.Counter(_key(r) for r in read_jsonl(run / "records.jsonl"))


def _kill_when(ws: Path, run_id: str, at_records: int) -> None:
    proc = subprocess.Popen([str(BIN), "run", "configs/c.yaml", "--run-id", run_id], cwd=ws,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    records = ws / "results" / run_id / "records.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if records.exists() and records.read_bytes().count(b"\n") >= at_records:
            break
        time.sleep(0.005)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.mark.slow
@pytest.mark.parametrize("at_records", [0, 7, 31])
def test_sigkill_then_resume_equals_uninterrupted(tmp_path: Path, bw: Runner, at_records: int) -> None:
    ws = _workspace(tmp_path)
    assert bw("run", "configs/c.yaml", "--run-id", "whole", cwd=ws).returncode == 0
    expected = _canonical(ws / "results" / "whole")
    assert sum(expected.values()) > 0

    _kill_when(ws, "killed", at_records)
    partial = ws / "results" / "killed" / "records.jsonl"
    # a torn write: half a line at the end, as a kill in the middle of a write leaves it
    with partial.open("ab") as f:
        f.write(b'{"run_id": "killed", "execution_id": "tor')
    done_before = {r["execution_id"] for r in read_jsonl_tolerant(partial)}
    gens_before = read_jsonl_tolerant(ws / "results" / "killed" / "generations.jsonl")

    proc = bw("run", "--resume", "killed", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    got = _canonical(ws / "results" / "killed")
    assert got == expected
    gens = read_jsonl(ws / "results" / "killed" / "generations.jsonl")
    ids = [g["execution_id"] for g in gens]
    assert len(ids) == len(set(ids)) == 2 * N_TASKS, "a generation was made twice"
    assert {g["execution_id"] for g in gens_before} <= set(ids)
    assert len(done_before) <= 2 * N_TASKS
    status = (ws / "results" / "killed" / "status.yaml").read_text()
    assert "state: completed" in status


def read_jsonl_tolerant(path: Path) -> list[dict[str, object]]:
    import json

    out: list[dict[str, object]] = []
    if not path.exists():   # killed before the run made it (at record 0, generations may not exist yet)
        return out
    for line in path.read_bytes().splitlines(keepends=True):
        if line.endswith(b"\n"):
            with contextlib.suppress(json.JSONDecodeError):
                out.append(json.loads(line))
    return out


def test_resume_of_a_finished_run_adds_nothing(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path)
    assert bw("run", "configs/c.yaml", "--run-id", "r", cwd=ws).returncode == 0
    before = (ws / "results" / "r" / "records.jsonl").read_bytes()
    assert bw("run", "--resume", "r", cwd=ws).returncode == 0
    assert (ws / "results" / "r" / "records.jsonl").read_bytes() == before


def test_resume_refuses_a_changed_task_source(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path)
    assert bw("run", "configs/c.yaml", "--run-id", "r", cwd=ws).returncode == 0
    src = ws / "tasks" / "slow.yaml"
    src.write_text(src.read_text().replace("name: t0", "name: t0-renamed"))
    proc = bw("run", "--resume", "r", cwd=ws)
    assert proc.returncode == 2 and "changed" in proc.stderr
