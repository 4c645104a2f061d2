"""``benchwright validate``: every problem of task sources and execution configs at once."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from benchwright import yamldoc
from benchwright.agents.plan import (
    agent_files,
    agent_mounts,
    check_scenario,
    load_scenarios,
    preset_problems,
)
from benchwright.config.load import parse_config
from benchwright.config.model import ExecConfig, ModelSpec, Toggle
from benchwright.errors import InputError, Problem, UserError
from benchwright.model import resolve as model_resolve
from benchwright.model.engine import GenerationEngine
from benchwright.registry import registry
from benchwright.results.record import Generation, Record
from benchwright.run.executor import LocalExecutor
from benchwright.run.plan import SampleUnit, build_plan, parameters_offered
from benchwright.run.selection import selection_problems
from benchwright.run.worker import Worker
from benchwright.sandbox.select import best_sandbox
from benchwright.task.load import LoadedSource, parse_task_source
from benchwright.task.model import Task
from benchwright.task.render import RenderFailure, render_judge_prompt, render_task
from benchwright.workspace import Workspace
from benchwright.workspace.confine import PathRefused

Kind = Literal["task-source", "exec-config", "scenario"]
STANDARD_PARAMETERS = ("all-tests-public", "all-tests-hidden", "should-write-comments", "use-llm-judge")
MAX_COMBINATIONS = 64


@dataclass
class Report:
    problems: list[Problem] = field(default_factory=list)
    sources: list[LoadedSource] = field(default_factory=list)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]


def detect_kind(path: Path, data: object) -> Kind | None:
    parts = {p.lower() for p in path.parts}
    if isinstance(data, dict):
        if {"scorers", "workspace"} & set(data) or ("tasks" in data and "scenarios" in parts):
            return "scenario"
        if "tasks" in data:
            return "task-source"
        if {"llms", "criteria", "parameters", "difficulties", "task_sources", "languages", "agents",
                "scenarios"} & set(data):
            return "exec-config"
    if "tasks" in parts:
        return "task-source"
    if "configs" in parts:
        return "exec-config"
    return None


def parameter_combinations(names: Sequence[str]) -> list[dict[str, bool]]:
    names = list(dict.fromkeys(names))
    if 2 ** len(names) <= MAX_COMBINATIONS:
        return [dict(zip(names, values, strict=True))
                for values in itertools.product((False, True), repeat=len(names))]
    combos = [dict.fromkeys(names, False), dict.fromkeys(names, True)]
    for n in names:
        combos.append({**dict.fromkeys(names, False), n: True})
        combos.append({**dict.fromkeys(names, True), n: False})
    return combos


def check_task(doc: yamldoc.Document, index: int, task: Task) -> list[Problem]:
    problems: list[Problem] = []
    base = ("tasks", index)
    langs = task.code_languages()
    if not langs:
        problems.append(doc.problem((*base, "languages"), "the task names no language",
                                    hint="add 'languages: [python]' or a languages_specific entry"))
    for ci, name in enumerate(task.available_criteria or []):
        if not registry.has("criterion", name):
            problems.append(doc.problem((*base, "available_criteria", ci), f"unknown criterion {name!r}",
                                        hint="it will be ignored; see 'benchwright list criteria'",
                                        severity="warning"))
    for lang in langs:
        spec = task.spec(lang)
        where = (*base, "task", "languages_specific", lang)
        if not registry.has("language", lang):
            problems.append(doc.problem((*base, "languages"), f"benchwright cannot execute {lang!r} code",
                                        hint=f"installed languages: {', '.join(registry.names('language'))}",
                                        severity="warning"))
        if not spec.public_tests and not spec.hidden_tests:
            problems.append(doc.problem(where, f"no tests for {lang}: unit-test will not apply",
                                        hint="add public_tests or hidden_tests", severity="warning"))
        if lang not in task.golden_solution:
            problems.append(doc.problem((*base, "golden_solution"), f"no golden solution for {lang}",
                                        hint="the reference model and 'validate --golden' need one",
                                        severity="warning"))
        if not task.task.common_prompt and spec.description == "${common_prompt}":
            problems.append(doc.problem((*base, "task"), f"no prompt for {lang}",
                                        hint="write task.common_prompt or a description"))
        params = task.available_parameters if task.available_parameters is not None else STANDARD_PARAMETERS
        seen: set[tuple[tuple[str | int, ...], str]] = set()
        for combo in parameter_combinations(params):
            try:
                rendered = render_task(task, lang, combo)
                render_judge_prompt(task, lang, combo, rendered.prompt, "<solution>")
            except RenderFailure as e:
                key = (e.where, str(e))
                if key in seen:
                    continue
                seen.add(key)
                path = (*base, *e.where)
                line = doc.value_line(path, e.failure.line)
                hint = "fix the template"
                if "function_name" in str(e):
                    hint = "set entry_point or give a golden solution to infer it from"
                on = ", ".join(k for k, v in combo.items() if v) or "none"
                problems.append(Problem(doc.file, f"{e} (language {lang}, parameters on: {on})",
                                        path=yamldoc.format_path(path), line=line, hint=hint))
        if registry.has("language", lang):
            problems += _idle_tests(doc, index, task, lang)
    return problems


def _stdio_languages() -> list[str]:
    """The languages whose runner runs stdin/stdout test cases."""
    return [n for n in registry.names("language") if registry.create("language", n).stdio_tests]


def _idle_tests(doc: yamldoc.Document, index: int, task: Task, lang: str) -> list[Problem]:
    """Warnings about test cases that cannot fail, found without running them: a test case
    that never names the entry point, and test-harness scaffolding the language's runner does not
    execute (a Rust ``#[cfg(test)] mod tests`` pasted in as a test case compiles to nothing)."""
    try:
        rendered = render_task(task, lang, {})
    except RenderFailure:
        return []  # reported above
    language = registry.create("language", lang)
    spec = task.spec(lang)
    cases = [("public", i, c) for i, c in enumerate(spec.public_tests)]
    cases += [("hidden", i, c) for i, c in enumerate(spec.hidden_tests)]
    ep = rendered.entry_point
    prelude = rendered.prelude or ""
    problems: list[Problem] = []
    for (kind, i, _), test in zip(cases, rendered.tests, strict=True):
        path: tuple[str | int, ...] = ("tasks", index, "task", "languages_specific", lang, f"{kind}_tests", i)
        if test.is_stdio:  # runs the solution as a program: there is no code to look at
            if not language.stdio_tests:
                problems.append(Problem(
                    doc.file, f"test case {test.name!r} is a stdin/stdout case, and benchwright "
                    f"cannot run those in {lang} (only in {', '.join(_stdio_languages())})",
                    path=yamldoc.format_path(path), line=doc.line_of(path),
                    hint=f"offer the task in python, or write {lang} test cases as code"))
            continue
        if doc.line_of((*path, "code")) is not None:
            path = (*path, "code")
        found = language.inert(test.code)
        if found:
            line, what = found[0]
            more = f" (and {len(found) - 1} more such line(s))" if len(found) > 1 else ""
            problems.append(Problem(
                doc.file, f"test case {test.name!r} ({lang}) holds test-harness code that is never "
                f"executed: {what}{more}; the test cannot fail", path=yamldoc.format_path(path),
                line=doc.value_line(path, line), severity="warning",
                hint="write the test case as the statements to run (the asserts themselves)"))
        if ep and not re.search(rf"\b{re.escape(ep)}\b", test.code) and not re.search(
                rf"\b{re.escape(ep)}\b", prelude):
            problems.append(Problem(
                doc.file, f"test case {test.name!r} ({lang}) never calls the entry point {ep!r}: it "
                "cannot fail whatever the solution does", path=yamldoc.format_path(path),
                line=doc.value_line(path, 1), severity="warning",
                hint="call the entry point in the test, or set entry_point if it was inferred wrongly"))
    return problems


def check_task_source(path: Path) -> tuple[list[Problem], LoadedSource | None]:
    doc, source, problems = parse_task_source(path)
    if doc is None or source is None:
        return problems, None
    for i, task in enumerate(source.tasks):
        problems += check_task(doc, i, task)
    if not source.tasks:
        problems.append(doc.problem(("tasks",), "the task source has no tasks", severity="warning"))
    return problems, LoadedSource.of(path, doc, source)


def check_config(path: Path, ws: Workspace) -> tuple[
        list[Problem], list[Path], ExecConfig | None, yamldoc.Document | None]:
    """Problems of a config, the task sources it names, the config and its document."""
    doc, config, problems = parse_config(path)
    if doc is not None and config is None:
        config = _without_bad_keys(doc, problems)  # the other fields' problems too, in one pass
    if doc is None or config is None:
        return problems, [], None, doc
    for i, toggle in enumerate(config.criteria):
        problems += _check_criterion(doc, i, toggle)
        if (toggle.enabled and config.llm_judge is None and registry.has("criterion", toggle.name)
                and registry.create("criterion", toggle.name).needs_judge):
            problems.append(doc.problem(("criteria", i, "name"),
                                        f"{toggle.name} asks a judge model, and the config names none; "
                                        "its records will be n/a", severity="warning",
                                        hint="add `llm-judge: provider/model` to the config"))
        why = (registry.create("criterion", toggle.name).unconfigured(ws.settings)
               if toggle.enabled and registry.has("criterion", toggle.name) else None)
        if why is not None:  # sonarqube with no server in benchwright.yaml
            problems.append(doc.problem(("criteria", i, "name"), f"{toggle.name} will record n/a: {why}",
                                        severity="warning"))
    if config.llm_judge is not None:
        try:
            model_resolve.resolve(config.llm_judge, ws.settings)
        except UserError as e:
            problems.append(doc.problem(("llm-judge",), str(e), severity="warning"))  # as for llms
    try:
        load_scenarios(ws, config, path, doc)
    except InputError as e:
        problems += e.problems
    paths = []
    for i, name in enumerate(config.task_sources):
        try:
            p = ws.locate(name, file=path, field=f"task_sources[{i}]", line=doc.line_of(("task_sources", i)))
        except PathRefused as e:
            problems += e.problems
            continue
        if not p.is_file():
            problems.append(doc.problem(("task_sources", i), f"task source {name!r} not found",
                                        hint=f"paths are relative to the workspace {ws.root}"))
        else:
            paths.append(p)
    problems += agent_files(ws, config, path, doc)[1]
    problems += agent_mounts(ws, config, path, doc)[1]
    problems += preset_problems(config, path, doc) or _install_problems(config, path, doc)
    enabled = set(config.enabled_criteria())
    for name in config.thresholds:
        if not name.startswith("pass@") and name not in enabled and config.criteria:
            problems.append(doc.problem(("thresholds", name), f"threshold on {name!r}, which is not enabled",
                                        hint="enable the criterion or drop the threshold", severity="warning"))
    for i, spec in enumerate(config.llms):
        problems += _check_model(doc, i, spec, ws)
    if not config.llms and not config.agents:
        problems.append(doc.problem(("llms",), "no models to run",
                                    hint="list models under 'llms:', e.g. '- reference'"))
    return problems, paths, config, doc


def _without_bad_keys(doc: yamldoc.Document, problems: Sequence[Problem]) -> ExecConfig | None:
    """The config without the top-level keys that have schema errors (None when even that is
    not a config): what the rest of the file says can still be checked."""
    if not isinstance(doc.data, dict):
        return None
    bad = {p.path.split(".")[0].split("[")[0] for p in problems if p.severity == "error"}
    rest = {k: v for k, v in doc.data.items() if k not in bad}
    try:
        return ExecConfig.model_validate(rest)
    except ValueError:
        return None


def _check_criterion(doc: yamldoc.Document, i: int, toggle: Toggle) -> list[Problem]:
    if registry.has("criterion", toggle.name):
        return []
    try:
        registry.get("criterion", toggle.name)
    except UserError as e:
        return [doc.problem(("criteria", i, "name"), str(e), hint="see 'benchwright list criteria'")]
    return []


def _check_model(doc: yamldoc.Document, i: int, spec: ModelSpec, ws: Workspace) -> list[Problem]:
    try:
        resolved = model_resolve.resolve(spec.id, ws.settings)
    except UserError as e:
        return [doc.problem(("llms", i), str(e), severity="warning")]
    if not registry.has("provider", resolved.provider_type):
        return [doc.problem(("llms", i), f"model {spec.id!r} needs provider type {resolved.provider_type!r}, "
                            "which is not installed", hint="runs will stop before any work",
                            severity="warning")]
    return []


def validate(paths: Sequence[Path], ws: Workspace, kind: Kind | None = None) -> Report:
    """Check task sources and configs (and the task sources a config names), each file once."""
    report = Report()
    sources: dict[Path, LoadedSource | None] = {}

    def source(path: Path) -> LoadedSource | None:
        key = path.resolve()
        if key not in sources:
            problems, loaded = check_task_source(path)
            report.problems.extend(problems)
            if loaded is not None:
                report.sources.append(loaded)
            sources[key] = loaded
        return sources[key]

    for path in paths:
        try:
            data = yamldoc.load(path).data
        except InputError as e:
            report.problems += e.problems
            continue
        k = kind or detect_kind(path, data)
        if k is None:
            report.problems.append(Problem(str(path), "cannot tell whether this is a task source or an "
                                           "execution config", line=1,
                                           hint="pass --kind task-source, exec-config or scenario"))
        elif k == "task-source":
            source(path)
        elif k == "scenario":
            report.problems += check_scenario(ws, path)[1]
        else:
            problems, refs, config, doc = check_config(path, ws)
            report.problems += problems
            mine = [s for s in map(source, refs) if s is not None]
            if config is not None:
                report.problems += parameters_offered(config, path, doc, mine)
                clean = not any(p.severity == "error" for p in problems)
                # what run would see (a config without task sources gets them from --tasks or the UI)
                if clean and config.task_sources and len(mine) == len(refs) == len(config.task_sources):
                    report.problems += _as_run_sees_it(config, path, doc, mine, ws)
    report.problems = _once(report.problems)
    return report


def _as_run_sees_it(config: ExecConfig, path: Path, doc: yamldoc.Document | None,
                    sources: Sequence[LoadedSource], ws: Workspace) -> list[Problem]:
    """What ``benchwright run`` refuses in this config before any work: its plan and its
    selection, asked the same way (so the two never disagree)."""
    try:
        plan = build_plan(config, str(path), sources, ws.settings, config_doc=doc)
    except InputError as e:
        return list(e.problems)
    return selection_problems(config, str(path), doc, sources, plan)


def _once(problems: Sequence[Problem]) -> list[Problem]:
    """Each problem once (validate and the run's own checks may find the same); where the two
    differ in severity, as an error."""
    seen: dict[tuple[str, str | None, str], int] = {}
    out: list[Problem] = []
    for p in problems:
        key = (p.file, p.path, p.message)
        if key not in seen:
            seen[key] = len(out)
            out.append(p)
        elif p.severity == "error":
            out[seen[key]] = p
    return out


@dataclass
class GoldenFailure:
    task_source: str
    task: str
    language: str
    outcome: str
    message: str


@dataclass
class Survivor:
    """A mutant of a golden solution that passes the task's tests: they cannot fail."""

    task_source: str
    task: str
    language: str
    mutants: list[str]
    """What each surviving mutant does (``returns None``, ``panics``...)."""


@dataclass
class GoldenReport:
    total: int
    """Golden solutions run."""
    failures: list[GoldenFailure]
    survivors: list[Survivor]
    mutants: int
    """Mutants run."""
    unsupported: list[GoldenFailure] = dataclasses.field(default_factory=list)
    """Golden solutions that need what the sandbox cannot offer (an npm package): not broken,
    not runnable here; their message says what they need."""


def _mutant_units(units: Sequence[SampleUnit]) -> dict[str, tuple[SampleUnit, SampleUnit, str]]:
    """Each unit's mutants, as units answered by the reference model with the mutant as their
    golden solution: execution id -> (mutant unit, original unit, what the mutant does)."""
    out: dict[str, tuple[SampleUnit, SampleUnit, str]] = {}
    for unit in units:
        ep, golden = unit.rendered.entry_point, unit.golden
        programs = bool(unit.rendered.tests) and all(t.is_stdio for t in unit.rendered.tests)
        if (not ep and not programs) or golden is None or not registry.has("language", unit.language):
            continue
        spec = unit.task.spec(unit.language)
        language = registry.create("language", unit.language)
        # a program's tests read what it prints: its mutants print nothing, or crash
        mutants = language.program_mutants() if programs else language.mutants(golden, ep or "")
        for k, mutant in enumerate(mutants):
            # the entry point stays what the original says (a mutant may define it twice)
            specs = {**unit.task.task.languages_specific,
                     unit.language: spec.model_copy(update={"entry_point": ep})}
            task = unit.task.model_copy(update={
                "golden_solution": {**unit.task.golden_solution, unit.language: mutant.code},
                "task": unit.task.task.model_copy(update={"languages_specific": specs})})
            eid = f"{unit.execution_id}~mutant{k}"
            out[eid] = (dataclasses.replace(unit, task=task, execution_id=eid), unit, mutant.name)
    return out


def golden_units(sources: Sequence[LoadedSource], ws: Workspace, languages: Sequence[str] = ()) -> list[SampleUnit]:
    """One sample of every golden solution of ``sources`` (in ``languages``, else all), answered
    by the ``reference`` model and scored by unit-test alone: what ``validate --golden`` and the
    task editor's "run golden" run."""
    config = ExecConfig(criteria=[Toggle(name="unit-test")], llms=[ModelSpec(id="reference")],
                        languages=list(languages))
    plan = build_plan(config, "validate --golden", sources, ws.settings)
    return [u for u in plan.units if u.golden is not None]


def run_golden(units: Sequence[SampleUnit], ws: Workspace,
               on_result: Callable[[SampleUnit, Generation, list[Record]], None]) -> None:
    """Run ``units`` (from :func:`golden_units`, or mutants of them) through the pipeline, in the
    workspace's sandbox; ``on_result`` gets each sample's records."""
    if not units:
        return
    providers = {"reference": model_resolve.create(units[0].resolved, ws.settings)}
    worker = Worker("golden-check", GenerationEngine(providers, ws.settings), best_sandbox(ws.settings.sandbox),
                    ExecConfig().limits)
    asyncio.run(LocalExecutor().run(list(units), worker, {}, lambda g: None, on_result))


def sample_outcome(records: Sequence[Record]) -> str:
    """A golden sample's outcome: its records' (the worker sets one on each); ``error`` when it
    has none, never ``pass``."""
    return (records[0].outcome if records else None) or "error"


@dataclass(frozen=True)
class CaseResult:
    """One test case of a golden run, as the task editor shows it."""

    test_case: str
    status: str
    error: str
    line: int | None


def golden_cases(ws: Workspace, path: Path, shown: str, text: str, task_name: str,
                 language: str) -> tuple[str, list[CaseResult]]:
    """Run ``task_name``'s golden solution in ``language``, the task as ``text`` (an unsaved
    version of the task source at ``path``, named ``shown`` in problems) has it, through the
    pipeline of :func:`golden_units` and :func:`run_golden`: the sample's outcome and each test
    case's result (a sample with no test case gives one line, "(sample)").

    Raises:
        InputError: the text does not validate, or the task has no golden solution there.
    """
    fd, tmp = tempfile.mkstemp(prefix=".bw-golden-", suffix=".yaml", dir=path.parent)
    got: list[Record] = []
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        doc, source, problems = parse_task_source(Path(tmp))
        errors = [p for p in problems if p.severity == "error"]
        if doc is None or source is None or errors:
            raise InputError([Problem(shown, p.message, p.path, p.line, p.hint, p.severity) for p in errors])
        mine = [t for t in source.tasks if t.name == task_name]
        if not mine or language not in mine[0].golden_solution:
            raise InputError([Problem(shown, f"{task_name} has no golden solution in {language}")])
        loaded = LoadedSource.of(Path(tmp), doc, source.model_copy(update={"tasks": mine}))
        units = [u for u in golden_units([loaded], ws, [language]) if u.language == language]
        if not units:
            raise InputError([Problem(shown, f"nothing to run for {task_name} in {language}")])
        run_golden(units[:1], ws, lambda unit, gen, records: got.extend(records))
    finally:
        os.unlink(tmp)
    outcome = sample_outcome(got)
    cases = [CaseResult(r.test_case, r.status or "", r.error or "", r.line) for r in got
             if r.test_case is not None]
    if not cases:
        cases = [CaseResult("(sample)", outcome, next((r.error for r in got if r.error), "") or "", None)]
    return outcome, cases


def check_golden(sources: Sequence[LoadedSource], ws: Workspace,
                 progress: Callable[[int, int, object], None] | None = None) -> GoldenReport:
    """Run every golden solution through the pipeline, and each one's mutants (see
    :meth:`Language.mutants`); the broken golden solutions, and the tasks whose tests pass a
    mutant of a golden solution that passes them (tests that cannot fail)."""
    goldens = golden_units(sources, ws)
    mutated = _mutant_units(goldens)
    units = [*goldens, *(u for u, _, _ in mutated.values())]
    survived: dict[str, list[str]] = {}
    failures: list[GoldenFailure] = []
    unsupported: list[GoldenFailure] = []
    finished = 0

    def on_result(unit: SampleUnit, gen: Generation, records: list[Record]) -> None:
        nonlocal finished
        finished += 1
        if progress:
            progress(finished, len(units), unit)
        outcome = sample_outcome(records)
        if unit.execution_id in mutated:
            if outcome == "pass":
                _, original, what = mutated[unit.execution_id]
                survived.setdefault(original.execution_id, []).append(what)
            return
        if outcome == "pass":
            return
        needs = next((r.details["unsupported"] for r in records
                      if r.details and r.details.get("unsupported")), None)
        if needs is not None:
            unsupported.append(GoldenFailure(unit.task_source, unit.task.name, unit.language,
                                             outcome, str(needs)))
            return
        bad = next((r for r in records if r.test_case is not None and r.status != "pass"), None)
        if bad is not None:
            where = f" at line {bad.line}" if bad.line else ""
            msg = f"{bad.test_case}: {bad.status}: {bad.error}{where}"
        else:
            msg = (next((r.error for r in records if r.error), None)
                   or next((r.output for r in records if r.criterion == "unit-test" and r.output), None)
                   or outcome)  # untested: the unit-test record says no test case applies
        failures.append(GoldenFailure(unit.task_source, unit.task.name, unit.language, outcome, msg))

    run_golden(units, ws, on_result)
    failures.sort(key=lambda f: (f.task_source, f.task, f.language))
    unsupported.sort(key=lambda f: (f.task_source, f.task, f.language))
    broken = {(f.task_source, f.task, f.language) for f in [*failures, *unsupported]}
    survivors = [Survivor(u.task_source, u.task.name, u.language, sorted(survived[u.execution_id]))
                 for u in goldens if u.execution_id in survived
                 and (u.task_source, u.task.name, u.language) not in broken]
    survivors.sort(key=lambda s: (s.task_source, s.task, s.language))
    return GoldenReport(len(goldens), failures, survivors, len(mutated), unsupported)


def _install_problems(config: ExecConfig, path: Path, doc: yamldoc.Document) -> list[Problem]:
    """A warning for each preset agent whose CLI is not installed (the run would stop at its
    preflight)."""
    from benchwright.agents import tools

    out = []
    for i, agent in enumerate(config.agents):
        if agent.preset is not None and tools.installed(agent.preset) is None:
            out.append(doc.problem(("agents", i, "preset"), f"the {agent.preset} preset's CLI is not installed "
                                   f"in {tools.tools_root()}", severity="warning",
                                   hint=f"run `benchwright agents install {agent.preset}`"))
    return out
