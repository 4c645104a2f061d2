"""``--executor ray`` on a real multi-node Ray cluster: the records of a local run, key for key;
provider limits and the cache shared by the whole cluster; a node dying mid-run; a driver dying
and the run resumed on the other executor."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from benchwright.testing import OpenAIServer, Reply
from tests.cluster.conftest import (
    FAKE_KEY,
    SharedCluster,
    humaneval_workspace,
    kill_node,
    records_by_key,
    slow_workspace,
    start_cluster,
)
from tests.conftest import BIN, Runner, humaneval_canonical, read_jsonl

pytestmark = pytest.mark.xdist_group("ray-cluster")
"""Every test here on one xdist worker: they share one cluster (started once), and only one
cluster serving Ray Client may run on a machine."""

MEASURED = {"run_id", "time_ms"}
"""Fields that differ between any two runs: the run's name and how long things took."""
MEASURING = {"cpu-usage", "ram-usage", "energy", "latency"}
"""Criteria whose score is a measurement of this run (their score, output and details differ)."""


def assert_same_records(local: Path, ray: Path) -> int:
    """Same records, key for key: every field equal but the measured ones."""
    a, b = records_by_key(local), records_by_key(ray)
    assert set(a) == set(b)
    for key, rec in a.items():
        other = b[key]
        assert set(rec) == set(other), key
        skip = MEASURED | ({"score", "output", "details"} if rec["criterion"] in MEASURING else set())
        differ = {f for f in rec if f not in skip and rec[f] != other[f]}
        assert not differ, (key, {f: (rec[f], other[f]) for f in differ})
    return len(a)


TIMINGS = {"run_id", "time_ms", "wall_ms", "cpu_ms", "ms", "latency_ms", "scored_at"}
"""In an agent run's records and files: the run's name, durations and clock times."""


SECONDS = re.compile(r"\b\d+\.\d+ ?s\b")
"""A duration in a tool's own output ("Ran 4 tests in 0.000s"): it changes with the load."""


def without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    if isinstance(value, str):
        return SECONDS.sub("<seconds>", value)
    return value


