"""The pages of the web UI. Each one reads and writes through the service layer."""

from __future__ import annotations

from typing import Any

from benchwright.errors import InfraError, InputError, UserError
from benchwright.results.compare import Delta, format_interval, format_p
from benchwright.results.reasons import notes as reason_notes
from benchwright.results.report import (
    CI_SUFFIX,
    GATE_HEADER,
    NONE,
    format_value,
    gate_rows,
    interval_note,
    interval_rows,
    interval_text,
    rows,
)
from benchwright.run.jsonl import SkippedLines
from benchwright.server.service import FOLDERS, Conflict, FileKind, Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame, problem
from benchwright.server.ui.text import link_to, preformatted, testid

FORM_PAGES: dict[str, str] = {"config": "/config", "scenario": "/scenario", "task-source": "/tasks"}
"""The form editor of each kind of file (the YAML editor is /edit for every kind)."""
SAMPLES_SHOWN = 200
"""Samples listed on a run's page; the data explorer pages through the rest."""
EXPLORER_PAGE = 50
FILTERS = ("model", "task", "criterion", "verdict", "language", "outcome")
COLUMNS = ("run", "task", "language", "model", "sample", "criterion", "test_case", "verdict", "score", "unit",
           "outcome", "judge_verdict")


def _kind(path: str) -> FileKind | None:
    top = path.split("/", 1)[0]
    return next((k for k, folder in FOLDERS.items() if folder == top), None)


