"""The Files page (every config, task source and scenario, and the runs) and the YAML editor."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchwright.errors import InputError, Problem, UserError
from benchwright.server.service import FOLDERS, Conflict, FileKind, FileText, Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame, may_write, problem
from benchwright.server.ui.text import link_to, testid

FORM_PAGES: dict[str, str] = {"config": "/config", "scenario": "/scenario", "task-source": "/tasks"}
"""The form editor of each kind of file (the YAML editor is /edit for every kind)."""


def _kind(path: str) -> FileKind | None:
    top = path.split("/", 1)[0]
    return next((k for k, folder in FOLDERS.items() if folder == top), None)


KIND_LABELS: dict[FileKind, str] = {"config": "execution config", "task-source": "task source",
                                     "scenario": "scenario"}
CODE_BOX = "w-full h-[60vh] border"
FILE_COLUMNS = "minmax(14rem, max-content) 4rem 9rem 6rem 11rem"
"""The Files grid: file, editor, kind, size, modified."""


def size_text(size: int) -> str:
    """A file size as people read it (bytes, kB, MB)."""
    if size < 1000:
        return f"{size} B"
    if size < 1_000_000:
        return f"{size / 1000:.1f} kB"
    return f"{size / 1_000_000:.1f} MB"


def date_text(iso: str) -> str:
    """An ISO time (UTC) as ``2026-11-25 22:53 UTC``."""
    return iso.replace("T", " ")[:16] + " UTC" if len(iso) >= 16 else iso


def _new_file_form(service: Service, access: Access) -> None:
    """Pick a kind, type a name, get the kind's starter file, opened in its editor."""
    from nicegui import run, ui

    with testid(ui.card().classes("w-full max-w-3xl"), "new-file"):
        ui.label("New file").classes("text-lg font-medium")
        with ui.row().classes("w-full items-start gap-2"):
            kind = testid(ui.select({k: v for k, v in KIND_LABELS.items()}, value="task-source",
                                    label="kind").classes("w-48"), "new-kind")
            name = testid(ui.input("file name", placeholder="my-file.yaml").classes("w-72"), "new-name")
            folder = ui.label().classes("text-slate-500 pt-4")
            kind.on_value_change(lambda e: folder.set_text(f"in {FOLDERS[e.value]}/"))
            folder.set_text(f"in {FOLDERS[kind.value]}/")
            create = testid(ui.button("Create"), "create")
        messages = ui.column().classes("w-full")

    async def make() -> None:
        messages.clear()
        if not may_write(access, messages):
            return
        k: FileKind = kind.value
        rel = f"{FOLDERS[k]}/{(name.value or '').strip()}"
        try:
            made = await run.io_bound(service.create_file, rel, k)
        except (Conflict, UserError) as e:
            with messages:
                problem(service.shown(e))
            return
        if made is not None:
            ui.navigate.to(link_to(FORM_PAGES.get(k, "/edit"), path=made.path))  # its form editor

    create.on_click(make)


def _file_rows(service: Service, kind: FileKind) -> None:
    """The files of one kind: each with its editors, kind, size and time modified."""
    from nicegui import ui

    files = service.list_files(kind)
    if not files:
        ui.label("no files yet").classes("text-slate-500 text-sm")
        return
    with ui.grid(columns=FILE_COLUMNS).classes("gap-x-6 gap-y-1 items-center"):
        for head in ("file", "editor", "kind", "size", "modified"):
            ui.label(head).classes("text-xs uppercase text-slate-500")
        for f in files:
            testid(ui.link(f.path, link_to("/edit", path=f.path)).classes("break-all"), f"file-{f.path}")
            form = FORM_PAGES.get(kind)
            if form is not None:
                testid(ui.link("form", link_to(form, path=f.path)), f"form-{f.path}")
            else:
                ui.label("")
            ui.label(KIND_LABELS[kind])
            testid(ui.label(size_text(f.size)), f"size-{f.path}")
            testid(ui.label(date_text(f.modified)), f"modified-{f.path}")


