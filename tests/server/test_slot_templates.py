"""The results tables' cell templates (Quasar slots) are constant strings written in the code that
put data only into ``{{ }}`` text and bound attributes, never into markup: no ``v-html``, no
inline handler, and a link's target only from a row field the server built with ``link_to``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import benchwright.server.ui as ui_package
from benchwright.server.ui.results import rel_link
from benchwright.server.ui.table import CELL
from benchwright.server.ui.text import link_to

SOURCES = sorted(Path(ui_package.__file__).parent.glob("*.py"))


def test_every_slot_template_is_a_constant_written_in_the_code() -> None:
    found = 0
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_slot":
                found += 1
                template = node.args[1] if len(node.args) > 1 else None
                assert isinstance(template, ast.Name) and template.id.isupper(), f"{path.name}:{node.lineno}"
    assert found >= 2  # the results and compare tables (one helper), the explorer


def test_the_cell_template_shows_data_as_text_only() -> None:
    assert "v-html" not in CELL and "innerHTML" not in CELL
    assert not re.search(r"\s(@|v-on:)", CELL)  # no handler runs a value
    assert set(re.findall(r':href="([^"]+)"', CELL)) == {"props.value.href"}


def test_a_cells_link_stays_on_the_ui_whatever_the_run_id() -> None:
    assert rel_link(1, "/sample", "javascript:alert(1)", "//evil") == "../sample/javascript%3Aalert%281%29/%2F%2Fevil"
    assert rel_link(0, "/agent", "r", "e") == "./agent/r/e"
    assert rel_link(2, "/sample", "../..", "x") == "../../sample/..%2F../x"
    assert rel_link(1, "/sample", "..", ".") == "../sample/%252E%252E/%252E"  # never a dot segment


def test_no_link_to_a_page_climbs_out_of_it() -> None:
    """A browser resolves ``..`` and ``%2E%2E`` alike: a dot segment from data is quoted twice."""
    assert link_to("/sample", "..", "x") == "/sample/%252E%252E/x"
    assert link_to("/run", ".") == "/run/%252E"
    assert link_to("/run", "...") == "/run/..."  # not a dot segment
    assert link_to("/edit", path="../x") == "/edit?path=..%2Fx"
