"""The service layer of ``benchwright serve``: files, runs, records, summaries and comparisons
of one workspace. The REST API (and the web UI through it) only calls these; each is also what
the CLI does, so no behaviour lives in the server alone.

Errors are the package's own (:mod:`benchwright.errors`) plus :class:`Conflict` (a write based
on an old version) and :class:`NotFound`.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from benchwright import yamldoc
from benchwright.errors import InfraError, InputError, Problem, UserError
from benchwright.results.folder import RunFolder
from benchwright.results.jsonl import SkippedLines, open_run_file
from benchwright.run.progress import ACTIVE, RunProgress, process_alive, read_progress
from benchwright.server.index import INDEXED, RecordsView, Row, RunIndexes, Summaries
from benchwright.task.model import TaskSource
from benchwright.workspace import Workspace

if TYPE_CHECKING:
    from benchwright.config.editor import ScorerTypes
    from benchwright.results.samples import MatrixRow, RunIndex
    from benchwright.validation import CaseResult

FileKind = Literal["config", "task-source", "scenario"]
FOLDERS: dict[FileKind, str] = {"config": "configs", "task-source": "tasks", "scenario": "scenarios"}
"""Where each kind of file lives in a workspace."""
VALIDATION_KIND: dict[FileKind, str] = {"config": "exec-config", "task-source": "task-source",
                                        "scenario": "scenario"}


GATES = ("objective", "judge", "run-badge")
"""The criteria of an agent run's three gates."""

CACHED_SOURCES = 8
"""Parsed task sources the server keeps (by path and version) for the task editor."""

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
"""A run name: a plain folder name of ``results/``."""

CANCEL_GRACE_S = 10.0
"""How long a cancelled run may take to stop on its own before it is killed (it stays resumable)."""


class NotFound(UserError):
    """No such file or run."""


class Conflict(UserError):
    """The file changed since the version the write was based on (HTTP 412)."""

    def __init__(self, message: str, current: str) -> None:
        super().__init__(message)
        self.current = current


def etag(data: bytes) -> str:
    """The version tag of a file's content (strong, quoted as HTTP wants it)."""
    return '"' + hashlib.sha256(data).hexdigest()[:32] + '"'


@dataclass(frozen=True)
class FileInfo:
    kind: FileKind
    path: str
    """Relative to the workspace, with ``/``."""
    size: int
    modified: str


@dataclass(frozen=True)
class FileText:
    path: str
    text: str
    etag: str


NAME_MAX = 255
"""Bytes in one file name (Linux): a longer one makes the file system calls fail."""


def _too_long(rel: str) -> bool:
    """Whether a path from a caller has a part longer than one file name may be, or is longer
    than any path the server would open (the calls would fail with ENAMETOOLONG)."""
    data = rel.encode("utf-8", "surrogateescape")
    return len(data) > 1024 or any(len(part) > NAME_MAX for part in data.split(b"/"))


def check_new_name(rel: str, kind: FileKind) -> None:
    """Refuse a name for a new file that is not ``<folder>/<name>.yaml`` of its kind (a name
    typed by a user; confinement is checked again by :meth:`Service.inside`).

    Raises:
        UserError: saying what the name should be.
    """
    folder = FOLDERS[kind]
    example = f"{folder}/my-{kind}.yaml"
    if not rel.startswith(folder + "/") or rel.endswith("/"):
        raise UserError(f"{rel[:200]!r}: a new {kind} goes in {folder}/, e.g. {example}")
    if not rel.endswith(".yaml") or rel == f"{folder}/.yaml":
        raise UserError(f"{rel[:200]!r}: the name ends with .yaml, e.g. {example}")
    if any(part in ("", ".", "..") or part.startswith(".") for part in rel.split("/")):
        raise UserError(f"{rel[:200]!r}: no empty, '.', '..' or hidden parts in a name, e.g. {example}")


TEMPLATES: dict[FileKind, str] = {
    "config": """\
# An execution config: which tasks, which criteria, which models.
# Run it with:  benchwright run configs/NAME.yaml
version: 1
task_sources: [tasks/basics.yaml]
criteria: [unit-test]
llms: [reference]                  # answers with the golden solutions: no API key needed
""",
    "task-source": """\
# A task source: tasks with prompts per language, tests and golden solutions.
# Check it with:  benchwright validate tasks/NAME.yaml --golden
version: 1
name: my-tasks
tasks:
  - name: add-two
    difficulty: easy
    languages: [python]
    task:
      common_prompt: Write a function add_two(x) in ${language} that returns x + 2.
      languages_specific:
        python:
          entry_point: add_two
          public_tests:
            - code: assert add_two(1) == 3
          hidden_tests:
            - name: negative
              code: assert add_two(-2) == 0
    golden_solution:
      python: |
        def add_two(x):
            return x + 2
""",
    "scenario": """\
# A coding-agent scenario: the workspace an agent works in, the scorers that check what it
# did, and its tasks. Name it in a config's `scenarios:` list to run it.
version: 1
name: my-scenario
workspace:
  repo: my-repo                    # a folder next to this file (create it), or a git URL with ref:
  setup: []                        # shell commands run before the baseline is committed
scorers:
  - {type: max_files_changed, limit: 2}
  - {type: forbid_secrets}
tasks:
  - name: first-task
    prompt: |
      Describe what the agent should change in the repository.
""",
}
"""A small valid starter for each kind of file (Files, "new file")."""


