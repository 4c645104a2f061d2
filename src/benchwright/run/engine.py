"""Starting, running and resuming runs."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import platform
import secrets
import socket
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchwright import __version__
from benchwright.agents.batch import agent_gates
from benchwright.agents.plan import (
    AgentUnit,
    LoadedScenario,
    agent_units,
    frozen_scorers,
    load_scenarios,
    thaw,
)
from benchwright.agents.preflight import agent_problems, installed_version
from benchwright.agents.records import write_agent_files
from benchwright.config.load import config_from_data, load_config
from benchwright.config.model import ExecConfig
from benchwright.config.settings import Settings
from benchwright.criteria.base import wall_capped
from benchwright.criteria.energy import run_meter
from benchwright.errors import InfraError, InputError, PluginNotFound, Problem, UserError
from benchwright.model import resolve as model_resolve
from benchwright.model.base import GenerationRequest, Provider
from benchwright.model.cache import CACHE_FILE, GenerationCache
from benchwright.model.engine import GenerationEngine
from benchwright.model.judge import Judge
from benchwright.registry import registry
from benchwright.results.folder import UNREADABLE_SUFFIX, Narrowing, RunFolder
from benchwright.results.jsonl import SkippedLines
from benchwright.results.record import Generation, Record
from benchwright.results.summary import summarize_folder
from benchwright.run import timelimits
from benchwright.run.executor import Executor, ExecutorOptions
from benchwright.run.narrowing import narrowed_config, unlisted_models
from benchwright.run.plan import Plan, SampleUnit, build_plan, execution_order, source_names_unique
from benchwright.run.progress import ACTIVE, STATUS_VERSION, process_alive, process_token
from benchwright.run.selection import selection_problems
from benchwright.run.timelimits import MeasureProgress, TimeLimits
from benchwright.run.worker import Worker, WorkerSpec
from benchwright.sandbox.base import Sandbox
from benchwright.task.load import LoadedSource, load_task_source
from benchwright.workspace import Workspace
from benchwright.workspace.confine import PathRefused
from benchwright.workspace.workspace import SETTINGS_FILE
from benchwright.yamldoc import Document

Progress = Callable[[int, int, SampleUnit | None], None]

STATUS_EVERY_S = 0.5
"""The most often ``status.yaml`` is rewritten while samples finish."""


@dataclass
class Prepared:
    """Everything checked and rendered; nothing written yet."""

    workspace: Workspace
    config_path: Path
    config: ExecConfig
    sources: list[LoadedSource]
    plan: Plan
    providers: dict[str, Provider]
    sandbox: Sandbox
    scenarios: list[LoadedScenario] = field(default_factory=list)
    agent_units: list[AgentUnit] = field(default_factory=list)
    narrowing: Narrowing = field(default_factory=Narrowing)
    """What the command line narrowed (``config`` is the config as written)."""


@dataclass
class RunResult:
    folder: RunFolder
    summary: dict[str, Any]
    new_samples: int
    counts: dict[str, int] = field(default_factory=dict)


def task_source_paths(ws: Workspace, config: ExecConfig, config_path: Path, cli: Sequence[str],
                      doc: Document | None = None) -> list[Path]:
    names = list(cli) or list(config.task_sources)
    if not names and config.scenarios:  # a run of coding agents only
        return []
    if not names:
        raise InputError([Problem(str(config_path), "no task sources to run", path="task_sources",
                                  hint="add 'task_sources: [tasks/x.yaml]' or pass --tasks FILE")])
    paths, problems = [], []
    for i, name in enumerate(names):
        line = doc.line_of(("task_sources", i)) if doc and not cli else None
        if cli:  # the user's own command line: not confined
            p = ws.resolve(name, relative_to=config_path.parent)
        else:
            try:
                p = ws.locate(name, file=config_path, field=f"task_sources[{i}]", line=line)
            except PathRefused as e:
                problems += e.problems
                continue
        if not p.is_file():
            where = "task_sources" if not cli else "--tasks"
            problems.append(Problem(str(config_path) if not cli else "command line",
                                    f"task source {name!r} not found (looked in {ws.root})",
                                    path=f"{where}[{i}]", hint="check the path", line=line))
        paths.append(p)
    if problems:
        raise InputError(problems)
    return paths


def load_sources(paths: Sequence[Path]) -> list[LoadedSource]:
    problems: list[Problem] = []
    sources = []
    for p in paths:
        try:
            sources.append(load_task_source(p))
        except InputError as e:
            problems += e.problems
    problems += source_names_unique(sources)
    if problems:
        raise InputError(problems)
    return sources


def make_sandbox(ws: Workspace, preferred: str | None = None) -> Sandbox:
    """``preferred`` (a resumed run's own backend), else the settings' ``sandbox:``, else the
    best backend that works here."""
    from benchwright.sandbox.select import best_sandbox

    return best_sandbox(preferred or ws.settings.sandbox)


def _judge_requests(judge: model_resolve.ResolvedModel, agents: Sequence[AgentUnit]) -> list[GenerationRequest]:
    """What the judge is asked about each agent run (each repeat), as a recorded judge finds it."""
    from benchwright.agents.judging import JUDGED_LANGUAGE, judged_task

    return [GenerationRequest(model=judge.model, mode="instruct", messages=[], prompt="", language=JUDGED_LANGUAGE,
                              task=judged_task(u.scenario.name, u.task.name, u.agent.name), sample=s)
            for u in agents for s in range(u.scenario.scenario.judge_repeats)]


def _unanswerable(who: str, provider: Provider, requests: Sequence[GenerationRequest]) -> list[str]:
    """A problem when the provider can already tell it will not answer some of ``requests`` (a
    replay file lacking samples, tasks or models the config asks for)."""
    missing = provider.unanswerable(requests)
    if not missing:
        return []
    first = missing[0]
    return [f"{who}: {len(missing)} of the {len(requests)} requests the run makes of it have no "
            f"answer it can give, e.g. task {first.task} [{first.language}] sample {first.sample} by model "
            f"{first.model!r}: record them, or narrow the run to what is there"]


def make_providers(ws: Workspace, plan: Plan, agents: Sequence[AgentUnit] = ()) -> dict[str, Provider]:
    """One provider instance per provider the plan uses; preflight problems stop the run.

    Raises:
        UserError: a provider is not installed or not ready.
    """
    out: dict[str, Provider] = {}
    problems = []
    wanted = [(u.model.id, u.resolved) for u in plan.units]
    if plan.judge is not None and (plan.units or agents):
        wanted.append((f"{plan.judge.id} (the llm-judge)", plan.judge))
    for unit in agents:  # the built-in agent's models
        if unit.agent.model is not None:
            wanted.append((unit.agent.model, model_resolve.resolve(unit.agent.model, ws.settings)))
    for model_id, resolved in wanted:
        name = resolved.provider
        if name in out:
            continue
        try:
            provider = model_resolve.create(resolved, ws.settings)
        except PluginNotFound:
            raise UserError(
                f"model {model_id!r} goes to provider {name!r} of type {resolved.provider_type!r}, "
                "which this installation of benchwright does not have "
                f"(installed provider types: {', '.join(registry.names('provider'))})") from None
        provider.workspace = ws.root
        out[name] = provider
    for name, provider in out.items():
        models = sorted({r.model for _, r in wanted if r.provider == name})
        found = asyncio.run(provider.preflight(models))
        problems += [f"provider {name!r}: {p}" for p in found]
        if not found:
            problems += _unanswerable(f"provider {name!r}", provider, [u.request() for u in plan.units
                                                       if u.resolved.provider == name])
        if not found and plan.judge is not None and plan.judge.provider == name and agents:
            problems += _unanswerable(f"provider {name!r} (the llm-judge of the agent runs)", provider,
                                      _judge_requests(plan.judge, agents))
    if problems:
        raise UserError("\n".join(problems))
    return out


def prepare(ws: Workspace, config_path: Path, tasks: Sequence[str] = (),
            config: ExecConfig | None = None, narrowing: Narrowing | None = None) -> Prepared:
    """Load and check everything a run needs. Raises :class:`UserError`; writes nothing."""
    doc = None
    if config is None:
        doc, config = load_config(config_path)
    narrowing = narrowing or Narrowing()
    paths = task_source_paths(ws, config, config_path, tasks, doc)
    sources = load_sources(paths)
    scenarios = load_scenarios(ws, config, config_path, doc)
    # what the config selects (with the command line's models and samples) must be something,
    # whatever --task and --limit then keep of it
    asked = narrowed_config(narrowing, config, ws.settings)
    plan = build_plan(asked, str(config_path), sources, ws.settings, config_doc=doc)
    if chosen := selection_problems(asked, str(config_path), doc, sources, plan):
        raise InputError(chosen)
    if narrowing.active:
        plan = narrowed_plan(ws, config, config_path, sources, narrowing, doc)
    units = agent_units(ws, config, config_path, scenarios, doc)
    providers = checked_providers(ws, plan, units, config, narrowing)
    sandbox = make_sandbox(ws)
    if units and (missing := agent_problems(units, sandbox)):
        raise UserError("\n".join(missing))
    return Prepared(ws, config_path, config, sources, plan, providers, sandbox, scenarios, units,
                    narrowing)


def narrowed_plan(ws: Workspace, config: ExecConfig, config_path: Path, sources: Sequence[LoadedSource],
                  narrowing: Narrowing, doc: Document | None = None) -> Plan:
    """The plan, narrowed as the command line says.

    Raises:
        UserError: the plan cannot be built, or the narrowing leaves no sample of a model.
    """
    plan = build_plan(config, str(config_path), sources, ws.settings, config_doc=doc,
                      narrowing=narrowing if narrowing.active else None)
    if narrowing.active and not plan.units:
        raise UserError(f"{' '.join(narrowing.flags())}: the narrowed run has no sample to run "
                        f"(the config's filters and task sources leave none; see 'benchwright validate "
                        f"{config_path}')")
    return plan


def checked_providers(ws: Workspace, plan: Plan, agents: Sequence[AgentUnit], config: ExecConfig,
                      narrowing: Narrowing) -> dict[str, Provider]:
    """:func:`make_providers`; a provider that is not ready for a ``--model`` the config does
    not list says so (a mistyped id is the likely cause)."""
    try:
        return make_providers(ws, plan, agents)
    except UserError as e:
        unlisted = unlisted_models(narrowing, config)
        if not unlisted or isinstance(e, InputError):
            raise
        listed = ", ".join(m.label for m in config.llms) or "none"
        raise UserError(f"{e}\n(--model {', '.join(unlisted)}: not in the config's llms ({listed}); "
                        "check the id)") from None


def new_run_id(config_path: Path) -> str:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{config_path.stem}-{stamp}-{secrets.token_hex(2)}"


@dataclass(frozen=True)
class ExecutorChoice:
    """Where a run's samples run: an executor's name (None: the settings' ``executor:``) and,
    for ray, the cluster's address (None: the settings' ``ray.address``)."""

    name: str | None = None
    address: str | None = None

    def resolved(self, settings: Settings) -> tuple[str, str | None]:
        """The executor's name and the cluster's address, the settings filling the gaps."""
        return self.name or settings.executor, self.address or settings.ray.address


def make_executor(prep: Prepared, choice: ExecutorChoice | None = None) -> Executor:
    """The executor plug-in chosen on the command line or in the settings.

    Raises:
        UserError: no executor of that name is installed (or its extra is missing).
    """
    choice = choice or ExecutorChoice()
    settings = prep.workspace.settings
    name, address = choice.resolved(settings)
    options = ExecutorOptions(
        workers=prep.config.limits.concurrency,
        max_in_flight=sum(p.settings.concurrency for p in prep.providers.values()) + 64,
        cluster_in_flight=settings.ray.in_flight, address=address,
        max_retries=settings.ray.max_retries)
    try:
        executor = registry.create("executor", name, options=options)
    except PluginNotFound as e:
        where = "--executor" if choice.name else f"executor: in {prep.workspace.root / SETTINGS_FILE}"
        raise UserError(f"{where}: {e}") from None
    executor.connect()
    return executor


def executor_info(prep: Prepared, choice: ExecutorChoice | None) -> dict[str, str]:
    """For ``run.yaml``: where the run started (a resume may use another executor)."""
    name, address = (choice or ExecutorChoice()).resolved(prep.workspace.settings)
    return {"name": name, **({"address": address} if name == "ray" and address else {})}


def _toolchains(plan: Plan) -> dict[str, dict[str, str]]:
    out = {}
    for lang in sorted({u.language for u in plan.units}):
        if registry.has("language", lang):
            try:
                out[lang] = registry.create("language", lang).toolchain()
            except Exception as e:
                out[lang] = {"error": str(e)}
    return out


def manifest(prep: Prepared, run_id: str, tasks: Sequence[str]) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "benchwright": __version__,
        "python": sys.version.split()[0],
        "host": {"name": socket.gethostname(), "platform": platform.platform(), "machine": platform.machine()},
        "workspace": str(prep.workspace.root),
        "config_file": str(prep.config_path),
        "config": prep.config.model_dump(mode="json", by_alias=True, exclude_none=True),
        "task_sources": [{"name": s.name, "path": str(s.path), "sha256": s.sha256} for s in prep.sources],
        "cli_tasks": list(tasks),
        **({"narrowed": prep.narrowing.model_dump(mode="json")} if prep.narrowing.active else {}),
        "models": [{"id": m.id, "label": m.label, "provider": r.provider, "type": r.provider_type}
                   for m, r in _models(prep.plan)],
        "criteria": prep.plan.criteria,
        "skipped_criteria": prep.plan.skipped_criteria,
        "sandbox": {"backend": prep.sandbox.name, "isolation": prep.sandbox.isolation},
        "toolchains": _toolchains(prep.plan),
        "samples": len(prep.plan.units) + len(prep.agent_units),
        "agents": [{**a.model_dump(mode="json", exclude_none=True), **installed_version(a)}
                   for a in prep.config.agents],
        "scenarios": frozen_scorers(prep.scenarios),
    }


def _agent_models(prep: Prepared) -> list[model_resolve.ResolvedModel]:
    """The models the built-in agents ask."""
    return [model_resolve.resolve(u.agent.model, prep.workspace.settings)
            for u in prep.agent_units if u.agent.model is not None]


def _models_of(plan: Plan) -> list[SampleUnit]:
    """One unit per model label (the first of each)."""
    seen: dict[str, SampleUnit] = {}
    for u in plan.units:
        seen.setdefault(u.model.label, u)
    return list(seen.values())


def _models(plan: Plan) -> list[tuple[Any, Any]]:
    return [(u.model, u.resolved) for u in _models_of(plan)]


class _Tracker:
    """Keeps ``status.yaml`` current: the state, the process, and per task source and per model
    the total, completed (every finished sample, errors included), error (of those, the samples
    that ended in an error) and, per task source, filteredOut; see :mod:`benchwright.run.progress`."""

    def __init__(self, folder: RunFolder, prep: Prepared, done: dict[str, str]) -> None:
        self.folder = folder
        self.config_file = str(prep.config_path)
        units: list[SampleUnit | AgentUnit] = [*prep.plan.units, *prep.agent_units]
        self.by_id = {u.execution_id: (u.task_source, _label(u)) for u in units}
        self.sources: dict[str, dict[str, int]] = {}
        for name, c in prep.plan.counts.items():
            self.sources[name] = {"total": c.total, "completed": 0, "filteredOut": c.filtered_out, "error": 0}
        self.models: dict[str, dict[str, int]] = {}
        for unit in units:
            if isinstance(unit, AgentUnit):
                self.sources.setdefault(unit.task_source, {"total": 0, "completed": 0, "filteredOut": 0,
                                                           "error": 0})["total"] += 1
            self.models.setdefault(_label(unit), {"total": 0, "completed": 0, "error": 0})["total"] += 1
        for eid, outcome in done.items():
            if eid in self.by_id:
                self._count(*self.by_id[eid], outcome)
        self.session = {"started": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                        "completed": self.finished(),
                        "models": {k: v["completed"] for k, v in self.models.items()}}
        self.state = "running"
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._last = 0.0

    def _count(self, source: str, model: str, outcome: str) -> None:
        for entry in (self.sources[source], self.models[model]):
            entry["completed"] += 1
            if outcome in ("error", "infra_error"):
                entry["error"] += 1

    def done(self, unit: SampleUnit | AgentUnit, outcome: str) -> None:
        """Count a finished sample; the status file says so within :data:`STATUS_EVERY_S`
        (a burst of samples is one write, and the last of a burst is never left unwritten)."""
        with self._lock:
            self._count(unit.task_source, _label(unit), outcome)
            if self._timer is not None:
                return  # a write is on its way: it will count this one too
            wait = self._last + STATUS_EVERY_S - time.monotonic()
            if wait <= 0:
                self._write()
                return
            self._timer = threading.Timer(wait, self._flush)
            self._timer.daemon = True
            self._timer.start()

    def _flush(self) -> None:
        with self._lock:
            self._timer = None
            self._write()

    def finished(self) -> int:
        return sum(s["completed"] for s in self.sources.values())

    def write(self) -> None:
        """Write the status now (a change of state: never throttled)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            self._write()

    def _write(self) -> None:
        self._last = time.monotonic()
        self.folder.write_status({
            "statusVersion": STATUS_VERSION,
            "state": self.state,
            "runId": self.folder.run_id,
            "pid": os.getpid(),
            "pidStarted": process_token(),
            "host": socket.gethostname(),
            "execConfigFile": self.config_file,
            "updated": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "session": self.session,
            "taskSourceStatuses": self.sources,
            "modelStatuses": self.models,
        }, force=True)


def _label(unit: SampleUnit | AgentUnit) -> str:
    """The model (or agent) a sample is counted under in ``status.yaml``: its label in results."""
    return unit.agent.name if isinstance(unit, AgentUnit) else unit.model.label


def time_limits(prep: Prepared, folder: RunFolder, measuring: MeasureProgress | None = None,
                warn: Callable[[str], None] | None = None) -> TimeLimits | None:
    """With ``limits.golden_factor`` set: the run's per-test time limits, from its
    ``limits.yaml`` when it has one (a resumed run), else measured now and written there.
    Each (task, language) that keeps the ceiling is passed to ``warn``."""
    if prep.config.limits.golden_factor is None:
        return None
    stored = folder.limits()
    if stored is not None:
        return TimeLimits.from_data(stored)
    sandbox = wall_capped(prep.sandbox, prep.config.limits.sample_timeout_s)
    limits = timelimits.measure(prep.plan.units, sandbox, prep.config.limits,
                                workers=prep.config.limits.concurrency, progress=measuring)
    folder.write_limits(limits.to_data())
    if warn is not None:
        for t in limits.kept_ceiling():
            warn(f"time limits: {t.label} keeps the ceiling of {t.ceiling_s:g} s per test: {t.kept_ceiling}")
    return limits


def execute(prep: Prepared, folder: RunFolder, progress: Progress | None = None,
            executor: Executor | None = None, retry_errors: bool = False, *,
            measuring: MeasureProgress | None = None, warn: Callable[[str], None] | None = None) -> RunResult:
    """Run every unit of the plan not yet in ``folder``; write the summary. Resumable.

    With ``limits.golden_factor``, the golden solutions are measured first (``measuring`` sees
    the progress, ``warn`` each task that keeps the ceiling); see :mod:`benchwright.run.timelimits`.
    """
    limits = time_limits(prep, folder, measuring, warn)
    if limits is not None:
        prep.plan.units = limits.apply(prep.plan.units)
    drop: set[str] = set()
    if retry_errors:  # not a sample needing what the sandbox lacks: it would fail the same way
        records = list(folder.records())
        lacking = {r.execution_id for r in records if r.details and r.details.get("unsupported")}
        drop = {r.execution_id for r in records if r.outcome == "infra_error"} - lacking
    skipped = SkippedLines()
    done = folder.repair(drop=drop, skipped=skipped)
    if skipped and warn is not None:
        kept = ", ".join(sorted({f"{folder.path / b.file}{UNREADABLE_SUFFIX}" for b in skipped.lines}))
        warn(f"{skipped.message(folder.path)}. They are moved to {kept}; the samples whose records "
             "they held run again")
    todo = execution_order([u for u in prep.plan.units if u.execution_id not in done])
    known = folder.generations(only={u.execution_id for u in todo})
    agents_todo = [u for u in prep.agent_units if u.execution_id not in done]
    tracker = _Tracker(folder, prep, done)
    tracker.write()
    total = len(prep.plan.units) + len(prep.agent_units)
    if progress:
        progress(tracker.finished(), total, None)
    cache = None
    if prep.config.cache is not False and any(p.cacheable for p in prep.providers.values()):
        cache = GenerationCache(prep.workspace.state / CACHE_FILE)
    generation = GenerationEngine(prep.providers, prep.workspace.settings, cache, prep.config.cache)
    # one wrapper for the whole run: runners that keep servers per sandbox keep them
    sandbox = wall_capped(prep.sandbox, prep.config.limits.sample_timeout_s)
    judge = Judge(generation, prep.plan.judge) if prep.plan.judge is not None else None
    worker = Worker(folder.run_id, generation, sandbox, prep.config.limits, judge=judge)
    worker.spec = WorkerSpec(
        run_id=folder.run_id, settings=prep.workspace.settings,
        providers={r.provider: r for r in [*(u.resolved for u in _models_of(prep.plan)),
                                            *([prep.plan.judge] if prep.plan.judge else []),
                                            *_agent_models(prep)]},
        workspace=prep.workspace.root, sandbox=prep.sandbox.name,
        sample_cap_s=prep.config.limits.sample_timeout_s, limits=prep.config.limits,
        judge=prep.plan.judge if judge else None, cache_policy=prep.config.cache,
        cache_path=cache.path if cache is not None else None)

    def on_generation(gen: Generation) -> None:
        folder.append_generation(gen)

    def on_result(unit: SampleUnit, gen: Generation, records: list[Record]) -> None:
        folder.append_records(records)
        tracker.done(unit, records[0].outcome or "pass")
        if progress:
            progress(tracker.finished(), total, unit)

    runner = executor or make_executor(prep)

    def on_agent(unit: AgentUnit, records: list[Record], files: dict[str, str]) -> None:
        write_agent_files(folder.path, files)  # first: a record never names a missing file
        folder.append_records(records)
        tracker.done(unit, records[0].outcome or "pass")
        if progress:
            progress(tracker.finished(), total, None)

    async def main() -> None:
        if judge is not None:
            judge.bind(asyncio.get_running_loop())
        try:
            if todo:
                await runner.run(todo, worker, known, on_generation, on_result)
            if agents_todo:
                await runner.run_agents(agents_todo, worker, prep.sandbox, on_agent)
        except asyncio.CancelledError:
            # Ctrl-C or a cancel: say so now; asyncio.run still waits for the samples and agents
            # running in threads before it returns, and a killed process would say nothing
            tracker.state = "interrupted"
            tracker.write()
            raise
        finally:
            await generation.aclose()

    meter = run_meter(prep.plan.criteria, prep.workspace.settings)  # measures with `energy` on
    try:
        with meter:
            asyncio.run(main())
    except BaseException:
        tracker.state = "interrupted"
        tracker.write()
        raise
    finally:
        runner.close()
        if cache is not None:
            cache.close()
    summary = summarize_folder(folder, prep.config.thresholds)
    if prep.agent_units:
        summary["agents"] = agent_gates(folder.records())
    summary["skipped_criteria"] = prep.plan.skipped_criteria
    summary["isolation"] = prep.sandbox.isolation
    summary["executor"] = runner.report()
    if limits is not None:
        summary["time_limits"] = limits.summary()
    energy = meter.summary(folder.records())
    if energy is not None:
        summary["energy"] = energy
    folder.write_summary(summary)
    tracker.state = "completed"
    tracker.write()
    return RunResult(folder, summary, len(todo))


def start(ws: Workspace, config_path: Path, tasks: Sequence[str] = (), progress: Progress | None = None,
          run_id: str | None = None, prepared: Callable[[Prepared], None] | None = None, *,
          measuring: MeasureProgress | None = None, warn: Callable[[str], None] | None = None,
          executor: ExecutorChoice | None = None, narrowing: Narrowing | None = None) -> RunResult:
    """Check everything, then create the run folder and run. ``prepared`` sees the checked plan
    before anything is written (the CLI prints its warnings there). ``narrowing`` (the command
    line's ``--limit``, ``--task``, ``--model``, ``--samples``) is recorded in ``run.yaml``."""
    prep = prepare(ws, config_path, tasks, narrowing=narrowing)
    if prepared is not None:
        prepared(prep)
    rid = run_id or new_run_id(config_path)
    runner = make_executor(prep, executor)  # a missing extra stops the run before its folder
    info = manifest(prep, rid, tasks)
    info["executor"] = executor_info(prep, executor)
    folder = RunFolder.create(ws.results / rid, info)
    return execute(prep, folder, progress, runner, measuring=measuring, warn=warn)


def _not_running(folder: RunFolder) -> None:
    """Refuse to resume a run whose process is still at work (two would write one folder).

    Raises:
        UserError: its status says it runs and its process is there.
    """
    try:
        st = folder.status()
    except InfraError:
        return  # an unreadable status: the resume writes it again
    if st.get("state") in (*ACTIVE, "interrupted") and process_alive(st) and st.get("pid") != os.getpid():
        raise UserError(f"run {folder.run_id} is already running (process {st.get('pid')} on this "
                        "machine): wait for it to end, or cancel it first")


def resume(ws: Workspace, run_id: str, progress: Progress | None = None, retry_errors: bool = False, *,
           measuring: MeasureProgress | None = None, warn: Callable[[str], None] | None = None,
           executor: ExecutorChoice | None = None) -> RunResult:
    """Finish a run that stopped: no record lost, doubled or torn; no generation made twice.

    Raises:
        UserError: the run does not exist, or a task source changed since it started.
    """
    folder = RunFolder(ws.run_dir(run_id))
    info = folder.checked_manifest()
    _not_running(folder)
    config_path = Path(info.config_file)
    try:
        config = config_from_data(info.config, str(folder.path / "run.yaml"))
    except InputError as e:
        raise InfraError(f"{e.problems[0].render()}: the run folder is damaged; the run cannot be "
                         "resumed") from None
    paths = [Path(s.path) for s in info.task_sources]
    sources = load_sources(paths)
    for s, recorded in zip(sources, info.task_sources, strict=True):
        if s.sha256 != recorded.sha256:
            raise UserError(f"task source {s.path} changed since run {folder.run_id} started; "
                            "resuming would mix two versions (start a new run instead)")
    narrowing = info.narrowed or Narrowing()  # the same narrowed selection as the run started with
    plan = narrowed_plan(ws, config, config_path, sources, narrowing)
    try:
        scenarios = thaw(load_scenarios(ws, config, config_path), info.scenarios)
    except (KeyError, ValidationError) as e:
        raise InfraError(f"{folder.path / 'run.yaml'}: scenarios: the scorers frozen when the run "
                         f"started cannot be read ({type(e).__name__}): the run folder is damaged; "
                         "the run cannot be resumed") from None
    units = agent_units(ws, config, config_path, scenarios)
    sandbox_info = (info.model_extra or {}).get("sandbox")
    backend = sandbox_info.get("backend") if isinstance(sandbox_info, dict) else None  # keeps its isolation
    prep = Prepared(ws, config_path, config, sources, plan, checked_providers(ws, plan, units, config, narrowing),
                    make_sandbox(ws, backend if isinstance(backend, str) else None), scenarios, units,
                    narrowing)
    return execute(prep, folder, progress, make_executor(prep, executor), retry_errors=retry_errors,
                   measuring=measuring, warn=warn)