def register(service: Service, *, auth_on: bool) -> None:
    """Define every page (NiceGUI keeps them for the process)."""
    from nicegui import run, ui

    access = Access(service, auth_on)
    from benchwright.server.ui.forms import register_forms
    from benchwright.server.ui.tasks import register_tasks

    register_forms(service, access)
    register_tasks(service, access)

    def may_write(where: Any) -> bool:
        if access.allows("editor"):
            return True
        with where:
            problem("your token may read, not write (an editor's token is needed)")
        return False

    @ui.page("/")
    def files_page() -> None:
        if denied(access, "Files"):
            return
        with frame("Files", access):
            for kind, folder in FOLDERS.items():
                ui.label(f"{folder}/").classes("text-lg font-medium")
                for f in service.list_files(kind):
                    with ui.row().classes("gap-4"):
                        testid(ui.link(f.path, link_to("/edit", path=f.path)), f"file-{f.path}")
                        form = FORM_PAGES.get(kind)
                        if form is not None:
                            testid(ui.link("form", link_to(form, path=f.path)), f"form-{f.path}")
            ui.label("results/").classes("text-lg font-medium")
            for run in service.runs():
                ui.link(f"{run['run_id']} ({run['state']})", link_to("/run", run["run_id"]))

    @ui.page("/edit")
    def edit_page(path: str) -> None:
        if denied(access, f"Edit {path}"):
            return
        kind = _kind(path)
        with frame(f"Edit {path}", access):
            if kind is None:
                ui.label(f"{path} is not a config, task source or scenario").classes("text-red-700")
                return
            try:
                got = service.read_file(path, kind)
            except UserError as e:
                ui.label(str(e)).classes("text-red-700")
                return
            state = {"etag": got.etag}
            editor = ui.codemirror(got.text, language="YAML").classes("w-full h-[60vh] border")
            problems = ui.column().classes("w-full").props('data-testid="problems"')

            def show(found: list[Any], saved: bool = False) -> None:
                problems.clear()
                with problems:
                    if saved:
                        ui.label("saved").classes("text-green-700").props('data-testid="saved"')
                    for p in found:
                        ui.label(p.render()).props('data-testid="problem"') \
                            .classes("text-red-700" if p.severity == "error" else "text-amber-700")

            def check() -> None:
                show(service.check_text(path, editor.value, kind))

            def save() -> None:
                problems.clear()
                if not may_write(problems):
                    return
                try:
                    written, warnings = service.write_file(path, editor.value, kind, state["etag"])
                except InputError as e:
                    show(e.problems)
                    return
                except Conflict as e:
                    problems.clear()
                    with problems:
                        problem(str(e))
                    return
                state["etag"] = written.etag
                show(warnings, saved=True)

            with ui.row():
                ui.button("Validate", on_click=check).props('data-testid="validate"')
                ui.button("Save", on_click=save).props('data-testid="save"')

    @ui.page("/launch")
    def launch_page() -> None:
        if denied(access, "Launch a run"):
            return
        with frame("Launch a run", access):
            configs = [f.path for f in service.list_files("config")]
            chosen = ui.select(configs, value=configs[0] if configs else None, label="execution config") \
                .classes("w-96").props('data-testid="config"')
            sources = ui.select([f.path for f in service.list_files("task-source")], value=[], multiple=True,
                                label="task sources (none: the config's own)").classes("w-96") \
                .props('data-testid="task-sources" use-chips')
            errors = ui.column()

            async def start() -> None:
                errors.clear()
                if not may_write(errors):
                    return
                try:  # off the UI's event loop: launching checks every file and may ask providers
                    rid = await run.io_bound(service.launch, str(chosen.value), list(sources.value or []))
                except InputError as e:
                    with errors:
                        for p in e.problems:
                            ui.label(p.render()).classes("text-red-700")
                    return
                except UserError as e:
                    with errors:
                        ui.label(str(e)).classes("text-red-700")
                    return
                if rid is None:
                    return
                await run.io_bound(service.wait_started, rid)
                ui.navigate.to(link_to("/run", rid))

            ui.button("Start", on_click=start).props('data-testid="start"')

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
                            _results(run_id)
                        except InfraError as e:  # a damaged run folder: say which file
                            problem(service.shown(e))
                    timer.deactivate()
                seen["state"] = st["state"]

            timer = ui.timer(1.0, refresh)
            refresh()

    def _results(run_id: str) -> None:
        summary = service.summary(run_id)
        models = list(summary.get("models") or [])
        columns = [{"name": "criterion", "label": "Criterion", "field": "criterion", "align": "left"},
                   {"name": "unit", "label": "Unit", "field": "unit", "align": "left"}]
        columns += [{"name": f"m{i}", "label": m, "field": f"m{i}"} for i, m in enumerate(models)]
        shown_rows = rows(summary)
        table = [{"criterion": r.label + (CI_SUFFIX if is_ci else ""), "unit": "" if is_ci else r.unit,
                  **{f"m{i}": interval_text(r, m) if is_ci else r.shown(m) for i, m in enumerate(models)}}
                 for r, is_ci in interval_rows(shown_rows)]
        ui.table(columns=columns, rows=table, row_key="criterion").props('data-testid="summary" dense flat')
        for line in interval_note(shown_rows):
            ui.label(line).classes("text-xs text-gray-600").props('data-testid="interval-note"')
        chart = [r for r in rows(summary) if r.unit in ("score", "ratio", "success", "0-10") and not r.count]
        if chart and models:
            # model labels reach ECharts as data only: its default tooltip escapes them (no
            # `formatter` template here, which would not) and canvas text is never markup
            ui.echart({"tooltip": {"trigger": "axis"}, "legend": {"data": models, "type": "scroll"},
                       "xAxis": {"type": "category", "data": [r.label for r in chart]},
                       "yAxis": {"type": "value"},
                       "series": [{"name": m, "type": "bar",
                                   "data": [r.values.get(m) for r in chart]} for m in models]}
                      ).classes("w-full h-72")
        gates = gate_rows(summary)
        if gates:
            ui.label("Coding agents: the three gates").classes("text-lg")
            gate_columns = [{"name": f"g{i}", "label": label or "Gates", "field": f"g{i}", "align": "left",
                             "style": "white-space: normal; max-width: 28rem"}
                            for i, label in enumerate(GATE_HEADER)
                            if i < 6 or any(row[i] not in ("", NONE) for row in gates)]
            ui.table(columns=gate_columns, row_key="key", rows=[
                {"key": str(n), **{f"g{i}": cell for i, cell in enumerate(row)}} for n, row in enumerate(gates)
            ]).classes("w-full").props('data-testid="gates" dense flat wrap-cells')
        failures = summary.get("failures") or {}
        if failures:
            ui.label("Why samples failed").classes("text-lg")
            for line in reason_notes(failures):
                ui.label(line).classes("text-sm").props('data-testid="failure-reason"')
        samples: dict[str, dict[str, Any]] = {}
        skipped = SkippedLines()
        for rec in service.records(run_id, filters={}, limit=100_000, skipped=skipped)[1]:
            s = samples.setdefault(rec["execution_id"], {
                "execution_id": rec["execution_id"], "task": rec["task"], "language": rec["language"],
                "model": rec["model"], "sample": rec.get("sample", 0), "outcome": rec.get("outcome") or ""})
            if rec["criterion"] in ("objective", "judge", "run-badge"):
                s[rec["criterion"]] = (rec.get("verdict") or "n/a").upper()
        if not skipped and summary.get("skipped_lines"):
            skipped = SkippedLines.model_validate(summary["skipped_lines"])
        if skipped:
            ui.label(f"{skipped.message()}; the samples they belonged to are not scored "
                     f"('benchwright run --resume {run_id}' runs them again)") \
                .classes("text-orange-800").props('data-testid="skipped-lines"')
        ui.label(f"Samples ({len(samples)})").classes("text-lg")
        if len(samples) > SAMPLES_SHOWN:
            ui.link(f"the first {SAMPLES_SHOWN} are listed; every record is in the data explorer",
                    link_to("/explorer", run=run_id))
        ordered = sorted(samples.values(), key=lambda s: (s["task"], s["language"], s["model"], s["sample"]))
        for s in ordered[:SAMPLES_SHOWN]:
            agent = s["language"] == "agent"
            gates_text = (f" objective {s.get('objective', '-')}, judge {s.get('judge', '-')}, "
                          f"run badge {s.get('run-badge', '-')}") if agent else ""
            testid(ui.link(f"{s['task']} [{s['language']}] {s['model']} #{s['sample']}: {s['outcome']}{gates_text}",
                           link_to("/agent" if agent else "/sample", run_id, s["execution_id"])),
                   f"sample-{s['task']}-{s['language']}-{s['model']}-{s['sample']}")

    @ui.page("/explorer")
    def explorer_page(run: str | None = None) -> None:
        if denied(access, "Data explorer"):
            return
        with frame("Data explorer", access):
            runs = [r["run_id"] for r in service.runs()]
            state: dict[str, Any] = {"offset": 0}
            with ui.row().classes("items-end gap-2"):
                chosen = ui.select(runs, value=[run] if run else runs[:1], multiple=True, label="runs") \
                    .classes("w-96").props('data-testid="runs" use-chips')
                boxes = {f: testid(ui.input(f).classes("w-32").props("clearable"), f"filter-{f}")
                         for f in FILTERS}
                sort = ui.select(list(COLUMNS), value=None, label="sort by", clearable=True).classes("w-40")
                descending = ui.checkbox("descending")
            summary = ui.label().props('data-testid="explorer-count"')
            columns = [{"name": c, "label": c.replace("_", " "), "field": c, "align": "left"} for c in COLUMNS]
            table = ui.table(columns=columns, rows=[], row_key="key").classes("w-full") \
                .props('data-testid="explorer" dense flat')

            def load() -> None:
                filters = {f: (boxes[f].value or None) for f in FILTERS}
                skipped = SkippedLines()
                total, page = service.explore(list(chosen.value or []), filters=filters, sort=sort.value,
                                              descending=bool(descending.value), offset=state["offset"],
                                              limit=EXPLORER_PAGE, skipped=skipped)
                table.rows = [{"key": f"{r['run']}:{r['execution_id']}:{r.get('record_index')}",
                               **{c: _cell(r.get(c)) for c in COLUMNS}} for r in page]
                table.update()
                last = min(state["offset"] + EXPLORER_PAGE, total)
                summary.text = f"{state['offset'] + 1 if total else 0}-{last} of {total} records" + (
                    f" ({skipped.count} unreadable line(s) left out: {skipped.message()})" if skipped else "")

            def move(step: int) -> None:
                state["offset"] = max(0, state["offset"] + step * EXPLORER_PAGE)
                load()

            def apply() -> None:
                state["offset"] = 0
                load()

            with ui.row():
                ui.button("Apply", on_click=apply).props('data-testid="apply"')
                ui.button("Previous", on_click=lambda: move(-1))
                ui.button("Next", on_click=lambda: move(1)).props('data-testid="next"')
            load()

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
                 "unit": d.unit, "a": _cell(d.a), "b": _cell(d.b), "delta": _cell(d.delta),
                 "ci": format_interval(d), "p": format_p(d), "change": d.verdict or d.change}
                for d in deltas]).classes("w-full").props('data-testid="deltas" dense flat')
            for kind in ("regressions", "fixes"):
                flips = result[kind]
                testid(ui.label(f"{kind}: {len(flips)}").classes("text-lg"), kind)
                for f in flips:
                    ui.label(f"{f['task_source']}/{f['task']} [{f['language']}] {f['model']}: "
                             f"{f['a_passed']}/{f['a_samples']} -> {f['b_passed']}/{f['b_samples']}")

    def _cell(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, float):
            return f"{value:.4g}"
        return str(value)

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