class Service:
    """Everything the server does, on one workspace."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._launched: dict[str, subprocess.Popen[bytes]] = {}
        self._lock = threading.RLock()
        self.indexes = RunIndexes()
        """The runs' records and generations, parsed once and kept while their files do not change."""
        self.summaries = Summaries()
        self._run_indexes: dict[str, tuple[object, RunIndex]] = {}
        """Run id -> (records.jsonl's inode, mtime and size, the run's samples and filter values)."""
        self._sources: OrderedDict[tuple[str, str], TaskSource] = OrderedDict()

    # -- paths ---------------------------------------------------------------------------------

    def inside(self, rel: str, kind: FileKind | None = None) -> Path:
        """The workspace file ``rel`` names; never a path outside the workspace (or outside the
        kind's folder), whatever ``..``, absolute paths or symlinks it uses.

        Raises:
            UserError: the path leaves the workspace or its folder, or is not a YAML file.
        """
        root = self.ws.root.resolve()
        base = (root / FOLDERS[kind]).resolve() if kind is not None else root
        if not rel or rel.startswith(("/", "\\")) or "\x00" in rel:
            raise UserError(f"{rel!r}: give a path relative to the workspace")
        if _too_long(rel):
            raise UserError(f"{rel[:64]!r}...: a name in the path is longer than the file system allows")
        path = (root / rel).resolve()
        if path != base and base not in path.parents:
            where = f"the workspace's {FOLDERS[kind]}/ folder" if kind is not None else "the workspace"
            raise UserError(f"{rel!r} is outside {where}")
        return path

    def _rel(self, path: Path) -> str:
        return path.resolve().relative_to(self.ws.root.resolve()).as_posix()

    # -- files ---------------------------------------------------------------------------------

    def list_files(self, kind: FileKind | None = None) -> list[FileInfo]:
        kinds = [kind] if kind is not None else list(FOLDERS)
        out = []
        for k in kinds:
            folder = self.ws.root / FOLDERS[k]
            if not folder.is_dir():
                continue
            for path in sorted(folder.rglob("*.y*ml")):
                if path.is_file() and path.suffix in (".yaml", ".yml") and self._contained(path):
                    st = path.stat()
                    out.append(FileInfo(k, self._rel(path), st.st_size,
                                        dt.datetime.fromtimestamp(st.st_mtime, dt.UTC).isoformat(timespec="seconds")))
        return out

    def _contained(self, path: Path) -> bool:
        root = self.ws.root.resolve()
        return root in path.resolve().parents

    def read_file(self, rel: str, kind: FileKind | None = None) -> FileText:
        path = self.inside(rel, kind)
        if not path.is_file():
            raise NotFound(f"no file {rel!r} in the workspace")
        data = path.read_bytes()
        return FileText(self._rel(path), data.decode("utf-8", errors="replace"), etag(data))

    def task_source(self, rel: str) -> tuple[FileText, TaskSource]:
        """A task source file and the tasks it holds, parsed once for each version of the file
        (the few last ones are kept: callers must not change what they get).

        Raises:
            InputError: the file is not YAML; ValueError (pydantic's): not a task source.
        """
        got = self.read_file(rel, "task-source")
        key = (got.path, got.etag)
        with self._lock:
            source = self._sources.get(key)
        if source is None:
            source = TaskSource.model_validate(yamldoc.parse_text(got.text, rel).data)
            with self._lock:
                self._sources[key] = source
                while len(self._sources) > CACHED_SOURCES:
                    self._sources.popitem(last=False)
        return got, source

    def check_text(self, rel: str, text: str, kind: FileKind) -> list[Problem]:
        """Every problem ``validate`` would report for ``text`` saved as ``rel`` (nothing is written)."""
        from benchwright import validation

        path = self.inside(rel, kind)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".bw-check-", suffix=path.suffix or ".yaml", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            report = validation.validate([Path(tmp)], self.ws, VALIDATION_KIND[kind])  # type: ignore[arg-type]
        finally:
            os.unlink(tmp)
        shown = self._rel(path)
        return [Problem(shown, p.message, p.path, p.line, p.hint, p.severity) if p.file == tmp else p
                for p in report.problems]

    def write_file(self, rel: str, text: str, kind: FileKind, if_match: str | None) -> tuple[FileText, list[Problem]]:
        """Save ``text`` as ``rel`` when it validates and the file is still the version
        ``if_match`` names (``*`` or None: create only, or overwrite when None and new).

        Raises:
            Conflict: the file changed since (or exists, for a create).
            InputError: ``text`` does not validate (nothing is written).
        """
        path = self.inside(rel, kind)
        if path.suffix not in (".yaml", ".yml"):
            raise UserError(f"{rel!r}: only YAML files (.yaml, .yml) can be written")
        with self._lock:
            current = path.read_bytes() if path.is_file() else None
            if current is not None and if_match != etag(current):
                raise Conflict(f"{rel} changed since you read it (or If-Match is missing): "
                               "read it again and redo your edit", etag(current))
            if current is None and if_match not in (None, "*"):
                raise Conflict(f"{rel} no longer exists", "")
            problems = self.check_text(rel, text, kind)
            if any(p.severity == "error" for p in problems):
                raise InputError(problems)
            yamldoc.atomic_write(path, text)
        data = path.read_bytes()
        return FileText(self._rel(path), text, etag(data)), problems

    def create_file(self, rel: str, kind: FileKind) -> FileText:
        """A new file ``rel`` of ``kind`` holding the kind's starter (:data:`TEMPLATES`), written
        as any write is (validated, ``If-Match: *``: never over an existing file).

        Raises:
            UserError: the name is outside the kind's folder or not a ``.yaml`` file.
            Conflict: the file exists.
        """
        check_new_name(rel, kind)
        path = self.inside(rel, kind)
        if path.exists():
            raise Conflict(f"{rel} exists already: choose another name", "")
        written, _ = self.write_file(rel, TEMPLATES[kind], kind, "*")
        return written

    # -- workspace settings (benchwright.yaml) -------------------------------------------------

    def read_settings(self) -> FileText:
        """``benchwright.yaml`` (empty text and the create-only version ``*`` when there is none)."""
        from benchwright.workspace.workspace import SETTINGS_FILE

        path = self.ws.root / SETTINGS_FILE
        if not path.is_file():
            return FileText(SETTINGS_FILE, "", "*")
        data = path.read_bytes()
        return FileText(SETTINGS_FILE, data.decode("utf-8", errors="replace"), etag(data))

    def check_settings(self, text: str) -> list[Problem]:
        """Every problem of ``text`` as the workspace's settings (nothing is written)."""
        from benchwright.config.settings import Settings
        from benchwright.problems import validate
        from benchwright.workspace.workspace import SETTINGS_FILE

        try:
            doc = yamldoc.parse_text(text, SETTINGS_FILE)
        except InputError as e:
            return list(e.problems)
        if doc.data is None:
            return []
        _, problems = validate(doc, Settings)
        return list(problems)

    def write_settings(self, text: str, if_match: str | None) -> tuple[FileText, list[Problem]]:
        """Save ``text`` as ``benchwright.yaml`` when it is valid settings and the file is still
        the version ``if_match`` names; the server then uses the new settings.

        Raises:
            Conflict: the file changed since it was read.
            InputError: ``text`` is not valid settings (nothing is written).
        """
        from benchwright.config.settings import Settings
        from benchwright.problems import validate
        from benchwright.workspace.workspace import SETTINGS_FILE

        path = self.ws.root / SETTINGS_FILE
        with self._lock:
            current = path.read_bytes() if path.is_file() else None
            if current is not None and if_match != etag(current):
                raise Conflict(f"{SETTINGS_FILE} changed since you read it (or If-Match is missing): "
                               "read it again and redo your edit", etag(current))
            problems = self.check_settings(text)
            if any(p.severity == "error" for p in problems):
                raise InputError(problems)
            doc = yamldoc.parse_text(text, SETTINGS_FILE)
            settings, _ = validate(doc, Settings) if doc.data is not None else (Settings(), [])
            yamldoc.atomic_write(path, text)
            if settings is not None:
                self.ws.settings = settings
        return FileText(SETTINGS_FILE, text, etag(path.read_bytes())), problems

    # -- runs ----------------------------------------------------------------------------------

    def run_golden(self, rel: str, text: str, task_name: str, language: str) -> tuple[str, list[CaseResult]]:
        """Run a task's golden solution as the task editor's unsaved ``text`` of the task
        source ``rel`` has it (see :func:`benchwright.validation.golden_cases`).

        Raises:
            InputError: the text does not validate, or the task has no golden solution there.
        """
        from benchwright.validation import golden_cases

        return golden_cases(self.ws, self.inside(rel, "task-source"), rel, text, task_name, language)

    def criterion_names(self) -> list[str]:
        """The installed criteria (built-ins' and plug-ins'), for the config form."""
        from benchwright.registry import registry

        return registry.names("criterion")

    def scorer_types(self) -> ScorerTypes:
        """The installed scorer types and their models, for the scenario form."""
        from benchwright.agents.scenario import installed_scorer_models
        from benchwright.config.editor import ScorerTypes

        return ScorerTypes(installed_scorer_models())

    def runs(self) -> list[dict[str, Any]]:
        """Every run of the workspace, newest first (by when it was created), with its state,
        counts, models and pass rate (see :meth:`status`). The newest runs' records are indexed
        in the background (what is listed is likely opened next)."""
        if not self.ws.results.is_dir():
            return []
        out = [self.status(manifest.parent.name) for manifest in self.ws.results.glob("*/run.yaml")]
        out.sort(key=lambda r: (r.get("created") or "", r["run_id"]), reverse=True)
        self.indexes.warm([self.ws.results / r["run_id"] for r in out])
        return out

    def folder(self, run_id: str) -> RunFolder:
        if "/" in run_id or run_id in ("", ".", "..") or _too_long(run_id):
            raise NotFound(f"no run {run_id[:64]!r}")
        try:
            return RunFolder(self.ws.run_dir(run_id, paths=False))
        except UserError as e:
            raise NotFound(str(e)) from None

    def _process(self, run_id: str) -> subprocess.Popen[bytes] | None:
        with self._lock:
            return self._launched.get(run_id)

    def status(self, run_id: str) -> dict[str, Any]:
        """The run's state, counts (:class:`~benchwright.run.progress.RunProgress`, the same
        ``benchwright status`` shows), ``status.yaml`` as it is, and what ``run.yaml`` and
        ``summary.yaml`` say of it (created, config, models, pass rate). A status file that
        cannot be read gives the state ``damaged`` and the reason under ``status.error``."""
        folder = self.folder(run_id)
        info = _run_info(folder)
        proc = self._process(folder.run_id)
        exit_code = proc.poll() if proc is not None else None
        try:
            st = folder.status()
        except InfraError as e:
            return {"run_id": folder.run_id, "state": "damaged", "status": {"error": self.shown(e)},
                    "exit_code": exit_code, "reason": self.shown(e), "resumable": False,
                    "progress": RunProgress(state="damaged").model_dump(mode="json"), **info}
        alive = None if proc is None or proc.pid != st.get("pid") else exit_code is None
        progress = read_progress(st, alive=alive)
        if proc is not None and exit_code is None and progress.state not in ACTIVE:
            progress.state, progress.resumable = "starting", False  # a resume, before it writes its status
        elif not st and progress.state == "unknown":
            _unstarted(progress, proc, exit_code, folder.run_id)
        if progress.state == "interrupted" and st.get("cancelled"):
            exit_code = None  # how the stopped process exited is not what the run did
        return {"run_id": folder.run_id, "state": progress.state, "status": st, "exit_code": exit_code,
                "reason": progress.reason, "resumable": progress.resumable,
                "progress": progress.model_dump(mode="json"), **info}

    def check_run_id(self, run_id: str) -> None:
        """Refuse a run name that is not a plain name or that a run of the workspace has.

        Raises:
            UserError: naming the problem and the fix.
        """
        if not RUN_ID.fullmatch(run_id):
            raise UserError(f"run name {run_id[:64]!r}: use letters, digits, '.', '_' and '-' (up to 100, "
                            "starting with a letter or digit)")
        if (self.ws.results / run_id).exists():
            raise UserError(f"a run named {run_id!r} already exists in results/: choose another name "
                            "(or resume that run from its page)")

    def preview(self, config: str, task_sources: list[str] | None = None) -> dict[str, Any]:
        """What launching ``config`` would run and cost (:mod:`benchwright.run.estimate`);
        nothing starts and no provider is asked.

        Raises:
            InputError: the config or a task source does not validate.
        """
        from benchwright.run.estimate import preview

        config_path = self.inside(config, "config")
        if not config_path.is_file():
            raise NotFound(f"no config {config!r}")
        sources = [str(self.inside(t, "task-source")) for t in task_sources or []]
        return preview(self._current(), config_path, sources).model_dump(mode="json")

    def _current(self) -> Workspace:
        """The workspace with its settings as they are now (as the run process will read them:
        they may have been edited since the server started)."""
        return Workspace.open(self.ws.root)

    def launch(self, config: str, task_sources: list[str] | None = None, run_id: str | None = None) -> str:
        """Start ``benchwright run CONFIG`` for this workspace in a process of its own (a run
        the API can watch and cancel, and that ``--resume`` can finish). Returns its id; the
        run folder appears soon after (:meth:`wait_started`).

        Raises:
            InputError: the config or a task source does not validate (nothing started).
            UserError: ``run_id`` is not a plain name, or a run has it already.
        """
        from benchwright.run.engine import new_run_id, prepare

        config_path = self.inside(config, "config")
        if not config_path.is_file():
            raise NotFound(f"no config {config!r}")
        if run_id:
            self.check_run_id(run_id)
        sources = [str(self.inside(t, "task-source")) for t in task_sources or []]
        prepare(self._current(), config_path, sources)  # every problem now, before anything starts
        rid = run_id or new_run_id(config_path)
        argv = ["run", str(config_path), "--run-id", rid]
        for s in sources:
            argv += ["--tasks", s]
        with self._lock:
            if rid in self._launched and self._launched[rid].poll() is None:
                raise UserError(f"a run named {rid!r} is starting already: choose another name")
            self._launched[rid] = self._spawn(rid, argv)
        return rid

    def _spawn(self, run_id: str, args: list[str]) -> subprocess.Popen[bytes]:
        """``benchwright ARGS --workspace WS`` in a session of its own (so a cancel reaches the
        whole process group), its output in ``.benchwright/server/<run id>.log``."""
        argv = [sys.executable, "-m", "benchwright", *args, "--workspace", str(self.ws.root)]
        log = self.ws.state / "server" / f"{run_id}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("ab") as out:
            return subprocess.Popen(argv, cwd=self.ws.root, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)

    def resume(self, run_id: str, retry_errors: bool = False) -> dict[str, Any]:
        """Finish a run that stopped (``benchwright run --resume ID``; with ``retry_errors``,
        ``--retry-errors`` too: its infra_error samples run again). Any run folder of the
        workspace, whoever started it.

        Raises:
            UserError: the run is running (here or in another process), or there is nothing to do.
        """
        folder = self.folder(run_id)
        with self._lock:
            st = self.status(folder.run_id)
            if st["state"] in ACTIVE:
                raise UserError(f"run {folder.run_id} is already running: cancel it first, or wait for it to end")
            if st["state"] == "damaged":
                raise UserError(f"run {folder.run_id}: {st['reason']}")
            if st["state"] == "completed" and not (retry_errors and st["progress"]["errors"]):
                raise UserError(f"run {folder.run_id} is completed: nothing to resume"
                                + ("" if retry_errors else " (retry errors runs its infra errors again)"))
            args = ["run", "--resume", folder.run_id, *(["--retry-errors"] if retry_errors else [])]
            self._launched[folder.run_id] = self._spawn(folder.run_id, args)
        return self.status(folder.run_id)

    def wait_started(self, run_id: str, timeout_s: float = 60.0) -> bool:
        """Whether the run's folder appeared within ``timeout_s`` (its process may also have ended)."""
        import time

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if (self.ws.results / run_id / "run.yaml").is_file():
                return True
            proc = self._process(run_id)
            if proc is not None and proc.poll() is not None:
                return (self.ws.results / run_id / "run.yaml").is_file()
            time.sleep(0.05)
        return False

    def cancel(self, run_id: str) -> dict[str, Any]:
        """Stop a running run, launched here or not (SIGINT, as Ctrl-C; killed if it has not
        stopped within :data:`CANCEL_GRACE_S`); its state becomes ``interrupted`` (with when it
        was cancelled, under ``cancelled``) and it stays resumable.

        Raises:
            UserError: the run is not running (here or on this machine).
        """
        folder = self.folder(run_id)
        proc = self._process(folder.run_id)
        if proc is not None and proc.poll() is None:
            _stop_group(proc)
        else:
            st = self.status(folder.run_id)
            pid = st["status"].get("pid") if st["state"] in ACTIVE else None
            if not isinstance(pid, int) or process_alive(st["status"]) is not True:
                raise UserError(f"run {folder.run_id} is not running (state: {st['state']}): nothing to cancel")
            _stop_pid(pid, st["status"])
        try:  # stopped: say it was cancelled (unless it finished meanwhile)
            st = folder.status()
            if st.get("state") != "completed":
                folder.write_status({**st, "state": "interrupted",
                                     "cancelled": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")},
                                    force=True)
        except InfraError:
            pass  # an unreadable status stays what it is: status() reports it as damaged
        return self.status(folder.run_id)

    # -- results -------------------------------------------------------------------------------

    def summary(self, run_id: str) -> dict[str, Any]:
        """``summary.yaml``, or one made from the records (with ``skipped_lines`` when some of
        their lines could not be read)."""
        from benchwright.results.export import folder_summary

        folder = self.folder(run_id)
        return self.summaries.get(folder.path, lambda: folder_summary(folder))

    def records(self, run_id: str, *, filters: dict[str, str | None], offset: int = 0,
                limit: int = 100, skipped: SkippedLines | None = None) -> tuple[int, list[dict[str, Any]]]:
        """The run's records matching every given filter (exact values), ``limit`` of them from
        ``offset``, and how many match in all; lines that cannot be read go to ``skipped``."""
        wanted = {k: v for k, v in filters.items() if v is not None}
        with self._view(run_id, skipped) as view:
            if wanted.keys() <= INDEXED:
                chosen = view.matching(wanted)
                return len(chosen), [r.model_dump(mode="json") for r in view.read(chosen[offset:offset + limit])]
            records = view.read(list(range(len(view.rows))))
        chosen_records = [r for r in records if all(str(getattr(r, k, None)) == v for k, v in wanted.items())]
        return len(chosen_records), [r.model_dump(mode="json") for r in chosen_records[offset:offset + limit]]

    def samples(self, run_id: str, skipped: SkippedLines | None = None) -> list[dict[str, Any]]:
        """The run's samples in the order their first records come: execution id, task, language,
        model, sample number, outcome, and (agent runs) the verdict of each of the three gates
        (``objective``, ``judge``, ``run-badge``) in capitals; lines that cannot be read go to
        ``skipped``."""
        out: dict[str, dict[str, Any]] = {}
        with self._view(run_id, skipped) as view:
            for row in view.rows:
                s = out.get(row.execution_id)
                if s is None:
                    s = out[row.execution_id] = {
                        "execution_id": row.execution_id, "task_source": row.task_source, "task": row.task,
                        "language": row.language, "model": row.model, "sample": row.sample,
                        "outcome": row.outcome or ""}
                if row.criterion in GATES:
                    s[row.criterion] = (row.verdict or "n/a").upper()
        return list(out.values())

    def explore(self, run_ids: list[str], *, filters: dict[str, str | None], sort: str | None = None,
                descending: bool = False, offset: int = 0, limit: int = 100,
                skipped: SkippedLines | None = None) -> tuple[int, list[dict[str, Any]]]:
        """Records across runs, filtered and sorted here (not in the browser), a page of them and
        how many match; each carries its run and, for agent runs, the judge's verdict."""
        wanted = {k: v for k, v in filters.items() if v}
        if not (wanted.keys() <= INDEXED and (sort is None or sort in INDEXED or sort in ("run", "judge_verdict"))):
            return self._explore_whole(run_ids, wanted, sort, descending, offset, limit, skipped)
        with contextlib.ExitStack() as stack:
            views = [stack.enter_context(self._view(run_id, skipped)) for run_id in run_ids]
            judged = [view.judged() for view in views]
            matched = [(n, i) for n, view in enumerate(views) for i in view.matching(wanted)]
            if sort:
                def value(m: tuple[int, int]) -> Any:
                    n, i = m
                    if sort == "run":
                        return run_ids[n]
                    row = views[n].rows[i]
                    return judged[n].get(row.execution_id) if sort == "judge_verdict" else getattr(row, sort)

                keyed = [(value(m), m) for m in matched]
                present = [k for k in keyed if k[0] is not None]
                present.sort(key=lambda k: (isinstance(k[0], str), k[0]), reverse=descending)
                matched = [m for _, m in present] + [m for v, m in keyed if v is None]
            page = []
            for n, i in matched[offset:offset + limit]:
                rec = views[n].read([i])[0].model_dump(mode="json")
                page.append({**rec, "run": run_ids[n], "judge_verdict": judged[n].get(rec.get("execution_id", ""))})
        return len(matched), page

    @contextlib.contextmanager
    def _view(self, run_id: str, skipped: SkippedLines | None) -> Iterator[RecordsView]:
        """The run's records now (see :class:`RecordsView`); their skipped lines added to ``skipped``."""
        with self.indexes.records(self.folder(run_id).path) as view:
            if skipped is not None:
                skipped.extend(view.skipped)
            yield view

    def _explore_whole(self, run_ids: list[str], wanted: dict[str, str], sort: str | None, descending: bool,
                       offset: int, limit: int, skipped: SkippedLines | None) -> tuple[int, list[dict[str, Any]]]:
        """:meth:`explore` on whole records: a filter or a sort on a key the index does not hold."""
        matched: list[dict[str, Any]] = []
        for run_id in run_ids:
            records = list(self._iter_records(run_id, skipped))
            judged = {r["execution_id"]: r.get("verdict") for r in records if r.get("criterion") == "judge"}
            for rec in records:
                if any(str(rec.get(k)) != v for k, v in wanted.items()):
                    continue
                matched.append({**rec, "run": run_id, "judge_verdict": judged.get(rec.get("execution_id", ""))})
        if sort:
            present = [r for r in matched if r.get(sort) is not None]
            absent = [r for r in matched if r.get(sort) is None]
            present.sort(key=lambda r: (isinstance(r[sort], str), r[sort]), reverse=descending)
            matched = present + absent
        return len(matched), matched[offset:offset + limit]

    def _iter_records(self, run_id: str, skipped: SkippedLines | None = None) -> Iterator[dict[str, Any]]:
        with self._view(run_id, skipped) as view:
            records = view.read(list(range(len(view.rows))))
        for record in records:
            yield record.model_dump(mode="json")

    def shown(self, error: Exception) -> str:
        """An error's message with the workspace's own path left out (an API caller sees paths
        relative to the workspace, never where it lives on the host)."""
        return str(error).replace(str(self.ws.root) + os.sep, "")

    def sample(self, run_id: str, execution_id: str) -> dict[str, Any]:
        """One sample (or agent run) of a run: its generation (prompt, raw answer, extracted
        code), every record, and the files an agent run left.

        Raises:
            NotFound: no such run or sample.
        """
        import json

        folder = self.folder(run_id)
        skipped = SkippedLines()
        with self.indexes.records(folder.path) as view:
            skipped.extend(view.skipped)
            records = [r.model_dump(mode="json") for r in view.read(view.of_sample(execution_id))]
        with self.indexes.generations(folder.path) as generations:
            skipped.extend(generations.skipped)
            generation = generations.get(execution_id)
        if not records and generation is None:
            raise NotFound(f"no sample {execution_id!r} in run {folder.run_id}")
        files = _agent_files(folder.path / "agents", execution_id)
        judge = None
        if "judge.json" in files:
            with contextlib.suppress(ValueError):
                judge = json.loads(files["judge.json"])
        out = {"run_id": folder.run_id, "execution_id": execution_id, "records": records,
               "generation": generation.model_dump(mode="json") if generation is not None else None,
               "files": files, "judge": judge if isinstance(judge, dict) else None}
        if skipped:
            out["skipped_lines"] = skipped.model_dump(mode="json", exclude_none=True)
        return out

    def ui_secret(self) -> str:
        """The key the web UI signs its session cookie with (made once, kept in the workspace)."""
        import secrets

        path = self.ws.state / "ui-secret"
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_urlsafe(32))
        return path.read_text().strip()

    def compare(self, run_a: str, run_b: str) -> dict[str, Any]:
        from benchwright.results.compare import compare

        return compare(self.folder(run_a), self.folder(run_b), _IndexedReader(self)).to_dict()

    # -- results at a glance -------------------------------------------------------------------

    def run_index(self, run_id: str) -> RunIndex:
        """The run's samples in its order, the values of each explorer filter and its models,
        from one pass over its records; kept while ``records.jsonl`` stays the same file, so
        the pages after the first (a sample's neighbours, the explorer's filters) pay nothing."""
        from benchwright.results.samples import index_records

        folder = self.folder(run_id)
        path = folder.path / "records.jsonl"
        try:
            st = path.stat()
            stamp: tuple[int, int, int] | None = (st.st_ino, st.st_mtime_ns, st.st_size)
        except OSError:
            stamp = None
        with self._lock:
            kept = self._run_indexes.get(folder.run_id)
        if stamp is not None and kept is not None and kept[0] == stamp:
            return kept[1]
        skipped = SkippedLines()
        with self._view(folder.run_id, skipped) as view:  # the index's short rows: no whole record read
            index = index_records((row._asdict() for row in view.rows), skipped)
        if stamp is not None:
            with self._lock:
                self._run_indexes[folder.run_id] = (stamp, index)
        return index

    def task_matrix(self, run_id: str) -> list[MatrixRow]:
        """Model x task: per task of the run and per model, how many samples passed, and the
        sample to open (:func:`benchwright.results.samples.task_matrix`)."""
        from benchwright.results.samples import task_matrix

        return task_matrix(self.run_index(run_id))

    def sample_neighbours(self, run_id: str, execution_id: str) -> dict[str, Any]:
        """The samples before and after ``execution_id`` in the run's order (None at an end),
        its position and the run's sample count."""
        from benchwright.results.samples import neighbours

        return neighbours(self.run_index(run_id).samples, execution_id)

    def explorer_facets(self, run_ids: list[str]) -> dict[str, list[str]]:
        """Per field the data explorer filters on, every value the runs' records hold, sorted."""
        from benchwright.results.samples import FACETS

        values: dict[str, set[str]] = {f: set() for f in FACETS}
        for run_id in run_ids:
            for field, present in self.run_index(run_id).facets.items():
                values.setdefault(field, set()).update(present)
        return {f: sorted(v) for f, v in values.items()}


