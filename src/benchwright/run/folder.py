"""The run folder: ``run.yaml``, ``status.yaml``, ``generations.jsonl``, ``records.jsonl``,
``summary.yaml``, and ``limits.yaml`` (time limits derived from the golden solutions). Append-only JSONL, one ``write`` per sample, so a kill at any moment leaves at
most one torn line, which :meth:`RunFolder.repair` drops on resume."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchwright import yamldoc
from benchwright.errors import UserError
from benchwright.results.record import Generation, Record

RUN_FILE = "run.yaml"
STATUS_FILE = "status.yaml"
RECORDS_FILE = "records.jsonl"
GENERATIONS_FILE = "generations.jsonl"
SUMMARY_FILE = "summary.yaml"
LIMITS_FILE = "limits.yaml"


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


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Complete JSON lines of ``path``; a torn last line is skipped."""
    if not path.exists():
        return
    with path.open("rb") as f:
        for raw in f:
            if not raw.endswith(b"\n"):
                return
            try:
                yield json.loads(raw)
            except json.JSONDecodeError:
                continue


def _record_line(raw: bytes) -> dict[str, Any] | None:
    """A whole line of ``records.jsonl`` holding a record, else None (torn, or not a record)."""
    if not raw.endswith(b"\n"):
        return None
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("execution_id"), str):
        return None
    return data


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

    def manifest(self) -> dict[str, Any]:
        data = yamldoc.load(self.path / RUN_FILE).data
        if not isinstance(data, dict):
            raise UserError(f"{self.path / RUN_FILE} is not a run manifest")
        return data

    # -- appending -------------------------------------------------------------------------
    def append_generation(self, gen: Generation) -> None:
        _append(self.path / GENERATIONS_FILE, [gen.model_dump_json()])

    def append_records(self, records: list[Record]) -> None:
        for i, r in enumerate(records):
            r.record_index, r.record_count = i, len(records)
        _append(self.path / RECORDS_FILE, [r.model_dump_json() for r in records])

    # -- reading ---------------------------------------------------------------------------
    def generations(self, only: set[str] | None = None) -> dict[str, Generation]:
        """The saved generations by execution id (the last of each); with ``only``, just those
        samples' (a resumed run needs the generations of the samples it has yet to record)."""
        out: dict[str, Generation] = {}
        for data in _read_jsonl(self.path / GENERATIONS_FILE):
            if only is not None and data.get("execution_id") not in only:
                continue
            gen = Generation.model_validate(data)
            out[gen.execution_id] = gen
        return out

    def records(self) -> Iterator[Record]:
        for data in _read_jsonl(self.path / RECORDS_FILE):
            yield Record.model_validate(data)

    def repair(self, drop: set[str] | None = None) -> dict[str, str]:
        """Make ``records.jsonl`` hold only whole samples; return their outcomes by execution id.

        A torn last line and the records of a sample whose block was cut short are removed
        (that sample runs again, from its saved generation); so are samples in ``drop``.
        Two passes over the file, holding a few numbers per sample, never the records: a run of
        any size resumes in bounded memory.
        """
        self._trim_torn_tail(self.path / GENERATIONS_FILE)
        path = self.path / RECORDS_FILE
        if not path.exists():
            return {}
        # execution id -> [records seen, records the block should have, indexes seen, outcome]
        seen: dict[str, tuple[int, int, frozenset[int], str]] = {}
        torn = False
        with path.open("rb") as f:
            for raw in f:
                data = _record_line(raw)
                if data is None:
                    torn = True  # torn, or not a record: dropped
                    continue
                eid = data["execution_id"]
                index = data.get("record_index")
                if eid in seen:
                    n, expected, indexes, outcome = seen[eid]
                    seen[eid] = (n + 1, expected, indexes | {index if isinstance(index, int) else -1},
                                 outcome)
                else:
                    count = data.get("record_count", 1)
                    seen[eid] = (1, count if isinstance(count, int) else 1,
                                 frozenset({index if isinstance(index, int) else -1}),
                                 data.get("outcome") or "")
        keep = {eid for eid, (n, expected, indexes, _) in seen.items()
                if eid not in (drop or set()) and n == expected and len(indexes) == n}
        if torn or len(keep) != len(seen):
            tmp = path.with_name(path.name + ".repair")
            with path.open("rb") as f, tmp.open("wb") as out:
                for raw in f:
                    data = _record_line(raw)
                    if data is not None and data["execution_id"] in keep:
                        out.write(raw)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, path)
        return {eid: seen[eid][3] for eid in keep}

    @staticmethod
    def _trim_torn_tail(path: Path) -> None:
        """Cut a last line that a kill left without its newline, so appends start clean."""
        if not path.exists():
            return
        data = path.read_bytes()
        if data and not data.endswith(b"\n"):
            yamldoc.atomic_write(path, data[: data.rfind(b"\n") + 1].decode("utf-8", "replace"))

    # -- status and summary ----------------------------------------------------------------
    def write_status(self, status: dict[str, Any], force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_status < 0.5:
            return
        self._last_status = now
        yamldoc.atomic_write(self.path / STATUS_FILE, yamldoc.dump_text(status))

    def status(self) -> dict[str, Any]:
        p = self.path / STATUS_FILE
        if not p.exists():
            return {}
        data = yamldoc.load(p).data
        return data if isinstance(data, dict) else {}

    def write_summary(self, summary: dict[str, Any]) -> None:
        yamldoc.atomic_write(self.path / SUMMARY_FILE, yamldoc.dump_text(summary))

    def write_limits(self, limits: dict[str, Any]) -> None:
        """``limits.yaml``: written once, before any sample is evaluated; a resume reads it."""
        yamldoc.atomic_write(self.path / LIMITS_FILE, yamldoc.dump_text(limits))

    def limits(self) -> dict[str, Any] | None:
        p = self.path / LIMITS_FILE
        if not p.exists():
            return None
        data = yamldoc.load(p).data
        if not isinstance(data, dict):
            raise UserError(f"{p} is not a limits file")
        return data

    def summary(self) -> dict[str, Any] | None:
        p = self.path / SUMMARY_FILE
        if not p.exists():
            return None
        data = yamldoc.load(p).data
        return data if isinstance(data, dict) else None
