"""A sample's page (prompt, answer, code and every record, the failing line marked) and an agent run's trace."""

from __future__ import annotations

from benchwright.results.report import format_value
from benchwright.server.service import Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame
from benchwright.server.ui.text import preformatted, testid


def register(service: Service, access: Access) -> None:
    from nicegui import ui

    @ui.page("/sample/{run_id}/{execution_id}")
    def sample_page(run_id: str, execution_id: str) -> None:
        if denied(access, "Sample"):
            return
        data = service.sample(run_id, execution_id)
        records = data["records"]
        first = records[0] if records else {}
        with frame(f"{first.get('task', execution_id)} [{first.get('language', '')}] {first.get('model', '')}", access):
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
        with ui.column().classes("w-full font-mono text-sm gap-0 bg-slate-50 p-2"):
            for n, text in enumerate(code.splitlines(), 1):
                marked = line is not None and n == line
                shown = ui.label(f"{n:4d}  {text}").classes(
                    "whitespace-pre " + ("bg-red-200 font-bold" if marked else ""))
                if marked:
                    testid(shown, "error-line")

    @ui.page("/agent/{run_id}/{execution_id}")
    def agent_page(run_id: str, execution_id: str) -> None:
        if denied(access, "Agent trace"):
            return
        data = service.sample(run_id, execution_id)
        records = data["records"]
        by = {r["criterion"]: r for r in records}
        first = records[0] if records else {}
        with frame(f"Agent trace: {first.get('model', '')} on {first.get('task_source', '')}/{first.get('task', '')}", access):
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