def run(bw: Runner, ws: Path, *args: str, env: dict[str, str] | None = None) -> None:
    proc = bw("run", *args, cwd=ws, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def manifest(run_folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = YAML(typ="safe").load((run_folder / "run.yaml").read_text())
    return data


EXAMPLE_TASKS = 1
"""The example's first task, in Python and in Java: every criterion of the example runs on it
(each of the other tasks would only add the same criteria again, Java's PMD taking most of it)."""


@pytest.mark.slow
def test_the_example_workspace_on_two_nodes_gives_the_local_records(
        workspace: Path, bw: Runner, ray_cluster: SharedCluster) -> None:
    first = ("--limit", str(EXAMPLE_TASKS))
    run(bw, workspace, "configs/example.yaml", "--run-id", "local", *first)
    run(bw, workspace, "configs/example.yaml", "--run-id", "ray", "--executor", "ray",
        "--ray-address", ray_cluster.address, *first)
    results = workspace / "results"
    assert assert_same_records(results / "local", results / "ray") > 40
    records = read_jsonl(results / "ray" / "records.jsonl")
    criteria = {r["criterion"] for r in records}
    assert "unit-test" in criteria and len(criteria) >= 10, criteria  # the example's many criteria
    assert any(c.startswith("python-") for c in criteria) and any(c.startswith("java-") for c in criteria)
    assert {r["language"] for r in records} == {"python", "java"}
    status = YAML(typ="safe").load((results / "ray" / "status.yaml").read_text())
    assert status["state"] == "completed"
    (source,) = status["taskSourceStatuses"].values()
    assert source["completed"] == source["total"] == 2 * EXAMPLE_TASKS
    local_gens = {g["execution_id"]: g["code"] for g in read_jsonl(results / "local" / "generations.jsonl")}
    ray_gens = {g["execution_id"]: g["code"] for g in read_jsonl(results / "ray" / "generations.jsonl")}
    assert ray_gens == local_gens
    summary = YAML(typ="safe").load((results / "ray" / "summary.yaml").read_text())
    assert summary["by_model"]["reference"]["outcomes"]["pass"] == source["total"]


@pytest.mark.slow
def test_coding_agents_on_two_nodes_give_the_local_records_and_files(
        workspace: Path, bw: Runner, ray_cluster: SharedCluster) -> None:
    run(bw, workspace, "configs/agents.yaml", "--run-id", "local")
    run(bw, workspace, "configs/agents.yaml", "--run-id", "ray", "--executor", "ray",
        "--ray-address", ray_cluster.address)
    local, ray = workspace / "results" / "local", workspace / "results" / "ray"
    a, b = records_by_key(local), records_by_key(ray)
    assert set(a) == set(b) and len({k[0] for k in a}) == 3  # three agents on the example task
    for key, rec in a.items():
        assert without_timings(rec) == without_timings(b[key]), key
    files = sorted(p.relative_to(local) for p in (local / "agents").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(ray) for p in (ray / "agents").rglob("*") if p.is_file())
    assert any(f.name == "diff.patch" for f in files)
    for f in files:
        mine, theirs = (local / f).read_text(), (ray / f).read_text()
        if f.name == "judge.json":
            mine, theirs = without_timings(json.loads(mine)), without_timings(json.loads(theirs))
        assert without_timings(mine) == without_timings(theirs), f
    gates = [YAML(typ="safe").load((r / "summary.yaml").read_text())["agents"] for r in (local, ray)]
    assert gates[0] == gates[1] and any(row["disagree"] for row in gates[0])


@pytest.mark.slow
def test_humaneval_on_two_nodes_gives_the_local_records(
        tmp_path: Path, bw: Runner, ray_cluster: SharedCluster) -> None:
    ws = humaneval_workspace(tmp_path, bw)
    run(bw, ws, "configs/he.yaml", "--run-id", "local")
    # through Ray Client this time: the driver outside the cluster, as from a laptop
    run(bw, ws, "configs/he.yaml", "--run-id", "ray", "--executor", "ray", "--ray-address",
        ray_cluster.client)
    assert assert_same_records(ws / "results" / "local", ws / "results" / "ray") > 164
    outcomes = {r["execution_id"]: r["outcome"] for r in read_jsonl(ws / "results" / "ray" / "records.jsonl")}
    assert len(outcomes) == 164 and set(outcomes.values()) == {"pass"}


def _fake_provider_workspace(tmp_path: Path, bw: Runner, base_url: str, concurrency: int) -> Path:
    ws = humaneval_workspace(tmp_path, bw)
    (ws / "benchwright.yaml").write_text(
        "version: 1\ndefault_provider: fake\nexecutor: ray\nproviders:\n"
        f"  fake:\n    type: openai-compatible\n    base_url: {base_url}\n"
        f"    api_key_env: BW_FAKE_KEY\n    concurrency: {concurrency}\n")
    (ws / "configs" / "he.yaml").write_text(
        "version: 1\ntask_sources: [tasks/humaneval.yaml]\n"
        "criteria: [unit-test, token-count, llm-judge-code-quality]\nllm-judge: fake/judge-1\n"
        "llms:\n  - id: fake/coder-1\n    temperature: 0\n")
    source = YAML(typ="safe").load((ws / "tasks" / "humaneval.yaml").read_text())
    source["tasks"] = source["tasks"][:24]  # enough to keep both nodes asking at once
    with (ws / "tasks" / "humaneval.yaml").open("w") as f:
        YAML().dump(source, f)
    return ws


@pytest.mark.slow
def test_provider_limits_and_the_cache_are_the_whole_clusters(
        tmp_path: Path, bw: Runner, ray_cluster: SharedCluster) -> None:
    canonical = humaneval_canonical()
    prompts = list(canonical)[:24]

    def answer(body: dict[str, Any]) -> Reply:
        if "prompt" in body:  # the candidate, asked for a completion
            return Reply.answer(canonical[body["prompt"]], usage=(50, 30))
        return Reply.answer("code_quality: 8\nexplanation: clear\n", usage=(200, 10))  # the judge

    with OpenAIServer(answer=answer, delay_s=0.1, expected_key=FAKE_KEY) as srv:
        ws = _fake_provider_workspace(tmp_path, bw, srv.base_url, concurrency=1)
        # the key is in the nodes' environment, as on a real cluster; the driver has it too
        env = {"BW_FAKE_KEY": FAKE_KEY, "RAY_ADDRESS": ray_cluster.address}
        run(bw, ws, "configs/he.yaml", "--run-id", "first", "--ray-address", "auto", env=env)
        assert srv.count == 2 * len(prompts)  # a candidate and a judge request per sample
        assert srv.peak_in_flight == 1, "concurrency: 1 holds across both nodes"
        first = ws / "results" / "first"
        records = read_jsonl(first / "records.jsonl")
        outcomes = {r["execution_id"]: r["outcome"] for r in records}
        assert len(outcomes) == len(prompts) and set(outcomes.values()) == {"pass"}
        judged = [r for r in records if r["criterion"] == "llm-judge-code-quality"]
        assert len(judged) == len(prompts) and {r["score"] for r in judged} == {8}
        assert not any(g["cached"] for g in read_jsonl(first / "generations.jsonl"))

        run(bw, ws, "configs/he.yaml", "--run-id", "second", "--ray-address", "auto", env=env)
        assert srv.count == 2 * len(prompts), "the candidate and the judge answer from the cache"
        gens = read_jsonl(ws / "results" / "second" / "generations.jsonl")
        assert len(gens) == len(prompts) and all(g["cached"] for g in gens)
        assert manifest(ws / "results" / "second")["executor"]["name"] == "ray"
    leaked = [p for p in ws.rglob("*") if p.is_file() and FAKE_KEY.encode() in p.read_bytes()]
    assert not leaked


def _start(ws: Path, *args: str) -> subprocess.Popen[str]:
    """``benchwright run ARGS`` in the background, as a user's terminal would run it."""
    return subprocess.Popen([str(BIN), "run", *args], cwd=ws, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _wait_for_samples(run_folder: Path, at_least: int, proc: subprocess.Popen[str],
                      timeout_s: float = 240) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        path = run_folder / "records.jsonl"
        if path.exists():
            done = {json.loads(line)["execution_id"] for line in path.read_text().splitlines()
                    if line.endswith("}")}
            if len(done) >= at_least:
                return len(done)
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.2)
    raise AssertionError(f"fewer than {at_least} samples recorded in {timeout_s} s")


def _each_sample_once(run_folder: Path, samples: int) -> None:
    by_sample: dict[str, list[dict[str, Any]]] = {}
    for key, rec in records_by_key(run_folder).items():  # a record written twice fails here
        by_sample.setdefault(key[0], []).append(rec)
    assert len(by_sample) == samples
    for recs in by_sample.values():
        assert len(recs) == recs[0]["record_count"]
        assert {r["outcome"] for r in recs} == {"pass"}, recs[0]


DRIVER_TASKS = 80
"""HumanEval tasks of the killed-driver runs (two samples each): enough that the driver is killed
mid-run (after 30 samples), a fraction of the time of all 164."""


@pytest.mark.slow
def test_a_killed_driver_resumes_on_either_executor(tmp_path: Path, bw: Runner,
                                                     ray_cluster: SharedCluster) -> None:
    ws = humaneval_workspace(tmp_path, bw, samples=2)
    total = DRIVER_TASKS * 2
    for run_id, first, then in (("ray-then-local", ["--executor", "ray", "--ray-address",
                                                     ray_cluster.address], ["--executor", "local"]),
                                ("local-then-ray", ["--executor", "local"],
                                 ["--executor", "ray", "--ray-address", ray_cluster.address])):
        proc = _start(ws, "configs/he.yaml", "--run-id", run_id, "--limit", str(DRIVER_TASKS), *first)
        recorded = _wait_for_samples(ws / "results" / run_id, 30, proc)
        proc.send_signal(signal.SIGKILL)  # the driver dies: nothing of it says goodbye
        proc.communicate()
        assert recorded < total
        run(bw, ws, "--resume", run_id, *then)  # keeps the run's --limit
        _each_sample_once(ws / "results" / run_id, total)
        status = YAML(typ="safe").load((ws / "results" / run_id / "status.yaml").read_text())
        assert status["state"] == "completed"


@pytest.mark.slow
def test_a_node_killed_mid_run_with_and_without_retries(tmp_path: Path, bw: Runner) -> None:
    """One three-node cluster (its own: nodes die here) for both cases. With no retries, the dead
    node's samples are infra errors that --retry-errors redoes; with retries (the default), a
    node killed mid-run loses and doubles nothing."""
    cluster = start_cluster(worker_nodes=2)
    try:
        ws = slow_workspace(tmp_path / "no-retries", max_retries=0)
        victim = cluster.list_all_nodes()[-1]
        proc = _start(ws, "configs/slow.yaml", "--run-id", "r", "--executor", "ray",
                      "--ray-address", cluster.address)
        _wait_for_samples(ws / "results" / "r", 3, proc)
        kill_node(cluster, victim)  # in the middle of a sample
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, out[-2000:] + err[-2000:]  # the run goes on
        records = read_jsonl(ws / "results" / "r" / "records.jsonl")
        lost = {r["execution_id"]: r for r in records if r["outcome"] == "infra_error"}
        assert lost, "the dead node's samples are recorded, as infra_error"
        assert all("the Ray cluster could not run this sample" in r["error"] for r in lost.values())
        assert len({r["execution_id"] for r in records}) == 12

        cluster.add_node(num_cpus=1)  # three nodes again, for the second case
        cluster.wait_for_nodes()
        run(bw, ws, "--resume", "r", "--retry-errors", "--executor", "ray", "--ray-address",
            cluster.address)
        _each_sample_once(ws / "results" / "r", 12)

        ws = slow_workspace(tmp_path / "retries", tasks=18)  # every node always mid-sample; 3 retries
        victim = cluster.list_all_nodes()[-1]
        proc = _start(ws, "configs/slow.yaml", "--run-id", "r", "--executor", "ray",
                      "--ray-address", cluster.address)
        _wait_for_samples(ws / "results" / "r", 4, proc)
        kill_node(cluster, victim)  # its raylet and workers die at once, mid-sample
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, out[-2000:] + err[-2000:]
        _each_sample_once(ws / "results" / "r", 18)  # the samples it was running: run again
        summary = YAML(typ="safe").load((ws / "results" / "r" / "summary.yaml").read_text())
        ran = summary["executor"]["samples_by_node"]
        assert sum(ran.values()) == 18 and len(ran) >= 2
    finally:
        cluster.shutdown()
