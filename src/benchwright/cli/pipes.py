"""A closed standard output (``benchwright report | head -1``) ends the command quietly, as it
ends other Unix tools: no traceback and exit status 141 (128 + SIGPIPE, what a shell reports for
``yes | head -1``), never 1, which means a threshold was missed."""

from __future__ import annotations

import os
import sys
from typing import Any, NoReturn, TextIO

from benchwright.errors import BenchwrightError

EXIT_PIPE = 141
"""The status of a command whose reader went away: 128 + SIGPIPE (13)."""


class OutputClosed(BenchwrightError):
    """The reader of standard output went away; nothing is wrong with the command."""


class _Guarded:
    """Standard output whose broken pipe raises :class:`OutputClosed` (click and rich would
    otherwise turn it into exit status 1)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError as e:
            raise OutputClosed("standard output was closed") from e

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError as e:
            raise OutputClosed("standard output was closed") from e

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_stdout() -> None:
    """Route ``sys.stdout`` through :class:`_Guarded` (once)."""
    if not isinstance(sys.stdout, _Guarded):
        sys.stdout = _Guarded(sys.stdout)


def exit_quietly() -> NoReturn:
    """Leave after the reader went away: what is still buffered goes nowhere, no message."""
    stream = sys.stdout._stream if isinstance(sys.stdout, _Guarded) else sys.stdout
    sys.stdout = stream
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())  # the interpreter's last flush writes nowhere
    except (OSError, ValueError):
        pass
    sys.exit(EXIT_PIPE)
