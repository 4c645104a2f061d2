"""The task source editor of the web UI: the task list with filters, a task's basic information,
its prompts, tests and golden solutions per language, Save (through the service, with conflict
detection) and "Run golden solution" (the real pipeline, as ``validate --golden``).

Saving edits the YAML round-trip and re-emits only the edited task's lines, so the comments and
layout of the rest of the file stay byte-for-byte as they were.
"""

from __future__ import annotations

import asyncio
import io
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)

from benchwright import yamldoc
from benchwright.errors import InputError, Problem, UserError
from benchwright.server.service import Conflict, FileKind, Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame, problem
from benchwright.server.ui.text import link_to, testid
from benchwright.task.model import Task, TaskSource

KIND: FileKind = "task-source"
BASIC = ("name", "type", "difficulty", "area")
CODEMIRROR_LANGUAGE = {"python": "Python", "java": "Java", "c": "C", "cpp": "C++", "c++": "C++", "go": "Go",
                       "rust": "Rust", "javascript": "JavaScript", "typescript": "TypeScript", "bash": "Shell",
                       "shell": "Shell"}
DEFAULT_DESCRIPTION = "${common_prompt}"

Fields = dict[str, Any]
"""A task's editable fields: name, type, difficulty, area, tags (list), common_prompt and
``languages``: language -> {description, public_tests, hidden_tests ([{name, code}]), golden}."""


# -- the YAML editing helper ---------------------------------------------------------------------


def task_fields(task: Task) -> Fields:
    """The editable fields of ``task`` as the editor shows them."""
    langs: dict[str, Any] = {}
    for lang in task.code_languages():
        spec = task.spec(lang)
        langs[lang] = {
            "description": spec.description,
            "public_tests": [{"name": t.name or "", "code": t.code} for t in spec.public_tests],
            "hidden_tests": [{"name": t.name or "", "code": t.code} for t in spec.hidden_tests],
            "golden": task.golden_solution.get(lang, ""),
        }
    return {**{k: getattr(task, k) or "" for k in BASIC}, "tags": list(task.tags),
            "common_prompt": task.task.common_prompt, "languages": langs}


def _yaml() -> YAML:
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096  # never re-fold a long line of the edited task
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def _scalar(old: Any, new: str) -> Any:
    if "\n" in new:
        return LiteralScalarString(new)
    if isinstance(old, (SingleQuotedScalarString, DoubleQuotedScalarString)):
        return type(old)(new)
    return new


def _set(node: CommentedMap, key: str, new: Any, default: Any = None) -> None:
    """Set ``node[key]`` to ``new`` only when the value changes (an unchanged value keeps its
    exact form); an empty value (or the default) removes an existing key or adds nothing."""
    old = node.get(key)
    if isinstance(new, str):
        if new == (old if isinstance(old, str) else None):
            return
        if new == "" or (key not in node and new == default):
            node.pop(key, None)
            return
        node[key] = _scalar(old, new)
    elif isinstance(new, list):
        if old is None and not new:
            return
        if isinstance(old, list) and [str(v) for v in old] == [str(v) for v in new]:
            return
        if isinstance(old, str) and [v.strip() for v in old.split(",") if v.strip()] == new:
            return
        if not new:
            node.pop(key, None)
            return
        seq = CommentedSeq(new)
        if not isinstance(old, CommentedSeq) or old.fa.flow_style():
            seq.fa.set_flow_style()
        node[key] = seq


def _child(node: CommentedMap, key: str) -> CommentedMap:
    if not isinstance(node.get(key), CommentedMap):
        node[key] = CommentedMap()
    return cast(CommentedMap, node[key])


def _tests(spec: CommentedMap, key: str, tests: list[dict[str, str]]) -> None:
    old = spec.get(key)
    if not isinstance(old, CommentedSeq):
        if not tests:
            return
        old = CommentedSeq()
        spec[key] = old
    for i, test in enumerate(tests):
        if i >= len(old) or not isinstance(old[i], CommentedMap):
            item = CommentedMap()
            if test.get("name"):
                item["name"] = test["name"]
            item["code"] = _scalar(None, test["code"])
            if i >= len(old):
                old.append(item)
            else:
                old[i] = item
            continue
        _set(old[i], "name", test.get("name") or "")
        _set(old[i], "code", test["code"])
        if "name" in old[i] and next(iter(old[i])) != "name":  # a name added: keep it first
            old[i].move_to_end("code")
    del old[len(tests):]
    if not tests:
        spec.pop(key, None)


