"""Per-provider limits: requests in flight and requests per minute."""

from __future__ import annotations

import asyncio
import time


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


class ProviderLimits:
    """What one provider may have going at once."""

    def __init__(self, concurrency: int, rpm: float | None) -> None:
        self.slots = asyncio.Semaphore(concurrency)
        self.rate = RateLimiter(rpm)