class _IndexedReader:
    """What a comparison reads of a run, from the service's indexes and summaries."""

    def __init__(self, service: Service) -> None:
        self.service = service

    def summary(self, folder: RunFolder) -> dict[str, Any]:
        return self.service.summary(folder.run_id)

    def records(self, folder: RunFolder, skipped: SkippedLines | None = None) -> list[Row]:
        with self.service.indexes.records(folder.path) as view:
            if skipped is not None:
                skipped.extend(view.skipped)
            return view.rows

    def damaged(self, folder: RunFolder) -> set[str]:
        with self.service.indexes.records(folder.path) as view:
            return view.damaged


def _unstarted(progress: RunProgress, proc: subprocess.Popen[bytes] | None, exit_code: int | None,
               run_id: str) -> None:
    """The state of a run folder with no status yet: its process is preparing, or ended first."""
    if proc is None:
        return
    if exit_code is None:
        progress.state = "starting"
    else:
        progress.state = "failed"
        progress.resumable = True
        progress.reason = (f"the run process ended (exit code {exit_code}) before the run began: "
                           f"see .benchwright/server/{run_id}.log")


def _run_info(folder: RunFolder) -> dict[str, Any]:
    """What the list of runs shows of a run beside its state: when it was created, its config
    and models (``run.yaml``), and the share of samples that passed (``summary.yaml``; None
    while there is no summary: not measured)."""
    info: dict[str, Any] = {"created": None, "config": None, "models": [], "pass_rate": None,
                            "model_pass_rates": {}}
    try:
        manifest = folder.manifest()
        summary = folder.summary() if (folder.path / "summary.yaml").is_file() else None
    except (InfraError, UserError):
        return info
    created, config = manifest.get("created"), manifest.get("config_file")
    info["created"] = created if isinstance(created, str) else None
    info["config"] = Path(config).name if isinstance(config, str) else None
    models = manifest.get("models")
    info["models"] = [str(m.get("label") or m.get("id")) for m in models if isinstance(m, dict)] \
        if isinstance(models, list) else []
    agents = manifest.get("agents")
    if isinstance(agents, list):
        info["models"] += [str(a.get("name")) for a in agents if isinstance(a, dict) and a.get("name")]
    if summary is not None:
        info["pass_rate"], info["model_pass_rates"] = _pass_rates(summary)
    return info