def _apply(task: CommentedMap, fields: Fields) -> None:
    for k in BASIC:
        if k in fields:
            _set(task, k, fields[k])
    if "tags" in fields:
        _set(task, "tags", list(fields["tags"]))
    langs: dict[str, Any] = fields.get("languages") or {}
    body = task.get("task")
    if "common_prompt" in fields and (isinstance(body, CommentedMap) or fields["common_prompt"]):
        _set(_child(task, "task"), "common_prompt", fields["common_prompt"])
    for lang, spec_fields in langs.items():
        body = _child(task, "task")
        specific = body.get("languages_specific")
        if not isinstance(specific, CommentedMap):
            body["languages_specific"] = specific = CommentedMap()
        spec = specific.get(lang)
        if not isinstance(spec, CommentedMap):
            specific[lang] = spec = CommentedMap()
        _set(spec, "description", spec_fields.get("description", DEFAULT_DESCRIPTION), DEFAULT_DESCRIPTION)
        for key in ("public_tests", "hidden_tests"):
            if key in spec_fields:
                _tests(spec, key, list(spec_fields[key]))
        if "golden" in spec_fields:
            golden = task.get("golden_solution")
            if not isinstance(golden, CommentedMap):
                if not spec_fields["golden"]:
                    continue
                task["golden_solution"] = golden = CommentedMap()
            _set(golden, lang, spec_fields["golden"])


def _dump(data: Any) -> str:
    buf = io.StringIO()
    _yaml().dump(data, buf)
    return buf.getvalue()


def _indent(text: str, by: int) -> str:
    if by <= 0:
        return text
    return "".join((" " * by + line) if line.strip() else line for line in text.splitlines(keepends=True))


def edit_task(text: str, file: str, index: int, fields: Fields) -> str:
    """``text`` (a task source) with task ``index`` given ``fields``; only that task's lines
    are written anew, the rest of the text is kept as it is.

    Raises:
        InputError: ``text`` is not YAML or has no task ``index``.
    """
    doc = yamldoc.parse_text(text, file)
    root = _yaml().load(text)
    tasks = root.get("tasks") if isinstance(root, CommentedMap) else None
    if not isinstance(tasks, CommentedSeq) or not 0 <= index < len(tasks) or \
            not isinstance(tasks[index], CommentedMap):
        raise InputError([doc.problem(("tasks",), f"no task {index} to edit", hint="reload the file")])
    task = tasks[index]
    _apply(task, fields)
    whole = _dump(root)
    try:
        if yamldoc.parse_text(whole, file).data == doc.data:
            return text  # nothing changed: not even the task's lines are written anew
    except InputError:
        pass
    try:
        spliced = _splice(text, root, tasks, index)
    except (KeyError, IndexError, TypeError, AttributeError, ValueError):
        return whole
    # the spliced text must mean exactly what the whole re-emitted document means
    try:
        same = yamldoc.parse_text(spliced, file).data == yamldoc.parse_text(whole, file).data
    except InputError:
        same = False
    return spliced if same else whole


def _splice(text: str, root: CommentedMap, tasks: CommentedSeq, index: int) -> str:
    lines = text.splitlines(keepends=True)
    start = tasks.lc.item(index)[0]  # the line of the task's first key (its "- ")
    if index + 1 < len(tasks):
        end = tasks.lc.item(index + 1)[0]
    else:
        keys = list(root)
        after = keys[keys.index("tasks") + 1:]
        end = root.lc.key(after[0])[0] if after else len(lines)
    dash = lines[start].index("-")
    single = CommentedMap()
    single["tasks"] = CommentedSeq([tasks[index]])
    block = _dump(single).split("\n", 1)[1]
    made = len(block) - len(block.lstrip(" "))
    block = _indent(block, dash - made)
    if end < len(lines) and not block.endswith("\n"):
        block += "\n"
    return "".join(lines[:start]) + block + "".join(lines[end:])


# -- running a golden solution -------------------------------------------------------------------


@dataclass(frozen=True)
class CaseResult:
    test_case: str
    status: str
    error: str
    line: int | None


