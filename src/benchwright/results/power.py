"""``benchwright report --power``: how many tasks a difference in pass rate would need, per
model, at the run's own task-level variance (``summary.yaml``'s ``power``)."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from benchwright.results.report import NONE, format_value, models_of

POWER_HEADER = ["Model", "Pass rate", "Task variance", "Tasks for 5 points", "Tasks for 10 points"]


def power_rows(summary: dict[str, Any]) -> list[list[str]]:
    """Per model: its pass rate, the variance of its task-level pass rates and the tasks a 5 and
    a 10 point difference would need at alpha 0.05, power 0.8."""
    out = []
    for model in models_of(summary):
        data = (summary.get("by_model") or {}).get(model) or {}
        power, rate = data.get("power") or {}, data.get("pass_rate") or {}
        if not power:
            continue
        needed = {round(float(t["delta"]), 4): t.get("tasks") for t in power.get("tasks_needed") or []}
        variance = power.get("task_variance")
        out.append([model, format_value(rate.get("mean"), None, percent=True),
                    NONE if variance is None else f"{variance:.3f}",
                    *[NONE if needed.get(d) is None else str(needed[d]) for d in (0.05, 0.1)]])
    return out


POWER_TITLE = "Tasks needed to detect a difference in pass rate (alpha 0.05, power 0.8)"
POWER_NOTE = ("n = 2 * task_variance * (z(0.975) + z(0.8))^2 / delta^2, for two models scored on "
              "their own tasks; fewer suffice when both run the same tasks (docs/statistics.md)")


def power_table(summary: dict[str, Any]) -> Table | None:
    """:func:`power_rows` as a table (None when the summary has no power estimate)."""
    body = power_rows(summary)
    if not body:
        return None
    table = Table(title=POWER_TITLE, caption=POWER_NOTE, caption_justify="left")
    for i, h in enumerate(POWER_HEADER):
        table.add_column(h, justify="right" if i else "left")
    for row in body:
        table.add_row(*[Text(c) for c in row])
    return table
