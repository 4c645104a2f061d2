"""Rich tables of the CLI that never cut what they show: at any terminal width a long name wraps
onto more lines (folded inside a word if it must) instead of ending in "…", so what a user copies
from a table is whole."""

from __future__ import annotations

import io

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

HEADER_KEPT = 12
"""A one-word header up to this many characters keeps its column at least that wide (it is not
folded while other columns could give room)."""
KEY_KEPT = 24
"""A line of the first column (the names) when its longest does not fit."""
KEY_NARROWER = (16, 12)
"""Narrower lines for the first column, tried in turn when the table would not fit."""


def never_cut(table: Table, width: int) -> Table:
    """Make every column of ``table`` (rows added) wrap instead of cutting; as far as ``width``
    allows, one-word headers stay whole and the first column's names keep one line (else up to
    :data:`KEY_KEPT`, then fewer, characters a line). Returns ``table``."""
    for column in table.columns:
        column.overflow = "fold"
    if not table.columns:
        return table
    key = table.columns[0]
    longest = max([_width(key.header), *(_width(c) for c in key.cells)])
    widths = dict.fromkeys(w for w in (longest, KEY_KEPT, *KEY_NARROWER) if w <= longest)
    headers = [_header_width(c.header) for c in table.columns]
    tries = [(w, keep) for keep in (True, False) for w in widths]
    for key_kept, keep_headers in [*tries, (None, False)]:
        key.width = key_kept
        for column, least in zip(table.columns, headers, strict=True):
            column.min_width = (least or None) if keep_headers else None
        if _fits(table, width):
            break
    return table


def _fits(table: Table, width: int) -> bool:
    """Whether ``table`` renders within ``width`` columns (rich widens a column to its minimum
    even past the terminal's edge)."""
    probe = Console(file=io.StringIO(), width=width, color_system=None, soft_wrap=True)
    probe.print(table)
    shown = probe.file.getvalue() if isinstance(probe.file, io.StringIO) else ""
    return all(cell_len(line) <= width for line in shown.splitlines())


def _header_width(header: object) -> int:
    return len(header) if isinstance(header, str) and len(header) <= HEADER_KEPT and " " not in header else 0


def _width(cell: object) -> int:
    """The longest line of a cell as shown (markup removed)."""
    text = cell if isinstance(cell, Text) else Text.from_markup(cell) if isinstance(cell, str) else None
    return max((len(line) for line in text.plain.splitlines()), default=0) if text is not None else 0
