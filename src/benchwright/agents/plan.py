"""Which agent runs a config asks for: every task of every scenario, for every agent."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import TypeAdapter

from benchwright.agents import repo
from benchwright.agents.scenario import AgentTask, Scenario, ScorerSpec, parse_scenario
from benchwright.config.model import AgentSpec, ExecConfig
from benchwright.errors import InputError, Problem
from benchwright.workspace import Workspace
from benchwright.workspace.confine import PathRefused
from benchwright.yamldoc import Document


@dataclass
class LoadedScenario:
    path: Path
    scenario: Scenario
    sha256: str

    @property
    def name(self) -> str:
        return self.scenario.name


@dataclass(frozen=True)
class AgentUnit:
    """One agent on one scenario task."""

    execution_id: str
    scenario: LoadedScenario
    task: AgentTask
    agent: AgentSpec
    files: tuple[tuple[str, bytes], ...] = ()
    """The agent's own files (``files:``), by name, for ``$BENCHWRIGHT_AGENT_DIR``."""
    mounts: tuple[str, ...] = ()
    """The host folders of the agent's ``mounts:``, resolved and confined (shown read-only)."""

    @property
    def task_source(self) -> str:
        return self.scenario.name


def execution_id(scenario: str, task: str, agent: str) -> str:
    key = f"agent\x1f{scenario}\x1f{task}\x1f{agent}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def check_scenario(ws: Workspace, path: Path) -> tuple[Scenario | None, list[Problem]]:
    """A scenario file of ``ws``, parsed and checked, its ``workspace.repo`` confined like every
    path a file names and given resolved (what the agent workspace reads is what was checked);
    None when it has an error."""
    doc, scenario, problems = parse_scenario(path)
    if doc is None or scenario is None or scenario.workspace is None:
        return scenario, problems
    recipe = scenario.workspace
    try:
        where = repo.locate(recipe.repo, base=path.parent, confinement=ws.confinement, file=path,
                            field="workspace.repo", line=doc.line_of(("workspace", "repo")))
    except PathRefused as e:
        return None, [*problems, *e.problems]
    return scenario.model_copy(update={"workspace": recipe.model_copy(update={"repo": where})}), problems


def load_scenarios(ws: Workspace, config: ExecConfig, config_path: Path,
                   doc: Document | None = None) -> list[LoadedScenario]:
    """Every scenario the config names, checked; every problem at once.

    Raises:
        InputError: a scenario is missing, broken or outside the workspace, or there are agents
            and no scenarios.
    """
    problems: list[Problem] = []
    out = []
    for i, name in enumerate(config.scenarios):
        try:
            path = ws.locate(name, file=config_path, field=f"scenarios[{i}]",
                             line=doc.line_of(("scenarios", i)) if doc else None)
        except PathRefused as e:
            problems += e.problems
            continue
        if not path.is_file():
            problems.append(Problem(str(config_path), f"scenario {name!r} not found (looked in {ws.root})",
                                    path=f"scenarios[{i}]", hint="check the path",
                                    line=doc.line_of(("scenarios", i)) if doc else None))
            continue
        scenario, found = check_scenario(ws, path)
        if scenario is None:
            problems += [p for p in found if p.severity == "error"] or found
            continue
        out.append(LoadedScenario(path, scenario, hashlib.sha256(path.read_bytes()).hexdigest()))
    if config.agents and not config.scenarios:
        problems.append(Problem(str(config_path), "agents are listed but no scenarios", path="agents",
                                hint="add 'scenarios: [scenarios/x.yaml]'",
                                line=doc.line_of(("agents",)) if doc else None))
    if config.scenarios and not config.agents:
        problems.append(Problem(str(config_path), "scenarios are listed but no agents", path="scenarios",
                                hint="add 'agents:' with a command or the built-in agent", severity="warning",
                                line=doc.line_of(("scenarios",)) if doc else None))
    names = [s.name for s in out]
    for dup in sorted({n for n in names if names.count(n) > 1}):
        problems.append(Problem(str(config_path), f"two scenarios are named {dup!r}", path="scenarios"))
    if [p for p in problems if p.severity == "error"]:
        raise InputError(problems)
    return out


Check = Callable[[str, Path, str, int | None], Path | Problem]
"""What a located path of an agent's list becomes: the path to keep, or the problem with it
(its name, the path, its place in the config, its line)."""


def _agent_paths(ws: Workspace, config: ExecConfig, config_path: Path, doc: Document | None,
                 key: Literal["files", "mounts"], check: Check) -> tuple[dict[str, list[Path]], list[Problem]]:
    """Every path of each agent's ``key`` list, by agent name, located and confined like every
    path a file names, then ``check``-ed; every problem at once."""
    problems: list[Problem] = []
    out: dict[str, list[Path]] = {}
    for i, agent in enumerate(config.agents):
        paths = out.setdefault(agent.name, [])
        for j, name in enumerate(getattr(agent, key)):
            where = f"agents[{i}].{key}[{j}]"
            line = doc.line_of(("agents", i, key, j)) if doc else None
            try:
                path = ws.locate(name, file=config_path, field=where, line=line)
            except PathRefused as e:
                problems += e.problems
                continue
            got = check(name, path, where, line)
            if isinstance(got, Problem):
                problems.append(got)
            else:
                paths.append(got)
    return out, problems


