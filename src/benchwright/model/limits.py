"""Per-provider limits: requests in flight and requests per minute."""

from __future__ import annotations

import asyncio
import time
from contextlib import AbstractAsyncContextManager
from typing import Protocol


class RateLimiter:
    """Spaces request starts ``60 / rpm`` seconds apart (no bursts); no limit when rpm is None."""

    def __init__(self, rpm: float | None) -> None:
        self.interval = 60.0 / rpm if rpm else 0.0
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self._lock:
            now = time.monotonic()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)


class Pace(Protocol):
    async def wait(self) -> None:
        """Return when the next request may start."""


class Limits(Protocol):
    """What the generation engine asks before each attempt: a slot (``async with slots``) and
    the pace (``await rate.wait()``). :class:`ProviderLimits` keeps them in this process; the
    Ray executor's keep them in one place for the whole cluster."""

    @property
    def slots(self) -> AbstractAsyncContextManager[object]: ...

    @property
    def rate(self) -> Pace: ...


class ProviderLimits:
    """What one provider may have going at once, in this process."""

    def __init__(self, concurrency: int, rpm: float | None) -> None:
        self.slots = asyncio.Semaphore(concurrency)
        self.rate = RateLimiter(rpm)
