"""The one exception tree of benchwright.

::

    BenchwrightError
     ├── UserError            bad input the user can fix; printed without a traceback, exit 2
     │    ├── InputError      one or more located problems in files (see ``Problem``)
     │    ├── PluginNotFound  a criterion, provider, language or sandbox name nobody registered
     │    └── PluginError     a plug-in registered twice, or whose factory made the wrong kind
     ├── MissingDependency    an optional extra is needed (the message names it)
     ├── InfraError           the harness, sandbox, toolchain or provider failed (sample -> infra_error)
     └── UnsafeFile           a file an agent left is refused (a link, a FIFO, too large): run badge FAIL

Expected failures of generated code (a test failed, a program crashed) are values, not
exceptions: they end up in result records.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One located problem in an input file."""

    file: str
    message: str
    path: str = ""
    """The place in the document, e.g. ``tasks[3].task.languages_specific.python.hidden_tests[0]``."""
    line: int | None = None
    """1-based line number, when known."""
    hint: str = ""
    severity: str = "error"
    """``error`` or ``warning``."""

    def render(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        text = f"{where}: {self.severity}: "
        if self.path:
            text += f"{self.path}: "
        text += self.message
        if self.hint:
            text += f" (hint: {self.hint})"
        return text


class BenchwrightError(Exception):
    """Base of every error benchwright raises on purpose."""


class UserError(BenchwrightError):
    """Bad input the user can fix. The CLI prints it without a traceback and exits 2."""


class InputError(UserError):
    """One or more problems located in input files."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = [p for p in problems if p.severity == "error"] or problems
        super().__init__("\n".join(p.render() for p in self.problems))


class PluginNotFound(UserError):
    """No plug-in of that kind is registered under that name."""


class PluginError(UserError):
    """A plug-in is wrong: a name registered twice without ``override=True``, or a factory that
    made something other than its kind's base class. The message names the plug-in's module."""


class MissingDependency(BenchwrightError):
    """An optional dependency is not installed; the message names the extra to install."""


class InfraError(BenchwrightError):
    """The harness, sandbox, toolchain or provider failed: never counted against a model."""


class UnsafeFile(BenchwrightError):
    """A path in a folder an agent wrote is not what the harness may read or write there: a
    symbolic link on the way, a FIFO, a device, a folder where a file is expected, a file larger
    than the harness reads... Nothing is followed; the agent code turns it into a failed run
    badge with this reason (never an infra_error). ``reason`` says what the path is or does
    (``is a symbolic link to '/etc'``, ``cannot be opened: ...``)."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"{path} {reason}")
