"""The task source editor of the web UI: the task list with filters, a task's basic information,
its prompts, tests and golden solutions per language, Save (through the service, with conflict
detection) and "Run golden solution" (the real pipeline, as ``validate --golden``).

Saving edits the YAML round-trip and re-emits only the edited task's lines, so the comments and
layout of the rest of the file stay byte-for-byte as they were.
"""

from __future__ import annotations

import re
from typing import Any, cast

from benchwright.errors import InputError, Problem, UserError
from benchwright.server.service import Conflict, FileKind, Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame, problem
from benchwright.server.ui.table import last_offset
from benchwright.server.ui.text import link_to, testid
from benchwright.task.editor import (
    BASIC,
    DEFAULT_DESCRIPTION,
    LANG_TEXT,
    Fields,
    delete_task,
    duplicate_task,
    edit_task,
    new_task,
    parse_source,
    split_list,
    task_fields,
)
from benchwright.task.model import Task, TaskSource

KIND: FileKind = "task-source"
CODEMIRROR_LANGUAGE = {"python": "Python", "java": "Java", "c": "C", "cpp": "C++", "c++": "C++", "go": "Go",
                       "rust": "Rust", "javascript": "JavaScript", "typescript": "TypeScript", "bash": "Shell",
                       "shell": "Shell"}
# -- the page ------------------------------------------------------------------------------------

CODE_SHORT = "w-full border h-24"
CODE_MEDIUM = "w-full border h-48"
CODE_TALL = "w-full border h-80"
CODE_FULL = "w-full border h-[60vh]"
"""A code editor's box, by the lines it starts with: CodeMirror fills its box and scrolls inside
it, so its line numbers stay beside their lines and nothing spills out."""
FIELD = "w-44"
LIST_FIELD = "w-64"
MODES = ["instruct", "complete"]
TASK_LIST_PAGE = 25
"""Tasks listed at once (the list pages through the rest: a button per task of a source of
hundreds took the page's first paint past 1 s)."""
_TASK_PATH = re.compile(r"^tasks\[(\d+)\]")


def _problems_text(problems: list[Problem]) -> list[str]:
    return [p.render() for p in problems]


