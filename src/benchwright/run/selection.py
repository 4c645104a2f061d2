"""Whether a config selects something to run: every filter value selects a task, every language
is one benchwright runs, every criterion it lists applies to some selected task, and the whole
selection is not empty. ``benchwright validate`` and ``benchwright run`` ask the same questions
here, so that they refuse the same configs (a typo must never give a green empty run)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from benchwright.config.model import ExecConfig
from benchwright.errors import Problem
from benchwright.registry import registry
from benchwright.run.plan import FILTERS, Plan
from benchwright.task.load import LoadedSource
from benchwright.yamldoc import Document, format_path

SINGULAR = {"languages": "language", "difficulties": "difficulty", "areas": "area", "tags": "tag"}


def _closest(value: str, known: Iterable[str], among: str = "the tasks hold") -> str:
    names = sorted(set(known))
    close = difflib.get_close_matches(value, names, n=3, cutoff=0.6)
    if close:
        return f"did you mean {' or '.join(repr(c) for c in close)}?"
    shown = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    return f"{among}: {shown}" if names else "the task sources hold none"


def selection_problems(config: ExecConfig, config_file: str, doc: Document | None,
                       sources: Sequence[LoadedSource], plan: Plan) -> list[Problem]:
    """Errors for what the config selects (nothing when it selects samples, or runs agents only).

    ``plan`` is the config's plan over ``sources``.
    """
    if not config.llms and config.agents:  # agents only: their scenarios are their tasks
        return []

    def problem(path: tuple[str | int, ...], message: str, hint: str) -> Problem:
        return Problem(config_file, message, path=format_path(path),
                       line=doc.line_of(path) if doc is not None else None, hint=hint)

    tasks = [t for s in sources for t in s.source.tasks]
    problems: list[Problem] = []
    runnable = registry.names("language")
    for i, lang in enumerate(config.languages):
        if not registry.has("language", lang):
            problems.append(problem(("languages", i), f"benchwright runs no language {lang!r}",
                                    _closest(lang, runnable, "benchwright runs")))
    for field, offered in FILTERS.items():
        values: list[str] = getattr(config, field)
        present = {v for t in tasks for v in offered(t)}
        for i, value in enumerate(values):
            if field == "languages" and not registry.has("language", value):
                continue
            if tasks and value not in present:
                problems.append(problem((field, i), f"{SINGULAR[field]} {value!r} selects no task of the task sources",
                                        _closest(value, present)))
    if not tasks:
        problems.append(problem(("task_sources",), "the config selects no task: its task sources hold none",
                                "name a task source with tasks under 'task_sources:'"))
    elif not plan.units and not problems:
        problems.append(problem((), "the config selects no task: no task passes all its filters together "
                                "(languages, difficulties, areas, tags, released_after, the models' cutoff)",
                                "loosen a filter; 'benchwright validate' lists the values the tasks hold"))
    if plan.units and config.criteria:
        used = {n for u in plan.units for n in u.criteria}
        for i, toggle in enumerate(config.criteria):
            if toggle.enabled and toggle.name in plan.criteria and toggle.name not in used:
                plugin = registry.create("criterion", toggle.name)
                langs = sorted({u.language for u in plan.units})
                measures = f"it measures {', '.join(plugin.languages)}; " if plugin.languages else ""
                problems.append(problem(("criteria", i, "name"),
                                        f"{toggle.name} applies to no selected task",
                                        f"{measures}the selected tasks are in {', '.join(langs)}: "
                                        "disable it or select tasks it measures"))
    return problems
