"""The Compare page: two runs side by side. The paired differences read as the CLI prints them
(units, percentage points, the interval and p) and coloured (better green, worse red, no
significant change grey); the tasks that flipped each open their sample in both runs."""

from __future__ import annotations

from typing import Any

from benchwright.errors import InfraError
from benchwright.results.compare import (
    DELTA_HEADER,
    ComparisonResult,
    Delta,
    Flip,
    delta_cells,
    paired_lines,
    summary_line,
)
from benchwright.results.samples import SampleInfo
from benchwright.server.service import Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame, problem
from benchwright.server.ui.results import coloured, rel_link, sample_page
from benchwright.server.ui.table import column, paged_table, results_table
from benchwright.server.ui.text import link_to, testid

VERDICT_STATE = {"better": "pass", "worse": "fail", "no significant difference": "N/A", "same": "N/A"}
"""The colour of a change: better as a pass, worse as a fail, the rest grey."""
DELTA_KEYS = ("model", "criterion", "unit", "a", "b", "delta", "ci", "p", "change")
TaskKey = tuple[str, str, str, str]


def delta_row(n: int, d: Delta) -> dict[str, Any]:
    """One row of the deltas table: the CLI's cells, the delta and the change coloured."""
    cells: dict[str, Any] = dict(zip(DELTA_KEYS, delta_cells(d), strict=True))
    state = VERDICT_STATE.get(d.verdict, "")
    cells["delta"] = coloured(cells["delta"], state)
    cells["change"] = coloured(cells["change"], state)
    return {"key": str(n), **cells}


def _by_task(samples: list[SampleInfo]) -> dict[TaskKey, list[SampleInfo]]:
    out: dict[TaskKey, list[SampleInfo]] = {}
    for s in samples:
        out.setdefault((s.task_source, s.task, s.language, s.model), []).append(s)
    return out


def _open(run_id: str, samples: list[SampleInfo], passed: int, total: int, side: str) -> dict[str, Any]:
    """A link to the sample of a flipped task in one run: the first that did not pass, if any."""
    text = f"{passed}/{total} passed"
    if not samples:
        return coloured(text, "")
    chosen = next((s for s in samples if s.outcome != "pass"), samples[0])
    return coloured(text, "pass" if passed == total else "fail",
                    rel_link(0, sample_page(chosen), run_id, chosen.execution_id), f"flip-{side}-{chosen.task}")


def _flips(result: dict[str, Any], in_a: dict[TaskKey, list[SampleInfo]],
           in_b: dict[TaskKey, list[SampleInfo]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for kind in ("regressions", "fixes"):
        for f in (Flip(**x) for x in result[kind]):
            key = (f.task_source, f.task, f.language, f.model)
            out.append({
                "key": f"{kind}:{len(out)}",
                "kind": coloured(f.kind, "fail" if f.kind == "regression" else "pass"),
                "task": f"{f.task_source}/{f.task} [{f.language}] {f.model}: "
                        f"{f.a_passed}/{f.a_samples} -> {f.b_passed}/{f.b_samples}",
                "a": _open(result["run_a"], in_a.get(key, []), f.a_passed, f.a_samples, "a"),
                "b": _open(result["run_b"], in_b.get(key, []), f.b_passed, f.b_samples, "b")})
    return out


def _lines(result: dict[str, Any]) -> list[str]:
    """The CLI's lines under the table: each model's paired pass rate, and the flips counted."""
    shown = ComparisonResult(
        run_a=result["run_a"], run_b=result["run_b"], models=result["models"], paired=result["paired"],
        regressions=[Flip(**f) for f in result["regressions"]], fixes=[Flip(**f) for f in result["fixes"]],
        tasks_compared=result["tasks_compared"], tasks_only_a=result["tasks_only_a"],
        tasks_only_b=result["tasks_only_b"])
    return [*paired_lines(shown), summary_line(shown)]


FLIPS_PAGE = 25
"""Flipped tasks sent to the page at once (the server pages through the rest: hundreds of rows
slow the page)."""


def show_comparison(service: Service, result: dict[str, Any]) -> None:
    """The deltas, the paired lines, and the regressions and fixes with links to both samples."""
    from nicegui import ui

    aligns = ("left", "left", "left", "right", "right", "right", "right", "right", "left")
    results_table([column(*c) for c in zip(DELTA_KEYS, DELTA_HEADER, aligns, strict=True)],
           [delta_row(n, Delta(**d)) for n, d in enumerate(result["deltas"])], "deltas")
    for line in _lines(result):
        testid(ui.label(line).classes("text-sm font-semibold"), "paired-line")
    in_a = _by_task(service.run_index(result["run_a"]).samples)
    in_b = _by_task(service.run_index(result["run_b"]).samples)
    flips = _flips(result, in_a, in_b)
    for kind in ("regressions", "fixes"):
        testid(ui.label(f"{kind}: {len(result[kind])}").classes("text-lg"), kind)
    if flips:
        paged_table([column("kind", "Flip"), column("task", "Task and model: A -> B passed"),
                     column("a", f"A: {result['run_a']}"), column("b", f"B: {result['run_b']}")],
                    flips, "flips", FLIPS_PAGE)


def compare_page(service: Service, access: Access, a: str | None = None, b: str | None = None) -> None:
    """Two runs to choose and, once both are chosen, their comparison."""
    from nicegui import ui

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
            show_comparison(service, service.compare(a, b))
        except InfraError as e:
            problem(service.shown(e))


def register(service: Service, access: Access) -> None:
    """Define the ``/compare`` page (relative to the UI's mount)."""
    from nicegui import ui

    @ui.page("/compare")
    def _compare(a: str | None = None, b: str | None = None) -> None:
        compare_page(service, access, a, b)
