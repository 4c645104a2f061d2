"""A sample's page (prompt, answer, code and every record, the failing line marked) and an agent run's trace."""

from __future__ import annotations

from typing import Any

from benchwright.results.report import DISAGREE, format_value
from benchwright.results.samples import disagree
from benchwright.server.service import Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame
from benchwright.server.ui.results import sample_page as page_of
from benchwright.server.ui.text import link_to, preformatted, testid


def _name(s: dict[str, Any]) -> str:
    return f"{s['task']} [{s['language']}] {s['model']} #{s['sample']}"


def neighbours_bar(service: Service, run_id: str, execution_id: str) -> None:
    """Links back to the run and to the previous and next sample in the run's order."""
    from nicegui import ui

    n = service.sample_neighbours(run_id, execution_id)
    with ui.row().classes("items-center gap-6 text-sm"):
        testid(ui.link(f"back to run {run_id}", link_to("/run", run_id)), "back-to-run")
        for key, arrow in (("previous", "previous"), ("next", "next")):
            other = n[key]
            if other is None:
                testid(ui.label(f"no {arrow} sample").classes("text-grey-6"), f"{key}-sample")
            else:
                testid(ui.link(f"{arrow}: {_name(other)}", link_to(page_of(other), run_id, other["execution_id"])),
                       f"{key}-sample")
        if n["position"]:
            testid(ui.label(f"sample {n['position']} of {n['count']}").classes("text-grey-7"), "sample-position")


def sample_page(service: Service, access: Access, run_id: str, execution_id: str) -> None:
    """A sample: its prompt, raw answer, extracted code and every record, the failing line marked."""
    from nicegui import ui

    if denied(access, "Sample"):
        return
    data = service.sample(run_id, execution_id)
    records = data["records"]
    first = records[0] if records else {}
    with frame(f"{first.get('task', execution_id)} [{first.get('language', '')}] {first.get('model', '')}", access):
        neighbours_bar(service, run_id, execution_id)
        gen = data["generation"] or {}
        with ui.expansion("Prompt").classes("w-full"):
            preformatted(gen.get("prompt") or "")
        with ui.expansion("Raw answer").classes("w-full"):
            preformatted(gen.get("raw") or "")
        ui.label("Extracted code").classes("text-lg")
        preformatted(gen.get("code") or "")
        ui.label("Records").classes("text-lg")
        for rec in records:
            failing = rec.get("test_case") is not None and rec.get("status") not in (None, "pass")
            title = (f"{rec['criterion']}" + (f" / {rec['test_case']}" if rec.get("test_case") else "")
                     + f": {rec.get('verdict') or ''} {format_value(rec.get('score'), rec.get('unit'))}"
                     + (f" [{rec.get('status')}]" if rec.get("status") else ""))
            with testid(ui.expansion(title, value=failing).classes("w-full border"),
                        f"record-{rec['criterion']}-{rec.get('test_case') or 'sample'}"):
                if rec.get("error"):
                    ui.label(str(rec["error"])).classes("text-red-700").props('data-testid="record-error"')
                if rec.get("output"):
                    preformatted(str(rec["output"]))
                if rec.get("code"):
                    _code_with_line(str(rec["code"]), rec.get("line"))


def _code_with_line(code: str, line: int | None) -> None:
    """The exact code executed, the failing line marked."""
    from nicegui import ui

    with ui.column().classes("w-full font-mono text-sm gap-0 bg-slate-50 p-2"):
        for n, text in enumerate(code.splitlines(), 1):
            marked = line is not None and n == line
            shown = ui.label(f"{n:4d}  {text}").classes(
                "whitespace-pre " + ("bg-red-200 font-bold" if marked else ""))
            if marked:
                testid(shown, "error-line")


