"""How long the web UI takes to show a run of 20,000 records: the results page (model x criterion
table, chart, samples) and the data explorer (filtered and paged on the server), in Debian's
Chromium driven by Playwright against `benchwright serve`. Target (issue 7): under 2 s each.

The run is made here: 1,000 samples (250 tasks x 2 models x 2 samples), each with 17 test-case
records and 3 sample records (unit-test, cpu-usage, ram-usage), written and summarised as a
real run would be. Usage::

    .venv/bin/python benchmarks/ui.py [--records 20000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from playwright.sync_api import sync_playwright

from benchwright.results.record import Record
from benchwright.results.summary import summarize
from benchwright.run.folder import RunFolder
from benchwright.workspace.workspace import init_workspace

BIN = Path(sys.executable).parent / "benchwright"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync", "--disable-dev-shm-usage"]
TARGET_S = 2.0


def make_run(ws: Path, records: int) -> str:
    run_id = "ui-bench"
    folder = RunFolder.create(ws / "results" / run_id, {"run_id": run_id, "config": {}, "task_sources": []})
    per_sample = 20
    samples = max(records // per_sample, 1)
    for n in range(samples):
        task, model, sample = f"task-{n // 4:03d}", ("model-a", "model-b")[n % 2], (n // 2) % 2
        eid = f"e{n:06d}"
        fail = n % 7 == 0
        base = dict(run_id=run_id, execution_id=eid, task_source="bench", task=task, language="python",
                    model=model, sample=sample, outcome="fail" if fail else "pass")
        batch = [Record(**base, criterion="unit-test", executor="UnitTest", test_case=f"t{i}",
                        score=0.0 if fail and i == 0 else 1.0, unit="success",
                        verdict="fail" if fail and i == 0 else "pass", status="fail" if fail and i == 0 else "pass",
                        code=f"assert f({i}) == {i}\n", line=1 if fail and i == 0 else None)
                 for i in range(per_sample - 3)]
        batch += [Record(**base, criterion="unit-test", executor="UnitTest", score=0.0 if fail else 1.0,
                         unit="success", verdict="fail" if fail else "pass"),
                  Record(**base, criterion="cpu-usage", executor="CpuUsage", score=3.0 + n % 5, unit="ms"),
                  Record(**base, criterion="ram-usage", executor="RamUsage", score=1e7, unit="bytes")]
        folder.append_records(batch)
    folder.write_summary(summarize(folder.records(), run_id))
    folder.write_status({"state": "completed", "runId": run_id, "taskSourceStatuses": {
        "bench": {"total": samples, "completed": samples, "filteredOut": 0, "error": 0}}}, force=True)
    return run_id


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    ws = Path(tempfile.mkdtemp(prefix="bw-ui-bench-")) / "ws"
    init_workspace(ws)
    run_id = make_run(ws, args.records)
    total = sum(1 for _ in (ws / "results" / run_id / "records.jsonl").open())
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([str(BIN), "serve", str(ws), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                httpx.get(f"{base}/api/health", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        results, explorer = [], []
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1300, "height": 900})
            page.goto(f"{base}/ui/")  # the first page load pays for NiceGUI's assets
            for _ in range(args.repeats):
                start = time.perf_counter()
                page.goto(f"{base}/ui/run/{run_id}")
                page.wait_for_selector("[data-testid=summary]")
                page.wait_for_selector("text=Samples (", timeout=60_000)
                results.append(time.perf_counter() - start)
                start = time.perf_counter()
                page.goto(f"{base}/ui/explorer?run={run_id}")
                page.wait_for_selector(f"text=of {total} records", timeout=60_000)
                page.wait_for_selector("[data-testid=explorer] tbody tr")
                explorer.append(time.perf_counter() - start)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)
    r, e = statistics.median(results), statistics.median(explorer)
    print(f"a run of {total} records, median of {args.repeats} page loads in Chromium (target < {TARGET_S:g} s)")
    print(f"  results page:  {r:5.2f} s  ({r / TARGET_S:.2f}x the target)  runs: {', '.join(f'{x:.2f}' for x in results)}")
    print(f"  data explorer: {e:5.2f} s  ({e / TARGET_S:.2f}x the target)  runs: {', '.join(f'{x:.2f}' for x in explorer)}")


if __name__ == "__main__":
    main()
