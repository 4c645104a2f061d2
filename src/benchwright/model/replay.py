"""The ``replay`` provider: answers from a recorded ``generations.jsonl``, so a run can be
re-scored (new criteria, new tests, another sandbox) without calling any model.

Configured in ``benchwright.yaml``::

    providers:
      old: {type: replay, path: results/run-1}   # a run folder, a run id or a generations.jsonl
    # then, in an execution config:  llms: [old/gpt-4o]

The model after ``old/`` is the *recorded model label* to replay (the ``model`` field of the
generation records; ``openai/gpt-4o`` is also found as ``gpt-4o`` when that is unambiguous).
``old`` alone, or ``old/*``, replays whichever model answered each task, when only one did.

A request is matched by task (``task_source/task``), language and sample index, else by the
same prompt text (with the language and sample). Records without an answer (``error``) are ignored; when a
sample was recorded twice (a resumed run), the last answer wins.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchwright.config.settings import ProviderSettings
from benchwright.errors import InfraError, UserError
from benchwright.model.base import Answer, GenerationRequest, Provider, ProviderError
from benchwright.results.jsonl import SkippedLines, read_lines

GENERATIONS_FILE = "generations.jsonl"
ANY_MODEL = ("", "*")


@dataclass(frozen=True)
class Recorded:
    task: str
    """``task_source/task``."""
    language: str
    sample: int
    model: str
    prompt: str
    answer: Answer
    line: int


def resolve_path(value: str | Path, cwd: Path | None = None) -> Path:
    """The generations file ``value`` names: a file, a run folder holding one, or a run id under
    the workspace's ``results/``. Relative paths are tried against ``cwd`` (the current
    directory), then the workspace root and its ``results/``. Returns the first candidate when
    none exists (the caller reports it)."""
    from benchwright.workspace.workspace import find_root

    here = (cwd or Path.cwd()).resolve()
    p = Path(value).expanduser()
    bases = [p] if p.is_absolute() else [here / p]
    if not p.is_absolute():
        root = find_root(here)
        bases += [root / p, root / "results" / p]
    candidates: list[Path] = []
    for base in bases:
        candidates += [base, base / GENERATIONS_FILE] if base.suffix != ".jsonl" else [base]
    for c in candidates:
        if c.is_file():
            return c
    first = bases[0]
    return first if first.suffix == ".jsonl" else first / GENERATIONS_FILE


def _generation(text: str) -> dict[str, Any]:
    """One line of a generations file as a dict with the keys replay needs, else a ValueError."""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as e:
        raise ValueError(f"not JSON ({e.msg})") from None
    if not isinstance(data, dict):
        raise ValueError("expected a generation object")
    missing = [k for k in ("task_source", "task", "language", "model") if not isinstance(data.get(k), str)]
    if missing:
        raise ValueError(f"not a generation record (no {', '.join(missing)})")
    return data


def load(path: Path) -> list[Recorded]:
    """The answered generations of ``path``, in file order; a torn last line (a run killed
    mid-write) is skipped, as resume does.

    Raises:
        UserError: the file is missing, unreadable or has a malformed line (named).
    """
    if not path.is_file():
        raise UserError(f"replay: no generations file at {path}")
    skipped = SkippedLines()
    out: list[Recorded] = []
    try:
        for no, _, data in read_lines(path, _generation, skipped, follow=True):
            raw = data.get("raw")
            if data.get("error") is not None or not isinstance(raw, str):
                continue
            sample = data.get("sample", 0)
            out.append(Recorded(
                task=f"{data['task_source']}/{data['task']}",
                language=data["language"],
                sample=sample if isinstance(sample, int) else 0,
                model=data["model"],
                prompt=str(data.get("prompt") or ""),
                answer=Answer(
                    text=raw,
                    tokens_in=_count(data.get("tokens_in")),
                    tokens_out=_count(data.get("tokens_out")),
                    tokens_estimated=bool(data.get("tokens_estimated", False)),
                    finish_reason=_text(data.get("finish_reason")),
                    cost_usd=_number(data.get("cost_usd")),
                    model=data["model"],
                ),
                line=no,
            ))
    except (OSError, InfraError) as e:
        raise UserError(f"replay: cannot read {path}: {e}") from None
    bad = [b for b in skipped.lines if not b.reason.startswith("torn")]
    if bad:
        raise UserError(f"replay: {path}:{bad[0].line}: {bad[0].reason} "
                        f"({skipped.count} unreadable line(s) in all)")
    return out


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class ReplayProvider(Provider):
    """Serves recorded answers; never calls a model and is never cached."""

    cacheable = False
    shared_service = False

    def __init__(self, name: str, settings: ProviderSettings) -> None:
        super().__init__(name, settings)
        value = (settings.model_extra or {}).get("path")
        self.path_setting: str | None = str(value) if value not in (None, "") else None
        self._path: Path | None = None
        self._by_task: dict[tuple[str, str, int], dict[str, Recorded]] | None = None
        self._by_prompt: dict[tuple[str, str, int], dict[str, Recorded]] = {}
        self._labels: set[str] = set()

    @property
    def path(self) -> Path:
        """The generations file, confined like every path a file names.

        Raises:
            UserError: no ``path`` setting.
            PathRefused: in a run, it leads outside the workspace and its allowed folders.
        """
        if self._path is None:
            if self.path_setting is None:
                raise UserError(f"replay provider {self.name!r}: set 'path' (a run folder, a run id "
                                "or a generations.jsonl) under providers in benchwright.yaml")
            found = resolve_path(self.path_setting, self.workspace)
            confinement = self.confinement()
            if confinement is not None:
                found = confinement.path(found, base=confinement.workspace, field=f"providers.{self.name}.path",
                                         file=confinement.workspace / "benchwright.yaml")
            self._path = found
        return self._path

    def _load(self) -> None:
        if self._by_task is not None:
            return
        by_task: dict[tuple[str, str, int], dict[str, Recorded]] = {}
        for rec in load(self.path):
            by_task.setdefault((rec.task, rec.language, rec.sample), {})[rec.model] = rec
            if rec.prompt:
                self._by_prompt.setdefault((rec.prompt, rec.language, rec.sample), {})[rec.model] = rec
            self._labels.add(rec.model)
        self._by_task = by_task

    async def preflight(self, models: Sequence[str] = ()) -> list[str]:
        if self.path_setting is None:
            return ["no 'path' set (a run folder, a run id under results/ or a generations.jsonl)"]
        path = self.path
        if not path.is_file():
            return [f"no generations file at {path} (from path {self.path_setting!r})"]
        try:
            self._load()
        except UserError as e:
            return [str(e)]
        return []

    def unanswerable(self, requests: Sequence[GenerationRequest]) -> list[GenerationRequest]:
        """The requests no recorded answer matches (by task, language, sample and model, or by
        prompt); an ambiguous match counts as answerable here (generate says why it is not)."""
        try:
            self._load()
        except UserError:
            return []  # preflight says why
        return [r for r in requests if not any(
            r.model in ANY_MODEL or self._label(r.model) in found for found in self._recorded(r))]

    def _recorded(self, request: GenerationRequest) -> Iterator[dict[str, Recorded]]:
        """The answers recorded for ``request``'s task, then for its prompt text (same language
        and sample), by model; the file must be loaded."""
        assert self._by_task is not None
        if request.task and (found := self._by_task.get((request.task, request.language, request.sample))):
            yield found
        if request.prompt and (found := self._by_prompt.get((request.prompt, request.language, request.sample))):
            yield found

    def _label(self, wanted: str) -> str:
        """The recorded label that ``wanted`` (the model id after the provider) stands for."""
        if wanted in self._labels:
            return wanted
        suffix = [label for label in self._labels if label.partition("/")[2] == wanted]
        if len(suffix) == 1:
            return suffix[0]
        return wanted

    def _pick(self, found: dict[str, Recorded] | None, wanted: str, request: GenerationRequest) -> Recorded | None:
        if not found:
            return None
        if wanted in ANY_MODEL:
            if len(found) > 1:
                raise ProviderError(
                    f"replay: task {request.task or '?'} [{request.language}] sample {request.sample} was "
                    f"answered by several models in {self.path} ({', '.join(sorted(found))}); "
                    f"name one, e.g. {self.name}/{sorted(found)[0]}", retryable=False)
            return next(iter(found.values()))
        return found.get(self._label(wanted))

    async def generate(self, request: GenerationRequest) -> Answer:
        try:
            self._load()
        except UserError as e:
            raise ProviderError(str(e), retryable=False) from None
        wanted = request.model
        rec = next((r for found in self._recorded(request) if (r := self._pick(found, wanted, request))), None)
        if rec is None:
            who = "any model" if wanted in ANY_MODEL else f"model {wanted!r}"
            raise ProviderError(
                f"replay: no recorded answer for task {request.task or '(unnamed)'} [{request.language}] "
                f"sample {request.sample} by {who} in {self.path}", retryable=False)
        return rec.answer
