"""Running the agent units of a run: each one from its workspace to its records."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from benchwright.agents.outcome import AgentOutcome
from benchwright.agents.plan import AgentUnit
from benchwright.agents.records import agent_files, agent_records, file_names
from benchwright.agents.runner import run_agent_task, run_command_agent
from benchwright.results.record import Record
from benchwright.sandbox.base import Sandbox

AgentDone = tuple[list[Record], dict[str, str]]
"""An agent unit done: its records, and its files' text by path in the run folder."""

AgentRunner = Callable[[AgentUnit, Path, list[str]], AgentOutcome]
"""Runs the unit's agent in a workspace folder on the given turns (the built-in loop, or a
command)."""


def scratch_root() -> Path:
    """Where agent workspaces live while they are graded: reachable by a sandbox uid. Each one
    is a folder of its own made there with a fresh name (``mkdtemp``), never a fixed name that
    another user of the machine could have made first, or made a link."""
    root = Path(tempfile.gettempdir())
    try:
        mode = root.stat().st_mode
    except OSError:
        mode = 0
    return root if mode & 0o001 else Path("/tmp")


def command_runner(sandbox: Sandbox) -> AgentRunner:
    def run(unit: AgentUnit, folder: Path, turns: list[str]) -> AgentOutcome:
        return run_command_agent(unit.agent, folder, turns, sandbox, files=unit.files)
    return run


def run_unit(unit: AgentUnit, *, run_id: str, sandbox: Sandbox, runner: AgentRunner,
             judge: Callable[[AgentUnit, object], dict[str, object] | None] | None = None,
             ) -> AgentDone:
    """Run one agent on one task: its records and its files (for the driver to write)."""
    scenario = unit.scenario
    result = run_agent_task(scenario.scenario, scenario.path.parent, unit.task, unit.agent, sandbox,
                            scratch_root(),
                            lambda folder, turns: runner(unit, folder, turns))
    if result.infra_error is None and judge is not None and result.gates is not None:
        verdict = judge(unit, result)
        if verdict is not None:
            result.judge = verdict
            shown = verdict.get("verdict")
            result.gates.judge = shown if shown in ("PASS", "FAIL") else None
    files = agent_files(unit.execution_id, result) if result.infra_error is None else {}
    base = {"run_id": run_id, "execution_id": unit.execution_id, "task_source": scenario.name,
            "task": unit.task.name, "model": unit.agent.name}
    return agent_records(base, result, file_names(files)), files
