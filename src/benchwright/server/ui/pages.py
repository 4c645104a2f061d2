"""The pages of the web UI, one module each; every one reads and writes through the service layer."""

from __future__ import annotations

import logging

from benchwright.errors import BenchwrightError
from benchwright.server.service import Service
from benchwright.server.ui import compare, explorer, files, launch, runs, sample
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import frame, problem

log = logging.getLogger(__name__)


def register(service: Service, *, auth_on: bool) -> None:
    """Define every page (NiceGUI keeps them for the process)."""
    from benchwright.server.ui import forms, tasks

    access = Access(service, auth_on)
    for module in (forms, tasks, files, launch, runs, explorer, compare, sample):
        module.register(service, access)

    def failed(error: Exception) -> None:
        """A page that failed (a damaged run folder, a sample that is not there): why, in the
        words of benchwright's own errors with the workspace's path left out; any other error by
        its kind only (its message may hold host paths; the server's log has it whole)."""
        log.error("a page of the web UI failed", exc_info=error)
        with frame("This page could not be shown"):
            if isinstance(error, BenchwrightError):
                problem(service.shown(error))
            else:
                problem(f"an internal error ({type(error).__name__}); the server's log has the details")

    from nicegui import app

    app.on_page_exception(failed)
