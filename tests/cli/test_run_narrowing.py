"""``run --limit/--task/--model/--samples``: the narrowed selection is what is generated,
scored, recorded in ``run.yaml`` and resumed; a narrowing that selects nothing is bad input."""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.conftest import BIN, Runner, read_jsonl

CONFIG = """\
version: 1
task_sources: [tasks/one.yaml, tasks/two.yaml]
llms:
  - reference/a
  - id: reference/b
    name: b
    system_prompt: Answer tersely.
samples: 2
criteria: [unit-test]
"""


def _source(name: str, tasks: list[str], sleep: float) -> str:
    out = [f"version: 1\nname: {name}\ntasks:\n"]
    for i, task in enumerate(tasks):
        out.append(
            f"  - name: {task}\n    languages: [python]\n"
            f"    task:\n      common_prompt: add\n      languages_specific:\n        python:\n"
            f"          hidden_tests:\n"
            f"            - code: |\n                import time; time.sleep({sleep})\n"
            f"                assert f({i}, 1) == {i + 1}\n"
            f"            - code: assert f(0, 0) == 0\n"
            f"    golden_solution:\n      python: |\n        def f(a, b):\n            return a + b\n")
    return "".join(out)


def _workspace(root: Path, sleep: float = 0.0) -> Path:
    ws = root / "ws"
    (ws / "tasks").mkdir(parents=True)
    (ws / "configs").mkdir()
    (ws / "benchwright.yaml").write_text("version: 1\n")  # no default_provider: a bare id is nobody's
    (ws / "tasks" / "one.yaml").write_text(_source("one", [f"t{i}" for i in range(5)], sleep))
    (ws / "tasks" / "two.yaml").write_text(_source("two", ["u0", "u1", "u2"], sleep))
    (ws / "configs" / "c.yaml").write_text(CONFIG)
    return ws


def _run(bw: Runner, ws: Path, run_id: str, *flags: str) -> Path:
    proc = bw("run", "configs/c.yaml", "--run-id", run_id, *flags, cwd=ws)
    assert proc.returncode == 0, proc.stderr
    return ws / "results" / run_id


def _selection(run: Path) -> set[tuple[str, str, str, int]]:
    """(task source, task, model, sample) of every generation; the records name the same."""
    gens = read_jsonl(run / "generations.jsonl")
    got = {(g["task_source"], g["task"], g["model"], g["sample"]) for g in gens}
    assert len(gens) == len(got), "a sample was generated twice"
    records = read_jsonl(run / "records.jsonl")
    assert {(r["task_source"], r["task"], r["model"], r["sample"]) for r in records} == got
    assert len({r["execution_id"] for r in records}) == len(got)
    return got


def _manifest(run: Path) -> dict[str, Any]:
    data: dict[str, Any] = YAML(typ="safe").load((run / "run.yaml").read_text())
    return data


def _all(tasks: dict[str, list[str]], models: list[str], samples: int) -> set[tuple[str, str, str, int]]:
    return {(src, t, m, s) for src, names in tasks.items() for t in names for m in models
            for s in range(samples)}


def test_without_flags_the_config_runs_whole(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path)
    run = _run(bw, ws, "whole")
    assert _selection(run) == _all({"one": [f"t{i}" for i in range(5)], "two": ["u0", "u1", "u2"]},
                                   ["reference/a", "b"], 2)
    assert "narrowed" not in _manifest(run)


def test_limit_keeps_the_first_tasks_of_each_source(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path)
    run = _run(bw, ws, "lim", "--limit", "2")
    assert _selection(run) == _all({"one": ["t0", "t1"], "two": ["u0", "u1"]}, ["reference/a", "b"], 2)
    assert _manifest(run)["narrowed"] == {"limit": 2, "tasks": [], "models": [], "samples": None}
    status = YAML(typ="safe").load((run / "status.yaml").read_text())
    assert status["state"] == "completed"
    assert status["taskSourceStatuses"]["one"] == {"total": 8, "completed": 8, "filteredOut": 3, "error": 0}
    proc = bw("status", cwd=ws)
    assert proc.returncode == 0 and "16/16" in proc.stdout


def test_task_globs_then_limit(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path)
    run = _run(bw, ws, "globs", "--task", "t[13]", "--task", "u2", "--task", "t3")
    assert _selection(run) == _all({"one": ["t1", "t3"], "two": ["u2"]}, ["reference/a", "b"], 2)
    assert _manifest(run)["narrowed"]["tasks"] == ["t[13]", "u2", "t3"]
    run = _run(bw, ws, "globs-limit", "--task", "t*", "--limit", "2", "--samples", "1")
    assert _selection(run) == _all({"one": ["t0", "t1"]}, ["reference/a", "b"], 1)


