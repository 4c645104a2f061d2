"""Loading task sources: all problems at once, each with its file, line and place."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from benchwright import yamldoc
from benchwright.errors import InputError, Problem
from benchwright.problems import validate
from benchwright.task.model import TaskSource


@dataclass
class LoadedSource:
    path: Path
    doc: yamldoc.Document
    source: TaskSource
    sha256: str

    @classmethod
    def of(cls, path: Path, doc: yamldoc.Document, source: TaskSource) -> LoadedSource:
        return cls(path=path, doc=doc, source=source, sha256=hashlib.sha256(path.read_bytes()).hexdigest())

    @property
    def name(self) -> str:
        return self.source.name or self.path.stem


def check_names(doc: yamldoc.Document) -> list[Problem]:
    """Duplicate task names, found on the raw data so they show even beside other problems."""
    problems = []
    seen: dict[str, int] = {}
    tasks = doc.data.get("tasks") if isinstance(doc.data, dict) else None
    for i, task in enumerate(tasks if isinstance(tasks, list) else []):
        name = task.get("name") if isinstance(task, dict) else None
        if not isinstance(name, (str, int)):
            continue
        name = str(name)
        if name in seen:
            problems.append(doc.problem(
                ("tasks", i, "name"), f"duplicate task name {name!r} (first at tasks[{seen[name]}])",
                hint="task names must be unique within a task source"))
        else:
            seen[name] = i
    return problems


def parse_task_source(path: Path) -> tuple[yamldoc.Document | None, TaskSource | None, list[Problem]]:
    """Parse and validate without raising; the problems say what is wrong."""
    try:
        doc = yamldoc.load(path)
    except InputError as e:
        return None, None, list(e.problems)
    if not isinstance(doc.data, dict):
        return doc, None, [doc.problem((), "a task source must be a mapping with 'tasks:'",
                                       hint="start with 'version: 1' and 'tasks:'")]
    source, problems = validate(doc, TaskSource)
    problems += check_names(doc)
    return doc, (source if not problems else None), problems


def load_task_source(path: Path) -> LoadedSource:
    """Load a task source or raise :class:`InputError` listing every problem."""
    doc, source, problems = parse_task_source(path)
    errors = [p for p in problems if p.severity == "error"]
    if errors or doc is None or source is None:
        raise InputError(errors or problems)
    return LoadedSource.of(path, doc, source)
