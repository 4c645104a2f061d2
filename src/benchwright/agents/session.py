"""The agent part of a run: every agent unit on a pool of threads, its judge, its records; and
the per-task table of the three gates for the summary and the report."""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from benchwright.agents.execution import (
    AgentDone,
    AgentRunner,
    ProxyHolder,
    command_runner,
    run_unit,
    scratch_root,
)
from benchwright.agents.outcome import AgentOutcome
from benchwright.agents.plan import AgentUnit
from benchwright.agents.proxy import ModelProxy
from benchwright.agents.runner import AgentRunResult, evidence
from benchwright.model import resolve as model_resolve
from benchwright.model.engine import GenerationEngine
from benchwright.model.judge import Judge
from benchwright.results.record import Record
from benchwright.sandbox.base import Sandbox

GATES = ("objective", "judge", "run-badge")


OnAgent = Callable[[AgentUnit, list[Record], dict[str, str]], None]
"""An agent unit's records and files (path in the run folder -> text), for the driver to write."""


def proxy_holder(engine: GenerationEngine, loop: asyncio.AbstractEventLoop) -> ProxyHolder:
    """The run's model endpoint for agents with ``model:``, started on first use: TCP on
    loopback, and a Unix socket in a private folder for sandboxes without the network."""

    def start() -> ModelProxy:
        folder = Path(tempfile.mkdtemp(prefix="bw-model-", dir=scratch_root()))
        folder.chmod(0o711)
        return ModelProxy(engine, loop, socket_dir=folder).start()
    return ProxyHolder(start)


def _runner(sandbox: Sandbox, engine: GenerationEngine, loop: asyncio.AbstractEventLoop,
            proxies: ProxyHolder) -> AgentRunner:
    commands = command_runner(sandbox, proxies, engine.settings)

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
            judge: Judge | None, loop: asyncio.AbstractEventLoop,
            proxies: ProxyHolder | None = None) -> AgentDone:
    """One agent unit, in a worker thread while ``loop`` (the engine's) runs: on this machine,
    or on a cluster's worker (``proxies`` None: an endpoint of its own, stopped after it)."""
    own = proxies is None
    holder = proxy_holder(engine, loop) if proxies is None else proxies
    try:
        return run_unit(unit, run_id=run_id, sandbox=sandbox, runner=_runner(sandbox, engine, loop, holder),
                        judge=_judging(judge))
    finally:
        if own:
            holder.stop()


async def run_agent_units(units: Sequence[AgentUnit], *, run_id: str, sandbox: Sandbox,
                          engine: GenerationEngine, judge: Judge | None, workers: int,
                          on_agent: OnAgent) -> None:
    """Run every unit on this machine (``workers`` at once), reporting each unit as it ends."""
    from benchwright.run.executor import dispatch

    loop = asyncio.get_running_loop()
    proxies = proxy_holder(engine, loop)

    async def one(unit: AgentUnit) -> None:
        records, files = await asyncio.to_thread(run_one, unit, run_id=run_id, sandbox=sandbox,
                                                 engine=engine, judge=judge, loop=loop, proxies=proxies)
        on_agent(unit, records, files)

    try:
        await dispatch(units, one, max(workers, 1))
    finally:
        await asyncio.to_thread(proxies.stop)


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
        if r.criterion == "run-badge":
            details = r.details or {}
            if row[r.criterion] != "PASS":
                row["badge_reason"] = (r.error or r.output or "").removeprefix("FAIL: ")
            model = details.get("model") or {}
            for key in ("tokens_in", "tokens_out", "cost_usd"):
                row[key] = details.get(key)
            row["model_requests"] = model.get("requests")
            row["agent_version"] = details.get("agent_version")
    for row in rows.values():  # as Gates.disagree: the objective checks against the judge
        row["disagree"] = row.get("objective") in ("PASS", "FAIL") and row.get("judge") in ("PASS", "FAIL") \
            and row["objective"] != row["judge"]
    return sorted(rows.values(), key=lambda row: (row["scenario"], row["task"], row["agent"]))
