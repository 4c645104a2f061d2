"""The Launch page: choose a config (and task sources), see what the run will do and cost
(:meth:`Service.preview`, the same as ``POST /api/runs/preview``), name it, start it."""

from __future__ import annotations

from typing import Any

from benchwright.errors import InputError, UserError
from benchwright.server.service import Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame, may_write, problem
from benchwright.server.ui.text import link_to, testid

MODEL_GRID = "grid-template-columns: minmax(10rem, 2fr) minmax(6rem, 1fr) 7rem 9rem 8rem 7rem 8rem"


def money(value: float | None) -> str:
    """A cost in dollars; "no price" when it could not be estimated (never $0 for unknown)."""
    if value is None:
        return "no price"
    return f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def show_problems(error: UserError, service: Service) -> None:
    """Every problem of a refused preview or launch, one per line."""
    if isinstance(error, InputError):
        for p in error.problems:
            problem(service.shown(Exception(p.render())))
    else:
        problem(service.shown(error))


def show_preview(p: dict[str, Any]) -> None:
    """The preview: the product of the run's dimensions, the cache hits, the cost per model."""
    from nicegui import ui

    langs = len(p["languages"])
    models = len(p["models"])
    testid(ui.label(f"{p['tasks']} tasks x {langs} languages x {models} models x {p['samples']} samples "
                    f"= {p['generations']} generations, {p['executions']} test executions"),
           "preview-size").classes("text-lg")
    if p.get("agent_runs"):
        ui.label(f"and {p['agent_runs']} coding-agent runs")
    cached = f"{p['cached']} of {p['generations']} generations are in the generation cache"
    if not p["cache_used"]:
        cached += " (this config does not read the cache: cache is false or refresh)"
    testid(ui.label(cached), "preview-cached")
    cost = money(p["cost_usd"])
    if p["cost_usd"] is not None and p["unpriced"]:
        cost += f" plus {len(p['unpriced'])} model(s) with no price"
    testid(ui.label(f"estimated cost: {cost}"), "preview-cost").classes("font-semibold")
    if p.get("judge"):
        ui.label(f"the llm-judge ({p['judge']}) is asked too: its calls are not in the estimate") \
            .classes("text-sm text-slate-600")
    with ui.grid().classes("w-full gap-x-4 gap-y-1 text-sm items-center").style(MODEL_GRID):
        for head in ("Model", "Provider", "Generations", "Cached", "Tokens in (est.)", "Tokens out", "Cost (est.)"):
            ui.label(head).classes("font-semibold text-slate-600 border-b")
        for m in p["by_model"]:
            testid(ui.label(m["model"]).classes("break-all"), "preview-model")
            ui.label(m["provider"]).classes("break-all")
            ui.label(str(m["generations"]))
            ui.label("not cached" if m["cached"] is None else str(m["cached"]))
            ui.label(f"{m['tokens_in']:,}")
            ui.label("unknown" if m["tokens_out"] is None else f"{m['tokens_out']:,}")
            testid(ui.label(money(m["cost_usd"]) if m["price_known"] else "no price"), "preview-model-cost")


def launch_page(service: Service, access: Access) -> None:
    """A config and task sources to choose, the run's preview, a name, and Start."""
    from nicegui import run, ui

    if denied(access, "Launch a run"):
        return
    with frame("Launch a run", access):
        configs = [f.path for f in service.list_files("config")]
        with ui.row().classes("items-start gap-4"):
            chosen = ui.select(configs, value=configs[0] if configs else None, label="execution config") \
                .classes("w-96").props('data-testid="config"')
            sources = ui.select([f.path for f in service.list_files("task-source")], value=[], multiple=True,
                                label="task sources (none: the config's own)").classes("w-96") \
                .props('data-testid="task-sources" use-chips')
            name = ui.input("run name (optional)", placeholder="config-date-time") \
                .classes("w-72").props('data-testid="run-name"')
        ui.label("Preview").classes("text-xl font-semibold")
        preview = ui.column().classes("w-full gap-1")

        asked = {"n": 0}  # only the latest preview asked for is shown

        async def show() -> None:
            asked["n"] += 1
            mine = asked["n"]
            preview.clear()
            if not chosen.value:
                with preview:
                    ui.label("No config yet: write one under configs/ first.")
                return
            with preview:
                ui.label("working out the preview...").classes("text-slate-600")
            try:  # off the UI's event loop: it loads every task and reads the cache
                p = await run.io_bound(service.preview, str(chosen.value), list(sources.value or []))
            except UserError as e:
                if mine != asked["n"]:
                    return
                preview.clear()
                with preview:
                    show_problems(e, service)
                return
            if mine != asked["n"]:
                return
            preview.clear()
            if p is not None:
                with preview:
                    show_preview(p)

        async def start() -> None:
            errors.clear()
            if not may_write(access, errors):
                return
            try:  # off the UI's event loop: launching checks every file and may ask providers
                rid = await run.io_bound(service.launch, str(chosen.value), list(sources.value or []),
                                         str(name.value or "").strip() or None)
            except UserError as e:
                with errors:
                    show_problems(e, service)
                return
            if rid is None:
                return
            await run.io_bound(service.wait_started, rid)
            ui.navigate.to(link_to("/run", rid))

        chosen.on_value_change(show)
        sources.on_value_change(show)
        testid(ui.button("Start", on_click=start), "start")
        errors = ui.column()
        ui.timer(0.1, show, once=True)


def register(service: Service, access: Access) -> None:
    """Define the ``/launch`` page (relative to the UI's mount)."""
    from nicegui import ui

    @ui.page("/launch")
    def _launch() -> None:
        launch_page(service, access)
