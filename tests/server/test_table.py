"""The server-paged tables answer the browser's page requests: what the page asks for is checked,
never trusted (a forged ``request`` event comes over the UI's websocket like a real one)."""

from __future__ import annotations

from typing import Any

import pytest

from benchwright.server.ui.table import PagedRows, last_offset


class Recorded:
    """What PagedRows touches of a NiceGUI table: its rows, its pagination, its request handler."""

    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []
        self.pagination: dict[str, Any] = {}
        self.handler: Any = None
        self.updates = 0

    def on(self, event: str, handler: Any) -> None:
        assert event == "request"
        self.handler = handler

    def update(self) -> None:
        self.updates += 1


class Event:
    def __init__(self, args: Any) -> None:
        self.args = args


ROWS = [{"key": str(n)} for n in range(60)]


def _paged() -> tuple[Recorded, PagedRows]:
    table = Recorded()
    return table, PagedRows(table, ROWS, 25)  # type: ignore[arg-type]


def test_last_offset_is_where_the_last_page_starts() -> None:
    assert [last_offset(n, 25) for n in (0, 1, 25, 26, 60)] == [0, 0, 0, 25, 50]


def test_the_first_page_is_sent_and_a_request_gets_its_page() -> None:
    table, _ = _paged()
    assert [r["key"] for r in table.rows] == [str(n) for n in range(25)]
    assert table.pagination == {"page": 1, "rowsPerPage": 25, "rowsNumber": 60}
    table.handler(Event({"pagination": {"page": 3, "rowsPerPage": 25}}))
    assert [r["key"] for r in table.rows] == [str(n) for n in range(50, 60)]
    table.handler(Event({"pagination": {"page": 1, "rowsPerPage": 50}}))
    assert len(table.rows) == 50 and table.pagination["rowsPerPage"] == 50


@pytest.mark.parametrize("forged", [
    {"pagination": {"page": 10 ** 12, "rowsPerPage": 25}},   # past the end: the last page
    {"pagination": {"page": -5, "rowsPerPage": 25}},         # before the start: the first
    {"pagination": {"page": "2", "rowsPerPage": 25}},        # not a number: the first
    {"pagination": {"page": 1, "rowsPerPage": 10 ** 9}},    # every row at once: refused
    {"pagination": {"page": 1, "rowsPerPage": 0}},          # Quasar's "all": refused
    {"pagination": "everything"}, ["page", 2], None,
])
def test_a_forged_request_never_sends_more_than_a_page_nor_breaks_the_table(forged: Any) -> None:
    table, paged = _paged()
    table.handler(Event(forged))
    assert 0 < len(table.rows) <= 25 and paged.page_size == 25
    assert table.pagination["rowsNumber"] == 60 and 1 <= table.pagination["page"] <= 3
