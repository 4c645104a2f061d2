"""From a config and task sources to the list of samples to run (nothing is executed here)."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchwright.config.model import ExecConfig, ModelSpec
from benchwright.config.settings import Settings
from benchwright.criteria.judge import NO_JUDGE
from benchwright.errors import InputError, Problem, UserError
from benchwright.model import resolve as model_resolve
from benchwright.model.base import GenerationRequest
from benchwright.registry import registry
from benchwright.results.folder import Narrowing
from benchwright.run.narrowing import TaskPicker, narrowed_config
from benchwright.task.load import LoadedSource
from benchwright.task.model import Task
from benchwright.task.render import RenderedTask, RenderFailure, render_task
from benchwright.yamldoc import Document, format_path

MAX_STOP_SEQUENCES = 4
"""The most stop sequences sent (OpenAI's completion API takes four)."""


@dataclass(frozen=True)
class SampleUnit:
    """One unit of work: generate, execute and evaluate one sample."""

    execution_id: str
    task_source: str
    task: Task
    language: str
    model: ModelSpec
    resolved: model_resolve.ResolvedModel
    sample: int
    rendered: RenderedTask
    criteria: tuple[str, ...]

    @property
    def golden(self) -> str | None:
        return self.task.golden_solution.get(self.language)

    @property
    def api(self) -> Literal["instruct", "complete"]:
        """How the model is asked: a chat (``instruct``) or a text continuation (``complete``)."""
        if self.model.api == "chat":
            return "instruct"
        if self.model.api == "completion":
            return "complete"
        return self.task.mode

    def request(self) -> GenerationRequest:
        """What the model is asked for this sample."""
        return GenerationRequest(
            model=self.resolved.model, mode=self.api, messages=list(self.messages()),
            prompt=self.rendered.prompt, language=self.language,
            params=self._params(), sample=self.sample, golden=self.golden,
            task=f"{self.task_source}/{self.task.name}",
        )

    def _params(self) -> dict[str, Any]:
        """The model's parameters, with the task's stop sequences for a continuation (first;
        APIs take at most four; the continuation is cut at every one of them anyway)."""
        params = self.model.request_params()
        stops = self.task.spec(self.language).stop
        if self.api == "complete" and self.task.mode == "complete" and stops:
            mine = params.get("stop") or []
            merged = list(dict.fromkeys([*stops, *([mine] if isinstance(mine, str) else mine)]))
            params["stop"] = merged[:MAX_STOP_SEQUENCES]
        return params

    def messages(self) -> list[dict[str, str]]:
        if self.api == "complete":
            return []
        msgs = []
        if self.model.system_prompt:
            msgs.append({"role": "system", "content": self.model.system_prompt})
        text = self.rendered.prompt
        if self.task.mode == "complete":  # a completion task asked of a chat model
            text = (f"Complete the following {self.language} code. Answer with the complete code, "
                    f"including the given part, in one fenced code block.\n\n"
                    f"```{self.language}\n{text.rstrip()}\n```")
        msgs.append({"role": "user", "content": text})
        return msgs


@dataclass
class SourceCounts:
    tasks: int = 0
    filtered_out: int = 0
    total: int = 0


@dataclass
class Plan:
    units: list[SampleUnit]
    counts: dict[str, SourceCounts]
    criteria: list[str]
    skipped_criteria: dict[str, str] = field(default_factory=dict)
    warnings: list[Problem] = field(default_factory=list)
    judge: model_resolve.ResolvedModel | None = None
    """The config's ``llm-judge`` model, when a criterion that asks it runs."""


def execution_order(units: Sequence[SampleUnit]) -> list[SampleUnit]:
    """The order a run takes ``units`` in: every task's first sample, then every task's second,
    and so on (the plan's order within each). Copies of one task's samples then seldom run at
    the same time: a later one finds what the earlier left (its kept test program, a warm
    cache) instead of waiting for it or doing the same work beside it, and a run stopped
    halfway has samples of every task."""
    return sorted(units, key=lambda unit: unit.sample)


def execution_id(source: str, task: str, language: str, model: str, sample: int) -> str:
    key = f"{source}\x1f{task}\x1f{language}\x1f{model}\x1f{sample}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def select_criteria(config: ExecConfig, config_file: str, settings: Settings,
                    doc: Document | None = None) -> tuple[list[str], dict[str, str]]:
    """The config's enabled criteria that are installed, and the ones skipped with why.

    With no ``criteria:`` list: every registered criterion, but those that would record n/a on
    every sample for want of a setting (a judge model the config does not name, a server the
    settings do not name): they are skipped, with why.

    Raises:
        InputError: a criterion name nobody knows.
    """
    chosen: list[str] = []
    if not config.criteria:
        skipped: dict[str, str] = {}
        for name in registry.names("criterion"):
            plugin = registry.create("criterion", name)
            why = NO_JUDGE if plugin.needs_judge and config.llm_judge is None else plugin.unconfigured(settings)
            if why is None:
                chosen.append(name)
            else:
                skipped[name] = why
        return chosen, skipped
    problems: list[Problem] = []
    for i, toggle in enumerate(config.criteria):
        if registry.has("criterion", toggle.name):
            if toggle.enabled:
                chosen.append(toggle.name)
        else:
            try:
                registry.get("criterion", toggle.name)
            except UserError as e:
                problems.append(Problem(config_file, str(e), path=f"criteria[{i}].name",
                                        line=doc.line_of(("criteria", i, "name")) if doc else None,
                                        hint="see 'benchwright list criteria'"))
    if problems:
        raise InputError(problems)
    return chosen, {}


