"""Helpers the language suites share."""

from __future__ import annotations

from benchwright.lang.base import ExecutionResult, TestOutcome


def by_name(result: ExecutionResult) -> dict[str, TestOutcome]:
    return {t.name: t for t in result.tests}


def line_text(outcome: TestOutcome) -> str:
    """The line a test case's outcome points at, in the code it ran (stripped)."""
    assert outcome.line is not None, outcome
    return outcome.code.splitlines()[outcome.line - 1].strip()
