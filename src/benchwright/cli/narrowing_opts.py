"""The options of ``benchwright run`` that narrow a run: ``--limit``, ``--task``, ``--model``
and ``--samples`` (see :mod:`benchwright.run.narrowing`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from benchwright.errors import UserError

if TYPE_CHECKING:  # imported when a run starts: the CLI starts fast
    from benchwright.results.folder import Narrowing

LimitOpt = Annotated[int | None, typer.Option(
    "--limit", min=1, help="Only the first N tasks of each task source (after the config's filters and --task).")]
TaskOpt = Annotated[list[str] | None, typer.Option(
    "--task", help="Only tasks whose name matches this glob, e.g. 'sort-*' (repeatable: any match keeps a task).")]
ModelOpt = Annotated[list[str] | None, typer.Option(
    "--model", help="Run this model instead of the config's llms (repeatable; an id listed there keeps its "
    "settings).")]
SamplesOpt = Annotated[int | None, typer.Option(
    "--samples", min=1, max=10_000, help="Generations per task, language and model, instead of the config's "
    "samples.")]


def narrowing(limit: int | None, tasks: list[str] | None, models: list[str] | None, samples: int | None,
              resume: str | None) -> Narrowing:
    """The narrowing the flags ask for (a glob or id given twice counts once).

    Raises:
        UserError: narrowing flags with ``--resume``: a resumed run keeps its own narrowing.
    """
    from benchwright.results.folder import Narrowing

    out = Narrowing(limit=limit, tasks=list(dict.fromkeys(tasks or [])),
                    models=list(dict.fromkeys(models or [])), samples=samples)
    if resume and out.active:
        raise UserError(f"{' '.join(out.flags())}: a resumed run keeps the narrowing it started with "
                        f"(see narrowed: in its run.yaml); run 'benchwright run --resume {resume}' without "
                        "narrowing flags, or start a new run")
    return out
