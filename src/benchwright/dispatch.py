"""Await many coroutines, a bounded number at once: the loop the executors and the agent
batch share."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, TypeVar

T = TypeVar("T")
_END = object()


async def dispatch(jobs: Iterable[T], one: Callable[[T], Coroutine[Any, Any, None]], limit: int) -> None:
    """Await ``one(job)`` for every job, at most ``limit`` at once. The next job is taken from
    ``jobs`` only when a place is free (a lazy iterable may size it then), and only unfinished
    tasks are kept, so memory stays flat however many jobs there are. Cancelled: so are they."""
    places = asyncio.Semaphore(limit)
    running: set[asyncio.Task[None]] = set()

    async def guarded(job: T) -> None:
        try:
            await one(job)
        finally:
            places.release()

    pending = iter(jobs)
    try:
        while True:
            await places.acquire()
            job = next(pending, _END)
            if job is _END:
                places.release()
                break
            task = asyncio.create_task(guarded(job))  # type: ignore[arg-type]
            running.add(task)
            task.add_done_callback(running.discard)
        if running:
            await asyncio.gather(*running)
    finally:
        for task in running:
            task.cancel()
