"""The run folder: ``run.yaml``, ``status.yaml``, ``generations.jsonl``, ``records.jsonl``,
``summary.yaml``, and ``limits.yaml`` (time limits derived from the golden solutions).

The JSONL files are append-only, one ``write`` per sample, so a kill at any moment leaves at
most one torn line, which :meth:`RunFolder.repair` drops on resume. Every reader goes through
:mod:`benchwright.results.jsonl`: a line that cannot be read (torn, not UTF-8, not a record) is
skipped and counted, never a traceback; :meth:`RunFolder.repair` moves such lines to
``<file>.unreadable`` (nothing is lost) and the samples they belonged to run again. A YAML
file of the folder that cannot be read is an :class:`InfraError` naming the file (exit 3).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import PydanticSerializationError

from benchwright import yamldoc
from benchwright.errors import InfraError, InputError, UserError
from benchwright.results.jsonl import BadLine, SkippedLines, model_parser, open_run_file, read_lines
from benchwright.results.record import Generation, Record

RUN_FILE = "run.yaml"
STATUS_FILE = "status.yaml"
RECORDS_FILE = "records.jsonl"
GENERATIONS_FILE = "generations.jsonl"
SUMMARY_FILE = "summary.yaml"
LIMITS_FILE = "limits.yaml"
UNREADABLE_SUFFIX = ".unreadable"
"""``records.jsonl.unreadable``: the lines a repair took out of ``records.jsonl`` because they
could not be read, as they were (a line too long to keep is left out)."""

parse_record = model_parser(Record, "record")
parse_generation = model_parser(Generation, "generation")


class Narrowing(BaseModel):
    """How the command line narrowed a run; ``run.yaml`` keeps it as ``narrowed:`` and a
    resumed run applies it again. An empty narrowing leaves the run as its config says."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    limit: int | None = Field(
        default=None, ge=1,
        description="--limit: at most this many tasks of each task source, the first ones the "
        "config's filters (and --task) keep. None: every task.")
    tasks: list[str] = Field(
        default_factory=list,
        description="--task: fnmatch globs on task names; a task any of them matches is kept. "
        "Empty: every task.")
    models: list[str] = Field(
        default_factory=list,
        description="--model: the model ids run instead of the config's llms. An id (or name) "
        "the config lists keeps that entry's settings (temperature, ...); any other id is run "
        "as a plain id in llms would be. Empty: the config's llms.")
    samples: int | None = Field(
        default=None, ge=1, le=10_000,
        description="--samples: generations per task, language and model instead of the "
        "config's samples. None: the config's.")

    @property
    def active(self) -> bool:
        """Whether anything is narrowed."""
        return bool(self.limit or self.tasks or self.models or self.samples)

    def flags(self) -> list[str]:
        """The narrowing as command-line flags (for messages)."""
        out = [f"--limit {self.limit}"] if self.limit else []
        out += [f"--task {glob}" for glob in self.tasks]
        out += [f"--model {model}" for model in self.models]
        return out + ([f"--samples {self.samples}"] if self.samples else [])


class ManifestSource(BaseModel):
    """A task source of the run, as ``run.yaml`` names it."""

    model_config = ConfigDict(extra="allow")

    path: str = Field(description="The task source file the run read.")
    sha256: str = Field(description="Its SHA-256 when the run started (a resume refuses a change).")


class Manifest(BaseModel):
    """What resuming a run reads of ``run.yaml`` (the file holds more: versions, host, models)."""

    model_config = ConfigDict(extra="allow")

    config_file: str = Field(description="The execution config the run started from.")
    config: dict[str, Any] = Field(description="A snapshot of that config, as it was validated.")
    task_sources: list[ManifestSource] = Field(default_factory=list,
                                               description="The task sources, with their hashes.")
    scenarios: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Per agent scenario, the scorers frozen at the start.")
    narrowed: Narrowing | None = Field(
        default=None, description="How the command line narrowed the run (--limit, --task, --model, "
        "--samples); a resume runs the same selection. Absent: the run is as its config says.")


def _json(model: BaseModel) -> str:
    """``model`` as one JSON line. A string that UTF-8 cannot hold (a lone surrogate, which a
    sample can print) has it replaced by U+FFFD: what a sample prints never stops the writer."""
    try:
        return model.model_dump_json()
    except PydanticSerializationError:
        return type(model).model_validate(_scrub(model.model_dump())).model_dump_json()


def _scrub(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_scrub(v) for v in value]
    return value


def _append(path: Path, lines: list[str]) -> None:
    data = "".join(line + "\n" for line in lines).encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)


