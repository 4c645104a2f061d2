"""Locating a workspace and reading its settings."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from benchwright import yamldoc
from benchwright.config.settings import Settings
from benchwright.errors import InputError, UserError
from benchwright.problems import validate
from benchwright.workspace.confine import Confinement

SETTINGS_FILE = "benchwright.yaml"


def find_root(start: Path | None = None) -> Path:
    """The nearest folder at or above ``start`` holding ``benchwright.yaml``, else ``start``."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / SETTINGS_FILE).is_file():
            return folder
    return here


@dataclass
class Workspace:
    root: Path
    settings: Settings = field(default_factory=Settings)

    @classmethod
    def open(cls, root: Path | None = None) -> Workspace:
        """Open the workspace at ``root`` (or the nearest one); read its settings.

        Raises:
            InputError: ``benchwright.yaml`` is malformed.
        """
        folder = root.resolve() if root is not None else find_root()
        settings_path = folder / SETTINGS_FILE
        settings = Settings()
        if settings_path.is_file():
            doc = yamldoc.load(settings_path)
            if doc.data is not None:
                loaded, problems = validate(doc, Settings)
                if problems or loaded is None:
                    raise InputError(problems)
                settings = loaded
        return cls(root=folder, settings=settings)

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def state(self) -> Path:
        return self.root / ".benchwright"

    @property
    def confinement(self) -> Confinement:
        """Where paths named inside this workspace's files may lead (the workspace, and the
        settings' ``allowed_folders``)."""
        return Confinement(self.root, tuple(self.settings.allowed_folders))

    def locate(self, name: str, *, file: Path, field: str, line: int | None = None) -> Path:
        """A path named inside ``file`` (at ``field``, ``line``): tried under the workspace,
        beside the file, then in the current folder, and confined (see
        :mod:`benchwright.workspace.confine`). It may not exist (the caller says so).

        Raises:
            PathRefused: it leads outside the workspace and the allowed folders.
        """
        return self.confinement.locate(name, bases=[self.root, file.parent, Path.cwd()], field=field,
                                       file=file, line=line)

    def resolve(self, path: str | Path, relative_to: Path | None = None) -> Path:
        """A path from the command line (the user's own, not confined): absolute, else under the
        workspace (or beside ``relative_to``, or in the current folder). A path named inside a
        file goes through :meth:`locate`."""
        p = Path(path).expanduser()
        if p.is_absolute():
            return p
        candidates = [self.root / p]
        if relative_to is not None:
            candidates.append(relative_to / p)
        candidates.append(Path.cwd() / p)
        for c in candidates:
            if c.exists():
                return c.resolve()
        return candidates[0]

    def run_dir(self, run_id: str, *, paths: bool = True) -> Path:
        """The folder of ``run_id``; ``latest`` is the newest run. With ``paths`` (the CLI's
        user), ``run_id`` may also be a run folder's path; the server passes False: a run id
        from an API caller names a folder of ``results/`` and nothing else.

        Raises:
            UserError: no such run.
        """
        if run_id == "latest":
            runs = sorted((p for p in self.results.glob("*/run.yaml")), key=lambda p: p.stat().st_mtime)
            if not runs:
                raise UserError(f"no runs in {self.results} (start one with 'benchwright run CONFIG')")
            return runs[-1].parent
        direct = Path(run_id)
        if paths and (direct / "run.yaml").is_file():
            return direct.resolve()
        folder = self.results / run_id
        if not (folder / "run.yaml").is_file():
            raise UserError(f"no run {run_id!r} in {self.results} (see 'benchwright status')")
        return folder


def init_workspace(target: Path, force: bool = False) -> list[Path]:
    """Copy the example workspace to ``target``; refuse to overwrite files unless ``force``.

    Raises:
        UserError: a file would be overwritten.
    """
    example = resources.files("benchwright.workspace").joinpath("example")
    sources: list[tuple[Path, Path]] = []
    with resources.as_file(example) as root:
        for src in sorted(root.rglob("*")):
            if src.is_file() and "__pycache__" not in src.parts:
                sources.append((src, target / src.relative_to(root)))
        clashes = [dst for _, dst in sources if dst.exists()]
        if clashes and not force:
            raise UserError(
                f"{len(clashes)} file(s) already exist in {target}, e.g. {clashes[0]} "
                "(choose an empty folder or pass --force)")
        written = []
        for src, dst in sources:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)
            written.append(dst)
    for sub in ("configs", "tasks", "scenarios", "results", ".benchwright"):
        (target / sub).mkdir(parents=True, exist_ok=True)
    return written
