"""The Ray executor: a run's samples as Ray tasks on the workers of a Ray cluster.

The driver (the ``benchwright run`` process) plans the run and sends each sample to the
cluster as one Ray task: generate (unless the run already holds the generation), then execute
and evaluate in that worker's own sandbox. What comes back is written by the driver alone, so
``records.jsonl``, ``generations.jsonl``, ``status.yaml``, resume and the summary are exactly
those of a local run.

One actor per run, :class:`RunServices`, placed on the driver's node, keeps what must be one
for the whole cluster: every provider's slots and pace (its ``concurrency`` and ``rpm`` hold
across all workers) and the workspace's generation cache (the driver's file: a generation made
on any node is never paid for again).

Faults: a task whose worker process or node dies is run again elsewhere by Ray, up to
``ray.max_retries`` times; its records are written once, when its result comes back. A sample
whose task still fails is recorded as ``infra_error`` (``--retry-errors`` runs it again), and the
run goes on.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from benchwright.agents.batch import AgentDone, OnAgent
from benchwright.agents.plan import AgentUnit
from benchwright.agents.records import infra_records
from benchwright.config.settings import ProviderSettings
from benchwright.dispatch import dispatch
from benchwright.errors import UserError
from benchwright.model import resolve as model_resolve
from benchwright.model.base import Provider
from benchwright.model.cache import CachedAnswer, GenerationCache
from benchwright.model.engine import GenerationEngine, local_limits
from benchwright.model.judge import Judge
from benchwright.model.limits import Limits, RateLimiter
from benchwright.results.record import Generation, Record
from benchwright.run.executor import Executor, ExecutorOptions, OnGeneration, OnResult
from benchwright.run.plan import SampleUnit
from benchwright.run.worker import Worker, WorkerSpec
from benchwright.sandbox.base import Sandbox
from benchwright.sandbox.select import best_sandbox
from benchwright.sandbox.wallcap import wall_capped

INSTALL_HINT = "pip install 'benchwright[ray]'"
BATCH_TARGET_S = 0.25
"""About how long one Ray task should take on its worker (see :class:`_BatchSizing`)."""
BATCH_MAX = 64
LEASE_MARGIN_S = 30.0
"""A slot not given back within the provider's ``timeout_s`` plus this is taken back (its
worker died holding it)."""


def import_ray() -> ModuleType:
    """Ray, or a clear error naming the extra that brings it."""
    try:
        import ray
    except ImportError:
        raise UserError(f"--executor ray needs Ray, which is not installed ({INSTALL_HINT})") from None
    return ray


# -- the run's services: one actor on the driver's node ------------------------------------------


class _Leases:
    """``concurrency`` slots handed out as leases that expire (a dead worker's slot comes back)."""

    def __init__(self, concurrency: int, lease_s: float) -> None:
        self.concurrency = concurrency
        self.lease_s = lease_s
        self.held: dict[str, float] = {}
        self.peak = 0
        self.granted = 0
        self.cond = asyncio.Condition()

    def _reclaim(self) -> None:
        now = time.monotonic()
        for lease in [k for k, expiry in self.held.items() if expiry < now]:
            del self.held[lease]

    async def acquire(self) -> str:
        async with self.cond:
            while True:
                self._reclaim()
                if len(self.held) < self.concurrency:
                    lease = uuid.uuid4().hex
                    self.held[lease] = time.monotonic() + self.lease_s
                    self.granted += 1
                    self.peak = max(self.peak, len(self.held))
                    return lease
                with contextlib.suppress(TimeoutError):  # look for expired leases each second
                    await asyncio.wait_for(self.cond.wait(), timeout=1.0)

    async def release(self, lease: str) -> None:
        async with self.cond:
            self.held.pop(lease, None)
            self.cond.notify()


class RunServices:
    """The cluster-wide part of a run: provider limits and the generation cache (a Ray actor)."""

    def __init__(self, cache_path: str | None, providers: dict[str, ProviderSettings]) -> None:
        self.cache = GenerationCache(Path(cache_path)) if cache_path else None
        self.slots = {name: _Leases(conf.concurrency, conf.timeout_s + LEASE_MARGIN_S)
                      for name, conf in providers.items()}
        self.paces = {name: RateLimiter(conf.rpm) for name, conf in providers.items()}

    async def release(self, provider: str, lease: str) -> None:
        await self.slots[provider].release(lease)

    async def enter(self, provider: str) -> str:
        """Wait for the provider's pace, then for one of its slots: the lease to give back."""
        await self.paces[provider].wait()
        return await self.slots[provider].acquire()

    async def get(self, key: str) -> CachedAnswer | None:
        return self.cache.get(key) if self.cache is not None else None

    async def put(self, key: str, provider: str, model: str, entry: CachedAnswer) -> None:
        if self.cache is not None:
            self.cache.put(key, provider, model, entry)

    async def usage(self) -> dict[str, dict[str, int]]:
        """Per provider: slots granted, and the most held at once across the cluster."""
        return {name: {"granted": s.granted, "peak": s.peak} for name, s in self.slots.items()}

    async def close(self) -> None:
        if self.cache is not None:
            self.cache.close()


# -- on a worker: the run's Worker, built once per worker process --------------------------------


class _ServiceCache:
    """The driver's generation cache, seen from a worker (through :class:`RunServices`)."""

    def __init__(self, services: Any) -> None:
        self.services = services

    def get(self, key: str) -> CachedAnswer | None:
        ray = import_ray()
        found: CachedAnswer | None = ray.get(self.services.get.remote(key))
        return found

    def put(self, key: str, provider: str, model: str, entry: CachedAnswer) -> None:
        import_ray().get(self.services.put.remote(key, provider, model, entry))


class _ClusterSlots:
    """Entering waits for the pace and a slot in one round trip to :class:`RunServices`;
    leaving gives the slot back without waiting for the answer."""

    def __init__(self, services: Any, provider: str) -> None:
        self.services = services
        self.provider = provider
        self.leases: dict[asyncio.Task[Any] | None, str] = {}

    async def __aenter__(self) -> object:
        self.leases[asyncio.current_task()] = await self.services.enter.remote(self.provider)
        return self

    async def __aexit__(self, *exc: object) -> None:
        lease = self.leases.pop(asyncio.current_task(), None)
        if lease is not None:
            self.services.release.remote(self.provider, lease)


class _ClusterPace:
    """The pace is kept by the slots' single round trip (see :class:`_ClusterSlots`)."""

    async def wait(self) -> None:
        return None


class _ClusterLimits:
    """A provider's limits, held by :class:`RunServices` for the whole cluster."""

    def __init__(self, services: Any, provider: str) -> None:
        self.slots = _ClusterSlots(services, provider)
        self.rate = _ClusterPace()


def cluster_limits(services: Any, providers: dict[str, Provider]) -> Callable[[str, ProviderSettings], Limits]:
    """Limits held by :class:`RunServices` for providers that call a shared service; in this
    worker process for the others (see :attr:`Provider.shared_service`)."""
    def make(name: str, conf: ProviderSettings) -> Limits:
        if providers[name].shared_service:
            return _ClusterLimits(services, name)
        return local_limits(name, conf)
    return make


class _Host:
    """One worker process's share of a run: its Worker, with an event loop for the providers."""

    def __init__(self, spec: WorkerSpec, services: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="bw-ray-loop", daemon=True)
        self.thread.start()
        providers = {}
        for name, resolved in spec.providers.items():
            provider = model_resolve.create(resolved, spec.settings)
            provider.workspace = spec.workspace
            providers[name] = provider
        cache = _ServiceCache(services) if spec.cache_path is not None else None
        self.engine = GenerationEngine(providers, spec.settings, cache, spec.cache_policy,
                                       limits=cluster_limits(services, providers))
        judge = None
        if spec.judge is not None:
            judge = Judge(self.engine, spec.judge)
            judge.bind(self.loop)
        self.sandbox = best_sandbox(spec.sandbox)
        self.judge = judge
        self.worker = Worker(spec.run_id, self.engine, wall_capped(self.sandbox, spec.sample_cap_s),
                             spec.limits, judge=judge)

    def generate(self, unit: SampleUnit) -> Generation:
        return asyncio.run_coroutine_threadsafe(self.worker.generate(unit), self.loop).result()

    def close(self) -> None:
        self.worker.close()
        asyncio.run_coroutine_threadsafe(self.engine.aclose(), self.loop).result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)