def escape(text: str) -> str:
    """``text`` on one line: a backslash, a newline and a tab written as ``\\\\``, ``\\n``, ``\\t``."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")


def unescape(text: str) -> str:
    """The text :func:`escape` wrote (any other backslash is kept as it is)."""
    out: list[str] = []
    chars = iter(text)
    for c in chars:
        if c != "\\":
            out.append(c)
            continue
        nxt = next(chars, "")
        out.append({"n": "\n", "t": "\t", "\\": "\\"}.get(nxt, "\\" + nxt))
    return "".join(out)


def task_of(problem_: Problem) -> int | None:
    """The index of the task a problem is about (its path ``tasks[i]...``), or None."""
    m = _TASK_PATH.match(problem_.path or "")
    return int(m.group(1)) if m else None


def _language_of(problem_: Problem) -> str | None:
    m = re.search(r"\.languages_specific\.([^.\[]+)", problem_.path or "")
    g = re.search(r"^tasks\[\d+\]\.golden_solution\.([^.\[]+)", problem_.path or "")
    return m.group(1) if m else g.group(1) if g else None


def _new_language() -> dict[str, Any]:
    return {"description": DEFAULT_DESCRIPTION, **dict.fromkeys(LANG_TEXT, ""), "stop": [],
            "public_tests": [], "hidden_tests": [], "golden": ""}


class TaskPage:
    """The editor of one task source: its state (the file's text and version, the edited fields
    of each task, the problems last found) and the parts of the page drawn from it."""

    def __init__(self, service: Service, access: Access | None, path: str, text: str, etag: str,
                 source: TaskSource) -> None:
        self.service, self.access, self.path = service, access, path
        self.text, self.etag, self.source = text, etag, source
        self.edits: dict[int, Fields] = {}
        self.problems: list[Problem] = []
        self.selected: int | None = None
        self.language: str | None = None
        self.list_start = 0
        """Where the shown page of the task list starts, among the tasks the filters keep."""

    # -- state ------------------------------------------------------------------------------------

    def fields(self, i: int) -> Fields:
        if i not in self.edits:
            self.edits[i] = task_fields(self.source.tasks[i])
        return self.edits[i]

    def edited_text(self) -> str:
        text = self.text
        for i, f in sorted(self.edits.items()):
            if f != task_fields(self.source.tasks[i]):  # an unchanged task is left as it is
                text = edit_task(text, self.path, i, f)
        return text

    def options(self, attr: str) -> list[str]:
        tasks = self.source.tasks
        if attr == "language":
            return sorted({lang for t in tasks for lang in t.code_languages()})
        return sorted({str(getattr(t, attr)) for t in tasks if getattr(t, attr)})

    # -- the page ---------------------------------------------------------------------------------

    def build(self, root: Any) -> None:
        from nicegui import ui

        with root:
            with ui.row().classes("items-center gap-2"):
                testid(ui.button("Save", on_click=self.save), "save")
                testid(ui.button("Validate", on_click=self.validate).props("outline"), "validate")
                testid(ui.button("Add a task", on_click=self.add).props("outline"), "add-task")
                ui.label("Save writes every change into the file; other tasks keep their text") \
                    .classes("text-xs text-slate-500")
            self.messages = testid(ui.column().classes("w-full gap-1"), "problems")
            self.delete_dialog()
        with root, ui.row().classes("w-full no-wrap items-start gap-6"):
            with ui.column().classes("w-72 shrink-0 gap-1"):
                self.name_box = testid(ui.input("name contains").props("clearable").classes("w-full"),
                                       "filter-name")
                self.pickers = {attr: testid(ui.select(self.options(attr), label=attr, clearable=True)
                                             .classes("w-full"), f"filter-{attr}")
                                for attr in ("difficulty", "area", "language")}
                self.count = testid(ui.label().classes("text-xs"), "task-count")
                self.listing = ui.column().classes("w-full gap-0")
                with ui.row().classes("w-full items-center gap-1 no-wrap"):
                    self.earlier = testid(ui.button("Previous", on_click=lambda: self.move_list(-1))
                                          .props("flat dense no-caps"), "tasks-previous")
                    self.span = testid(ui.label().classes("text-xs grow text-center"), "tasks-span")
                    self.later = testid(ui.button("Next", on_click=lambda: self.move_list(1))
                                        .props("flat dense no-caps"), "tasks-next")
            self.editor = ui.column().classes("grow min-w-0 gap-3")
        self.name_box.on_value_change(lambda _e: self.refilter())
        for picker in self.pickers.values():
            picker.on_value_change(lambda _e: self.refilter())
        self.show_list()
        if self.source.tasks:
            self.select(0)

    def _shown(self, t: Task) -> bool:
        wanted = (self.name_box.value or "").lower()
        p = {k: v.value for k, v in self.pickers.items()}
        return not ((wanted and wanted not in t.name.lower())
                    or (p["difficulty"] and t.difficulty != p["difficulty"])
                    or (p["area"] and t.area != p["area"])
                    or (p["language"] and p["language"] not in t.code_languages()))

    def kept(self) -> list[int]:
        """The tasks the filters keep, by index."""
        return [i for i, t in enumerate(self.source.tasks) if self._shown(t)]

    def refilter(self) -> None:
        self.list_start = 0
        self.show_list()

    def move_list(self, step: int) -> None:
        self.list_start += step * TASK_LIST_PAGE
        self.show_list()

    def show_list(self) -> None:
        """One page of the tasks the filters keep (a button each), and where it is among them."""
        from nicegui import ui

        self.listing.clear()
        counts: dict[int, int] = {}
        for p in self.problems:
            i = task_of(p)
            if i is not None and p.severity == "error":
                counts[i] = counts.get(i, 0) + 1
        kept = self.kept()
        self.list_start = min(max(0, self.list_start), last_offset(len(kept), TASK_LIST_PAGE))
        page = kept[self.list_start:self.list_start + TASK_LIST_PAGE]
        with self.listing:
            for i in page:
                t = self.source.tasks[i]
                chosen = self.selected == i
                label = f"{t.name}  ({t.difficulty or '-'}, {t.area or '-'})"
                if counts.get(i):
                    label += f"  [{counts[i]} problem(s)]"
                testid(ui.button(label, on_click=lambda _e, i=i: self.select(i))
                       .props("flat no-caps align=left " + ("color=primary" if chosen else "color=grey-9"))
                       .classes("w-full" + (" text-red-700" if counts.get(i) else "")), f"task-{t.name}")
        self.count.text = f"{len(kept)} of {len(self.source.tasks)} tasks"
        self.span.text = f"{self.list_start + 1 if page else 0}-{self.list_start + len(page)}"
        self.earlier.set_enabled(self.list_start > 0)
        self.later.set_enabled(self.list_start + TASK_LIST_PAGE < len(kept))

    def select(self, i: int) -> None:
        if self.selected != i:
            self.language = None
        self.selected = i
        kept = self.kept()
        if i in kept:  # the list shows the page the chosen task is on
            self.list_start = kept.index(i) // TASK_LIST_PAGE * TASK_LIST_PAGE
        self.show_list()
        self.show_task()

    # -- one task ---------------------------------------------------------------------------------

    def show_task(self) -> None:
        from nicegui import ui

        self.editor.clear()
        i = self.selected
        if i is None or i >= len(self.source.tasks):
            return
        f = self.fields(i)
        with self.editor:
            with ui.row().classes("w-full items-center gap-2"):
                ui.label(f"Task {i + 1}: {self.source.tasks[i].name}").classes("text-lg font-medium grow")
                testid(ui.button("Duplicate", on_click=lambda: self.duplicate(i)).props("outline dense"),
                       "duplicate-task")
                testid(ui.button("Delete", on_click=lambda: self.confirm_delete(i))
                       .props("outline dense color=red"), "delete-task")
            with testid(ui.column().classes("w-full gap-1"), "task-problems"):
                for p in self.problems:
                    if task_of(p) == i and _language_of(p) is None:
                        problem(p.render())
            self.basic_fields(f)
            ui.label("Common prompt").classes("text-lg")
            self.code_editor(f, "common_prompt", None, "common-prompt")
            ui.label("LLM judge prompt (optional)").classes("text-lg")
            self.code_editor(f, "llm_judge_prompt", None, "judge-prompt")
            self.language_tabs(i, f)

    def basic_fields(self, f: Fields) -> None:
        from nicegui import ui

        with ui.row().classes("w-full gap-2"):
            for k in BASIC:
                self.bind_text(f, k, testid(ui.input(k, value=f[k]).classes(FIELD), f"field-{k}"))
            mode = testid(ui.select(MODES, label="mode", value=f["mode"] or "instruct").classes(FIELD),
                          "field-mode")
            mode.on_value_change(lambda e: f.__setitem__("mode", e.value or "instruct"))
            self.bind_text(f, "release_date", testid(ui.input("release_date (YYYY-MM-DD)", value=f["release_date"])
                                                     .classes(FIELD), "field-release_date"))
            self.bind_text(f, "time_limit_s", testid(ui.input("time_limit_s", value=f["time_limit_s"])
                                                     .classes(FIELD), "field-time_limit_s"))
        with ui.row().classes("w-full gap-2"):
            for k, title in (("tags", "tags"), ("listed_languages", "languages"),
                             ("available_parameters", "available_parameters"),
                             ("available_criteria", "available_criteria")):
                box = testid(ui.input(f"{title} (comma separated)", value=", ".join(f[k])).classes(LIST_FIELD),
                             f"field-{k}")
                box.on_value_change(lambda e, k=k: f.__setitem__(k, split_list(e.value or "")))
            testid(ui.button("show languages", on_click=lambda: self.add_languages(f)).props("flat dense"),
                   "apply-languages")

    def add_languages(self, f: Fields) -> None:
        """Give every language listed in ``languages`` a tab (a new one starts empty)."""
        langs: dict[str, Any] = f["languages"]
        for lang in f["listed_languages"]:
            langs.setdefault(lang, _new_language())
        self.show_task()

    def language_tabs(self, i: int, f: Fields) -> None:
        """One tab per language; only the chosen tab's editors exist, each made while visible
        (CodeMirror measures its lines when it is made: one made in a hidden panel drifts)."""
        from nicegui import ui

        langs: dict[str, Any] = f["languages"]
        if not langs:
            ui.label("the task names no language: list some in 'languages' and press 'show languages'") \
                .classes("text-amber-700")
            return
        if self.language not in langs:
            self.language = next(iter(langs))
        with ui.tabs(value=cast(Any, self.language)).classes("w-full") as tabs:
            for lang in langs:
                testid(ui.tab(lang), f"lang-{lang}")
        panel = ui.column().classes("w-full gap-2")

        def change(e: Any) -> None:
            self.language = str(e.value)
            self.language_panel(panel, i, self.language, langs[self.language])

        tabs.on_value_change(change)
        self.language_panel(panel, i, self.language, langs[self.language])

    def language_panel(self, panel: Any, i: int, lang: str, spec: dict[str, Any]) -> None:
        from nicegui import ui

        panel.clear()
        with panel:
            with testid(ui.column().classes("w-full gap-1"), f"lang-problems-{lang}"):
                for p in self.problems:
                    if task_of(p) == i and _language_of(p) == lang:
                        problem(p.render())
            ui.label(f"Description ({lang})").classes("text-lg")
            self.code_editor(spec, "description", None, f"description-{lang}")
            with ui.row().classes("w-full gap-2"):
                self.bind_text(spec, "entry_point", testid(ui.input("entry_point", value=spec["entry_point"])
                                                           .classes(FIELD), f"field-{lang}-entry_point"))
                stop = testid(ui.input("stop sequences (comma separated, \\n for a newline)",
                                       value=", ".join(escape(s) for s in spec["stop"])).classes("w-96"),
                              f"field-{lang}-stop")
                stop.on_value_change(lambda e: spec.__setitem__(
                    "stop", [unescape(s) for s in split_list(e.value or "")]))
                suffix = testid(ui.input("completion_suffix (\\n for a newline)",
                                         value=escape(spec["completion_suffix"])).classes(LIST_FIELD),
                                f"field-{lang}-completion_suffix")
                suffix.on_value_change(lambda e: spec.__setitem__("completion_suffix", unescape(e.value or "")))
            ui.label("Test prelude (run before every test case)").classes("text-base")
            self.code_editor(spec, "test_prelude", lang, f"prelude-{lang}")
            ui.label("Solution header (placed before the solution)").classes("text-base")
            self.code_editor(spec, "solution_header", lang, f"header-{lang}")
            for key, title in (("public_tests", "Public tests"), ("hidden_tests", "Hidden tests")):
                ui.label(title).classes("text-lg")
                self.tests_box(ui.column().classes("w-full gap-2"), spec, key, lang)
            ui.label(f"Golden solution ({lang})").classes("text-lg")
            self.code_editor(spec, "golden", lang, f"golden-{lang}")
            self.golden_runner(i, lang)

    def tests_box(self, box: Any, spec: dict[str, Any], key: str, lang: str) -> None:
        from nicegui import ui

        box.clear()
        kind = key.split("_")[0]
        tests: list[dict[str, Any]] = spec[key]

        def remove(n: int) -> None:
            tests.pop(n)
            self.tests_box(box, spec, key, lang)

        def add(stdio: bool) -> None:
            tests.append({"name": "", "code": "", "stdin": "" if stdio else None, "stdout": "" if stdio else None})
            self.tests_box(box, spec, key, lang)

        with box:
            for n, test in enumerate(tests):
                with ui.card().classes("w-full p-2 gap-2"):
                    self.test_case(test, f"{kind}-{lang}-{n}", lang, lambda n=n: remove(n))
            with ui.row().classes("gap-2"):
                testid(ui.button("add a test", on_click=lambda: add(False)).props("flat dense"),
                       f"add-{kind}-{lang}")
                testid(ui.button("add a stdin/stdout test", on_click=lambda: add(True)).props("flat dense"),
                       f"add-{kind}-stdio-{lang}")

    def test_case(self, test: dict[str, Any], tag: str, lang: str, remove: Any) -> None:
        from nicegui import ui

        stdio = test.get("stdin") is not None or test.get("stdout") is not None
        with ui.row().classes("w-full items-center gap-2"):
            self.bind_text(test, "name", testid(ui.input("name", value=test["name"]).classes("w-64")
                                                .props("dense"), f"{tag}-name"))
            ui.label("stdin/stdout case" if stdio else "code case").classes("text-xs text-slate-500")
            testid(ui.button("remove", on_click=remove).props("flat dense color=red"), f"{tag}-remove")
        if not stdio:
            self.code_editor(test, "code", lang, tag)
            return
        with ui.row().classes("w-full no-wrap gap-2"):
            for key in ("stdin", "stdout"):
                area = testid(ui.textarea(key, value=test.get(key) or "").classes("grow font-mono")
                              .props("outlined autogrow"), f"{tag}-{key}")
                area.on_value_change(lambda e, key=key: test.__setitem__(key, e.value or ""))

    def golden_runner(self, i: int, lang: str) -> None:
        """The "Run golden solution" button below the golden solution's editor, its result below it."""
        from nicegui import ui

        with ui.row().classes("w-full items-center gap-2"):
            run_button = testid(ui.button("Run golden solution").props("outline"), f"run-golden-{lang}")
            ui.label("runs the task as edited through the pipeline of 'validate --golden'") \
                .classes("text-xs text-slate-500")
        results = testid(ui.column().classes("w-full gap-1"), f"golden-results-{lang}")
        run_button.on_click(lambda: self.run_golden(i, lang, results))

    async def run_golden(self, i: int, lang: str, results: Any) -> None:
        from nicegui import run, ui

        results.clear()
        with results:
            ui.label("running...").classes("text-slate-500")
        name = str(self.fields(i)["name"] or self.source.tasks[i].name)
        try:
            done = await run.io_bound(self.service.run_golden, self.path, self.edited_text(), name, lang)
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
            testid(ui.label(f"golden solution: {outcome.upper()}")
                   .classes("text-lg " + ("text-green-700" if outcome == "pass" else "text-red-700")),
                   "golden-outcome")
            for c in cases:
                ok = c.status == "pass"
                where = f" (line {c.line})" if c.line else ""
                testid(ui.label(f"{'PASS' if ok else c.status.upper()}  {c.test_case}{where}"
                                + (f": {c.error}" if c.error and not ok else ""))
                       .classes("font-mono break-all " + ("text-green-700" if ok else "text-red-700")),
                       f"case-{c.test_case}")

    @staticmethod
    def bind_text(target: dict[str, Any], key: str, element: Any) -> None:
        element.on_value_change(lambda e: target.__setitem__(key, e.value or ""))

    def code_editor(self, target: dict[str, Any], key: str, lang: str | None, tag: str) -> None:
        """A code editor of ``target[key]``, its box as tall as its first text needs (up to
        60% of the window; it scrolls inside beyond that)."""
        from nicegui import ui

        text = str(target.get(key) or "")
        n = text.count("\n") + 1
        cm = ui.codemirror(text, language=cast(Any, CODEMIRROR_LANGUAGE.get(lang or "", "Markdown"))) \
            .classes(CODE_SHORT if n <= 3 else CODE_MEDIUM if n <= 8 else CODE_TALL if n <= 16 else CODE_FULL)
        testid(cm, tag)
        self.bind_text(target, key, cm)

    # -- changes of the whole file ----------------------------------------------------------------

    def say(self, lines: list[str], ok: str | None = None) -> None:
        from nicegui import ui

        self.messages.clear()
        with self.messages:
            if ok is not None:
                testid(ui.label(ok).classes("text-green-700"), "pending")
            for line in lines:
                problem(line)

    def _changed(self, change: Any) -> tuple[str, Any, TaskSource]:
        text, select = change(self.edited_text())
        return text, select, parse_source(text, self.path)

    async def restructure(self, change: Any, message: str) -> None:
        """Apply ``change`` (edited text -> (new text, task to select)) to the tasks as edited
        (in a thread: a big file takes a while); the file is written by Save."""
        from nicegui import run

        try:
            done = await run.io_bound(self._changed, change)
            if done is None:  # the server is stopping
                return
            text, select, source = done
        except InputError as e:
            self.say(_problems_text(e.problems))
            return
        except ValueError:  # a field as edited is not valid: show where, change nothing
            await self.validate()
            with self.messages:
                problem("fix these problems first: the tasks were not changed")
            return
        self.text, self.source, self.edits, self.problems = text, source, {}, []
        self.selected = None
        names = [t.name for t in source.tasks]
        self.show_list()
        if names:
            self.select(names.index(select) if select in names else min(max(int(select), 0), len(names) - 1)
                        if isinstance(select, int) else 0)
        else:
            self.editor.clear()
        self.say([], f"{message} (not saved yet: Save writes it)")

    async def add(self) -> None:
        await self.restructure(lambda text: new_task(text, self.path), "added a task")

    async def duplicate(self, i: int) -> None:
        await self.restructure(lambda text: duplicate_task(text, self.path, i), "duplicated the task")

    def delete_dialog(self) -> None:
        """The question asked before a task is deleted (made once, opened for each task)."""
        from nicegui import ui

        self.deleting: int | None = None
        with ui.dialog() as self.dialog, ui.card():
            ui.label("Delete this task? Save then removes it from the file.")
            self.delete_name = testid(ui.label("").classes("font-mono font-medium"), "delete-name")
            with ui.row():
                testid(ui.button("Delete", on_click=self.delete).props("color=red"), "confirm-delete")
                testid(ui.button("Cancel", on_click=self.dialog.close).props("flat"), "cancel-delete")

    def confirm_delete(self, i: int) -> None:
        self.deleting = i
        self.delete_name.text = self.source.tasks[i].name
        self.dialog.open()

    async def delete(self) -> None:
        self.dialog.close()
        i = self.deleting
        if i is None or i >= len(self.source.tasks):
            return
        name = self.source.tasks[i].name
        await self.restructure(lambda text: (delete_task(text, self.path, i), i), f"deleted {name}")

    def show_problems(self, problems: list[Problem]) -> None:
        """``problems`` listed at the top, and each beside the task (and language) it is about."""
        self.problems = problems
        errors = [p for p in problems if p.severity == "error"]
        self.say(_problems_text([p for p in problems if task_of(p) is None or p.severity != "error"]))
        with self.messages:
            from nicegui import ui

            testid(ui.label(f"{len(errors)} problem(s)" if errors else "no problems")
                   .classes("text-red-700" if errors else "text-green-700"), "problem-count")
        self.show_list()
        self.show_task()

    async def validate(self) -> None:
        from nicegui import run

        try:
            problems = await run.io_bound(lambda: self.service.check_text(self.path, self.edited_text(), KIND))
        except InputError as e:
            problems = list(e.problems)
        except UserError as e:
            self.say([str(e)])
            return
        if problems is not None:
            self.show_problems(problems)

    async def save(self) -> None:
        from nicegui import run, ui

        self.messages.clear()
        if self.access is not None and not self.access.allows("editor"):
            self.say(["your token may read, not write (an editor's token is needed)"])
            return
        try:
            done = await run.io_bound(lambda: self.service.write_file(self.path, self.edited_text(), KIND,
                                                                      self.etag))
            if done is None:
                return
            written, warnings = done
        except InputError as e:
            self.show_problems(list(e.problems))
            return
        except Conflict as e:
            with self.messages:
                testid(ui.label(f"412 conflict: {e}").classes("text-red-700"), "conflict")
                ui.button("Reload (drops your edits)",
                          on_click=lambda: ui.navigate.to(link_to("/tasks", path=self.path)))
            return
        except UserError as e:
            self.say([str(e)])
            return
        self.text, self.etag, self.edits, self.problems = written.text, written.etag, {}, []
        self.source = parse_source(written.text, self.path)
        self.show_list()
        self.show_task()
        with self.messages:
            testid(ui.label("saved").classes("text-green-700"), "saved")
            for p in warnings:
                testid(ui.label(p.render()).classes("text-amber-700"), "warning")


async def tasks_page(service: Service, access: Access | None, path: str = "") -> None:
    """The editor of one task source (its problems, with a link to the raw YAML, if it cannot be read)."""
    from nicegui import run, ui

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
    TaskPage(service, access, path, got.text, got.etag, source).build(root)


def register(service: Service, access: Access | None = None) -> None:
    """Define the page ``/tasks?path=tasks/x.yaml`` (NiceGUI keeps it for the process); with
    ``access`` (``serve --auth``), reading needs a viewer's token, saving an editor's."""
    from nicegui import ui

    @ui.page("/tasks")
    async def _tasks(path: str = "") -> None:
        await tasks_page(service, access, path)
