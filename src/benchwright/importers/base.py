"""What every importer is: a registry plug-in that turns a dataset's rows into a task source.

An importer names its dataset, where its file is published and on the Hugging Face Hub, the
languages and subsets it offers, and converts one row into one :class:`Task`. Reading the file or
the Hub, checking fields, limits, repeated names and error reporting are shared, so
``benchwright import NAME --data FILE`` and ``benchwright import NAME --hf`` run the same
conversion on the same rows. No importer downloads anything at run time: ``--hf`` is the user's
explicit request to load from the Hub.
"""

from __future__ import annotations

import abc
import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from pydantic import ValidationError

from benchwright.errors import InputError, Problem, UserError
from benchwright.importers.rows import HubLocation, Row, hub_rows, read_rows
from benchwright.task.model import Task, TaskSource

__all__ = ["ImportRequest", "Importer", "RowProblem"]


@dataclass(frozen=True)
class ImportRequest:
    """What the user asked ``benchwright import`` for."""

    data: Path | None = None
    """The dataset file (``--data``)."""
    hf: bool = False
    """Load from the Hugging Face Hub (``--hf``)."""
    hf_path: str | None = None
    """Another Hub id or a local folder of the dataset's Hub files (``--hf-path``)."""
    language: str | None = None
    """The dataset's own name of the language (``--language``), checked against the importer's."""
    subset: str | None = None
    """The subset or version (``--subset``), checked against the importer's."""
    limit: int | None = None
    """Only the first ``limit`` tasks."""
    options: dict[str, Any] = field(default_factory=dict)
    """Importer-specific ``KEY=VALUE`` options (``--map``)."""


