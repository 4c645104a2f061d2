"""The criteria catalogue and its documentation cannot drift: every criterion a user can enable
has a section in docs/criteria.md, and
``benchwright list criteria`` shows each with its unit, direction, languages, tool and state."""

from __future__ import annotations

import re
from pathlib import Path

from benchwright.criteria.base import Criterion
from benchwright.registry import registry
from tests.conftest import Runner

DOCS = Path(__file__).parents[2] / "docs" / "criteria.md"


def _sections() -> dict[str, str]:
    text = DOCS.read_text()
    parts = re.split(r"^## ", text, flags=re.M)[1:]
    return {part.splitlines()[0].strip(): part for part in parts}


def test_every_registered_criterion_has_a_section_with_unit_and_direction() -> None:
    sections = _sections()
    names = [p.name for p in registry.plugins("criterion")]
    assert names, "no criteria registered"
    missing = [name for name in names if name not in sections]
    assert not missing, f"docs/criteria.md has no '## <name>' section for {missing}"
    for name in names:
        criterion: Criterion = registry.create("criterion", name)
        body = sections[name]
        assert f"**Unit:** {criterion.unit}." in body, name
        direction = "Higher is better" if criterion.higher_is_better else "Lower is better"
        assert direction in body, name


def test_list_criteria_shows_each_with_its_unit_and_state(bw: Runner) -> None:
    proc = bw("list", "criteria")
    assert proc.returncode == 0, proc.stderr
    rows = {cells[0]: cells for line in proc.stdout.splitlines() if line.startswith("│ ")
            for cells in [[c.strip() for c in line.strip("│ ").split("│")]] if cells[0]}
    for plugin in registry.plugins("criterion"):
        criterion: Criterion = registry.create("criterion", plugin.name)
        assert rows[plugin.name][1] == criterion.unit, rows[plugin.name]
        assert rows[plugin.name][2] == ("higher" if criterion.higher_is_better else "lower")
        assert rows[plugin.name][5] == "ready"
