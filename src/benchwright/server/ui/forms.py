"""Form editors of the web UI: an execution config and a scenario's scorers, each beside its YAML.

Every form change is an edit of the YAML text (:mod:`benchwright.config.editor`), so comments,
key order and style survive; saving writes that text through :meth:`Service.write_file`, which
validates it exactly as ``benchwright validate`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from nicegui import run, ui

from benchwright.config import editor as editor_
from benchwright.errors import InputError, Problem, UserError
from benchwright.server.service import Conflict, FileKind, Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame, problem
from benchwright.server.ui.text import testid


def _number(value: float | None) -> int | float | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() else value


class Editor:
    """The YAML beside a form: form changes edit the text; save writes it."""

    def __init__(self, service: Service, access: Access | None, path: str, kind: FileKind,
                 text: str, tag: str) -> None:
        self.service, self.access = service, access
        self.path, self.kind, self.etag = path, kind, tag
        self.code = ui.codemirror(text, language="YAML").classes("w-full h-[70vh] border") \
            .props('data-testid="yaml"')
        self.problems: ui.column | None = None

    def doc(self) -> Any:
        return editor_.load_rt(self.code.value)

    async def change(self, change: Callable[[Any], None]) -> None:
        try:
            self.code.value = editor_.edit_text(self.code.value, change)
        except ValueError as e:
            self.show_text(f"{self.path}: {e} (fix the YAML, then reload the form)")
            return
        await self.check()

    def show(self, found: list[Problem], saved: bool = False) -> None:
        assert self.problems is not None
        self.problems.clear()
        with self.problems:
            if saved:
                ui.label("saved").classes("text-green-700").props('data-testid="saved"')
            else:
                errors = sum(p.severity == "error" for p in found)
                ui.label(f"checked: {errors} error(s), {len(found) - errors} warning(s)") \
                    .classes("text-sm text-slate-500").props('data-testid="checked"')
            for p in found:
                ui.label(p.render()).props('data-testid="problem"') \
                    .classes("text-red-700" if p.severity == "error" else "text-amber-700")

    def show_text(self, message: str) -> None:
        assert self.problems is not None
        self.problems.clear()
        with self.problems:
            problem(message)

    async def check(self) -> None:
        self.show(await run.io_bound(self.service.check_text, self.path, self.code.value, self.kind) or [])

    async def save(self) -> None:
        if self.access is not None and not self.access.allows("editor"):
            self.show_text("your token may read, not write (an editor's token is needed)")
            return
        try:
            done = await run.io_bound(self.service.write_file, self.path, self.code.value, self.kind, self.etag)
        except InputError as e:
            self.show(list(e.problems))
            return
        except Conflict as e:
            self.show_text(f"412 Precondition Failed: {e}")
            return
        if done is None:  # the process is shutting down
            return
        written, warnings = done
        self.etag = written.etag
        self.show(warnings, saved=True)

    def buttons(self, refresh: Callable[[], None]) -> None:
        with ui.row():
            ui.button("Validate", on_click=self.check).props('data-testid="validate"')
            ui.button("Save", on_click=self.save).props('data-testid="save"')
            ui.button("Reload form from YAML", on_click=refresh).props('flat data-testid="reload"')
        self.problems = ui.column().classes("w-full").props('data-testid="problems"')


def laid_out(service: Service, access: Access | None, path: str, kind: FileKind, split: int,
             refresh: Callable[[], None]) -> tuple[Editor, Any] | None:
    """A form page's two halves: the YAML editor on the right, its buttons and an empty
    form column (for ``refresh`` to fill) on the left; None, with the problem shown, when
    the file cannot be read."""
    try:
        got = service.read_file(path, kind)
    except UserError as e:
        problem(str(e))
        return None
    with ui.splitter(value=split).classes("w-full") as halves:
        with halves.after:
            editor = Editor(service, access, path, kind, got.text, got.etag)
        with halves.before, ui.column().classes("w-full pr-4 gap-2"):
            editor.buttons(refresh)
            form = ui.column().classes("w-full gap-2")
    return editor, form


def config_page(service: Service, access: Access | None, path: str) -> None:
    """An execution config's form: its filters, parameters, criteria, models and samples."""
    if denied(access, f"Config {path}"):
        return
    with frame(f"Config {path}", access):
        laid = laid_out(service, access, path, "config", 45, lambda: build())
        if laid is None:
            return
        editor, form = laid
        known = service.criterion_names()

        def build() -> None:
            form.clear()
            try:
                doc = editor.doc()
            except ValueError as e:
                with form:
                    problem(str(e))
                return
            with form:
                ui.label("Filters").classes("text-lg font-medium")
                for key in editor_.LIST_FILTERS:
                    testid(ui.input_chips(key, value=editor_.get_list(doc, key), new_value_mode="add-unique",
                                          on_change=lambda e, k=key: editor.change(
                                              lambda d: editor_.set_list(d, k, [str(v) for v in e.value or []])))
                           .classes("w-full"), f"filter-{key}")
                params = editor_.toggles(doc, "parameters")
                if params:
                    ui.label("Parameters").classes("text-lg font-medium")
                    for name, on in params.items():
                        testid(ui.switch(name, value=on, on_change=lambda e, n=name: editor.change(
                            lambda d: editor_.set_toggle(d, "parameters", n, bool(e.value)))), f"parameter-{name}")
                ui.label("Criteria").classes("text-lg font-medium")
                enabled = editor_.toggles(doc, "criteria")
                with ui.grid(columns=2).classes("w-full gap-0"):
                    for name in sorted(set(known) | set(enabled)):
                        testid(ui.switch(name, value=enabled.get(name, False),
                                         on_change=lambda e, n=name: editor.change(
                                             lambda d: editor_.set_toggle(d, "criteria", n, bool(e.value)))),
                               f"criterion-{name}")
                ui.label("Models").classes("text-lg font-medium")
                for mid in editor_.model_ids(doc):
                    with ui.row().classes("items-center gap-2"):
                        testid(ui.label(mid), f"model-{mid}")

                        async def drop(m: str = mid) -> None:
                            await editor.change(lambda d: editor_.remove_model(d, m))
                            build()

                        testid(ui.button(icon="delete", on_click=drop).props("flat dense"),
                               f"remove-model-{mid}")
                with ui.row().classes("items-center gap-2"):
                    new = ui.input("provider/model").props('data-testid="new-model"')

                    async def add() -> None:
                        if new.value and new.value.strip():
                            await editor.change(lambda d: editor_.add_model(d, new.value.strip()))
                            build()

                    ui.button("Add model", on_click=add).props('data-testid="add-model"')
                ui.number("samples", value=doc.get("samples", 1), min=1, precision=0,
                          on_change=lambda e: editor.change(lambda d: editor_.set_scalar(d, "samples", _number(e.value)))) \
                    .props('data-testid="samples"')

        build()


