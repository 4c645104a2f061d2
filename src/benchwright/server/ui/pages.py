"""The pages of the web UI, one module each; every one reads and writes through the service layer."""

from __future__ import annotations

from benchwright.server.service import Service
from benchwright.server.ui import compare, explorer, files, launch, runs, sample
from benchwright.server.ui.access import Access


def register(service: Service, *, auth_on: bool) -> None:
    """Define every page (NiceGUI keeps them for the process)."""
    from benchwright.server.ui.forms import register_forms
    from benchwright.server.ui.tasks import register_tasks

    access = Access(service, auth_on)
    register_forms(service, access)
    register_tasks(service, access)
    for module in (files, launch, runs, explorer, compare, sample):
        module.register(service, access)
