"""The executor interface: where units of work run. ``local`` uses this machine's cores;
``ray`` (:mod:`benchwright.run.cluster`) a Ray cluster's. Both are plug-ins of kind
``executor``, built with :class:`ExecutorOptions`."""

from __future__ import annotations

import abc
import asyncio
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchwright.dispatch import dispatch
from benchwright.results.record import Generation, Record
from benchwright.run.plan import SampleUnit
from benchwright.run.worker import Worker
from benchwright.sandbox.base import Sandbox

if TYPE_CHECKING:
    from benchwright.agents.batch import OnAgent
    from benchwright.agents.plan import AgentUnit

OnGeneration = Callable[[Generation], None]
OnResult = Callable[[SampleUnit, Generation, list[Record]], None]


@dataclass(frozen=True)
class ExecutorOptions:
    """What an executor is built with (each takes what applies to it)."""

    workers: int | None = None
    """Samples evaluated at once on this machine (local; default: its cores)."""
    max_in_flight: int | None = None
    """Samples started and not yet recorded, at most (local; default: enough to keep workers
    busy)."""
    cluster_in_flight: int | None = None
    """Tasks sent to a cluster and not yet back, at most (ray; default: 3 per CPU)."""
    address: str | None = None
    """The cluster to join (ray: ``auto``, ``ray://HOST:PORT``; none: start one here)."""
    max_retries: int = 3
    """How often a unit whose worker or node died is run again elsewhere (ray)."""


class Executor(abc.ABC):
    """Runs units of work; results come back through the callbacks, in the caller's loop."""

    def connect(self) -> None:  # noqa: B027 (nothing to do for most executors)
        """Get ready before the run folder is made (join a cluster); raise
        :class:`~benchwright.errors.UserError` when the run cannot go there."""

    @abc.abstractmethod
    def report(self) -> dict[str, Any]:
        """For ``summary.yaml: executor``: where the samples ran (after :meth:`run`)."""

    def close(self) -> None:  # noqa: B027 (nothing to do for most executors)
        """The run is over (or stopped): let go of what :meth:`connect` took."""

    async def run_agents(self, units: Sequence[AgentUnit], worker: Worker, sandbox: Sandbox,
                         on_agent: OnAgent) -> None:
        """Run every coding-agent unit, reporting each one's records and files as it ends.
        Here: on this machine, ``worker.limits.concurrency`` (else a core each) at once, in
        ``sandbox`` (the run's, without the per-sample wall cap: agents have their own)."""
        from benchwright.agents.batch import run_agent_units

        await run_agent_units(units, run_id=worker.run_id, sandbox=sandbox, engine=worker.engine,
                              judge=worker.judge, workers=worker.limits.concurrency or os.cpu_count() or 1,
                              on_agent=on_agent)

    @abc.abstractmethod
    async def run(
        self,
        units: Sequence[SampleUnit],
        worker: Worker,
        known: dict[str, Generation],
        on_generation: OnGeneration,
        on_result: OnResult,
    ) -> None:
        """Generate (unless ``known`` has the generation), evaluate and report every unit.

        Evaluation of a unit starts as soon as its generation arrives.
        """


class LocalExecutor(Executor):
    """Generation on asyncio, execution on a pool of threads (each drives one sandboxed process).

    How many requests a provider has in flight is the generation engine's business; this only
    bounds the samples started and not yet recorded (``max_in_flight``), so memory stays flat.
    """

    def __init__(self, options: ExecutorOptions | None = None) -> None:
        options = options or ExecutorOptions()
        self.workers = options.workers or os.cpu_count() or 1
        self.max_in_flight = max(options.max_in_flight or 256, self.workers * 4)

    def report(self) -> dict[str, Any]:
        return {"name": "local", "workers": self.workers}

    async def run(
        self,
        units: Sequence[SampleUnit],
        worker: Worker,
        known: dict[str, Generation],
        on_generation: OnGeneration,
        on_result: OnResult,
    ) -> None:
        loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="bw-exec") as pool:

            async def one(unit: SampleUnit) -> None:
                gen = known.get(unit.execution_id)
                if gen is None or gen.error is not None:
                    gen = await worker.generate(unit)
                    on_generation(gen)
                records = await loop.run_in_executor(pool, worker.evaluate, unit, gen)
                on_result(unit, gen, records)

            try:
                await dispatch(units, one, self.max_in_flight)
            finally:
                worker.close()  # the pool's threads end here, and with them their servers
