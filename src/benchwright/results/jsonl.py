"""Reading the JSONL files of a run folder (``records.jsonl``, ``generations.jsonl``): one
reader for every command, strict about what a line is and tolerant about the file.

Each line is read as bytes, decoded as strict UTF-8, parsed and validated by the caller's
model. A line that fails any of that (a byte that is not UTF-8, JSON torn by a kill, valid JSON
that is not the expected object) is **skipped and counted** in :class:`SkippedLines` with its
line number and the reason, never its content (a hostile or damaged file never reaches a
message). The file is streamed a line at a time, and a line longer than
:data:`MAX_LINE_BYTES` is skipped in chunks, so any file is read in bounded memory.

The run folder's own files are opened without following a symlink and must be regular files:
a damaged or hostile run folder cannot make a reader open a host file through them.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TypeVar, cast

from pydantic import BaseModel, Field, ValidationError

from benchwright.errors import InfraError

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

MAX_LINE_BYTES = 64 * 1024 * 1024
"""A longer line is skipped as damaged (a record or a generation is far smaller)."""
LISTED = 20
"""How many skipped lines :class:`SkippedLines` keeps with their place; all are counted."""
_CHUNK = 1024 * 1024

# the start of a record or generation line as the harness writes it (pydantic's compact JSON:
# run ids have no quote or backslash): enough to name the sample of a line that cannot be read
_SAMPLE_OF_LINE = re.compile(rb'\{"run_id":"[^"\\]{0,200}","execution_id":"([A-Za-z0-9._:-]{1,200})"')


class BadLine(BaseModel):
    """One line of a run folder's JSONL file that could not be read, and why."""

    file: str = Field(description="The file's name in the run folder, e.g. ``records.jsonl``.")
    line: int = Field(description="The line's number in the file, from 1.")
    reason: str = Field(description="Why it could not be read (never the line's content).")
    execution_id: str | None = Field(
        default=None, description="The sample the line belonged to, when the line's start names it.")

    def render(self, folder: Path | str | None = None) -> str:
        where = f"{folder}/{self.file}" if folder is not None else self.file
        return f"{where}:{self.line}: {self.reason}"


class SkippedLines(BaseModel):
    """The lines of a run folder's JSONL files that could not be read and were skipped."""

    count: int = Field(default=0, description="How many lines were skipped, in all.")
    lines: list[BadLine] = Field(default_factory=list,
                                 description=f"The first {LISTED} of them, with file, line and reason.")
    samples: int | None = Field(
        default=None, description="How many samples those lines leave incomplete, so not scored "
        "(in a summary: counted as infra_error and listed per model under unreadable_samples).")

    def add(self, bad: BadLine) -> None:
        self.count += 1
        if len(self.lines) < LISTED:
            self.lines.append(bad)

    def extend(self, other: SkippedLines) -> None:
        self.count += other.count
        self.lines += other.lines[: max(0, LISTED - len(self.lines))]

    def __bool__(self) -> bool:
        return self.count > 0

    def message(self, folder: Path | str | None = None) -> str:
        """``N line(s) could not be read and were skipped: place: reason; ...``."""
        shown = "; ".join(b.render(folder) for b in self.lines)
        more = f"; and {self.count - len(self.lines)} more" if self.count > len(self.lines) else ""
        return (f"{self.count} line(s) of the run's files could not be read and were skipped: "
                f"{shown}{more}")


