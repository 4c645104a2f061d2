"""The Runs page and a run's page: its name, state and controls (cancel, resume, retry errors),
its progress per model and per task source with an ETA while it runs, its results once it ended.
Every figure comes from :meth:`Service.status` (what ``GET /api/runs/{id}`` and ``benchwright
status`` show)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchwright.errors import InfraError, UserError
from benchwright.run.progress import ACTIVE, Counts, RunProgress, format_eta
from benchwright.server.service import Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame, may_write, problem
from benchwright.server.ui.results import show_results
from benchwright.server.ui.text import link_to, testid

RUN_COLUMNS = ("Run", "Created", "Config", "Models", "State", "Done", "Errors", "Pass rate")
GRID = "grid-template-columns: minmax(12rem, 2fr) 10rem minmax(8rem, 1fr) minmax(10rem, 2fr) 7rem 6rem 4rem 6rem"
COUNT_GRID = "grid-template-columns: minmax(10rem, 2fr) 7rem 5rem minmax(10rem, 2fr) 10rem"
SOURCE_GRID = "grid-template-columns: minmax(10rem, 2fr) 7rem 5rem minmax(10rem, 2fr)"


def when(created: str | None) -> str:
    """``2026-11-25T22:40:16+00:00`` as ``2026-11-25 22:40 UTC``; "unknown" when not recorded."""
    if not created:
        return "unknown"
    day, _, rest = created.partition("T")
    return f"{day} {rest[:5]} UTC" if rest else day


def rate(value: float | None) -> str:
    """A pass rate as a percentage; "not measured" while there is none."""
    return "not measured" if value is None else f"{value:.1%}"


def state_label(state: str, prefix: str = "") -> Any:
    """The run's state, coloured by what it means (the text says it; the colour only helps)."""
    from nicegui import ui

    label = ui.label(prefix + state).classes(
        "font-semibold " + ("text-green-700" if state == "completed" else
                            "text-blue-700" if state in ACTIVE else
                            "text-red-700" if state in ("failed", "damaged") else "text-amber-700"))
    return testid(label, "run-state")


def _runs_table(runs: list[dict[str, Any]]) -> None:
    from nicegui import ui

    with ui.grid().classes("w-full gap-x-4 gap-y-1 items-center text-sm").style(GRID):
        for title in RUN_COLUMNS:
            ui.label(title).classes("font-semibold text-slate-600 border-b")
        for run in runs:
            progress = RunProgress.model_validate(run["progress"])
            testid(ui.link(run["run_id"], link_to("/run", run["run_id"])).classes("break-all"), "run-link")
            ui.label(when(run.get("created")))
            ui.label(run.get("config") or "unknown").classes("break-all")
            ui.label(", ".join(run.get("models") or []) or "none recorded").classes("break-all")
            state_label(run["state"])
            ui.label(f"{progress.done} / {progress.total}")
            ui.label(str(progress.errors)).classes("text-red-700" if progress.errors else "")
            ui.label(rate(run.get("pass_rate")))


def _count_rows(title: str, rows: dict[str, Counts], state: str, kind: str) -> None:
    """One line per model (or task source): done of total, errors, a bar; per model while the
    run runs, its ETA."""
    from nicegui import ui

    if not rows:
        return
    eta = kind == "Model" and state == "running"
    ui.label(title).classes("text-lg font-semibold mt-2")
    with ui.grid().classes("w-full gap-x-4 gap-y-1 items-center text-sm").style(COUNT_GRID if eta else SOURCE_GRID):
        for head in (kind, "Done", "Errors", "Progress", *(["ETA"] if eta else [])):
            ui.label(head).classes("font-semibold text-slate-600 border-b")
        for name, c in rows.items():
            testid(ui.label(name).classes("break-all"), f"{kind.lower()}-name")
            testid(ui.label(f"{c.done} / {c.total}"), f"{kind.lower()}-done")
            ui.label(str(c.errors)).classes("text-red-700" if c.errors else "")
            ui.linear_progress(value=c.done / c.total if c.total else 0.0, show_value=False)
            if eta:
                testid(ui.label(format_eta(c, state)), "model-eta")


