"""The executor interface: where units of work run. The local one uses this machine's cores."""

from __future__ import annotations

import abc
import asyncio
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from benchwright.results.record import Generation, Record
from benchwright.run.plan import SampleUnit
from benchwright.run.worker import Worker

OnGeneration = Callable[[Generation], None]
OnResult = Callable[[SampleUnit, Generation, list[Record]], None]


class Executor(abc.ABC):
    """Runs units of work; results come back through the callbacks, in the caller's loop."""

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

    def __init__(self, workers: int | None = None, max_in_flight: int = 256) -> None:
        self.workers = workers or os.cpu_count() or 1
        self.max_in_flight = max(max_in_flight, self.workers * 4)

    async def run(
        self,
        units: Sequence[SampleUnit],
        worker: Worker,
        known: dict[str, Generation],
        on_generation: OnGeneration,
        on_result: OnResult,
    ) -> None:
        loop = asyncio.get_running_loop()
        in_flight = asyncio.Semaphore(self.max_in_flight)
        with ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="bw-exec") as pool:

            async def one(unit: SampleUnit) -> None:
                try:
                    gen = known.get(unit.execution_id)
                    if gen is None or gen.error is not None:
                        gen = await worker.generate(unit)
                        on_generation(gen)
                    records = await loop.run_in_executor(pool, worker.evaluate, unit, gen)
                    on_result(unit, gen, records)
                finally:
                    in_flight.release()

            tasks = []
            try:
                for unit in units:
                    await in_flight.acquire()
                    tasks.append(asyncio.create_task(one(unit)))
                await asyncio.gather(*tasks)
            finally:
                worker.close()  # the pool's threads end here, and with them their servers
