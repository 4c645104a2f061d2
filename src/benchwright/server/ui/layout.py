"""What every page of the web UI shares: the header and title, and the sign-in form shown
instead of a page when ``serve --auth`` wants a token the browser has not given."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from benchwright.server.auth import Role
from benchwright.server.ui.access import Access
from benchwright.server.ui.text import link_to

NAV = (("Files", "/"), ("Launch", "/launch"), ("Runs", "/runs"), ("Explorer", "/explorer"),
       ("Compare", "/compare"))
"""The header's links (relative to the UI's mount)."""


@contextmanager
def frame(title: str, access: Access | None = None) -> Iterator[None]:
    """A page: the header, the title, then what the ``with`` block adds, in one column."""
    from nicegui import ui

    ui.page_title(f"{title} - benchwright")
    with ui.header().classes("items-center gap-6 bg-slate-800"):
        ui.label("benchwright").classes("text-lg font-bold")
        for label, target in NAV:
            ui.link(label, link_to(target)).classes("text-white")
        if access is not None and access.store is not None:
            ui.label("tokens required").classes("text-xs text-amber-300")
    with ui.column().classes("w-full p-4 gap-4"):
        ui.label(title).classes("text-2xl font-semibold").props('data-testid="page-title"')
        yield


def problem(text: str) -> None:
    """A problem shown where it happened (a bad file, a refused write): in red, findable by
    tests as ``data-testid="problem"``."""
    from nicegui import ui

    ui.label(text).classes("text-red-700").props('data-testid="problem"')


def denied(access: Access | None, title: str, need: Role = "viewer") -> bool:
    """With ``--auth`` and no token of the role: show the page's frame with the sign-in form
    instead of the page, and say so."""
    if access is None or access.allows(need):
        return False
    with frame(title, access):
        access.sign_in(need)
    return True


def may_write(access: Access, where: Any) -> bool:
    """Whether this browser may change files or runs; if not, say so inside ``where``."""
    if access.allows("editor"):
        return True
    with where:
        problem("your token may read, not write (an editor's token is needed)")
    return False