def files_page(service: Service, access: Access) -> None:
    """Every config, task source and scenario (with a form to make one), and the runs."""
    from nicegui import ui

    if denied(access, "Files"):
        return
    with frame("Files", access):
        testid(ui.link("Workspace settings (benchwright.yaml)", link_to("/settings")), "settings-link")
        _new_file_form(service, access)
        for kind, folder in FOLDERS.items():
            ui.label(f"{folder}/").classes("text-lg font-medium")
            _file_rows(service, kind)
        ui.label("results/").classes("text-lg font-medium")
        for run_ in service.runs():
            ui.link(f"{run_['run_id']} ({run_['state']})", link_to("/run", run_["run_id"]))


def settings_page(service: Service, access: Access) -> None:
    """The workspace settings (benchwright.yaml) in a YAML editor only an admin may save."""
    from nicegui import ui

    if denied(access, "Workspace settings"):
        return
    with frame("Workspace settings", access):
        ui.label("benchwright.yaml: providers, sandbox, limits (environment variable names only, never "
                 "keys). Only an admin may change it.").classes("text-sm text-slate-600")
        got = service.read_settings()

        def allowed(problems: Any) -> bool:
            if access.allows("admin"):
                return True
            with problems:
                problem("only an admin's token may change the workspace settings")
            return False

        yaml_editor(got.text, got.etag, service.check_settings, service.write_settings, allowed,
                    say_clean=True, name="settings-editor")


def edit_page(service: Service, access: Access, path: str) -> None:
    """The YAML editor of one config, task source or scenario."""
    from nicegui import ui

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
        yaml_editor(got.text, got.etag, lambda text: service.check_text(path, text, kind),
                    lambda text, tag: service.write_file(path, text, kind, tag),
                    lambda problems: may_write(access, problems))


def register(service: Service, access: Access) -> None:
    """Define the ``/`` (Files), ``/settings`` and ``/edit`` pages (relative to the UI's mount)."""
    from nicegui import ui

    @ui.page("/")
    def _files() -> None:
        files_page(service, access)

    @ui.page("/settings")
    def _settings() -> None:
        settings_page(service, access)

    @ui.page("/edit")
    def _edit(path: str) -> None:
        edit_page(service, access, path)


def yaml_editor(text: str, etag: str, check: Callable[[str], list[Problem]],
                write: Callable[[str, str | None], tuple[FileText, list[Problem]]],
                allowed: Callable[[Any], bool], *, say_clean: bool = False,
                name: str = "yaml-editor") -> None:
    """A YAML editor with Validate and Save: ``check`` gives the problems of a text, ``write``
    saves it on the version it was read at (a conflict or a problem is shown, nothing written),
    ``allowed`` says whether this browser may save (and why not, in the column it is given);
    with ``say_clean`` a validation that finds nothing says "no problems"; ``name`` is the
    editor's test id."""
    from nicegui import ui

    state = {"etag": etag}
    editor = testid(ui.codemirror(text, language="YAML").classes(CODE_BOX), name)
    problems = testid(ui.column().classes("w-full"), "problems")

    def show(found: list[Problem], saved: bool = False) -> None:
        problems.clear()
        with problems:
            if saved:
                testid(ui.label("saved").classes("text-green-700"), "saved")
            elif say_clean and not found:
                testid(ui.label("no problems").classes("text-green-700"), "no-problems")
            for p in found:
                testid(ui.label(p.render())
                       .classes("text-red-700" if p.severity == "error" else "text-amber-700"), "problem")

    def save() -> None:
        problems.clear()
        if not allowed(problems):
            return
        try:
            written, warnings = write(editor.value, state["etag"])
        except InputError as e:
            show(e.problems)
            return
        except Conflict as e:
            with problems:
                problem(str(e))
            return
        state["etag"] = written.etag
        show(warnings, saved=True)

    with ui.row():
        testid(ui.button("Validate", on_click=lambda: show(check(editor.value))), "validate")
        testid(ui.button("Save", on_click=save), "save")
