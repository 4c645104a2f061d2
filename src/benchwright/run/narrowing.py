"""A run narrowed from the command line: ``--limit``, ``--task``, ``--model`` and ``--samples``.

The narrowing is applied on top of the config's own filters and recorded in ``run.yaml``
(``narrowed:``), so ``run --resume`` runs the same narrowed selection. A narrowing that
selects nothing (a glob that matches no task, a model id nobody serves) is bad input: exit 2
with a hint, before anything is generated.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections import Counter
from dataclasses import dataclass, field

from benchwright.config.model import ExecConfig, ModelSpec
from benchwright.config.settings import Settings
from benchwright.errors import InputError, Problem, UserError
from benchwright.model import resolve as model_resolve
from benchwright.results.folder import Narrowing

WHERE = "command line"
"""The ``file`` of a narrowing's problems."""


def narrowed_config(narrowing: Narrowing, config: ExecConfig, settings: Settings) -> ExecConfig:
    """``config`` with ``llms`` and ``samples`` replaced as ``narrowing`` says.

    Raises:
        InputError: a ``--model`` id the config does not list that no provider serves
            (with the config's closest model ids as a hint).
    """
    update: dict[str, object] = {}
    if narrowing.samples is not None:
        update["samples"] = narrowing.samples
    if narrowing.models:
        update["llms"] = _models(narrowing, config, settings)
    return config.model_copy(update=update) if update else config


def _models(narrowing: Narrowing, config: ExecConfig, settings: Settings) -> list[ModelSpec]:
    chosen: list[ModelSpec] = []
    problems: list[Problem] = []
    for wanted in narrowing.models:
        listed = [m for m in config.llms if wanted in (m.id, m.name)]
        if not listed:
            try:
                model_resolve.resolve(wanted, settings)
            except UserError as e:
                problems.append(Problem(WHERE, str(e), path="--model",
                                        hint=_closest(wanted, _labels(config))))
                continue
            listed = [ModelSpec(id=wanted)]
        chosen += [m for m in listed if m not in chosen]
    if problems:
        raise InputError(problems)
    return chosen


def unlisted_models(narrowing: Narrowing, config: ExecConfig) -> list[str]:
    """The ``--model`` ids of ``narrowing`` the config's ``llms`` does not list."""
    return [m for m in narrowing.models if not any(m in (s.id, s.name) for s in config.llms)]


def _labels(config: ExecConfig) -> list[str]:
    return list(dict.fromkeys([*(m.id for m in config.llms), *(m.name for m in config.llms if m.name)]))


def _closest(wanted: str, names: list[str], what: str = "the config's llms") -> str:
    """A hint: the names closest to ``wanted`` (a glob's wildcards left out), else a few."""
    plain = wanted.translate(str.maketrans("", "", "*?[]"))
    close = difflib.get_close_matches(plain, names, n=3, cutoff=0.5)
    if close:
        return f"did you mean {', '.join(close)}?"
    if not names:
        return f"{what} list none"
    shown = ", ".join(names[:5]) + (f", ... ({len(names)} in all)" if len(names) > 5 else "")
    return f"{what}: {shown}"


@dataclass
class TaskPicker:
    """Keeps the tasks ``--task`` and ``--limit`` select, one task source at a time, among the
    tasks the config's filters keep (offered in file order)."""

    narrowing: Narrowing
    offered: list[str] = field(default_factory=list)
    taken: Counter[str] = field(default_factory=Counter)
    matched: set[str] = field(default_factory=set)

    def keeps(self, source: str, task: str) -> bool:
        """Whether the task ``task`` of ``source`` (which the config keeps) stays in the run."""
        self.offered.append(task)
        if self.narrowing.tasks:
            globs = [g for g in self.narrowing.tasks if fnmatch.fnmatchcase(task, g)]
            self.matched.update(globs)
            if not globs:
                return False
        if self.narrowing.limit is not None and self.taken[source] >= self.narrowing.limit:
            return False
        self.taken[source] += 1
        return True

    def check(self) -> None:
        """Raises:
            InputError: a ``--task`` glob matched none of the tasks the config keeps (with the
                closest task names as a hint).
        """
        names = list(dict.fromkeys(self.offered))
        problems = [
            Problem(WHERE, f"{glob!r} matches none of the {len(names)} tasks the config selects",
                    path="--task", hint=_closest(glob, names, "its tasks"))
            for glob in self.narrowing.tasks if glob not in self.matched
        ]
        if problems:
            raise InputError(problems)
