"""The Runs page and a run's page: its progress while it runs, its results once it ended."""

from __future__ import annotations

from benchwright.errors import InfraError
from benchwright.server.service import Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame, problem
from benchwright.server.ui.results import show_results
from benchwright.server.ui.text import link_to


def register(service: Service, access: Access) -> None:
    from nicegui import ui

    @ui.page("/runs")
    def runs_page() -> None:
        if denied(access, "Runs"):
            return
        with frame("Runs", access):
            for run in service.runs():
                ui.link(f"{run['run_id']}: {run['state']}", link_to("/run", run["run_id"]))

    @ui.page("/run/{run_id}")
    def run_page(run_id: str) -> None:
        if denied(access, f"Run {run_id}"):
            return
        with frame(f"Run {run_id}", access):
            progress = ui.column().classes("w-full")
            results = ui.column().classes("w-full")
            seen = {"state": ""}

            def refresh() -> None:
                st = service.status(run_id)
                progress.clear()
                with progress:
                    ui.label(f"state: {st['state']}").props('data-testid="run-state"')
                    if st["state"] == "damaged":
                        problem(str(st["status"].get("error")))
                    for name, c in (st["status"].get("taskSourceStatuses") or {}).items():
                        done = c.get("completed", 0) + c.get("error", 0)
                        total = max(c.get("total", 0), 1)
                        ui.label(f"{name}: {done}/{c.get('total', 0)} ({c.get('error', 0)} with errors)")
                        ui.linear_progress(value=done / total, show_value=False).classes("w-96")
                if st["state"] != seen["state"] and st["state"] not in ("running", "starting"):
                    seen["state"] = st["state"]
                    results.clear()
                    with results:
                        try:
                            show_results(service, run_id)
                        except InfraError as e:  # a damaged run folder: say which file
                            problem(service.shown(e))
                    timer.deactivate()
                seen["state"] = st["state"]

            timer = ui.timer(1.0, refresh)
            refresh()
