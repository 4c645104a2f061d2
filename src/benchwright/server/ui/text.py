"""How data reaches a page of the web UI: as text, never as markup or code.

Task, test-case, model, agent and scorer names, file paths, run ids, model answers, test output
and agent trajectories are written by whoever made the dataset, the config, the model or the
agent, and any of them may be hostile. NiceGUI offers several ways for such a string to become
markup or JavaScript: a props string is parsed (``.props(f'data-testid="{name}"')`` lets a name
add an ``innerHTML`` prop, which is set as markup, or a ``:``-prop, which is evaluated as
JavaScript), ``ui.html`` and ``ui.markdown`` (and ``ui.code``, which renders markdown) render
markup, and a link or ``ui.navigate`` target built from a name can point elsewhere. So the pages
put data only into text (``ui.label``, a button's or an expansion's label, a table cell, an
input's value, :func:`preformatted`), into an attribute set as one dict entry (:func:`testid`),
or into a URL component quoted by :func:`link_to`. ``tests/server/test_markup_rules.py`` holds
the pages' source to these rules; ``tests/server/test_hostile_text.py`` shows them in Chromium.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar
from urllib.parse import quote, urlencode

if TYPE_CHECKING:
    from nicegui.element import Element
    from nicegui.elements.label import Label

E = TypeVar("E", bound="Element")

PREFORMATTED = "w-full whitespace-pre-wrap break-all font-mono text-sm bg-slate-50 p-2 rounded"
"""How :func:`preformatted` text looks: a monospaced block, its whitespace kept."""


def testid(element: E, value: str) -> E:
    """``element`` with ``data-testid`` set to ``value`` as it is: one prop, never a parsed
    props string, so a quote or a space in a name is part of the value and nothing more."""
    element.props["data-testid"] = value
    return element


def _segment(value: str) -> str:
    """One path segment, URL-quoted. ``.`` and ``..``, which quoting leaves as they are and a
    browser resolves (climbing out of the page), become ``%252E`` and ``%252E%252E``: a browser
    takes ``%2E%2E`` for ``..`` too, so the dots are quoted twice."""
    return quote("%2E" * len(value), safe="") if value in (".", "..") else quote(value, safe="")


def link_to(page: str, *segments: str, **query: str) -> str:
    """A link to one of the UI's own pages: ``page`` is a fixed path written in the code
    (``/run``), each of ``segments`` becomes one path segment and ``query`` the query string,
    both URL-quoted; the link stays on the UI whatever the data holds (a ``javascript:``, a
    ``//host``, a ``?``, a ``#``, a ``..``)."""
    if not page.startswith("/") or page.startswith("//"):
        raise ValueError(f"{page!r}: a link to a page of the UI starts with one '/'")
    path = page.rstrip("/") + "".join("/" + _segment(s) for s in segments) if segments else page
    return f"{path}?{urlencode(query)}" if query else path


def preformatted(text: str) -> Label:
    """``text`` as a block of monospaced text, its lines and spaces kept (code, test output, a
    model's answer, a diff); never rendered as markdown or HTML."""
    from nicegui import ui

    return ui.label(text).classes(PREFORMATTED)


def cell(value: object) -> str:
    """A value as a table cell shows it: nothing for None, four significant digits for a float."""
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
