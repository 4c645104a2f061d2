"""The web UI of ``benchwright serve`` (NiceGUI, mounted at ``/ui`` on the API's application).

Every page calls the same :class:`~benchwright.server.service.Service` as the REST API; no
behaviour lives in the UI alone. Pages are registered once per process by :func:`mount_ui`.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.responses import RedirectResponse

from benchwright.server.service import Service

MOUNT = "/ui"


def mount_ui(app: FastAPI, service: Service, *, auth_on: bool) -> None:
    """Register the pages and mount NiceGUI on ``app`` under :data:`MOUNT`."""
    from nicegui import ui

    from benchwright.server.ui.pages import register

    register(service, auth_on=auth_on)

    @app.get("/", include_in_schema=False)
    def _home() -> RedirectResponse:
        return RedirectResponse(f"{MOUNT}/")

    ui.run_with(app, mount_path=MOUNT, title="benchwright", storage_secret=service.ui_secret(),
                show_welcome_message=False, reconnect_timeout=10.0)