class RowProblem(Exception):
    """Raised by :meth:`Importer.task` for a row it cannot convert; becomes a located problem."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class Importer(abc.ABC):
    """A dataset importer. Subclasses set the class attributes and implement :meth:`task`."""

    name: ClassVar[str] = "?"
    dataset: ClassVar[str] = ""
    """The dataset's name and home, as shown by ``benchwright list importers``."""
    download: ClassVar[str] = ""
    """Where the published file can be downloaded (named when no file is given)."""
    file_name: ClassVar[str] = ""
    """The published file's name (``{language}`` and ``{subset}`` are filled in)."""
    licence: ClassVar[str] = ""
    languages: ClassVar[Mapping[str, str]] = {}
    """The dataset's language names, each with benchwright's; empty when there is one language."""
    default_language: ClassVar[str | None] = None
    subsets: ClassVar[tuple[str, ...]] = ()
    """Subsets or versions ``--subset`` chooses from; empty when there are none."""
    default_subset: ClassVar[str | None] = None
    fields: ClassVar[tuple[str, ...]] = ()
    """Keys every row must have."""
    option_keys: ClassVar[tuple[str, ...]] = ()
    """Keys ``--map KEY=VALUE`` accepts; empty: no options."""

    # -- what subclasses provide ------------------------------------------------------------

    @abc.abstractmethod
    def task(self, row: dict[str, Any], request: ImportRequest) -> Task | None:
        """One task from one row, or None to leave the row out (not of the chosen subset).

        Raises:
            RowProblem: the row cannot be converted; the message says why.
        """

    def hub(self, request: ImportRequest) -> HubLocation | None:
        """Where ``--hf`` loads from, or None when the dataset is not on the Hub."""
        return None

    def default_data(self, request: ImportRequest) -> Path | None:
        """A copy of the data this machine already has (a package's), used without ``--data``."""
        return None

    def source_name(self, request: ImportRequest) -> str:
        """The task source's name."""
        language = self.language(request)
        return self.name + (f"-{language}" if language and len(self.languages) > 1 else "") + (
            f"-{request.subset}" if request.subset and request.subset != self.default_subset else "")

    def description(self, request: ImportRequest) -> str:
        """The task source's description."""
        return f"{self.dataset}; licence: {self.licence}" if self.licence else self.dataset

    # -- shared -----------------------------------------------------------------------------

    def language(self, request: ImportRequest) -> str | None:
        """benchwright's name of the requested language (None for a one-language dataset)."""
        if not self.languages:
            return None
        chosen = request.language or self.default_language
        if chosen is None:
            return None
        return self.languages.get(chosen, chosen)

    def file_for(self, request: ImportRequest) -> str:
        """The published file's name for this request."""
        return self.file_name.format(language=request.language or self.default_language or "",
                                     subset=request.subset or self.default_subset or "")

    def check(self, request: ImportRequest) -> ImportRequest:
        """``request`` with its language and subset checked (and the dataset's own names).

        Raises:
            UserError: an unknown language, subset or option, or a missing one.
        """
        language = request.language
        if self.languages:
            ours = {bw: own for own, bw in self.languages.items()}
            if language is None and self.default_language is None:
                raise UserError(f"import {self.name}: choose a language with --language "
                                f"({'|'.join(self.languages)})")
            if language is not None and language not in self.languages:
                if language not in ours:
                    raise UserError(f"import {self.name}: no language {language!r} "
                                    f"(choose from {', '.join(self.languages)})")
                language = ours[language]
        elif language is not None:
            raise UserError(f"import {self.name}: the dataset has one language; drop --language")
        subset = request.subset
        if subset is not None and subset not in self.subsets:
            raise UserError(f"import {self.name}: no subset {subset!r} "
                            + (f"(choose from {', '.join(self.subsets)})" if self.subsets
                               else "(the dataset has none; drop --subset)"))
        unknown = sorted(set(request.options) - set(self.option_keys))
        if unknown:
            raise UserError(f"import {self.name}: unknown option {unknown[0]!r} "
                            + (f"(known: {', '.join(self.option_keys)})" if self.option_keys
                               else "(this importer takes no --map options)"))
        if request.data is not None and request.hf:
            raise UserError(f"import {self.name}: give --data FILE or --hf, not both")
        return ImportRequest(data=request.data, hf=request.hf, hf_path=request.hf_path,
                             language=language or (self.default_language if self.languages else None),
                             subset=subset or self.default_subset, limit=request.limit,
                             options=dict(request.options))

    def rows(self, request: ImportRequest, problems: list[Problem]) -> tuple[str, list[Row]]:
        """Where the rows come from (a file name or a Hub id) and the rows; lines that are not
        records are added to ``problems``.

        Raises:
            UserError: no data given and none on this machine; the message says where to get it.
        """
        if request.hf or request.hf_path:
            location = self.hub(request)
            if location is None and request.hf_path is None:
                raise UserError(f"import {self.name}: {self.dataset} is not on the Hugging Face Hub; "
                                f"download {self.file_for(request) or 'its file'} from "
                                f"{self.download} and give it with --data")
            if request.hf_path is not None:
                location = (dataclasses.replace(location, path=request.hf_path) if location
                            else HubLocation(request.hf_path))  # a mirror keeps the layout
            assert location is not None
            return location.describe(), hub_rows(location, offline_hint=(
                f"download {self.file_for(request) or 'the dataset file'} from {self.download} "
                "and give it with --data"))
        path = request.data or self.default_data(request)
        if path is None:
            where = f"download {self.file_for(request) or 'the dataset file'} from {self.download}"
            hub = self.hub(request)
            raise UserError(f"import {self.name}: no data file: {where} and give it with "
                            f"--data FILE" + (f", or load {hub.path} from the Hugging Face Hub with "
                                              "--hf (online, with benchwright[datasets])" if hub else ""))
        if not Path(path).exists():
            raise InputError([Problem(str(path), "data file not found",
                                      hint=f"download {self.file_for(request) or 'it'} from "
                                           f"{self.download}")])
        return str(path), read_rows(Path(path), problems)

    def load(self, request: ImportRequest) -> TaskSource:
        """The task source for ``request``: rows read, converted, checked.

        Raises:
            UserError: a bad request, or no data.
            InputError: rows that lack fields or cannot be converted (each one listed), or
                repeated task names.
        """
        request = self.check(request)
        problems: list[Problem] = []
        origin, rows = self.rows(request, problems)
        tasks: list[Task] = []
        first: dict[str, str] = {}
        for row in rows:
            if request.limit is not None and len(tasks) >= max(request.limit, 0):
                break
            missing = [k for k in self.fields if k not in row.data]
            if missing:
                problems.append(Problem(origin, f"not a {self.dataset} record: missing "
                                        f"{', '.join(missing)}", row.where, row.line,
                                        hint=f"each record needs {', '.join(self.fields)}; is this "
                                             f"the file from {self.download}?"))
                continue
            try:
                task = self.task(row.data, request)
            except RowProblem as exc:
                problems.append(Problem(origin, exc.message, row.where, row.line, exc.hint))
                continue
            except ValidationError as exc:
                for error in exc.errors():
                    where = ".".join(str(p) for p in error["loc"])
                    problems.append(Problem(origin, f"{where}: {error['msg']}", row.where, row.line))
                continue
            if task is None:
                continue
            if task.name in first:
                problems.append(Problem(origin, f"task name {task.name!r} repeats {first[task.name]}",
                                        row.where, row.line))
                continue
            first[task.name] = row.where
            tasks.append(task)
        if problems:
            raise InputError(sorted(problems, key=lambda p: p.line or 0))
        if not tasks:
            raise InputError([Problem(origin, f"no {self.dataset} task"
                                      + (f" in {request.language}" if request.language else "")
                                      + (f" of subset {request.subset}" if request.subset else ""),
                                      hint=f"is this the file from {self.download}?")])
        return TaskSource(name=self.source_name(request), description=self.description(request),
                          tasks=tasks)
