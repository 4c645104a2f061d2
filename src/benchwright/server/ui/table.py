"""The results' tables: one constant cell template, and long tables paged on the server.

A cell is plain text, or ``{text, cls, href, testid}`` where ``text`` is shown as text, ``cls``
is one of the colour classes of the results pages, and ``href`` a link built by ``rel_link``:
data only ever reaches the page as ``{{ }}`` text (:data:`CELL`).

A long table (the samples of a run of 20,000 records, the tasks x models matrix, the flipped
tasks of a comparison) keeps its rows on the server and sends the browser only the page shown:
Quasar's own pagination control asks for another page (its ``request`` event) and gets it.
Sending every row and paging in the browser made the page's first paint grow with the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchwright.server.ui.text import testid

if TYPE_CHECKING:
    from nicegui.elements.table import Table
    from nicegui.events import GenericEventArguments

CELL = """<q-td :props="props">
  <a v-if="props.value && props.value.href" :href="props.value.href" :data-testid="props.value.testid"
     :class="props.value.cls" class="px-2 py-1 rounded underline">{{ props.value.text }}</a>
  <span v-else-if="props.value && props.value.text !== undefined" :data-testid="props.value.testid"
     :class="props.value.cls" class="px-2 py-1 rounded">{{ props.value.text }}</span>
  <span v-else>{{ props.value }}</span>
</q-td>"""
"""The template of every cell of the results' tables: data only as ``{{ }}`` text."""

PAGE_SIZES = (10, 25, 50, 100)
"""The page sizes the pagination control offers (no "all": a page of every row of a big run
is what paging on the server avoids)."""


def last_offset(total: int, page: int) -> int:
    """Where the last page of ``total`` rows, ``page`` a page, starts (0 for none): every pager
    of the UI clamps to it."""
    return max(0, (total - 1) // page * page)


def column(name: str, label: str, align: str = "left") -> dict[str, Any]:
    """A column whose cells are the rows' ``name`` entries."""
    return {"name": name, "label": label, "field": name, "align": align}


def _templated(columns: list[dict[str, Any]], rows: list[dict[str, Any]]) -> list[str]:
    """The columns with a coloured or linked cell in some row (those get :data:`CELL`)."""
    rich = {k for row in rows for k, v in row.items() if isinstance(v, dict)}
    return [str(c["name"]) for c in columns if c["field"] in rich]


class PagedRows:
    """The rows of a table kept on the server; the browser holds the page it shows."""

    def __init__(self, table: Table, rows: list[dict[str, Any]], page_size: int) -> None:
        self.table = table
        self.rows: list[dict[str, Any]] = []
        self.page_size = page_size
        table.on("request", self._request)
        self.show(rows)

    def show(self, rows: list[dict[str, Any]], page: int = 1) -> None:
        """Show ``rows`` (a filter's result, say) from its ``page`` (1-based, clamped)."""
        self.rows = rows
        start = min((max(1, page) - 1) * self.page_size, last_offset(len(rows), self.page_size))
        page = start // self.page_size + 1
        self.table.rows = rows[start:start + self.page_size]
        self.table.pagination = {"page": page, "rowsPerPage": self.page_size, "rowsNumber": len(rows)}
        self.table.update()

    def _request(self, e: GenericEventArguments) -> None:
        """The pagination control's request for a page (the browser's word: checked, not trusted)."""
        asked = e.args.get("pagination") if isinstance(e.args, dict) else None
        if not isinstance(asked, dict):
            return
        size, page = asked.get("rowsPerPage"), asked.get("page")
        if isinstance(size, int) and size in PAGE_SIZES:
            self.page_size = size
        self.show(self.rows, page if isinstance(page, int) else 1)


def _table(columns: list[dict[str, Any]], rows: list[dict[str, Any]], name: str,
           page_size: int | None) -> Table:
    from nicegui import ui

    table = ui.table(columns=columns, rows=[] if page_size else rows, row_key="key",
                     pagination={"rowsPerPage": page_size} if page_size else None)
    testid(table.classes("w-full").props("dense flat wrap-cells"), name)
    if page_size:
        table.props["rows-per-page-options"] = list(PAGE_SIZES)
    for name_ in _templated(columns, rows):  # plain text cells are Quasar's own (cheaper to draw)
        table.add_slot(f"body-cell-{name_}", CELL)
    return table


def results_table(columns: list[dict[str, Any]], rows: list[dict[str, Any]], name: str) -> None:
    """One results table with the :data:`CELL` template (``data-testid`` ``name``), every row
    in the page."""
    _table(columns, rows, name, None)


def paged_table(columns: list[dict[str, Any]], rows: list[dict[str, Any]], name: str,
                page_size: int) -> PagedRows:
    """A results table whose rows are paged on the server, ``page_size`` at a time."""
    return PagedRows(_table(columns, rows, name, page_size), rows, page_size)