def agent_page(service: Service, access: Access, run_id: str, execution_id: str) -> None:
    """An agent run's trace: its scorers, the judge's verdict, the run badge, the diff and trajectory."""
    from nicegui import ui

    if denied(access, "Agent trace"):
        return
    data = service.sample(run_id, execution_id)
    records = data["records"]
    by = {r["criterion"]: r for r in records}
    first = records[0] if records else {}
    with frame(f"Agent trace: {first.get('model', '')} on {first.get('task_source', '')}/{first.get('task', '')}", access):
        neighbours_bar(service, run_id, execution_id)
        gates = {g: str((by.get(g) or {}).get("verdict") or "n/a").upper() for g in ("objective", "judge")}
        if disagree(gates):
            testid(ui.label(f"{DISAGREE}: the objective checks say {gates['objective']}, the judge says "
                            f"{gates['judge']}").classes("text-lg font-bold bg-amber-3 text-amber-10 px-3 py-1 rounded"),
                   "disagree")
        scorers = [r for r in records if (r.get("details") or {}).get("kind") == "scorer"]
        objective = by.get("objective")
        with ui.card().classes("w-full").props('data-testid="scorers-card"'):
            head = (f"Scorers: OVERALL {(objective.get('verdict') or 'n/a').upper()}, mean score "
                    f"{format_value(objective.get('score'), 'score')}" if objective else "Scorers")
            ui.label(head).classes("text-lg font-semibold")
            for r in scorers:
                details = r.get("details") or {}
                verdict = (r.get("verdict") or "n/a").upper()
                hard = verdict == "FAIL" and r.get("required")
                title = (f"{verdict}  {r['criterion']} ({details.get('type')})"
                         + (" advisory" if details.get("advisory") else "")
                         + f"  {format_value(r.get('score'), 'score')}")
                with testid(ui.expansion(title, value=bool(hard)).classes("w-full"), f"scorer-{r['criterion']}"):
                    preformatted(str(r.get("output") or r.get("error") or ""))
        judge = data["judge"] or {}
        with ui.card().classes("w-full").props('data-testid="judge-card"'):
            verdict = judge.get("verdict") or "n/a"
            ui.label(f"Judge verdict: {verdict}").classes("text-lg font-semibold")
            if judge:
                with ui.row():
                    for key in ("task_completion", "instruction_adherence", "efficiency"):
                        value = (judge.get("scores") or {}).get(key)
                        with ui.card().classes("p-2"):
                            ui.label(key.replace("_", " "))
                            ui.label(f"{value:g}/5" if isinstance(value, int | float) else "-") \
                                .classes("text-xl")
                if judge.get("failure_mode"):
                    ui.label(f"failure mode: {judge['failure_mode']}")
                ui.label(judge.get("reasoning") or "")
                claims = judge.get("fact_check") or []
                if claims:
                    ui.table(columns=[{"name": "claim", "label": "Claim", "field": "claim", "align": "left"},
                                      {"name": "supported", "label": "Supported", "field": "supported"},
                                      {"name": "evidence", "label": "Evidence", "field": "evidence",
                                       "align": "left"}],
                             rows=[{"claim": c.get("claim"), "supported": str(c.get("supported")),
                                    "evidence": c.get("evidence")} for c in claims], row_key="claim")
                ui.label(f"judge {judge.get('model')}, scored {judge.get('scored_at')}").classes("text-xs")
            else:
                ui.label(str((by.get("judge") or {}).get("output") or "no judge"))
        badge = by.get("run-badge") or {}
        ui.label(f"Run badge: {(badge.get('verdict') or 'n/a').upper()} - {badge.get('output') or ''}")
        files = data["files"]
        with ui.expansion("Diff", value=True).classes("w-full"):
            preformatted(files.get("diff.patch") or "(no change)")
        with ui.expansion("Trajectory").classes("w-full"):
            preformatted(files.get("trajectory.jsonl") or "(no steps reported)")


def register(service: Service, access: Access) -> None:
    """Define the ``/sample`` and ``/agent`` pages (relative to the UI's mount)."""
    from nicegui import ui

    @ui.page("/sample/{run_id}/{execution_id}")
    def _sample(run_id: str, execution_id: str) -> None:
        sample_page(service, access, run_id, execution_id)

    @ui.page("/agent/{run_id}/{execution_id}")
    def _agent(run_id: str, execution_id: str) -> None:
        agent_page(service, access, run_id, execution_id)