@dataclass(slots=True)
class _Block:
    """What a scan keeps of one sample's records: a few numbers, never the records. A block is
    whole when its records come in one piece, ``record_index`` 0, 1, ... up to its count (one
    ``write`` per sample puts them so; a repair keeps them so)."""

    seen: int
    expected: int
    outcome: str
    broken: bool = False

    def add(self, index: int) -> None:
        if index != self.seen:
            self.broken = True
        self.seen += 1

    def whole(self) -> bool:
        return not self.broken and self.seen == self.expected


@dataclass
class RecordsScan:
    """One streaming pass over ``records.jsonl``: each sample's block, and the skipped lines."""

    blocks: dict[str, _Block] = field(default_factory=dict)
    skipped: SkippedLines = field(default_factory=SkippedLines)
    named: set[str] = field(default_factory=set)
    """The samples that skipped lines name (a line's start names its sample)."""

    def add(self, r: Record) -> None:
        block = self.blocks.get(r.execution_id)
        if block is None:
            block = self.blocks[r.execution_id] = _Block(0, r.record_count, r.outcome or "",
                                                         broken=r.record_count < 1)
        block.add(r.record_index)

    def whole(self) -> dict[str, str]:
        """The outcome of every sample whose records are all there, by execution id."""
        return {eid: b.outcome for eid, b in self.blocks.items() if b.whole()}

    def damaged(self) -> set[str]:
        """The samples with records missing: a block cut short, or a skipped line naming them."""
        return {eid for eid, b in self.blocks.items() if not b.whole()} | self.named


def _rewrite(path: Path, keep: Callable[[Any], bool], parse: Callable[[str], Any]) -> None:
    """Rewrite ``path`` with the readable lines ``keep`` accepts; its unreadable lines are added
    to ``<path>.unreadable``. The new file is written whole, then renamed over the old one: a
    kill during the rewrite leaves the old file (and at worst those lines twice aside)."""
    tmp = path.with_name(path.name + ".repair")
    aside = path.with_name(path.name + UNREADABLE_SUFFIX)
    spare: IO[bytes] | None = None

    def unreadable(bad: BadLine, raw: bytes) -> None:
        nonlocal spare
        if spare is None:
            spare = aside.open("ab")
        if raw:
            spare.write(raw if raw.endswith(b"\n") else raw + b"\n")

    try:
        with tmp.open("wb") as out:
            for _, raw, value in read_lines(path, parse, SkippedLines(), rejected=unreadable):
                if keep(value):
                    out.write(raw)
            out.flush()
            os.fsync(out.fileno())
    finally:
        if spare is not None:
            spare.close()
    os.replace(tmp, path)


