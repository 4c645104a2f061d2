"""The agent part of a run: every agent unit on a pool of threads, each from its workspace to
its records (the attempt itself is :mod:`benchwright.agents.attempt`), its judging; and the
per-task table of the three gates for the summary and the report."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from benchwright.agents import tools
from benchwright.agents.attempt import AgentRunResult, evidence, run_agent_task, run_command_agent
from benchwright.agents.home import make_home, remove_home, snapshot
from benchwright.agents.invocation import Invocation, tool_mounts
from benchwright.agents.outcome import AgentOutcome
from benchwright.agents.plan import AgentUnit
from benchwright.agents.preset import ModelRoute
from benchwright.agents.proxy import ModelProxy
from benchwright.agents.records import agent_files, agent_records, file_names
from benchwright.config.settings import Settings
from benchwright.errors import InfraError
from benchwright.model import resolve as model_resolve
from benchwright.model.engine import GenerationEngine
from benchwright.model.judge import Judge
from benchwright.registry import registry
from benchwright.results.record import Record
from benchwright.sandbox.base import Bridge, Mount, Sandbox

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


class ProxyHolder:
    """The run's model endpoint, started when the first agent with ``model:`` needs it and
    stopped with :meth:`stop` (thread-safe)."""

    def __init__(self, start: Callable[[], ModelProxy]) -> None:
        self._start = start
        self._proxy: ModelProxy | None = None
        self._lock = threading.Lock()

    def get(self) -> ModelProxy:
        with self._lock:
            if self._proxy is None:
                self._proxy = self._start()
            return self._proxy

    def stop(self) -> None:
        with self._lock:
            if self._proxy is not None:
                self._proxy.stop()
                if self._proxy.socket is not None:
                    shutil.rmtree(self._proxy.socket.parent, ignore_errors=True)
                self._proxy = None


def _invocation(unit: AgentUnit, proxies: ProxyHolder | None, settings: Settings | None,
                scratch: Path) -> tuple[Invocation, str | None]:
    """The launch of a command or preset agent: its home, mounts, and (with ``model:``) a key
    of its own on the run's model endpoint (returned, to close it)."""
    spec = unit.agent
    preset = program = version = None
    mounts = [Mount(Path(m)) for m in unit.mounts]
    if spec.preset is not None:
        preset = registry.create("agent-preset", spec.preset)
        got = tools.installed(spec.preset)
        if got is None:
            raise InfraError(f"agent {spec.name!r}: the {spec.preset} preset's CLI is not installed "
                             f"in {tools.tools_root()}: run `benchwright agents install {spec.preset}`")
        program, version = got.program, got.version
        mounts[:0] = tool_mounts(tools.tool_folder(spec.preset))
    home = make_home(scratch)
    mounts.insert(0, Mount(home, writable=True))
    route = bridge = key = None
    if spec.proxied:
        assert spec.model is not None and proxies is not None and settings is not None
        resolved = model_resolve.resolve(spec.model, settings)
        proxy = proxies.get()
        budget = spec.max_tokens if "max_tokens" in spec.model_fields_set else None
        key, _ = proxy.open(resolved.provider, resolved.model, label=spec.name, budget=budget)
        route = ModelRoute(f"http://127.0.0.1:{proxy.port}", key, resolved.model)
        bridge = Bridge(proxy.port, proxy.socket) if proxy.socket is not None else None
    return Invocation(home, tuple(mounts), route, bridge, preset, program, version, dict(spec.options)), key


def command_runner(sandbox: Sandbox, proxies: ProxyHolder | None = None,
                   settings: Settings | None = None) -> AgentRunner:
    """Runs command and preset agents; those with ``model:`` reach it through ``proxies``."""

    def run(unit: AgentUnit, folder: Path, turns: list[str]) -> AgentOutcome:
        invocation, key = _invocation(unit, proxies, settings, scratch_root())
        out = AgentOutcome()
        try:
            out = run_command_agent(unit.agent, folder, turns, sandbox, files=unit.files,
                                    invocation=invocation)
            kept = snapshot(invocation.home)
            out.home = {"files": kept.files, "skipped": kept.skipped}
            out.version = invocation.version
        finally:
            if key is not None and proxies is not None:
                meter = proxies.get().close(key)
                out.model = meter.to_dict()
                out.tokens_in, out.tokens_out, out.cost_usd = meter.tokens_in, meter.tokens_out, meter.cost_usd
            remove_home(invocation.home)
        return out
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
    from benchwright.agents.judging import judge_run

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
    from benchwright.dispatch import dispatch

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
