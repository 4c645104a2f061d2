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
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from benchwright import yamldoc
from benchwright.errors import InfraError, InputError, Problem, UserError
from benchwright.run.folder import RunFolder
from benchwright.run.jsonl import SkippedLines, open_run_file
from benchwright.workspace import Workspace

FileKind = Literal["config", "task-source", "scenario"]
FOLDERS: dict[FileKind, str] = {"config": "configs", "task-source": "tasks", "scenario": "scenarios"}
"""Where each kind of file lives in a workspace."""
VALIDATION_KIND: dict[FileKind, str] = {"config": "exec-config", "task-source": "task-source",
                                        "scenario": "scenario"}


CANCEL_GRACE_S = 5.0
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
        self._lock = threading.Lock()

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

    def runs(self) -> list[dict[str, Any]]:
        """Every run of the workspace, newest first, with its status."""
        if not self.ws.results.is_dir():
            return []
        out = []
        for manifest in sorted(self.ws.results.glob("*/run.yaml"), key=lambda p: p.stat().st_mtime, reverse=True):
            out.append(self.status(manifest.parent.name))
        return out

    def folder(self, run_id: str) -> RunFolder:
        if "/" in run_id or run_id in ("", ".", "..") or _too_long(run_id):
            raise NotFound(f"no run {run_id[:64]!r}")
        try:
            return RunFolder(self.ws.run_dir(run_id, paths=False))
        except UserError as e:
            raise NotFound(str(e)) from None

    def status(self, run_id: str) -> dict[str, Any]:
        """The run's state and ``status.yaml``; a status file that cannot be read gives the
        state ``damaged`` and the reason under ``status.error`` (every other run still lists)."""
        folder = self.folder(run_id)
        try:
            st = folder.status()
        except InfraError as e:
            return {"run_id": folder.run_id, "state": "damaged", "status": {"error": self.shown(e)},
                    "exit_code": None}
        proc = self._launched.get(folder.run_id)
        state = st.get("state") or ("starting" if proc is not None else "unknown")
        if proc is not None and proc.poll() is not None and state in ("running", "starting"):
            state = "failed" if proc.returncode not in (0, 1) else "completed"
        return {"run_id": folder.run_id, "state": state, "status": st,
                "exit_code": proc.returncode if proc is not None else None}

    def launch(self, config: str, task_sources: list[str] | None = None, run_id: str | None = None) -> str:
        """Start ``benchwright run CONFIG`` for this workspace in a process of its own (a run
        the API can watch and cancel, and that ``--resume`` can finish). Returns its id once
        the run folder exists.

        Raises:
            InputError: the config or a task source does not validate (nothing started).
        """
        from benchwright.run.engine import new_run_id, prepare

        config_path = self.inside(config, "config")
        if not config_path.is_file():
            raise NotFound(f"no config {config!r}")
        sources = [str(self.inside(t, "task-source")) for t in task_sources or []]
        prepare(self.ws, config_path, sources)  # every problem now, before anything starts
        rid = run_id or new_run_id(config_path)
        argv = [sys.executable, "-m", "benchwright", "run", str(config_path), "--run-id", rid,
                "--workspace", str(self.ws.root)]
        for s in sources:
            argv += ["--tasks", s]
        log = self.ws.state / "server" / f"{rid}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("wb") as out:
            proc = subprocess.Popen(argv, cwd=self.ws.root, stdout=out, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, start_new_session=True)
        with self._lock:
            self._launched[rid] = proc
        return rid

    def wait_started(self, run_id: str, timeout_s: float = 60.0) -> bool:
        """Whether the run's folder appeared within ``timeout_s`` (its process may also have ended)."""
        import time

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if (self.ws.results / run_id / "run.yaml").is_file():
                return True
            proc = self._launched.get(run_id)
            if proc is not None and proc.poll() is not None:
                return (self.ws.results / run_id / "run.yaml").is_file()
            time.sleep(0.05)
        return False

    def cancel(self, run_id: str) -> dict[str, Any]:
        """Stop a run this server launched (SIGINT, as Ctrl-C: the run is left resumable)."""
        folder = self.folder(run_id)
        proc = self._launched.get(folder.run_id)
        if proc is None or proc.poll() is not None:
            raise UserError(f"run {folder.run_id} is not running here (only runs this server "
                            "launched can be cancelled)")
        os.killpg(proc.pid, signal.SIGINT)
        try:  # it marks the run interrupted at once, then waits for what runs in its threads
            proc.wait(timeout=CANCEL_GRACE_S)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        try:  # killed before it could say so (a slow start, a loaded machine): say it for it
            st = folder.status()
            if st.get("state") in ("running", "starting"):
                folder.write_status({**st, "state": "interrupted"}, force=True)
        except InfraError:
            pass  # an unreadable status stays what it is: status() reports it as damaged
        return self.status(folder.run_id)

    # -- results -------------------------------------------------------------------------------

    def summary(self, run_id: str) -> dict[str, Any]:
        """``summary.yaml``, or one made from the records (with ``skipped_lines`` when some of
        their lines could not be read)."""
        from benchwright.results.export import folder_summary

        return folder_summary(self.folder(run_id))

    def records(self, run_id: str, *, filters: dict[str, str | None], offset: int = 0,
                limit: int = 100, skipped: SkippedLines | None = None) -> tuple[int, list[dict[str, Any]]]:
        """The run's records matching every given filter (exact values), ``limit`` of them from
        ``offset``, and how many match in all; lines that cannot be read go to ``skipped``."""
        wanted = {k: v for k, v in filters.items() if v is not None}
        total = 0
        page: list[dict[str, Any]] = []
        for rec in self.folder(run_id).records(skipped):
            if any(str(getattr(rec, k, None)) != v for k, v in wanted.items()):
                continue
            if offset <= total < offset + limit:
                page.append(rec.model_dump(mode="json"))
            total += 1
        return total, page

    def explore(self, run_ids: list[str], *, filters: dict[str, str | None], sort: str | None = None,
                descending: bool = False, offset: int = 0, limit: int = 100,
                skipped: SkippedLines | None = None) -> tuple[int, list[dict[str, Any]]]:
        """Records across runs, filtered and sorted here (not in the browser), a page of them and
        how many match; each carries its run and, for agent runs, the judge's verdict."""
        wanted = {k: v for k, v in filters.items() if v}
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
        for record in self.folder(run_id).records(skipped):
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
        records = [r for r in self._iter_records(folder.run_id, skipped) if r.get("execution_id") == execution_id]
        generation = folder.generations(only={execution_id}, skipped=skipped).get(execution_id)
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

        return compare(self.folder(run_a), self.folder(run_b)).to_dict()


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
