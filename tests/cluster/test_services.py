"""The cluster-wide services' own rules, in one process: slots are leases that come back when
their holder dies, and the batch size follows how long samples take."""

from __future__ import annotations

import asyncio
import time

from benchwright.run.cluster import BATCH_MAX, _BatchSizing, _Leases


def test_a_slot_whose_holder_died_comes_back_when_its_lease_expires() -> None:
    async def scenario() -> tuple[float, int]:
        slots = _Leases(concurrency=1, lease_s=0.5)
        await slots.acquire()  # a worker takes the only slot and dies without giving it back
        start = time.monotonic()
        lease = await asyncio.wait_for(slots.acquire(), timeout=5)
        waited = time.monotonic() - start
        await slots.release(lease)
        return waited, slots.peak

    waited, peak = asyncio.run(scenario())
    assert 0.3 < waited < 3  # not at once (the slot was held), not never
    assert peak == 1


def test_a_released_slot_goes_to_the_next_waiter_at_once() -> None:
    async def scenario() -> float:
        slots = _Leases(concurrency=1, lease_s=60)
        lease = await slots.acquire()
        waiter = asyncio.create_task(slots.acquire())
        await asyncio.sleep(0.05)
        assert not waiter.done()
        start = time.monotonic()
        await slots.release(lease)
        await asyncio.wait_for(waiter, timeout=5)
        return time.monotonic() - start

    assert asyncio.run(scenario()) < 0.5  # woken by the release, not by the lease's expiry


def test_batches_carry_one_slow_sample_and_many_fast_ones() -> None:
    sizing = _BatchSizing()
    assert sizing.size() == 1  # nothing measured yet
    sizing.add(4, 8.0)  # two seconds a sample: a model's answer
    assert sizing.size() == 1
    fast = _BatchSizing()
    fast.add(100, 0.5)  # five milliseconds a sample
    assert 1 < fast.size() <= BATCH_MAX
    tiny = _BatchSizing()
    tiny.add(1000, 0.01)
    assert tiny.size() == BATCH_MAX
