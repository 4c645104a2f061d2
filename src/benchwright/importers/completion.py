"""The task a completion dataset's row becomes: its prompt to continue, its golden solution, its
test cases (source text, escaped here), for importers of HumanEval-style datasets."""

from __future__ import annotations

from collections.abc import Sequence

from benchwright.importers.escape import escape_template
from benchwright.task.model import LanguageSpec, Task, TaskBody, TestCase

__all__ = ["completion_task"]


def completion_task(*, name: str, source: str, language: str, prompt: str, golden: str,
                    entry_point: str | None, cases: Sequence[TestCase], prelude: str = "",
                    tags: Sequence[str] = (), header: str | None = None) -> Task:
    """A ``complete``-mode task in one language. ``prompt``, ``cases``, ``prelude`` and
    ``header`` (the task's ``solution_header``) are source text: they are escaped (benchwright
    renders them as templates); the golden solution is kept as it is (it is never rendered)."""
    spec = LanguageSpec(
        solution_header=escape_template(header) if header else None,
        description=escape_template(prompt),
        entry_point=entry_point,
        hidden_tests=[TestCase(name=c.name, code=escape_template(c.code), unsplit=c.unsplit)
                      for c in cases],
        test_prelude=escape_template(prelude) if prelude.strip() else None,
    )
    return Task(
        name=name,
        type="completion",
        source=source,
        languages=[language],
        mode="complete",
        tags=list(tags),
        task=TaskBody(common_prompt="", languages_specific={language: spec}),
        golden_solution={language: golden},
    )