def scenario_page(service: Service, access: Access | None, path: str) -> None:
    """A scenario's form: its scorers, each with the fields of its type."""
    if denied(access, f"Scenario {path}"):
        return
    with frame(f"Scenario {path}", access):
        laid = laid_out(service, access, path, "scenario", 55, lambda: build())
        if laid is None:
            return
        editor, form = laid
        kinds = service.scorer_types()
        types = kinds.names()

        def build() -> None:
            form.clear()
            try:
                items = editor_.scorers(editor.doc())
            except ValueError as e:
                with form:
                    problem(str(e))
                return
            with form:
                ui.label("Scorers").classes("text-lg font-medium")
                for i, item in enumerate(items):
                    row(i, item if isinstance(item, dict) else {})
                with ui.row().classes("items-center gap-2"):
                    kind = ui.select(types, value="command", label="new scorer type") \
                        .classes("w-64").props('data-testid="new-scorer-type"')

                    async def add() -> None:
                        await editor.change(lambda d: editor_.add_scorer(d, str(kind.value)))
                        build()

                    ui.button("Add scorer", on_click=add).props('data-testid="add-scorer"')

        def row(i: int, item: dict[str, Any]) -> None:
            kind = str(item.get("type", ""))

            def setter(field: str, convert: Callable[[Any], Any] = lambda v: v) -> Callable[[Any], Any]:
                return lambda e: editor.change(lambda d: kinds.set_field(d, i, field, convert(e.value)))

            with testid(ui.card().classes("w-full"), f"scorer-{i}"), \
                    ui.row().classes("w-full items-center gap-2"):
                testid(ui.input("name", value=str(item.get("name") or ""), on_change=setter("name"))
                       .classes("w-32"), f"scorer-{i}-name")

                async def retype(e: Any) -> None:
                    await editor.change(lambda d: kinds.set_type(d, i, str(e.value)))
                    build()

                testid(ui.select(types, value=kind if kind in types else None, label="type", on_change=retype)
                       .classes("w-52"), f"scorer-{i}-type")
                for field in kinds.fields(kind):
                    how = kinds.field_kind(kind, field)
                    tag = f"scorer-{i}-{field}"
                    current = item.get(field)
                    if how == "list":
                        testid(ui.input_chips(field, value=[str(v) for v in current or []],
                                              new_value_mode="add-unique",
                                              on_change=setter(field, lambda v: [str(x) for x in v or []] or None))
                               .classes("min-w-64"), tag)
                    elif how == "int":
                        testid(ui.number(field, value=current if isinstance(current, (int, float)) else None,
                                         precision=0, on_change=setter(field, _number)).classes("w-28"), tag)
                    else:
                        testid(ui.input(field, value=str(current or ""), on_change=setter(field))
                               .classes("grow min-w-64"), tag)
                testid(ui.switch("required", value=kinds.is_required(item), on_change=setter("required", bool)),
                       f"scorer-{i}-required")

                async def drop() -> None:
                    await editor.change(lambda d: editor_.remove_scorer(d, i))
                    build()

                testid(ui.button(icon="delete", on_click=drop).props("flat dense"), f"scorer-{i}-remove")

        build()


def register(service: Service, access: Access | None = None) -> None:
    """Define the ``/config`` and ``/scenario`` form pages (relative to the UI's mount); with
    ``access`` (``serve --auth``), reading needs a viewer's token and saving an editor's."""

    @ui.page("/config")
    def _config(path: str) -> None:
        config_page(service, access, path)

    @ui.page("/scenario")
    def _scenario(path: str) -> None:
        scenario_page(service, access, path)
