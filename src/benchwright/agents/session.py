"""The agent part of a run: every agent unit on a pool of threads, its judge, its records; and
the per-task table of the three gates for the summary and the report."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from benchwright.agents.execution import AgentDone, AgentRunner, command_runner, run_unit
from benchwright.agents.outcome import AgentOutcome
from benchwright.agents.plan import AgentUnit
from benchwright.agents.runner import AgentRunResult, evidence
from benchwright.model import resolve as model_resolve
from benchwright.model.engine import GenerationEngine
from benchwright.model.judge import Judge
from benchwright.results.record import Record
from benchwright.sandbox.base import Sandbox

GATES = ("objective", "judge", "run-badge")


OnAgent = Callable[[AgentUnit, list[Record], dict[str, str]], None]
"""An agent unit's records and files (path in the run folder -> text), for the driver to write."""


def _runner(sandbox: Sandbox, engine: GenerationEngine, loop: asyncio.AbstractEventLoop) -> AgentRunner:
    commands = command_runner(sandbox)

    def run(unit: AgentUnit, folder: Path, turns: list[str]) -> AgentOutcome:
        spec = unit.agent
        if not spec.builtin:
            return commands(unit, folder, turns)
        from benchwright.agents.builtin import BuiltinAgent, BuiltinLimits

        assert spec.model is not None
        resolved = model_resolve.resolve(spec.model, engine.settings)
        agent = BuiltinAgent(engine, resolved.provider, resolved.model, sandbox,
                             BuiltinLimits(max_steps=spec.max_steps, max_tokens=spec.max_tokens,
                                           timeout_s=spec.timeout_s))
        return asyncio.run_coroutine_threadsafe(agent.arun(folder, turns), loop).result()
    return run


def _judging(judge: Judge | None) -> Callable[[AgentUnit, object], dict[str, object] | None] | None:
    if judge is None:
        return None
    from benchwright.agents.verdict import judge_run

    def grade(unit: AgentUnit, result: object) -> dict[str, object] | None:
        assert isinstance(result, AgentRunResult)
        shown = evidence(unit.scenario.scenario, unit.task, result.outcome, result.change, result.scorers,
                         unit.agent.name)
        outcome = judge_run(judge, shown, unit.scenario.scenario.judge_repeats)
        return outcome.to_dict()
    return grade


def run_one(unit: AgentUnit, *, run_id: str, sandbox: Sandbox, engine: GenerationEngine,
            judge: Judge | None, loop: asyncio.AbstractEventLoop) -> AgentDone:
    """One agent unit, in a worker thread while ``loop`` (the engine's) runs: on this machine,
    or on a cluster's worker."""
    return run_unit(unit, run_id=run_id, sandbox=sandbox, runner=_runner(sandbox, engine, loop),
                    judge=_judging(judge))


async def run_agent_units(units: Sequence[AgentUnit], *, run_id: str, sandbox: Sandbox,
                          engine: GenerationEngine, judge: Judge | None, workers: int,
                          on_agent: OnAgent) -> None:
    """Run every unit on this machine (``workers`` at once), reporting each unit as it ends."""
    from benchwright.run.executor import dispatch

    loop = asyncio.get_running_loop()

    async def one(unit: AgentUnit) -> None:
        records, files = await asyncio.to_thread(run_one, unit, run_id=run_id, sandbox=sandbox,
                                                 engine=engine, judge=judge, loop=loop)
        on_agent(unit, records, files)

    await dispatch(units, one, max(workers, 1))


def agent_gates(records: Iterable[Record]) -> list[dict[str, Any]]:
    """Per agent and task: the three gates, and whether they disagree."""
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in records:
        if r.language != "agent" or r.criterion not in GATES:
            continue
        row = rows.setdefault((r.model, r.task_source, r.task), {
            "agent": r.model, "scenario": r.task_source, "task": r.task, "outcome": r.outcome})
        row[r.criterion] = (r.verdict or "n/a").upper() if r.error is None else "INFRA_ERROR"
        if r.criterion == "objective":
            row["objective_score"] = r.score
    for row in rows.values():  # as Gates.disagree: the objective checks against the judge
        row["disagree"] = row.get("objective") in ("PASS", "FAIL") and row.get("judge") in ("PASS", "FAIL") \
            and row["objective"] != row["judge"]
    return sorted(rows.values(), key=lambda row: (row["scenario"], row["task"], row["agent"]))