def open_run_file(path: Path, follow: bool = False) -> IO[bytes]:
    """``path`` opened for reading, if it is a regular file and (unless ``follow``) not a symlink.

    Raises:
        FileNotFoundError: there is no such file.
        InfraError: it is a symlink, a folder or a device (the run folder is damaged).
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.EMLINK):
            raise InfraError(f"{path} is a symlink, not a file of the run (the run folder is damaged "
                             "or was tampered with): replace it with the file itself") from None
        if e.errno == errno.ENOENT:
            raise
        raise InfraError(f"cannot read {path}: {e.strerror}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise InfraError(f"{path} is not a regular file (the run folder is damaged): "
                         "replace it with the file itself")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def sized_lines(f: IO[bytes]) -> Iterator[tuple[bytes | None, int, bool]]:
    """The file's lines from where ``f`` stands, as bytes with the newline kept (``None`` for one
    longer than the cap, skipped), each with the number of bytes it takes in the file and
    whether it ends with a newline (only the last line of a file can lack one)."""
    while True:
        raw = f.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        if len(raw) > MAX_LINE_BYTES:
            size = len(raw)
            while raw and not raw.endswith(b"\n"):
                raw = f.readline(_CHUNK)
                size += len(raw)
            yield None, size, raw.endswith(b"\n")
            continue
        yield raw, len(raw), raw.endswith(b"\n")


def blank(raw: bytes | None) -> bool:
    """Whether a line is a whole blank line (ignored by every reader, but counted in numbering)."""
    return raw is not None and raw.endswith(b"\n") and not raw.strip()


def bad_line(path: Path, number: int, raw: bytes | None, reason: str) -> BadLine:
    """The :class:`BadLine` of a line that could not be read, naming its sample when its start does."""
    match = _SAMPLE_OF_LINE.match(raw or b"")
    return BadLine(file=path.name, line=number, reason=reason,
                   execution_id=match.group(1).decode() if match else None)


def read_lines(path: Path, parse: Callable[[str], T], skipped: SkippedLines | None = None, *,
               rejected: Callable[[BadLine, bytes], None] | None = None,
               follow: bool = False) -> Iterator[tuple[int, bytes, T]]:
    """Each readable line of ``path``: its number, its bytes and ``parse(text)``.

    A line that is not whole (no newline: the write was cut short), not UTF-8, or that ``parse``
    refuses (:class:`ValueError`, whose message says why) is added to ``skipped``, passed to
    ``rejected`` with its bytes (none for a line over the cap) and left out; blank lines are
    ignored. A missing file has no lines. ``follow``: ``path`` may be a symlink (a file the user
    names, not one of a run folder).
    """
    try:
        f = open_run_file(path, follow)
    except FileNotFoundError:
        return
    with f:
        for number, (raw, _, _) in enumerate(sized_lines(f), 1):
            if blank(raw):
                continue
            value, reason = parse_line(raw, parse)
            if reason is None:
                yield number, raw or b"", cast(T, value)
                continue
            bad = bad_line(path, number, raw, reason)
            if skipped is not None:
                skipped.add(bad)
            if rejected is not None:
                rejected(bad, raw or b"")


def parse_line(raw: bytes | None, parse: Callable[[str], T]) -> tuple[T | None, str | None]:
    """The value of one line (as :func:`sized_lines` gives it), or why there is none."""
    if raw is None:
        return None, f"longer than {MAX_LINE_BYTES} bytes"
    if not raw.endswith(b"\n"):
        return None, "torn: the last line has no end (a write cut short, e.g. by a kill)"
    try:
        return parse(raw.decode("utf-8")), None
    except UnicodeDecodeError as e:
        return None, f"not UTF-8 (byte {e.start + 1} of the line)"
    except ValueError as e:
        return None, str(e) or "not readable"


def model_parser(model: type[M], noun: str) -> Callable[[str], M]:
    """A ``parse`` for :func:`read_lines`: the line as ``model``; a :class:`ValueError` naming
    the first problem (never the line's content) when it is not JSON or not a ``noun``."""

    def parse(text: str) -> M:
        try:
            return model.model_validate_json(text)
        except ValidationError as e:
            first = e.errors(include_url=False, include_input=False, include_context=False)[0]
            if first["type"] == "json_invalid":
                raise ValueError(f"not JSON ({first['msg'].removeprefix('Invalid JSON: ')})") from None
            if first["type"] == "model_type" or not first["loc"]:
                raise ValueError(f"not a {noun}: a JSON value that is not an object") from None
            where = ".".join(str(x) for x in first["loc"])
            raise ValueError(f"not a {noun}: {where}: {first['msg']}") from None

    return parse