def agent_files(ws: Workspace, config: ExecConfig, config_path: Path,
                doc: Document | None = None) -> tuple[dict[str, list[Path]], list[Problem]]:
    """The files each agent names (``agents[].files``), by agent name, located and confined
    (nothing is read); a problem for each one missing or outside the workspace."""

    def check(name: str, path: Path, where: str, line: int | None) -> Path | Problem:
        if not path.is_file():
            return Problem(str(config_path), f"agent file {name!r} not found (looked in {ws.root})",
                           path=where, line=line, hint="check the path")
        return path
    return _agent_paths(ws, config, config_path, doc, "files", check)


def agent_mounts(ws: Workspace, config: ExecConfig, config_path: Path,
                 doc: Document | None = None) -> tuple[dict[str, list[Path]], list[Problem]]:
    """The folders each agent shows read-only (``agents[].mounts``), by agent name, located
    and confined like every path a file names; a problem for each one missing, not a folder,
    outside the workspace and the folders the admin allows, or showing the workspace's
    ``.benchwright/`` or ``results/``."""
    private = [ws.root.resolve() / ".benchwright", ws.root.resolve() / "results"]

    def check(name: str, path: Path, where: str, line: int | None) -> Path | Problem:
        if not path.is_dir():
            return Problem(str(config_path), f"agent mount {name!r} is not a folder (looked in {ws.root})",
                           path=where, line=line, hint="name a folder of the workspace, or one the admin allows")
        found = path.resolve()
        if any(found == p or found in p.parents or p in found.parents for p in private):
            return Problem(str(config_path), f"agent mount {name!r} would show the agent the workspace's "
                           ".benchwright/ (the cache, tokens) or results/ (other runs, judge verdicts)",
                           path=where, line=line, hint="mount only the folder the agent's program is in")
        return found
    return _agent_paths(ws, config, config_path, doc, "mounts", check)


def preset_problems(config: ExecConfig, config_path: Path, doc: Document | None = None) -> list[Problem]:
    """An agent naming a preset that is not registered."""
    from benchwright.registry import registry

    problems = []
    known = registry.names("agent-preset")
    for i, agent in enumerate(config.agents):
        if agent.preset is not None and agent.preset not in known:
            problems.append(Problem(str(config_path), f"no agent preset named {agent.preset!r}",
                                    path=f"agents[{i}].preset", line=doc.line_of(("agents", i, "preset")) if doc else None,
                                    hint=f"one of: {', '.join(known)} (benchwright list agents)"))
    return problems


def agent_units(ws: Workspace, config: ExecConfig, config_path: Path,
                scenarios: Sequence[LoadedScenario], doc: Document | None = None) -> list[AgentUnit]:
    """Every task of every scenario for every agent.

    Raises:
        InputError: a file or folder an agent names is missing or outside the workspace, or a
            preset is unknown.
    """
    paths, problems = agent_files(ws, config, config_path, doc)
    folders, more = agent_mounts(ws, config, config_path, doc)
    problems += more + preset_problems(config, config_path, doc)
    if problems:
        raise InputError(problems)
    own = {name: tuple((p.name, p.read_bytes()) for p in found) for name, found in paths.items()}
    shown = {name: tuple(str(p) for p in found) for name, found in folders.items()}
    return [AgentUnit(execution_id(s.name, t.name, a.name), s, t, a, own[a.name], shown[a.name])
            for s in scenarios for t in s.scenario.tasks for a in config.agents]


def frozen_scorers(scenarios: Sequence[LoadedScenario]) -> dict[str, Any]:
    """Each scenario's scorers as the run starts (``run.yaml``: ``scenarios``)."""
    return {s.name: {"path": str(s.path), "sha256": s.sha256,
                     "scorers": [x.model_dump(mode="json", exclude_none=True) for x in s.scenario.scorers]}
            for s in scenarios}


def thaw(scenarios: Sequence[LoadedScenario], frozen: dict[str, Any]) -> list[LoadedScenario]:
    """The scenarios of a resumed run, graded by the scorers frozen when it started (an edit of
    the scenario since does not change how the run is graded)."""
    adapter: TypeAdapter[list[ScorerSpec]] = TypeAdapter(list[ScorerSpec])
    out = []
    for s in scenarios:
        kept = frozen.get(s.name)
        if kept is not None:
            scorers = adapter.validate_python(kept["scorers"])
            s = LoadedScenario(s.path, s.scenario.model_copy(update={"scorers": scorers}), s.sha256)
        out.append(s)
    return out