def _pass_rates(summary: dict[str, Any]) -> tuple[float | None, dict[str, float | None]]:
    """The share of samples whose outcome is pass, overall and per model (``by_model`` of a summary)."""
    by_model = summary.get("by_model")
    rates: dict[str, float | None] = {}
    passed = samples = 0
    for model, entry in (by_model.items() if isinstance(by_model, dict) else []):
        outcomes = entry.get("outcomes") if isinstance(entry, dict) else None
        n = entry.get("samples") if isinstance(entry, dict) else None
        p = outcomes.get("pass") if isinstance(outcomes, dict) else None
        if isinstance(n, int) and isinstance(p, int) and n > 0:
            rates[str(model)] = p / n
            passed, samples = passed + p, samples + n
        else:
            rates[str(model)] = None
    return (passed / samples if samples else None), rates


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGINT to the process group of a run this server launched; SIGKILL after the grace."""
    os.killpg(proc.pid, signal.SIGINT)
    try:  # it marks the run interrupted at once, then waits for what runs in its threads
        proc.wait(timeout=CANCEL_GRACE_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _stop_pid(pid: int, status: dict[str, Any]) -> None:
    """SIGINT to the run process ``pid`` (its group when it leads one); SIGKILL after the grace."""
    import time

    def send(sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            if os.getpgid(pid) == pid:
                os.killpg(pid, sig)
            else:
                os.kill(pid, sig)

    send(signal.SIGINT)
    deadline = time.monotonic() + CANCEL_GRACE_S
    while time.monotonic() < deadline:
        if process_alive(status) is not True:
            return
        time.sleep(0.1)
    send(signal.SIGKILL)
    while process_alive(status) is True and time.monotonic() < deadline + 5:
        time.sleep(0.05)


AGENT_FILE_BYTES = 2_000_000
"""How much of each file an agent run left the sample view shows."""


def _agent_files(agents: Path, execution_id: str) -> dict[str, str]:
    """The files of an agent run (``agents/<execution id>/``) as text: regular files only, never
    through a symlink, each cut at :data:`AGENT_FILE_BYTES`; one that cannot be read is left out."""
    own = agents / execution_id
    if ("/" in execution_id or execution_id in ("", ".", "..") or agents.is_symlink()
            or own.is_symlink() or not own.is_dir()):
        return {}
    files: dict[str, str] = {}
    for f in sorted(own.iterdir()):
        try:
            with open_run_file(f) as fh:
                files[f.name] = fh.read(AGENT_FILE_BYTES).decode("utf-8", errors="replace")
        except (OSError, InfraError):
            continue
    return files
