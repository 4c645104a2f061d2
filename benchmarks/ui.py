"""How long each page of the web UI takes to show its first meaningful content on a run of
20,000 records, in Debian's Chromium driven by Playwright against `benchwright serve`.
Target: under 1 s for every page.

"First meaningful paint" here is the time from the start of the navigation until the page's
title and its main content (its table, editor or list, named per page below) are visible in
the browser; not network idle (a page may keep a websocket and timers open).

The workspace is made here: two runs of 20,000 records each (1,000 samples: 250 tasks x 2
models x 2 samples, each with 17 test-case records and 3 sample records), written and
summarised as a real run would be; one agent sample (scorer, objective, judge and run-badge
records and the files an agent run leaves under agents/<id>/) in the first run; a config; a
task source of 300 tasks. Usage::

    PYTHONPATH=src .venv/bin/python benchmarks/ui.py [--records 20000] [--repeats 3] [--tasks 300]
        [--only "run page,explorer"] [--workspace DIR]

The server's CPU time per page is printed beside the wall time: on a loaded machine the wall
time of both the server and the browser grows, the CPU time much less.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx
from playwright.sync_api import Page, sync_playwright

from benchwright.results.folder import RunFolder
from benchwright.results.record import Generation, Record
from benchwright.results.summary import summarize
from benchwright.workspace.workspace import init_workspace

BIN = Path(sys.executable).parent / "benchwright"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync", "--disable-dev-shm-usage"]
TARGET_S = 1.0
REPO = Path(__file__).resolve().parents[1]
CONFIG = "configs/bench.yaml"
TASKS = "tasks/bench.yaml"
AGENT_SAMPLE = "agent-000"
TIMEOUT_MS = 120_000


def _sample_records(run_id: str, n: int, per_sample: int, shift: int) -> list[Record]:
    task, model, sample = f"task-{n // 4:03d}", ("model-a", "model-b")[n % 2], (n // 2) % 2
    fail = (n + shift) % 7 == 0
    base = dict(run_id=run_id, execution_id=f"e{n:06d}", task_source="bench", task=task, language="python",
                model=model, sample=sample, outcome="fail" if fail else "pass")
    batch = [Record(**base, criterion="unit-test", executor="UnitTest", test_case=f"t{i}",
                    score=0.0 if fail and i == 0 else 1.0, unit="success",
                    verdict="fail" if fail and i == 0 else "pass", status="fail" if fail and i == 0 else "pass",
                    code=f"assert f({i}) == {i}\n", line=1 if fail and i == 0 else None,
                    error="AssertionError" if fail and i == 0 else None)
             for i in range(per_sample - 3)]
    batch += [Record(**base, criterion="unit-test", executor="UnitTest", score=0.0 if fail else 1.0,
                     unit="success", verdict="fail" if fail else "pass"),
              Record(**base, criterion="cpu-usage", executor="CpuUsage", score=3.0 + n % 5, unit="ms"),
              Record(**base, criterion="ram-usage", executor="RamUsage", score=1e7, unit="bytes")]
    return batch


def _generation(run_id: str, n: int) -> Generation:
    return Generation(run_id=run_id, execution_id=f"e{n:06d}", task_source="bench", task=f"task-{n // 4:03d}",
                      language="python", model=("model-a", "model-b")[n % 2], provider="bench",
                      sample=(n // 2) % 2, prompt=f"Write f for task {n // 4}.", raw="```python\ndef f(x):\n"
                      "    return x\n```", code="def f(x):\n    return x\n")


def _agent_sample(folder: RunFolder, run_id: str) -> None:
    """One agent run: scorer records, the three gates, and its files under agents/<id>/."""
    base = dict(run_id=run_id, execution_id=AGENT_SAMPLE, task_source="scenario", task="empty-input",
                language="agent", model="agent-x", sample=0, outcome="pass")
    scorers = [Record(**base, criterion=name, executor="Scorer", score=1.0, unit="score", verdict="pass",
                      required=True, output=f"{name}: ok", details={"kind": "scorer", "type": kind})
               for name, kind in (("tests", "command"), ("allowed_paths", "allowed_paths"),
                                  ("forbid_secrets", "forbid_secrets"))]
    gates = [Record(**base, criterion=c, executor="Gate", score=1.0, unit="score", verdict="pass", output=c)
             for c in ("objective", "judge", "run-badge")]
    folder.append_records(scorers + gates)
    own = folder.path / "agents" / AGENT_SAMPLE
    own.mkdir(parents=True)
    (own / "diff.patch").write_text("--- a/src/parser.py\n+++ b/src/parser.py\n@@ -1 +1 @@\n-x\n+y\n")
    (own / "trajectory.jsonl").write_text("".join(json.dumps({"step": i, "tool": "shell", "input": "ls"}) + "\n"
                                                  for i in range(50)))
    (own / "judge.json").write_text(json.dumps({
        "verdict": "PASS", "scores": {"task_completion": 5, "instruction_adherence": 4, "efficiency": 4},
        "reasoning": "The change is minimal.", "fact_check": [], "model": "judge-m", "scored_at": "now"}))


def make_run(ws: Path, records: int, run_id: str = "ui-bench", shift: int = 0, agent: bool = True) -> str:
    folder = RunFolder.create(ws / "results" / run_id, {"run_id": run_id, "config": {}, "task_sources": []})
    per_sample = 20
    samples = max(records // per_sample, 1)
    for n in range(samples):
        folder.append_generation(_generation(run_id, n))
        folder.append_records(_sample_records(run_id, n, per_sample, shift))
    if agent:
        _agent_sample(folder, run_id)
    folder.write_summary(summarize(folder.records(), run_id))
    folder.write_status({"state": "completed", "runId": run_id, "taskSourceStatuses": {
        "bench": {"total": samples, "completed": samples, "filteredOut": 0, "error": 0}}}, force=True)
    return run_id


def make_files(ws: Path, tasks: int) -> None:
    """A config and a task source of ``tasks`` tasks (copies of the thesis example's first task)."""
    (ws / CONFIG).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(REPO / "tests/fixtures/thesis/exec-config-example-1.yaml", ws / CONFIG)
    text = (REPO / "tests/fixtures/thesis/mbbp-sanitized-sample-1.yaml").read_text()
    head, first = text.split("tasks:\n", 1)
    one = "  - name: mbpp-sanitized/2\n" + first.split("  - name: ", 2)[1].split("\n", 1)[1]
    body = "".join(one.replace("mbpp-sanitized/2", f"bench/{i:04d}", 1) for i in range(tasks))
    (ws / TASKS).parent.mkdir(parents=True, exist_ok=True)
    (ws / TASKS).write_text(head + "tasks:\n" + body)


@dataclass(frozen=True)
class Probe:
    """One page: where it is and what shows it is there."""

    name: str
    path: str
    ready: Callable[[Page], None]


def _visible(*selectors: str) -> Callable[[Page], None]:
    def ready(page: Page) -> None:
        page.wait_for_selector("[data-testid=page-title]", state="visible", timeout=TIMEOUT_MS)
        for s in selectors:
            page.locator(s).first.wait_for(state="visible", timeout=TIMEOUT_MS)
    return ready


def probes(run_a: str, run_b: str, total: int, tasks: int) -> list[Probe]:
    return [
        Probe("files", "/ui/", _visible(f"a:has-text('{run_a}')")),
        Probe("launch", "/ui/launch", _visible("[data-testid=config]", "[data-testid=start]")),
        Probe("runs", "/ui/runs", _visible(f"a:has-text('{run_a}')")),
        Probe("run page", f"/ui/run/{run_a}", _visible("[data-testid=summary] tbody tr", "text=Samples (")),
        Probe("explorer", f"/ui/explorer?run={run_a}",
              _visible(f"text=/of {total:,} records|of {total} records/", "[data-testid=explorer] tbody tr")),
        Probe("compare", f"/ui/compare?a={run_a}&b={run_b}",
              _visible("[data-testid=deltas] tbody tr", "text=/regressions/")),
        Probe("sample", f"/ui/sample/{run_a}/e000000",
              _visible("text=Extracted code", "[data-testid^=record-unit-test]")),
        Probe("agent trace", f"/ui/agent/{run_a}/{AGENT_SAMPLE}",
              _visible("[data-testid=scorers-card]", "[data-testid=judge-card]")),
        Probe("config form", f"/ui/config?path={CONFIG}",
              _visible("[data-testid=yaml] .cm-content", "[data-testid^=criterion-]")),
        Probe("task editor", f"/ui/tasks?path={TASKS}",
              _visible(f"text=/of {tasks} tasks/", "[data-testid^=task-bench]")),
        Probe("yaml editor", f"/ui/edit?path={TASKS}", _visible(".cm-content", "[data-testid=validate]")),
    ]


def _serve(ws: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([str(BIN), "serve", str(ws), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            httpx.get(f"{base}/api/health", timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.1)
    return server, base


def cpu_seconds(pid: int) -> float:
    """The CPU time a process has used (user and system), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(base: str, pid: int, pages: list[Probe], repeats: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Each page's times to its first meaningful paint and the server's CPU time for it,
    ``repeats`` loads each (in turns)."""
    times: dict[str, list[float]] = {p.name: [] for p in pages}
    cpu: dict[str, list[float]] = {p.name: [] for p in pages}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{base}/ui/")  # the first page load pays for NiceGUI's assets
        for _ in range(repeats):
            for probe in pages:
                used = cpu_seconds(pid)
                start = time.perf_counter()
                page.goto(base + probe.path, wait_until="commit", timeout=TIMEOUT_MS)
                probe.ready(page)
                times[probe.name].append(time.perf_counter() - start)
                cpu[probe.name].append(cpu_seconds(pid) - used)
        browser.close()
    return times, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--only", default="", help="comma-separated page names (default: every page)")
    parser.add_argument("--workspace", type=Path, help="made there and kept (a second time: used as it is)")
    args = parser.parse_args()
    ws = args.workspace or Path(tempfile.mkdtemp(prefix="bw-ui-bench-")) / "ws"
    run_a, run_b = "ui-bench", "ui-bench-b"
    if not (ws / "results" / run_b).is_dir():
        init_workspace(ws)
        make_run(ws, args.records, run_a)
        make_run(ws, args.records, run_b, shift=3, agent=False)
        make_files(ws, args.tasks)
    total = sum(1 for _ in (ws / "results" / run_a / "records.jsonl").open())
    pages = probes(run_a, run_b, total, args.tasks)
    if args.only:
        pages = [p for p in pages if p.name in args.only.split(",")]
    server, base = _serve(ws)
    try:
        times, cpu = measure(base, server.pid, pages, args.repeats)
    finally:
        server.terminate()
        server.wait(timeout=30)
    load = os.getloadavg()[0]
    print(f"first meaningful paint, a run of {total} records, median of {args.repeats} loads in Chromium "
          f"(target < {TARGET_S:g} s); load average {load:.1f} on {os.cpu_count()} CPUs")
    print(f"  {'page':<12} {'median':>7}  {'x target':>8}  {'server CPU':>10}  runs (the first pays for making the indexes)")
    for name, got in times.items():
        m = statistics.median(got)
        print(f"  {name:<12} {m:6.2f}s  {m / TARGET_S:7.2f}x  {statistics.median(cpu[name]):9.2f}s  "
              f"{', '.join(f'{x:.2f}' for x in got)}" + ("" if m < TARGET_S else "  MISSED"))
    if args.workspace is None:
        shutil.rmtree(ws.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