_hosts: dict[str, _Host] = {}
_hosts_lock = threading.Lock()


def _host(key: str, spec_box: list[Any], services: Any) -> _Host:
    """The run's host in this worker process (a worker serves one run at a time)."""
    with _hosts_lock:
        host = _hosts.get(key)
        if host is None:
            for old in list(_hosts):
                _hosts.pop(old).close()
            spec: WorkerSpec = import_ray().get(spec_box[0])
            host = _hosts[key] = _Host(spec, services)
        return host


Done = tuple[bool, Generation, list[Record]]
"""A sample done on a worker: whether it was generated there, its generation, its records."""


def run_units(services: Any, key: str, spec_box: list[Any], units: list[SampleUnit],
              known: list[Generation | None]) -> tuple[list[Done], float, str]:
    """A batch of samples on a worker, one after the other: what each gave, the seconds the
    batch took here (the driver sizes later batches by it) and the node it ran on.

    ``spec_box`` holds the :class:`WorkerSpec`'s object ref inside a list, so Ray does not fetch
    it for every task: a worker reads it once per run.
    """
    start = time.perf_counter()
    host = _host(key, spec_box, services)
    out: list[Done] = []
    for unit, gen in zip(units, known, strict=True):
        made = gen is None
        got = host.generate(unit) if gen is None else gen
        out.append((made, got, host.worker.evaluate(unit, got)))
    node: str = import_ray().get_runtime_context().get_node_id()
    return out, time.perf_counter() - start, node


