"""Scale: samples per second on ``local`` and on a 2-node Ray cluster, Ray's overhead per unit,
and the driver's peak memory on a 100,000-sample run with a fast fake model.

Everything runs as ``benchwright run`` processes, as a user would run them, on this machine in
one go. The Ray cluster is Ray's own ``cluster_utils.Cluster``: a head node and a worker node,
one CPU each, so the Ray runs use the same two cores as the local ones (2 workers). Usage::

    .venv/bin/python benchmarks/scale.py [--samples 100000] [--he-samples 3] [--trivial 4000]

* throughput: HumanEval's 164 tasks x ``--he-samples``, reference model, ``unit-test``
  (every test in the sandbox); samples per second over the whole command;
* overhead: ``--trivial`` samples whose evaluation is next to nothing (``token-count``):
  (Ray's wall - local's wall) / samples is what Ray adds to each unit at this parallelism;
* memory: ``--samples`` samples of the same trivial kind; the driver's peak RSS, read by
  ``wait4`` for the driver process alone (Ray's own processes are not its children).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent / "benchwright"


@dataclass
class Measured:
    wall_s: float
    peak_mib: float
    cpu_s: float
    """The driver's own CPU time (user + system)."""


def bw_run(ws: Path, *args: str) -> Measured:
    """Run ``benchwright run ARGS`` and return its wall time, the driver's peak RSS and CPU."""
    start = time.perf_counter()
    proc = subprocess.Popen([str(BIN), "run", *args], cwd=ws, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    out_err: list[bytes] = []
    # drain the pipes while waiting (a full pipe would stall the run)
    import threading

    def drain(stream: object) -> None:
        out_err.append(stream.read())  # type: ignore[attr-defined]

    readers = [threading.Thread(target=drain, args=(s,)) for s in (proc.stdout, proc.stderr)]
    for r in readers:
        r.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    for r in readers:
        r.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"benchwright run {' '.join(args)} failed:\n"
                         + b"\n".join(out_err).decode(errors="replace")[-4000:])
    return Measured(wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime)


def trivial_workspace(root: Path, tasks: int) -> Path:
    """``tasks`` one-line Python tasks; the reference model answers at once."""
    ws = root / "trivial"
    (ws / "configs").mkdir(parents=True)
    (ws / "tasks").mkdir()
    (ws / "benchwright.yaml").write_text("version: 1\n")
    lines = ["version: 1", "name: tiny", "tasks:"]
    for i in range(tasks):
        lines += [f"  - name: t{i}", "    languages: [python]", "    task:",
                  f"      common_prompt: Write add{i}(a, b).", "    golden_solution:",
                  "      python: |", f"        def add{i}(a, b):", f"            return a + b + {i}"]
    (ws / "tasks" / "tiny.yaml").write_text("\n".join(lines) + "\n")
    return ws


def trivial_config(ws: Path, name: str, samples_per_task: int) -> str:
    (ws / "configs" / f"{name}.yaml").write_text(
        "version: 1\ntask_sources: [tasks/tiny.yaml]\ncriteria: [token-count]\nllms: [reference]\n"
        f"samples: {samples_per_task}\n")
    return f"configs/{name}.yaml"


def humaneval_workspace(root: Path, samples: int) -> Path:
    ws = root / "he"
    (ws / "configs").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text("version: 1\n")
    subprocess.run([str(BIN), "import", "humaneval", "--out", str(ws / "tasks" / "he.yaml")],
                   check=True, capture_output=True)
    (ws / "configs" / "he.yaml").write_text(
        "version: 1\ntask_sources: [tasks/he.yaml]\ncriteria: [unit-test]\nllms: [reference]\n"
        f"samples: {samples}\n")
    return ws


@dataclass
class Services:
    round_trip_ms: float
    """What one request to an API provider waits for its slot: one actor round trip."""
    capacity: float
    """Slot round trips per second the actor answers when asked from many places at once."""
    task_ms: float
    """One empty Ray task, sent and waited for alone."""


