"""Helpers the language suites share."""

from __future__ import annotations

from typing import Any

from benchwright.lang.base import ExecutionResult, TestOutcome
from benchwright.sandbox.base import Sandbox


def by_name(result: ExecutionResult) -> dict[str, TestOutcome]:
    return {t.name: t for t in result.tests}


def line_text(outcome: TestOutcome) -> str:
    """The line a test case's outcome points at, in the code it ran (stripped)."""
    assert outcome.line is not None, outcome
    return outcome.code.splitlines()[outcome.line - 1].strip()


class Spy:
    """A sandbox that remembers what every ``run`` was given (to see which call carried which
    file), and otherwise is the sandbox it wraps."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner = inner
        self.calls: list[tuple[list[str], dict[str, bytes]]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def run(self, argv: list[str], *, files: dict[str, bytes], **kw: Any) -> Any:
        self.calls.append((argv, dict(files)))
        return self.inner.run(argv, files=files, **kw)


def shown(result: ExecutionResult) -> list[tuple[Any, ...]]:
    """What a user sees of each test case: status, message, line and the code shown."""
    return [(t.status, t.message, t.line, t.code) for t in result.tests]
