"""The Compare page: two runs side by side, with paired differences and the tasks that flipped."""

from __future__ import annotations

from benchwright.errors import InfraError
from benchwright.results.compare import Delta, format_interval, format_p
from benchwright.server.service import Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame, problem
from benchwright.server.ui.text import cell, link_to, testid


def register(service: Service, access: Access) -> None:
    from nicegui import ui

    @ui.page("/compare")
    def compare_page(a: str | None = None, b: str | None = None) -> None:
        if denied(access, "Compare two runs"):
            return
        with frame("Compare two runs", access):
            runs = [r["run_id"] for r in service.runs()]
            with ui.row().classes("items-end"):
                first = ui.select(runs, value=a or (runs[1] if len(runs) > 1 else None), label="run A") \
                    .classes("w-80").props('data-testid="run-a"')
                second = ui.select(runs, value=b or (runs[0] if runs else None), label="run B") \
                    .classes("w-80").props('data-testid="run-b"')
                ui.button("Compare", on_click=lambda: ui.navigate.to(link_to(
                    "/compare", a=str(first.value or ""), b=str(second.value or "")))).props('data-testid="compare"')
            if not (a and b):
                return
            try:
                result = service.compare(a, b)
            except InfraError as e:
                problem(service.shown(e))
                return
            columns = [{"name": c, "label": label, "field": c, "align": "left"} for c, label in (
                ("model", "model"), ("criterion", "criterion"), ("unit", "unit"), ("a", "a"), ("b", "b"),
                ("delta", "delta"), ("ci", "paired Δ 95 % CI"), ("p", "p"), ("change", "change"))]
            deltas = [Delta(**d) for d in result["deltas"]]
            ui.table(columns=columns, row_key="key", rows=[
                {"key": f"{d.model}:{d.criterion}", "model": d.model, "criterion": d.criterion,
                 "unit": d.unit, "a": cell(d.a), "b": cell(d.b), "delta": cell(d.delta),
                 "ci": format_interval(d), "p": format_p(d), "change": d.verdict or d.change}
                for d in deltas]).classes("w-full").props('data-testid="deltas" dense flat')
            for kind in ("regressions", "fixes"):
                flips = result[kind]
                testid(ui.label(f"{kind}: {len(flips)}").classes("text-lg"), kind)
                for f in flips:
                    ui.label(f"{f['task_source']}/{f['task']} [{f['language']}] {f['model']}: "
                             f"{f['a_passed']}/{f['a_samples']} -> {f['b_passed']}/{f['b_samples']}")
