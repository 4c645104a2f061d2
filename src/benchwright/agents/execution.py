"""Running the agent units of a run: each one from its workspace to its records."""

from __future__ import annotations

import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from benchwright.agents import tools
from benchwright.agents.home import make_home, remove_home, snapshot
from benchwright.agents.invocation import Invocation, tool_mounts
from benchwright.agents.outcome import AgentOutcome
from benchwright.agents.plan import AgentUnit
from benchwright.agents.preset import ModelRoute
from benchwright.agents.proxy import ModelProxy
from benchwright.agents.records import agent_files, agent_records, file_names
from benchwright.agents.runner import run_agent_task, run_command_agent
from benchwright.config.settings import Settings
from benchwright.errors import InfraError
from benchwright.model import resolve as model_resolve
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
