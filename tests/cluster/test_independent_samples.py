"""The batch of tests/cli/test_independent_samples.py on the Ray executor: a hostile sample,
then a wrong and a correct one of another task and model, in every language, in one Ray worker
(a one-CPU cluster runs the samples one after another)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.test_independent_samples import check_run, hostile_workspace
from tests.cluster.conftest import start_cluster
from tests.conftest import Runner


def test_on_the_ray_executor(tmp_path: Path, bw: Runner) -> None:
    ws = hostile_workspace(tmp_path, bw)
    cluster = start_cluster(worker_nodes=0)
    try:
        proc = bw("run", "configs/c.yaml", "--run-id", "ray", "--executor", "ray",
                  "--ray-address", cluster.address, cwd=ws, timeout=900)
    finally:
        cluster.shutdown()
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]
    check_run(ws / "results" / "ray")