def run_golden(service: Service, rel: str, text: str, task_name: str, language: str) -> tuple[str, list[CaseResult]]:
    """Run ``task_name``'s golden solution in ``language`` (the task as ``text`` has it) through
    the pipeline ``validate --golden`` uses; its outcome and each test case's result.

    Raises:
        InputError: the text does not validate, or the task has no golden solution there.
    """
    from benchwright.config.model import ExecConfig, ModelSpec, Toggle
    from benchwright.model import resolve as model_resolve
    from benchwright.model.engine import GenerationEngine
    from benchwright.results.record import Generation, Record
    from benchwright.run.executor import LocalExecutor
    from benchwright.run.plan import SampleUnit, build_plan
    from benchwright.run.worker import Worker
    from benchwright.sandbox.select import best_sandbox
    from benchwright.task.load import LoadedSource, parse_task_source

    path = service.inside(rel, KIND)
    fd, tmp = tempfile.mkstemp(prefix=".bw-golden-", suffix=".yaml", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        doc, source, problems = parse_task_source(Path(tmp))
        errors = [p for p in problems if p.severity == "error"]
        if doc is None or source is None or errors:
            raise InputError([Problem(rel, p.message, p.path, p.line, p.hint, p.severity) for p in errors])
        mine = [t for t in source.tasks if t.name == task_name]
        if not mine or language not in mine[0].golden_solution:
            raise InputError([Problem(rel, f"{task_name} has no golden solution in {language}")])
        loaded = LoadedSource.of(Path(tmp), doc, source.model_copy(update={"tasks": mine}))
        ws = service.ws
        config = ExecConfig(criteria=[Toggle(name="unit-test")], llms=[ModelSpec(id="reference")],
                            languages=[language])
        units = [u for u in build_plan(config, "run golden", [loaded], ws.settings).units
                 if u.golden is not None and u.language == language]
        if not units:
            raise InputError([Problem(rel, f"nothing to run for {task_name} in {language}")])
        providers = {"reference": model_resolve.create(units[0].resolved, ws.settings)}
        worker = Worker("golden-check", GenerationEngine(providers, ws.settings),
                        best_sandbox(ws.settings.sandbox), config.limits)
        got: list[Record] = []

        def on_result(unit: SampleUnit, gen: Generation, records: list[Record]) -> None:
            got.extend(records)

        asyncio.run(LocalExecutor().run(units[:1], worker, {}, lambda g: None, on_result))
    finally:
        os.unlink(tmp)
    outcome = (got[0].outcome if got else None) or "error"
    cases = [CaseResult(r.test_case, r.status or "", r.error or "", r.line) for r in got
             if r.test_case is not None]
    if not cases:
        cases = [CaseResult("(sample)", outcome, next((r.error for r in got if r.error), "") or "", None)]
    return outcome, cases


# -- the page ------------------------------------------------------------------------------------


def _problems_text(problems: list[Problem]) -> list[str]:
    return [p.render() for p in problems]


def register_tasks(service: Service, access: Access | None = None) -> None:
    """Define the page ``/tasks?path=tasks/x.yaml`` (NiceGUI keeps it for the process); with
    ``access`` (``serve --auth``), reading needs a viewer's token, saving an editor's."""
    from nicegui import run, ui

    @ui.page("/tasks")
    async def tasks_page(path: str = "") -> None:
        if denied(access, f"Tasks {path}"):
            return
        with frame(f"Tasks {path}", access):
            ui.link("Raw YAML", link_to("/edit", path=path))
            root = ui.column().classes("w-full gap-4")
        try:
            loaded = await run.io_bound(service.task_source, path)  # parsed off the event loop, once a version
            if loaded is None:  # the server is stopping
                return
            got, source = loaded
        except InputError as e:
            with root:
                for line in _problems_text(e.problems):
                    problem(line)
                ui.link("open the raw YAML editor to fix it", link_to("/edit", path=path))
            return
        except (UserError, ValueError) as e:
            with root:
                problem(str(e))
                ui.link("open the raw YAML editor", link_to("/edit", path=path))
            return
        state: dict[str, Any] = {"text": got.text, "etag": got.etag, "source": source, "selected": None,
                                 "edits": {}}

        def fields(i: int) -> Fields:
            edits: dict[int, Fields] = state["edits"]
            if i not in edits:
                edits[i] = task_fields(state["source"].tasks[i])
            return edits[i]

        def edited_text() -> str:
            text: str = state["text"]
            for i, f in sorted(state["edits"].items()):
                text = edit_task(text, path, i, f)
            return text

        def options(attr: str) -> list[str]:
            tasks: list[Task] = state["source"].tasks
            if attr == "language":
                return sorted({lang for t in tasks for lang in t.code_languages()})
            return sorted({getattr(t, attr) for t in tasks if getattr(t, attr)})

        with root:
            save_bar = ui.row().classes("items-center gap-4")
            messages = ui.column().classes("w-full").props('data-testid="problems"')
        with root, ui.row().classes("w-full no-wrap items-start gap-6"):
            with ui.column().classes("w-80 shrink-0 gap-1"):
                name_box = ui.input("name contains").props('clearable data-testid="filter-name"').classes("w-full")
                pickers = {attr: testid(ui.select(options(attr), label=attr, clearable=True).classes("w-full"),
                                        f"filter-{attr}")
                           for attr in ("difficulty", "area", "language")}
                count = ui.label().classes("text-xs").props('data-testid="task-count"')
                listing = ui.column().classes("w-full gap-0")
            editor = ui.column().classes("grow gap-3")

        def show_list() -> None:
            wanted = (name_box.value or "").lower()
            listing.clear()
            shown = 0
            with listing:
                for i, t in enumerate(state["source"].tasks):
                    if wanted and wanted not in t.name.lower():
                        continue
                    if pickers["difficulty"].value and t.difficulty != pickers["difficulty"].value:
                        continue
                    if pickers["area"].value and t.area != pickers["area"].value:
                        continue
                    if pickers["language"].value and pickers["language"].value not in t.code_languages():
                        continue
                    shown += 1
                    chosen = state["selected"] == i
                    testid(ui.button(f"{t.name}  ({t.difficulty or '-'}, {t.area or '-'})",
                                     on_click=lambda _e, i=i: select(i))
                           .props("flat no-caps align=left " + ("color=primary" if chosen else "color=grey-9"))
                           .classes("w-full"), f"task-{t.name}")
            count.text = f"{shown} of {len(state['source'].tasks)} tasks"

        name_box.on_value_change(lambda _e: show_list())
        for picker in pickers.values():
            picker.on_value_change(lambda _e: show_list())

        def select(i: int) -> None:
            state["selected"] = i
            show_list()
            show_task()

        def bind_text(target: dict[str, Any], key: str, element: Any) -> None:
            element.on_value_change(lambda e: target.__setitem__(key, e.value or ""))

        def code_editor(target: dict[str, Any], key: str, lang: str | None, tag: str) -> None:
            cm = ui.codemirror(str(target.get(key) or ""),
                               language=cast(Any, CODEMIRROR_LANGUAGE.get(lang or "", "Markdown"))) \
                .classes("w-full border").style("height: auto; min-height: 2.5rem; max-height: 50vh")
            testid(cm, tag)
            bind_text(target, key, cm)

        def show_task() -> None:
            editor.clear()
            i = state["selected"]
            if i is None:
                return
            f = fields(i)
            with editor:
                with ui.row().classes("w-full gap-2"):
                    for k in BASIC:
                        bind_text(f, k, testid(ui.input(k, value=f[k]), f"field-{k}"))
                    tags = ui.input("tags (comma separated)", value=", ".join(f["tags"])) \
                        .props('data-testid="field-tags"').classes("w-72")
                    tags.on_value_change(lambda e: f.__setitem__(
                        "tags", [t.strip() for t in (e.value or "").split(",") if t.strip()]))
                ui.label("Common prompt").classes("text-lg")
                code_editor(f, "common_prompt", None, "common-prompt")
                langs: dict[str, Any] = f["languages"]
                if not langs:
                    ui.label("the task names no language").classes("text-amber-700")
                    return
                with ui.tabs().classes("w-full") as tabs:
                    tab = {lang: testid(ui.tab(lang), f"lang-{lang}") for lang in langs}
                with ui.tab_panels(tabs, value=next(iter(tab.values()))).classes("w-full"):
                    for lang, spec in langs.items():
                        with ui.tab_panel(tab[lang]).classes("gap-2"):
                            language_panel(i, lang, spec)

        def language_panel(i: int, lang: str, spec: dict[str, Any]) -> None:
            ui.label(f"Description ({lang})").classes("text-lg")
            code_editor(spec, "description", None, f"description-{lang}")
            for key, title in (("public_tests", "Public tests"), ("hidden_tests", "Hidden tests")):
                ui.label(title).classes("text-lg")
                box = ui.column().classes("w-full gap-2")

                def draw(key: str = key, box: ui.column = box) -> None:
                    box.clear()
                    with box:
                        for n, test in enumerate(spec[key]):
                            kind = key.split("_")[0]
                            with ui.card().classes("w-full p-2"):
                                with ui.row().classes("items-center gap-2"):
                                    bind_text(test, "name", testid(ui.input("name", value=test["name"])
                                                                   .classes("w-64").props("dense"),
                                                                   f"{kind}-{lang}-{n}-name"))
                                    ui.button("remove", on_click=lambda _e, n=n, key=key, draw=draw:
                                              (spec[key].pop(n), draw())).props("flat dense color=red")
                                code_editor(test, "code", lang, f"{kind}-{lang}-{n}")
                        ui.button("add a test", on_click=lambda _e, key=key, draw=draw:
                                  (spec[key].append({"name": "", "code": ""}), draw())).props("flat dense")

                draw()
            ui.label(f"Golden solution ({lang})").classes("text-lg")
            code_editor(spec, "golden", lang, f"golden-{lang}")
            run_button = testid(ui.button("Run golden solution"), f"run-golden-{lang}")
            results = testid(ui.column().classes("w-full"), f"golden-results-{lang}")

            async def run_it() -> None:
                results.clear()
                with results:
                    ui.label("running...").classes("text-slate-500")
                name = str(fields(i)["name"] or state["source"].tasks[i].name)
                try:
                    text = edited_text()
                    done = await run.io_bound(run_golden, service, path, text, name, lang)
                    if done is None:
                        return
                    outcome, cases = done
                except InputError as e:
                    results.clear()
                    with results:
                        for line in _problems_text(e.problems):
                            problem(line)
                    return
                except UserError as e:
                    results.clear()
                    with results:
                        problem(str(e))
                    return
                results.clear()
                with results:
                    ui.label(f"golden solution: {outcome.upper()}") \
                        .classes("text-lg " + ("text-green-700" if outcome == "pass" else "text-red-700")) \
                        .props('data-testid="golden-outcome"')
                    for c in cases:
                        ok = c.status == "pass"
                        where = f" (line {c.line})" if c.line else ""
                        testid(ui.label(f"{'PASS' if ok else c.status.upper()}  {c.test_case}{where}"
                                        + (f": {c.error}" if c.error and not ok else ""))
                               .classes("font-mono " + ("text-green-700" if ok else "text-red-700")),
                               f"case-{c.test_case}")

            run_button.on_click(run_it)

        async def save() -> None:
            messages.clear()
            if access is not None and not access.allows("editor"):
                with messages:
                    problem("your token may read, not write (an editor's token is needed)")
                return
            try:
                text = edited_text()
                done = await run.io_bound(service.write_file, path, text, KIND, state["etag"])
                if done is None:
                    return
                written, warnings = done
            except InputError as e:
                with messages:
                    for line in _problems_text(e.problems):
                        problem(line)
                return
            except Conflict as e:
                with messages:
                    ui.label(f"412 conflict: {e}").classes("text-red-700").props('data-testid="conflict"')
                    ui.button("Reload (drops your edits)", on_click=lambda: ui.navigate.to(link_to("/tasks", path=path)))
                return
            except UserError as e:
                with messages:
                    problem(str(e))
                return
            state.update(text=written.text, etag=written.etag, edits={},
                         source=TaskSource.model_validate(yamldoc.parse_text(written.text, path).data))
            with messages:
                ui.label("saved").classes("text-green-700").props('data-testid="saved"')
                for p in warnings:
                    ui.label(p.render()).classes("text-amber-700").props('data-testid="warning"')
            show_list()
            show_task()

        with save_bar:
            ui.button("Save", on_click=save).props('data-testid="save"')
            ui.label("writes every edited task back into the file; other tasks keep their text") \
                .classes("text-xs text-slate-500")
        if state["source"].tasks:
            state["selected"] = 0
        show_list()  # once: selecting the first task through select() would build the list twice
        show_task()