def run_agent(services: Any, key: str, spec_box: list[Any], unit: AgentUnit) -> AgentDone:
    """One coding-agent unit on a worker: its records and its files' text, for the driver."""
    from benchwright.agents.batch import run_one

    host = _host(key, spec_box, services)
    return run_one(unit, run_id=host.worker.run_id, sandbox=host.sandbox, engine=host.engine,
                   judge=host.judge, loop=host.loop)


# -- on the driver ---------------------------------------------------------------------------------

_CLUSTER_HINT = ("(start one with 'ray start --head', or set --ray-address / ray.address in "
                 "benchwright.yaml; see docs/ray.md)")


def _probe(address: str | None, timeout_s: float = 5.0) -> None:
    """Fail at once when ``HOST:PORT`` (or ``ray://HOST:PORT``) does not answer: Ray itself
    would keep trying for minutes.

    Raises:
        UserError: nothing listens there.
    """
    if address is None or address == "auto":
        return
    where = address.removeprefix("ray://")
    host, _, port = where.rpartition(":")
    if not host or not port.isdigit():
        raise UserError(f"Ray cluster address {address!r}: write auto, HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as e:
        raise UserError(f"cannot reach the Ray cluster at {address}: {e.strerror or e} "
                        f"{_CLUSTER_HINT}") from None



class _BatchSizing:
    """How many samples one Ray task carries: enough that a task takes about
    :data:`BATCH_TARGET_S` on its worker (Ray's cost per task is then a small share), never more
    than :data:`BATCH_MAX`. A sample that takes seconds (a model's answer) goes alone, so the
    cluster stays balanced; the first tasks carry one sample each until there is a measure."""

    def __init__(self) -> None:
        self.samples = 0
        self.seconds = 0.0

    def add(self, samples: int, seconds: float) -> None:
        self.samples += samples
        self.seconds += seconds

    def size(self) -> int:
        if not self.samples or self.seconds <= 0:
            return 1
        per_sample = self.seconds / self.samples
        return max(1, min(BATCH_MAX, int(BATCH_TARGET_S / per_sample)))


class RayExecutor(Executor):
    """Samples as Ray tasks on a cluster; the driver writes every result."""

    def __init__(self, options: ExecutorOptions | None = None) -> None:
        self.options = options or ExecutorOptions()
        self.ray = import_ray()
        self.usage: dict[str, dict[str, int]] = {}
        """After a run: per provider, the slots granted and the most held at once."""
        self._connected = False
        self._run: tuple[Any, list[Any], str] | None = None
        self.samples_by_node: dict[str, int] = {}

    def connect(self) -> None:
        """Join the cluster (``ray.address``: ``auto``, ``ray://HOST:PORT``, ``HOST:PORT``;
        none: start Ray on this machine). Called before the run folder is made, so a cluster
        that cannot be reached leaves nothing behind.

        Raises:
            UserError: the cluster cannot be reached.
        """
        ray = self.ray
        if ray.is_initialized():
            return
        address = self.options.address
        _probe(address)
        # Ray Client starts a server of its own for each driver, which can fail to come up on a
        # busy head: that is worth a second and a third try
        attempts = 3 if address is not None and address.startswith("ray://") else 1
        for attempt in range(1, attempts + 1):
            try:
                ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False,
                         include_dashboard=False if address is None else None)
                break
            except (ConnectionError, RuntimeError, ValueError) as e:
                if attempt < attempts:
                    time.sleep(2.0 * attempt)
                    continue
                raise UserError(f"cannot reach the Ray cluster at {address or 'a new local Ray instance'}: "
                                f"{e} {_CLUSTER_HINT}") from None
        self._connected = True

    def report(self) -> dict[str, Any]:
        return {"name": "ray", "address": self.options.address or "a local Ray instance",
                "samples_by_node": dict(sorted(self.samples_by_node.items())),
                "provider_slots": self.usage}

    def close(self) -> None:
        """The run is over: read the services' figures, end them, and leave the cluster if
        :meth:`connect` joined it."""
        ray = self.ray
        if self._run is not None:
            services = self._run[0]
            self._run = None
            try:
                self.usage = ray.get(services.usage.remote(), timeout=30)
                ray.get(services.close.remote(), timeout=30)
            except (ray.exceptions.RayError, TimeoutError):
                pass
            finally:
                ray.kill(services)
        if self._connected:
            ray.shutdown()
            self._connected = False

    def _in_flight(self) -> int:
        """Tasks sent and not yet back, at most: enough to keep every CPU busy while results
        travel, few enough that memory stays flat."""
        if self.options.cluster_in_flight is not None:
            return self.options.cluster_in_flight
        cpus = int(self.ray.cluster_resources().get("CPU", 1))
        return max(8, cpus * 3)

    def _session(self, worker: Worker) -> tuple[Any, list[Any], str]:
        """The run's services actor, its spec (in a box) and its key: made once per run."""
        if self._run is not None:
            return self._run
        ray = self.ray
        spec = worker.spec
        if spec is None:
            raise RuntimeError("the Ray executor needs the worker's spec (set by the engine)")
        self.connect()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        here = ray.get_runtime_context().get_node_id()
        providers = {name: model_resolve.providers(spec.settings)[r.provider]
                     for name, r in spec.providers.items()}
        services = ray.remote(RunServices).options(
            num_cpus=0, max_concurrency=10_000,
            scheduling_strategy=NodeAffinitySchedulingStrategy(here, soft=False),
        ).remote(str(spec.cache_path) if spec.cache_path else None, providers)
        self._run = (services, [ray.put(spec)], f"{spec.run_id}/{uuid.uuid4().hex}")
        return self._run

    async def run(self, units: Sequence[SampleUnit], worker: Worker, known: dict[str, Generation],
                  on_generation: OnGeneration, on_result: OnResult) -> None:
        ray = self.ray
        services, spec_box, key = self._session(worker)
        spec = worker.spec
        assert spec is not None
        task = ray.remote(run_units).options(num_cpus=1, max_retries=self.options.max_retries,
                                             retry_exceptions=False)
        sizing = _BatchSizing()

        def failed(unit: SampleUnit, e: BaseException) -> None:
            cause = getattr(e, "cause", None) or e  # a RayTaskError carries the worker's exception
            first = str(cause).strip().splitlines()[0] if str(cause).strip() else ""
            gen = Generation(
                run_id=spec.run_id, execution_id=unit.execution_id, task_source=unit.task_source,
                task=unit.task.name, language=unit.language, model=unit.model.label,
                provider=unit.resolved.provider, sample=unit.sample, mode=unit.api, messages=[],
                prompt=unit.rendered.prompt,
                error=f"the Ray cluster could not run this sample: {type(cause).__name__}: {first}")
            on_result(unit, gen, worker.evaluate(unit, gen))  # an infra_error record, no generation

        async def one(batch: list[SampleUnit]) -> None:
            gens: list[Generation | None] = []
            for unit in batch:
                gen = known.get(unit.execution_id)
                gens.append(gen if gen is not None and gen.error is None else None)
            ref = task.remote(services, key, spec_box, batch, gens)
            try:
                done, seconds, node = await ref
            except asyncio.CancelledError:  # the run stops: so does the batch's task
                ray.cancel(ref, force=True)
                raise
            except ray.exceptions.RayError as e:
                for unit in batch:
                    failed(unit, e)
                return
            sizing.add(len(batch), seconds)
            self.samples_by_node[node] = self.samples_by_node.get(node, 0) + len(batch)
            for unit, (made, got, records) in zip(batch, done, strict=True):
                if made:
                    on_generation(got)
                on_result(unit, got, records)

        def batches() -> Iterator[list[SampleUnit]]:
            pending = iter(units)
            while batch := list(itertools.islice(pending, sizing.size())):
                yield batch

        await dispatch(batches(), one, self._in_flight())

    async def run_agents(self, units: Sequence[AgentUnit], worker: Worker, sandbox: Sandbox,
                         on_agent: OnAgent) -> None:
        """Each agent unit in a Ray task of its own (they take minutes). The scenario's
        repository is read where the task runs: give the nodes the workspace at the same
        path (a shared file system), or use a git URL."""
        ray = self.ray
        services, spec_box, key = self._session(worker)
        task = ray.remote(run_agent).options(num_cpus=1, max_retries=self.options.max_retries,
                                             retry_exceptions=False)

        async def one(unit: AgentUnit) -> None:
            ref = task.remote(services, key, spec_box, unit)
            try:
                records, files = await ref
            except asyncio.CancelledError:
                ray.cancel(ref, force=True)
                raise
            except ray.exceptions.RayError as e:
                cause = getattr(e, "cause", None) or e
                first = (str(cause).strip().splitlines() or [""])[0]
                base = {"run_id": worker.run_id, "execution_id": unit.execution_id,
                        "task_source": unit.task_source, "task": unit.task.name,
                        "model": unit.agent.name}
                records, files = infra_records(base, f"the Ray cluster could not run this agent: "
                                                     f"{type(cause).__name__}: {first}"), {}
            on_agent(unit, records, files)

        await dispatch(units, one, self._in_flight())
