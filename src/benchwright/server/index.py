"""Indexes of a run's JSONL files that the server keeps, so that a page of a run of any size is
quick: each readable line of ``records.jsonl`` is parsed once, and what the pages filter, sort
and count on is kept as a small :class:`Row` with the line's place in the file; a page of whole
records is read again by byte offset. ``generations.jsonl`` is indexed the same way, by sample.

An index follows its file: each use opens the file again (never through a symlink, as every
reader of a run folder does) and compares its device, inode, size and modification time with
what the index was made from. A file that only grew (a run still being written) is read on from
the last whole line; any other change (a repair that replaced the file, an edit) makes the index
again. What a reader sees is exactly what :func:`benchwright.results.jsonl.read_lines` would give at
that moment: the same records in file order, and the same skipped lines with the same numbers
and reasons (a last line without its newline is reported as torn, and read again once whole).
"""

from __future__ import annotations

import copy
import operator
import os
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Generic, NamedTuple, TypeVar

from benchwright.errors import InfraError
from benchwright.results.folder import (
    GENERATIONS_FILE,
    RECORDS_FILE,
    RUN_FILE,
    SUMMARY_FILE,
    RecordsScan,
    parse_generation,
    parse_record,
)
from benchwright.results.jsonl import (
    BadLine,
    SkippedLines,
    bad_line,
    blank,
    open_run_file,
    parse_line,
    sized_lines,
)
from benchwright.results.record import Generation, Record

T = TypeVar("T")

CHECKED_BYTES = 4096
"""How much of the start and of the end of what was read is compared before reading on."""
CACHED_RUNS = 16
"""Runs whose indexes a server keeps (the least recently used one goes first)."""


class Row(NamedTuple):
    """What the pages filter, sort and count on, of one record (its short fields)."""

    run_id: str
    execution_id: str
    task_source: str
    task: str
    language: str
    model: str
    sample: int
    criterion: str
    executor: str
    score: float | None
    unit: str | None
    verdict: str | None
    required: bool | None
    time_ms: float | None
    test_case: str | None
    outcome: str | None
    status: str | None
    line: int | None
    hidden: bool | None
    difficulty: str | None
    area: str | None
    record_index: int
    record_count: int


INDEXED: frozenset[str] = frozenset(Row._fields)
"""The record keys a :class:`Row` holds: filters and sorts on others read the whole records."""


_fields = operator.attrgetter(*Row._fields)


def _row(record: Record, shared: dict[str, str]) -> Row:
    """The record's row; its texts shared with the rows before (one ``str`` per distinct
    value: a run repeats its models, tasks and criteria on every line)."""
    return Row._make([shared.setdefault(v, v) if type(v) is str else v for v in _fields(record)])


@dataclass
class _Place:
    offset: int
    size: int


class _FileIndex(Generic[T]):
    """The readable lines of one JSONL file, each kept by :meth:`_add`, and the skipped ones."""

    def __init__(self, path: Path, parse: Callable[[str], T]) -> None:
        self.path = path
        self.parse = parse
        self.lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self.state: tuple[int, int, int, int] | None = None
        self.end = 0
        """Bytes read: up to the end of the last whole line."""
        self.number = 0
        """Lines read (blank ones included: they count in the numbering)."""
        self.skipped = SkippedLines()
        self.named: set[str] = set()
        self.tail: BadLine | None = None
        """The last line when it has no newline yet (torn, or still being written)."""
        self.head = b""
        self.last = b""
        self._clear()

    def _clear(self) -> None:
        """Forget what :meth:`_add` kept (new containers: views made before keep theirs)."""

    def _add(self, value: T, place: _Place) -> None:
        """Keep a readable line's value and place."""

    def refresh(self, f: IO[bytes]) -> None:
        """Bring the index up to the file ``f`` (opened by the caller); hold :attr:`lock`."""
        st = os.fstat(f.fileno())
        state = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        if state == self.state:
            return
        if not self._continues(f, state):
            self._reset()
        self._read(f)
        self.state = state

    def _continues(self, f: IO[bytes], state: tuple[int, int, int, int]) -> bool:
        """Whether the file is the one read before with lines added after them (nothing else changed)."""
        if self.state is None or state[:2] != self.state[:2] or state[2] < self.end:
            return False
        fd = f.fileno()
        return (os.pread(fd, len(self.head), 0) == self.head
                and os.pread(fd, len(self.last), self.end - len(self.last)) == self.last)

    def _read(self, f: IO[bytes]) -> None:
        f.seek(self.end)
        self.tail = None
        for raw, size, ended in sized_lines(f):
            number = self.number + 1
            if not ended:  # the last line, cut short or still being written: read again next time
                _, reason = parse_line(raw, self.parse)
                self.tail = bad_line(self.path, number, raw, reason or "torn")
                break
            if not blank(raw):
                value, reason = parse_line(raw, self.parse)
                if reason is None:
                    self._add(value, _Place(self.end, size))  # type: ignore[arg-type]
                else:
                    bad = bad_line(self.path, number, raw, reason)
                    self.skipped.add(bad)
                    if bad.execution_id is not None:
                        self.named.add(bad.execution_id)
            self.number, self.end = number, self.end + size
        fd = f.fileno()
        self.head = os.pread(fd, min(CHECKED_BYTES, self.end), 0)
        keep = min(CHECKED_BYTES, self.end)
        self.last = os.pread(fd, keep, self.end - keep)

    def skipped_now(self) -> SkippedLines:
        """The lines skipped, the torn last one included (a copy)."""
        out = SkippedLines(count=self.skipped.count, lines=list(self.skipped.lines))
        if self.tail is not None:
            out.add(self.tail)
        return out


