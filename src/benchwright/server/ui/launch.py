"""The Launch page: start a run of a config from the browser."""

from __future__ import annotations

from benchwright.errors import InputError, UserError
from benchwright.server.service import Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame, may_write
from benchwright.server.ui.text import link_to


def register(service: Service, access: Access) -> None:
    from nicegui import run, ui

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
                if not may_write(access, errors):
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
