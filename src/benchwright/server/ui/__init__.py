"""The web UI of ``benchwright serve`` (NiceGUI, mounted at ``/ui`` on the API's application).

Every page calls the same :class:`~benchwright.server.service.Service` as the REST API; no
behaviour lives in the UI alone. Pages are registered once per process by :func:`mount_ui`.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import RedirectResponse

from benchwright.server.service import Service

MOUNT = "/ui"
ASSETS = Path(__file__).parent / "assets"
"""The UI's own static files: ``tailwind.css``, its Tailwind classes compiled ahead of time
(``./scripts/build-css``). Compiling them in the browser, on every page, took a third of the
pages' first paint."""
STYLESHEET = '<link rel="stylesheet" href="/ui/assets/tailwind.css">'
"""The stylesheet's link in every page's head (served to be revalidated on every load, so a new
build is never taken from a stale cache)."""


def mount_ui(app: FastAPI, service: Service, *, auth_on: bool) -> None:
    """Register the pages and mount NiceGUI on ``app`` under :data:`MOUNT`."""
    from nicegui import Client, ui
    from nicegui import app as nicegui_app

    from benchwright.server.ui.pages import register

    register(service, auth_on=auth_on)

    @app.get("/", include_in_schema=False)
    def _home() -> RedirectResponse:
        return RedirectResponse(f"{MOUNT}/")

    if STYLESHEET not in Client.shared_head_html:  # once per process, however many apps are made
        nicegui_app.add_static_file(local_file=ASSETS / "tailwind.css", url_path="/assets/tailwind.css",
                                    max_cache_age=0)
        ui.add_head_html(STYLESHEET, shared=True)
    ui.run_with(app, mount_path=MOUNT, title="benchwright", storage_secret=service.ui_secret(),
                show_welcome_message=False, reconnect_timeout=10.0, tailwind=False)