class _RecordsIndex(_FileIndex[Record]):
    def _clear(self) -> None:
        self.rows: list[Row] = []
        self.offsets = array("q")
        self.sizes = array("q")
        self.shared: dict[str, str] = {}
        self.by_sample: dict[str, list[int]] = {}
        self.scan = RecordsScan()

    def _add(self, value: Record, place: _Place) -> None:
        self.by_sample.setdefault(value.execution_id, []).append(len(self.rows))
        self.rows.append(_row(value, self.shared))
        self.offsets.append(place.offset)
        self.sizes.append(place.size)
        self.scan.add(value)


class _GenerationsIndex(_FileIndex[Generation]):
    def _clear(self) -> None:
        self.last_of: dict[str, _Place] = {}

    def _add(self, value: Generation, place: _Place) -> None:
        self.last_of[value.execution_id] = place


def _read(f: IO[bytes], place: _Place, parse: Callable[[str], T], path: Path) -> T:
    raw = os.pread(f.fileno(), place.size, place.offset)
    value, reason = parse_line(raw, parse)
    if reason is not None:
        raise InfraError(f"{path} changed while it was read (at byte {place.offset}): load the page again")
    return value  # type: ignore[return-value]


@dataclass
class RecordsView:
    """The records of a run as they are now: rows in file order, the skipped lines, and the
    samples with records missing; :meth:`read` gives whole records."""

    path: Path
    rows: list[Row] = field(default_factory=list)
    skipped: SkippedLines = field(default_factory=SkippedLines)
    damaged: set[str] = field(default_factory=set)
    """The samples with records missing: a block cut short, or a skipped line naming them."""
    _offsets: array[int] = field(default_factory=lambda: array("q"))
    _sizes: array[int] = field(default_factory=lambda: array("q"))
    _by_sample: dict[str, list[int]] = field(default_factory=dict)
    _file: IO[bytes] | None = None

    def read(self, positions: list[int]) -> list[Record]:
        """The whole records at these positions of :attr:`rows`."""
        if self._file is None:
            return []
        return [_read(self._file, _Place(self._offsets[i], self._sizes[i]), parse_record, self.path)
                for i in positions]

    def matching(self, wanted: dict[str, str]) -> list[int]:
        """The positions of the rows whose every key in ``wanted`` (keys of :class:`Row`) has the
        value given, compared as text (``str(value)``: ``None``, ``1.0``, ``True``), in file order."""
        rows = self.rows
        chosen: list[int] | range = range(len(rows))
        for key, value in wanted.items():
            field = Row._fields.index(key)
            chosen = [i for i in chosen if str(rows[i][field]) == value]
        return list(chosen)

    def judged(self) -> dict[str, str | None]:
        """The judge's verdict of each sample that has one (its last ``judge`` record's)."""
        return {r.execution_id: r.verdict for r in self.rows if r.criterion == "judge"}

    def of_sample(self, execution_id: str) -> list[int]:
        """The positions of one sample's records, in file order."""
        return [i for i in self._by_sample.get(execution_id, []) if i < len(self.rows)]


@dataclass
class GenerationsView:
    path: Path
    skipped: SkippedLines = field(default_factory=SkippedLines)
    _last_of: dict[str, _Place] = field(default_factory=dict)
    _file: IO[bytes] | None = None

    def get(self, execution_id: str) -> Generation | None:
        """The sample's saved generation (the last one, when it was saved more than once)."""
        place = self._last_of.get(execution_id)
        if place is None or self._file is None:
            return None
        return _read(self._file, place, parse_generation, self.path)