class RunFolder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._last_status = 0.0

    @property
    def run_id(self) -> str:
        return self.path.name

    @classmethod
    def create(cls, path: Path, manifest: dict[str, Any]) -> RunFolder:
        if path.exists():
            raise UserError(f"run folder {path} already exists")
        path.mkdir(parents=True)
        folder = cls(path)
        yamldoc.dump(manifest, path / RUN_FILE)
        (path / RECORDS_FILE).touch()
        (path / GENERATIONS_FILE).touch()
        return folder

    def _yaml(self, name: str, what: str, fix: str) -> dict[str, Any] | None:
        """The mapping in the folder's YAML file ``name``; None when there is no such file.

        Raises:
            InfraError: the file cannot be read (a symlink, not UTF-8, not YAML, not a mapping);
                the message names the file, the line when known, and ``fix``.
        """
        path = self.path / name
        try:
            with open_run_file(path) as f:
                data = f.read(yamldoc.MAX_BYTES + 1)
        except FileNotFoundError:
            return None
        except InfraError as e:
            raise InfraError(f"{e}; {fix}") from None
        try:
            if len(data) > yamldoc.MAX_BYTES:
                raise InfraError(f"{path}: more than {yamldoc.MAX_BYTES} bytes, not a {what}")
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError as e:
                raise InfraError(f"{path}: not UTF-8 (byte {e.start + 1})") from None
            try:
                doc = yamldoc.parse_text(text, str(path)).data
            except InputError as e:
                first = e.problems[0]
                line = f":{first.line}" if first.line is not None else ""
                raise InfraError(f"{path}{line}: {first.message}") from None
            if not isinstance(doc, dict):
                raise InfraError(f"{path}: not a {what} (a YAML mapping)")
        except InfraError as e:
            raise InfraError(f"{e}: the run folder is damaged; {fix}") from None
        return doc

    def manifest(self) -> dict[str, Any]:
        data = self._yaml(RUN_FILE, "run manifest", "the run cannot be resumed; its records "
                          f"are still in {self.path / RECORDS_FILE}")
        if data is None:
            raise UserError(f"{self.path} has no {RUN_FILE}: not a run folder")
        return data

    def checked_manifest(self) -> Manifest:
        """``run.yaml`` checked for what a resume needs.

        Raises:
            InfraError: it cannot be read or lacks a key (named).
        """
        try:
            return Manifest.model_validate(self.manifest())
        except ValidationError as e:
            first = e.errors(include_url=False, include_input=False)[0]
            where = ".".join(str(x) for x in first["loc"])
            raise InfraError(f"{self.path / RUN_FILE}: {where}: {first['msg']}: the run folder is "
                             "damaged; the run cannot be resumed") from None

    # -- appending -------------------------------------------------------------------------
    def append_generation(self, gen: Generation) -> None:
        _append(self.path / GENERATIONS_FILE, [_json(gen)])

    def append_records(self, records: list[Record]) -> None:
        for i, r in enumerate(records):
            r.record_index, r.record_count = i, len(records)
        _append(self.path / RECORDS_FILE, [_json(r) for r in records])

    # -- reading ---------------------------------------------------------------------------
    def generations(self, only: set[str] | None = None,
                    skipped: SkippedLines | None = None) -> dict[str, Generation]:
        """The saved generations by execution id (the last of each); with ``only``, just those
        samples' (a resumed run needs the generations of the samples it has yet to record).
        Lines that cannot be read are left out and added to ``skipped``."""
        out: dict[str, Generation] = {}
        for _, _, gen in read_lines(self.path / GENERATIONS_FILE, parse_generation, skipped):
            if only is None or gen.execution_id in only:
                out[gen.execution_id] = gen
        return out

    def records(self, skipped: SkippedLines | None = None) -> Iterator[Record]:
        """The records, in file order; lines that cannot be read are left out and added to
        ``skipped``."""
        for _, _, record in read_lines(self.path / RECORDS_FILE, parse_record, skipped):
            yield record

    def scan(self) -> RecordsScan:
        """One pass over ``records.jsonl``: which samples are whole, and the skipped lines."""
        scan = RecordsScan()

        def rejected(bad: BadLine, raw: bytes) -> None:
            if bad.execution_id is not None:
                scan.named.add(bad.execution_id)

        for _, _, r in read_lines(self.path / RECORDS_FILE, parse_record, scan.skipped, rejected=rejected):
            scan.add(r)
        return scan

    def repair(self, drop: set[str] | None = None, skipped: SkippedLines | None = None) -> dict[str, str]:
        """Make ``records.jsonl`` hold only whole samples; return their outcomes by execution id.

        Lines that cannot be read (a torn last line, a byte that is not UTF-8, a line that is
        not a record) move to ``records.jsonl.unreadable``; the records of a sample whose
        block is not whole are removed (that sample runs again, from its saved generation);
        so are samples in ``drop``. ``generations.jsonl`` loses its unreadable lines the same
        way. The lines moved aside are added to ``skipped``. Two passes over each file, holding
        a few numbers per sample, never the records: a run of any size resumes in bounded memory.
        """
        self._repair_generations(skipped)
        scan = self.scan()
        if skipped is not None:
            skipped.extend(scan.skipped)
        whole = scan.whole()
        keep = {eid for eid in whole if eid not in (drop or set())}
        if scan.skipped or len(keep) != len(scan.blocks):
            _rewrite(self.path / RECORDS_FILE, lambda r: r.execution_id in keep, parse_record)
        return {eid: whole[eid] for eid in keep}

    def _repair_generations(self, skipped: SkippedLines | None) -> None:
        """Move the unreadable lines of ``generations.jsonl`` aside (a torn last line
        included), so appends start clean and no reader meets them again."""
        found = SkippedLines()
        path = self.path / GENERATIONS_FILE
        for _ in read_lines(path, parse_generation, found):
            pass
        if found:
            _rewrite(path, lambda _: True, parse_generation)
            if skipped is not None:
                skipped.extend(found)

    # -- status and summary ----------------------------------------------------------------
    def write_status(self, status: dict[str, Any], force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_status < 0.5:
            return
        self._last_status = now
        yamldoc.atomic_write(self.path / STATUS_FILE, yamldoc.dump_text(status))

    def status(self) -> dict[str, Any]:
        return self._yaml(STATUS_FILE, "status file",
                          f"'benchwright run --resume {self.run_id}' writes it again") or {}

    def write_summary(self, summary: dict[str, Any]) -> None:
        yamldoc.atomic_write(self.path / SUMMARY_FILE, yamldoc.dump_text(summary))

    def write_limits(self, limits: dict[str, Any]) -> None:
        """``limits.yaml``: written once, before any sample is evaluated; a resume reads it."""
        yamldoc.atomic_write(self.path / LIMITS_FILE, yamldoc.dump_text(limits))

    def limits(self) -> dict[str, Any] | None:
        return self._yaml(LIMITS_FILE, "limits file",
                          "the run's time limits are lost: start a new run")

    def summary(self) -> dict[str, Any] | None:
        return self._yaml(SUMMARY_FILE, "summary",
                          f"'benchwright run --resume {self.run_id}' writes it again")