def show_progress(st: dict[str, Any]) -> None:
    """The run's counts: overall, per model, per task source; the ETA while it runs."""
    from nicegui import ui

    progress = RunProgress.model_validate(st["progress"])
    if st["state"] == "damaged":
        problem(str(st.get("reason") or st["status"].get("error")))
        return
    if st.get("reason"):
        ui.label(str(st["reason"])).classes("text-amber-700")
    with ui.row().classes("items-center gap-4"):
        testid(ui.label(f"{progress.done} of {progress.total} samples done"), "run-done").classes("text-lg")
        testid(ui.label(f"{progress.errors} with errors"), "run-errors") \
            .classes("text-red-700" if progress.errors else "text-slate-600")
        if progress.filtered_out:
            ui.label(f"{progress.filtered_out} filtered out").classes("text-slate-600")
        eta = format_eta(progress, st["state"])
        if eta:
            testid(ui.label(eta), "run-eta").classes("text-slate-600")
    ui.linear_progress(value=progress.done / progress.total if progress.total else 0.0,
                       show_value=False).classes("w-full")
    _count_rows("Per model", progress.models, st["state"], "Model")
    _count_rows("Per task source", progress.sources, st["state"], "Source")


def _header(st: dict[str, Any]) -> None:
    from nicegui import ui

    with ui.row().classes("items-center gap-6 text-sm"):
        state_label(st["state"], "state: ").classes("text-lg")
        ui.label(f"created {when(st.get('created'))}")
        ui.label(f"config {st.get('config') or 'unknown'}").classes("break-all")
        models = ", ".join(st.get("models") or []) or "none recorded"
        ui.label(f"models {models}").classes("break-all")
        if st.get("pass_rate") is not None:
            testid(ui.label(f"pass rate {rate(st.get('pass_rate'))}"), "run-pass-rate")


def _controls(service: Service, access: Access, run_id: str, st: dict[str, Any],
              after: Callable[[], None], messages: Any) -> None:
    """The buttons that apply to the run in its state."""
    from nicegui import run, ui

    async def act(what: str) -> None:
        messages.clear()
        if not may_write(access, messages):
            return
        try:
            if what == "cancel":
                await run.io_bound(service.cancel, run_id)
            else:
                await run.io_bound(service.resume, run_id, what == "retry")
        except UserError as e:
            with messages:
                problem(service.shown(e))
        after()

    state = st["state"]
    errors = int(st["progress"].get("errors") or 0)
    with ui.row().classes("gap-2"):
        if state in ACTIVE:
            testid(ui.button("Cancel", on_click=lambda: act("cancel")).props("color=negative"), "cancel")
        if st.get("resumable"):
            testid(ui.button("Resume", on_click=lambda: act("resume")), "resume")
        if errors and state not in ACTIVE and state != "damaged":
            testid(ui.button("Retry errors", on_click=lambda: act("retry")).props("outline"), "retry-errors")


def runs_page(service: Service, access: Access) -> None:
    """Every run: its name, creation, config, models, state, progress and pass rate."""
    from nicegui import ui

    if denied(access, "Runs"):
        return
    with frame("Runs", access):
        runs = service.runs()
        if not runs:
            ui.label("No runs yet: start one from Launch.")
        _runs_table(runs)


def run_page(service: Service, access: Access, run_id: str) -> None:
    """One run: its state and controls, its progress (refreshed while it runs), its results."""
    from nicegui import ui

    if denied(access, f"Run {run_id}"):
        return
    with frame(f"Run {run_id}", access):
        top = ui.column().classes("w-full gap-2")
        messages = ui.column()
        progress = ui.column().classes("w-full")
        results = ui.column().classes("w-full")
        seen: dict[str, Any] = {"state": "", "top": None}

        def refresh() -> None:
            st = service.status(run_id)
            shown = (st["state"], st.get("resumable"), bool(st["progress"].get("errors")), st.get("pass_rate"))
            if shown != seen["top"]:  # rebuilt only when it changes: a button being clicked stays
                seen["top"] = shown
                top.clear()
                with top:
                    _header(st)
                    _controls(service, access, run_id, st, wake, messages)
            progress.clear()
            with progress:
                show_progress(st)
            active = st["state"] in ACTIVE
            if st["state"] != seen["state"]:
                results.clear()
                if not active:
                    with results:
                        ui.label("Results" if st["state"] == "completed" else "Results so far") \
                            .classes("text-xl font-semibold mt-4")
                        try:
                            show_results(service, run_id)
                        except InfraError as e:  # a damaged run folder: say which file
                            problem(service.shown(e))
            seen["state"] = st["state"]
            timer.active = active

        def wake() -> None:
            refresh()
            timer.activate()

        timer = ui.timer(1.0, refresh)
        refresh()


def register(service: Service, access: Access) -> None:
    """Define the ``/runs`` and ``/run/{run_id}`` pages (relative to the UI's mount)."""
    from nicegui import ui

    @ui.page("/runs")
    def _runs() -> None:
        runs_page(service, access)

    @ui.page("/run/{run_id}")
    def _run(run_id: str) -> None:
        run_page(service, access, run_id)