FILTERS: dict[str, Callable[[Task], Iterable[str]]] = {
    "languages": lambda t: t.code_languages(),
    "difficulties": lambda t: [t.difficulty] if t.difficulty else [],
    "areas": lambda t: [t.area] if t.area else [],
    "tags": lambda t: t.tags,
}
"""A config's filter fields, each with the values a task offers for it (a task is kept when it
offers one of the values a non-empty filter lists; languages are kept one by one)."""


def _keep(task: Task, config: ExecConfig) -> bool:
    for name in ("difficulties", "areas", "tags"):
        wanted: list[str] = getattr(config, name)
        if wanted and not set(wanted) & set(FILTERS[name](task)):
            return False
    return not (config.released_after and (task.release_date is None or task.release_date <= config.released_after))


def _after_cutoff(task: Task, cutoff: dt.date | None) -> bool:
    return cutoff is None or (task.release_date is not None and task.release_date > cutoff)


def build_plan(
    config: ExecConfig,
    config_file: str,
    sources: Sequence[LoadedSource],
    settings: Settings,
    models: Sequence[ModelSpec] | None = None,
    config_doc: Document | None = None,
    narrowing: Narrowing | None = None,
) -> Plan:
    """Filter tasks, render every prompt and test, and list the samples. With ``narrowing``
    (the command line's ``--limit``, ``--task``, ``--model``, ``--samples``), only the tasks,
    models and samples it selects; the tasks it leaves out count as filtered out.

    Raises:
        InputError: a template failed, a criterion or model cannot be resolved, or the
            narrowing selects no task or no model.
    """
    if narrowing is not None:
        config = narrowed_config(narrowing, config, settings)
    picker = TaskPicker(narrowing or Narrowing())
    criteria, skipped = select_criteria(config, config_file, settings, config_doc)
    if not config.llms and config.agents:  # agents only: the criteria of model samples do not apply
        criteria, skipped = [], {}
    plugins = {n: registry.create("criterion", n) for n in criteria}
    specs = list(models if models is not None else config.llms)
    if not specs and not config.agents:
        raise InputError([Problem(config_file, "no models to run", path="llms",
                                  hint="list models under 'llms:', e.g. '- reference'")])
    resolved = []
    problems: list[Problem] = []
    for i, spec in enumerate(specs):
        try:
            resolved.append(model_resolve.resolve(spec.id, settings))
        except UserError as e:
            problems.append(Problem(config_file, str(e), path=f"llms[{i}]",
                                    line=config_doc.line_of(("llms", i)) if config_doc else None))
    judge = None
    if (any(plugins[n].needs_judge for n in criteria) or config.agents) and config.llm_judge is not None:
        try:
            judge = model_resolve.resolve(config.llm_judge, settings)
        except UserError as e:
            problems.append(Problem(config_file, str(e), path="llm-judge",
                                    line=config_doc.line_of(("llm-judge",)) if config_doc else None))
    if problems:
        raise InputError(problems)
    params = config.enabled_parameters()
    units: list[SampleUnit] = []
    counts: dict[str, SourceCounts] = {}
    for loaded in sources:
        c = counts.setdefault(loaded.name, SourceCounts())
        for ti, task in enumerate(loaded.source.tasks):
            c.tasks += 1
            langs = [lang for lang in task.code_languages() if not config.languages or lang in config.languages]
            if not _keep(task, config) or not langs:
                c.filtered_out += 1
                continue
            if narrowing is not None and not (  # a task no model is asked does not count for --limit
                    any(_after_cutoff(task, spec.cutoff) for spec in specs)
                    and picker.keeps(loaded.name, task.name)):
                c.filtered_out += 1
                continue
            made = 0
            for lang in langs:
                try:
                    rendered = render_task(task, lang, params)
                except RenderFailure as e:
                    where = ("tasks", ti, *e.where)
                    line = loaded.doc.value_line(where, e.failure.line)
                    problems.append(Problem(str(loaded.path), str(e), path=format_path(where), line=line,
                                            hint="fix the template; 'benchwright validate' checks them all"))
                    continue
                names = tuple(
                    n for n in criteria
                    if (task.available_criteria is None or n in task.available_criteria)
                    and plugins[n].applies(task, lang, rendered)
                )
                for spec, res in zip(specs, resolved, strict=True):
                    if not _after_cutoff(task, spec.cutoff):
                        continue
                    for s in range(config.samples):
                        units.append(SampleUnit(
                            execution_id=execution_id(loaded.name, task.name, lang, spec.label, s),
                            task_source=loaded.name, task=task, language=lang, model=spec,
                            resolved=res, sample=s, rendered=rendered, criteria=names,
                        ))
                        made += 1
            if made == 0:
                c.filtered_out += 1
            c.total += made
    if problems:
        raise InputError(problems)
    picker.check()
    warnings = parameters_offered(config, Path(config_file), config_doc, sources)
    unjudged = [n for n in criteria if plugins[n].needs_judge and config.llm_judge is None]
    if unjudged:
        warnings.append(Problem(config_file, f"{', '.join(unjudged)} will record n/a: {NO_JUDGE}",
                                path="criteria", severity="warning",
                                line=config_doc.line_of(("criteria",)) if config_doc else None))
    for name in criteria:  # a criterion the settings do not configure (sonarqube: no server)
        why = plugins[name].unconfigured(settings)
        if why is not None:
            warnings.append(Problem(config_file, f"{name} will record n/a: {why}", path="criteria",
                                    severity="warning",
                                    line=config_doc.line_of(("criteria",)) if config_doc else None))
    return Plan(units=units, counts=counts, criteria=criteria, skipped_criteria=skipped,
                warnings=warnings, judge=judge)


def parameters_offered(config: ExecConfig, config_path: Path, doc_lines: Document | None,
                       sources: Sequence[LoadedSource]) -> list[Problem]:
    offered: set[str] = set()
    open_tasks = False
    for s in sources:
        for t in s.source.tasks:
            if t.available_parameters is None:
                open_tasks = True
            else:
                offered |= set(t.available_parameters)
    problems = []
    if sources and not open_tasks:
        for i, p in enumerate(config.parameters):
            if p.enabled and p.name not in offered:
                problems.append(Problem(str(config_path), f"parameter {p.name!r} is offered by no task",
                                        path=f"parameters[{i}]",
                                        line=doc_lines.line_of(("parameters", i)) if doc_lines else None,
                                        hint="check the name", severity="warning"))
    return problems


def source_names_unique(sources: Sequence[LoadedSource]) -> list[Problem]:
    seen: dict[str, Path] = {}
    problems = []
    for s in sources:
        if s.name in seen and seen[s.name] != s.path:
            problems.append(Problem(str(s.path), f"task source name {s.name!r} is also used by {seen[s.name]}",
                                    path="name", line=s.doc.line_of(("name",)),
                                    hint="give each task source its own 'name:'"))
        seen.setdefault(s.name, s.path)
    return problems