class RunIndexes:
    """The indexes of the runs a server shows, the :data:`CACHED_RUNS` last used kept."""

    def __init__(self, size: int = CACHED_RUNS) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._records: OrderedDict[Path, _RecordsIndex] = OrderedDict()
        self._generations: OrderedDict[Path, _GenerationsIndex] = OrderedDict()
        self._warming: threading.Thread | None = None

    def warm(self, folders: list[Path]) -> None:
        """Make (or bring up to date) the indexes of these runs, the first :attr:`size` of them, in
        a thread of their own, so the first page of a run the user opens need not wait for it.
        Does nothing while an earlier warm-up is still going; a run that cannot be read is left
        for its page to report."""
        with self._lock:
            if self._warming is not None and self._warming.is_alive():
                return
            self._warming = threading.Thread(target=self._warm, args=(folders[:self.size],),
                                             name="benchwright-index-warm-up", daemon=True)
            self._warming.start()

    def _warm(self, folders: list[Path]) -> None:
        for folder in folders:
            try:
                with self.records(folder), self.generations(folder):
                    pass
            except (InfraError, OSError):
                continue

    def _get(self, cache: OrderedDict[Path, Any], path: Path, make: Callable[[Path], Any]) -> Any:
        with self._lock:
            index = cache.get(path)
            if index is None:
                index = cache[path] = make(path)
            cache.move_to_end(path)
            while len(cache) > self.size:
                cache.popitem(last=False)
            return index

    @contextmanager
    def records(self, folder: Path) -> Iterator[RecordsView]:
        """The run's records now (``records.jsonl`` stays open until the ``with`` ends).

        Raises:
            InfraError: ``records.jsonl`` is a symlink or not a regular file.
        """
        path = folder / RECORDS_FILE
        try:
            f = open_run_file(path)
        except FileNotFoundError:
            yield RecordsView(path)
            return
        with f:
            index: _RecordsIndex = self._get(self._records, folder, lambda p: _RecordsIndex(path, parse_record))
            with index.lock:
                index.refresh(f)
                damaged = {eid for eid, b in index.scan.blocks.items() if not b.whole()} | index.named
                if index.tail is not None and index.tail.execution_id is not None:
                    damaged.add(index.tail.execution_id)
                view = RecordsView(path, list(index.rows), index.skipped_now(), damaged, index.offsets[:], index.sizes[:],
                                   index.by_sample, f)
            yield view

    @contextmanager
    def generations(self, folder: Path) -> Iterator[GenerationsView]:
        """The run's generations now (``generations.jsonl`` stays open until the ``with`` ends)."""
        path = folder / GENERATIONS_FILE
        try:
            f = open_run_file(path)
        except FileNotFoundError:
            yield GenerationsView(path)
            return
        with f:
            index: _GenerationsIndex = self._get(self._generations, folder,
                                                 lambda p: _GenerationsIndex(path, parse_generation))
            with index.lock:
                index.refresh(f)
                view = GenerationsView(path, index.skipped_now(), dict(index.last_of), f)
            yield view


def _states(folder: Path, names: tuple[str, ...]) -> tuple[tuple[int, int, int, int] | None, ...]:
    """Device, inode, size and modification time of each file (None when missing), not following links."""
    out: list[tuple[int, int, int, int] | None] = []
    for name in names:
        try:
            st = os.lstat(folder / name)
        except OSError:
            out.append(None)
            continue
        out.append((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)


class Summaries:
    """Each run's summary, made (read from ``summary.yaml``, or computed from the records) again
    only when one of the files it comes from changed; the :data:`CACHED_RUNS` last used kept."""

    FILES = (SUMMARY_FILE, RECORDS_FILE, GENERATIONS_FILE, RUN_FILE)

    def __init__(self, size: int = CACHED_RUNS) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._cache: OrderedDict[Path, tuple[Any, dict[str, Any]]] = OrderedDict()

    def get(self, folder: Path, make: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The summary (a copy: the caller may change it); ``make`` when the files changed (an
        error it raises, e.g. a damaged file, is raised again each time, never kept)."""
        key = _states(folder, self.FILES)
        with self._lock:
            cached = self._cache.get(folder)
        if cached is None or cached[0] != key:
            cached = (key, make())
            with self._lock:
                self._cache[folder] = cached
                self._cache.move_to_end(folder)
                while len(self._cache) > self.size:
                    self._cache.popitem(last=False)
        return copy.deepcopy(cached[1])