def services_figures(address: str, calls: int) -> Services:
    """The run's services actor and a bare Ray task, measured on the cluster at ``address``."""
    import ray

    from benchwright.config.settings import ProviderSettings
    from benchwright.run.cluster import RunServices

    ray.init(address=address, logging_level="WARNING", log_to_driver=False)
    try:
        conf = ProviderSettings(type="openai-compatible", concurrency=1024)
        services = ray.remote(RunServices).options(num_cpus=0, max_concurrency=10_000).remote(
            None, {"api": conf})

        @ray.remote(num_cpus=1)
        def one_at_a_time(n: int) -> float:
            start = time.perf_counter()
            for _ in range(n):
                lease = ray.get(services.enter.remote("api"))
                services.release.remote("api", lease)
            return (time.perf_counter() - start) / n * 1000

        @ray.remote(num_cpus=1)
        def many_at_once(n: int, width: int) -> None:
            for _ in range(n // width):
                leases = ray.get([services.enter.remote("api") for _ in range(width)])
                ray.get([services.release.remote("api", lease) for lease in leases])

        ray.get(one_at_a_time.remote(50))  # workers started, actor warm
        round_trip = ray.get(one_at_a_time.remote(500))
        start = time.perf_counter()
        ray.get([many_at_once.remote(calls // 2, 100) for _ in range(2)])
        capacity = 2 * (calls // 2) / (time.perf_counter() - start)  # enters (each with a release)

        @ray.remote(num_cpus=1)
        def empty() -> None:
            return None

        ray.get([empty.remote() for _ in range(20)])
        start = time.perf_counter()
        for _ in range(500):
            ray.get(empty.remote())
        return Services(round_trip, capacity, (time.perf_counter() - start) / 500 * 1000)
    finally:
        ray.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=100_000, help="samples of the memory runs")
    parser.add_argument("--he-samples", type=int, default=3, help="HumanEval samples per task")
    parser.add_argument("--trivial", type=int, default=4000, help="samples of the overhead runs")
    args = parser.parse_args()
    from ray.cluster_utils import Cluster

    work = Path(tempfile.mkdtemp(prefix="bw-scale-"))
    he = humaneval_workspace(work, args.he_samples)
    trivial = trivial_workspace(work, 1000)
    overhead_cfg = trivial_config(trivial, "overhead", max(1, args.trivial // 1000))
    memory_cfg = trivial_config(trivial, "memory", max(1, args.samples // 1000))
    he_n = 164 * args.he_samples
    trivial_n = 1000 * max(1, args.trivial // 1000)
    memory_n = 1000 * max(1, args.samples // 1000)
    cpus = os.cpu_count() or 1

    print(f"machine: {cpus} cores; Ray cluster: head + 1 worker node, 1 CPU each", flush=True)
    local_he = bw_run(he, "configs/he.yaml", "--run-id", "local")
    local_triv = bw_run(trivial, overhead_cfg, "--run-id", "overhead-local")
    local_mem = bw_run(trivial, memory_cfg, "--run-id", "memory-local")
    resumed = bw_run(trivial, "--resume", "memory-local")  # reads every record back

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    try:
        ray = ("--executor", "ray", "--ray-address", cluster.address)
        ray_he = bw_run(he, "configs/he.yaml", "--run-id", "ray", *ray)
        ray_triv = bw_run(trivial, overhead_cfg, "--run-id", "overhead-ray", *ray)
        ray_mem = bw_run(trivial, memory_cfg, "--run-id", "memory-ray", *ray)
        services = services_figures(cluster.address, 20_000)
    finally:
        cluster.shutdown()

    print(f"\nHumanEval x{args.he_samples} ({he_n} samples, unit-test, reference model):")
    print(f"  local (2 workers):          {he_n / local_he.wall_s:7.1f} samples/s  ({local_he.wall_s:.1f} s)")
    print(f"  ray (2 nodes x 1 CPU):      {he_n / ray_he.wall_s:7.1f} samples/s  ({ray_he.wall_s:.1f} s)")
    print(f"  ratio ray/local:            {local_he.wall_s / ray_he.wall_s:7.2f}")
    # two sizes of the same trivial run: the slope is what each unit costs, the rest is fixed
    extra_small = ray_triv.wall_s - local_triv.wall_s
    extra_large = ray_mem.wall_s - local_mem.wall_s
    per_unit = (extra_large - extra_small) / (memory_n - trivial_n) if memory_n > trivial_n else 0.0
    fixed = extra_small - per_unit * trivial_n
    print(f"\nRay's overhead (trivial samples, token-count only; {trivial_n} and {memory_n} samples):")
    print(f"  local {local_triv.wall_s:.1f} s / {local_mem.wall_s:.1f} s, "
          f"ray {ray_triv.wall_s:.1f} s / {ray_mem.wall_s:.1f} s")
    slope = f"{per_unit * 1000:.3f} ms" if per_unit > 0 else "none measurable (batches of 64)"
    print(f"  per unit, batched: {slope}; per run: {fixed:.1f} s (joining the cluster, "
          f"the services actor, the workers' first start)")
    print(f"  per unit sent alone (a sample taking seconds): one Ray task, {services.task_ms:.2f} ms")
    print(f"\ndriver peak memory, {memory_n} samples (reference model, token-count):")
    print(f"  local: {local_mem.peak_mib:7.0f} MiB  ({local_mem.wall_s:.1f} s, "
          f"{memory_n / local_mem.wall_s:.0f} samples/s)")
    print(f"  ray:   {ray_mem.peak_mib:7.0f} MiB  ({ray_mem.wall_s:.1f} s, "
          f"{memory_n / ray_mem.wall_s:.0f} samples/s)")
    print(f"  resuming the finished local run (repair and summary read all {memory_n} back): "
          f"{resumed.peak_mib:.0f} MiB ({resumed.wall_s:.1f} s)")
    print(f"  limit: 1024 MiB; ratio to the limit: local {local_mem.peak_mib / 1024:.2f}, "
          f"ray {ray_mem.peak_mib / 1024:.2f}, resume {resumed.peak_mib / 1024:.2f}")
    driver_rate = memory_n / ray_mem.cpu_s
    print(f"  the driver's CPU in the ray run: {ray_mem.cpu_s:.1f} s of {ray_mem.wall_s:.1f} s wall: "
          f"it records at most about {driver_rate:.0f} samples/s")

    # what more nodes would give: per CPU as measured, until the driver or the services cap it
    per_cpu = he_n / max(ray_he.wall_s - fixed, 1e-9) / 2
    print("\nthe run's services actor (API providers' slots and pace, the cache):")
    print(f"  a request waits one round trip for its slot: {services.round_trip_ms:.2f} ms")
    print(f"  it answers {services.capacity:.0f} slots/s asked from many places at once: the "
          f"cluster-wide ceiling of requests/s to API providers (a cached request also asks "
          f"the cache: two round trips)")
    print(f"\nestimate, nodes of 8 CPUs each, HumanEval-like samples ({per_cpu:.0f} samples/s per CPU here):")
    for nodes in (10, 100):
        cpus_rate = nodes * 8 * per_cpu
        capped = min(cpus_rate, driver_rate)
        limit = "the driver's recording" if capped < cpus_rate else "the nodes' CPUs"
        print(f"  {nodes:3d} nodes: {cpus_rate:8.0f} samples/s of CPU -> about {capped:.0f} samples/s, "
              f"bound by {limit}")
    print(f"\nworkspaces: {work}")


if __name__ == "__main__":
    main()
