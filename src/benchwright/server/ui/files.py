"""The Files page (every config, task source and scenario, and the runs) and the YAML editor."""

from __future__ import annotations

from typing import Any

from benchwright.errors import InputError, UserError
from benchwright.server.service import FOLDERS, Conflict, FileKind, Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame, may_write, problem
from benchwright.server.ui.text import link_to, testid

FORM_PAGES: dict[str, str] = {"config": "/config", "scenario": "/scenario", "task-source": "/tasks"}
"""The form editor of each kind of file (the YAML editor is /edit for every kind)."""


def _kind(path: str) -> FileKind | None:
    top = path.split("/", 1)[0]
    return next((k for k, folder in FOLDERS.items() if folder == top), None)


def register(service: Service, access: Access) -> None:
    from nicegui import ui

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
                if not may_write(access, problems):
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