def test_model_replaces_llms_and_keeps_a_listed_models_settings(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path)
    run = _run(bw, ws, "models", "--model", "reference/b", "--model", "reference/c", "--limit", "1")
    assert _selection(run) == _all({"one": ["t0"], "two": ["u0"]}, ["b", "reference/c"], 2)
    systems = {g["model"]: [m["content"] for m in g["messages"] if m["role"] == "system"]
               for g in read_jsonl(run / "generations.jsonl")}
    assert systems == {"b": ["Answer tersely."], "reference/c": []}  # b keeps its settings
    manifest = _manifest(run)
    assert manifest["narrowed"]["models"] == ["reference/b", "reference/c"]
    assert [m["label"] for m in manifest["models"]] == ["b", "reference/c"]
    assert [m["id"] for m in manifest["config"]["llms"]] == ["reference/a", "reference/b"]  # as written


def test_samples_replaces_samples(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path)
    run = _run(bw, ws, "samples", "--samples", "3", "--task", "u1", "--model", "reference/a")
    assert _selection(run) == _all({"two": ["u1"]}, ["reference/a"], 3)
    assert _manifest(run)["narrowed"] == {"limit": None, "tasks": ["u1"], "models": ["reference/a"],
                                          "samples": 3}


def _no_run(ws: Path) -> None:
    runs = [p for p in (ws / "results").iterdir()] if (ws / "results").exists() else []
    assert runs == []


@pytest.mark.parametrize(("flags", "hint"), [
    (["--task", "t9*", "--task", "u1"], "'t9*' matches none of the 8 tasks"),
    (["--task", "colapse"], "its tasks: t0, t1, t2, t3, t4, ... (8 in all)"),
    (["--task", "u_0"], "did you mean u0?"),
    (["--model", "refrence/b"], "did you mean reference/b"),
    (["--model", "nosuch"], "no provider named 'nosuch'"),
])
def test_a_narrowing_that_selects_nothing_is_bad_input(tmp_path: Path, bw: Runner, flags: list[str],
                                                        hint: str) -> None:
    ws = _workspace(tmp_path)
    proc = bw("run", "configs/c.yaml", *flags, cwd=ws)
    assert proc.returncode == 2, proc.stderr
    assert hint in proc.stderr
    assert "Traceback" not in proc.stderr
    _no_run(ws)


def test_narrowing_flags_with_resume_are_refused(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path)
    run = _run(bw, ws, "r", "--limit", "1", "--samples", "1")
    before = (run / "records.jsonl").read_bytes()
    for flags in (["--limit", "2"], ["--task", "t*"], ["--model", "reference/a"], ["--samples", "2"]):
        proc = bw("run", "--resume", "r", *flags, cwd=ws)
        assert proc.returncode == 2, proc.stderr
        assert "resumed run keeps the narrowing" in proc.stderr
    assert (run / "records.jsonl").read_bytes() == before
    assert bw("run", "--resume", "r", cwd=ws).returncode == 0
    assert (run / "records.jsonl").read_bytes() == before  # finished: the narrowed run is whole


NARROW = ("--limit", "3", "--model", "reference/b", "--task", "[tu]*")


def _canonical(run: Path) -> collections.Counter[tuple[object, ...]]:
    return collections.Counter(
        (r["execution_id"], r["task"], r["model"], r["sample"], r["criterion"], r["test_case"],
         r["verdict"], r["outcome"]) for r in read_jsonl(run / "records.jsonl"))


def _complete_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


@pytest.mark.slow
def test_a_killed_narrowed_run_resumes_narrowed(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path, sleep=0.2)
    expected = _canonical(_run(bw, ws, "whole", *NARROW))
    assert {k[1] for k in expected} == {"t0", "t1", "t2", "u0", "u1", "u2"}
    assert {k[2] for k in expected} == {"b"}

    proc = subprocess.Popen([str(BIN), "run", "configs/c.yaml", "--run-id", "killed", *NARROW], cwd=ws,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    records = ws / "results" / "killed" / "records.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None and _complete_lines(records) < 4:
        time.sleep(0.005)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 0 < _complete_lines(records) < sum(expected.values())

    proc = bw("run", "--resume", "killed", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    run = ws / "results" / "killed"
    assert _canonical(run) == expected
    ids = [g["execution_id"] for g in read_jsonl(run / "generations.jsonl")]
    assert len(ids) == len(set(ids)) == 6 * 2  # six tasks, one model, two samples: nothing more
    assert _manifest(run)["narrowed"] == _manifest(ws / "results" / "whole")["narrowed"]
    assert YAML(typ="safe").load((run / "status.yaml").read_text())["state"] == "completed"
