"""The generation engine: limits, retries, the cache, timing, tokens and cost around providers.

One engine serves a run. For each request it consults the cache (unless the config says
``cache: false`` or ``refresh``), waits for a slot and the rate limit of the request's provider,
makes an attempt, and on a retryable failure (429, 5xx, a timeout, a dropped connection) waits
``Retry-After`` if the service gave one, else an exponential backoff with jitter, and tries
again. A request that still fails is returned as a failure: the sample becomes ``infra_error``
and the run goes on.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from benchwright.config import prices
from benchwright.config.settings import ProviderSettings, Settings
from benchwright.model import tokens
from benchwright.model.base import Answer, GenerationRequest, Provider, ProviderError
from benchwright.model.cache import AnswerCache, CachedAnswer, cache_key
from benchwright.model.limits import Limits, ProviderLimits

CachePolicy = bool | Literal["refresh"]
Sleep = Callable[[float], Awaitable[None]]
LimitsFactory = Callable[[str, ProviderSettings], Limits]
"""The limits of the provider called ``name`` with these settings."""


def local_limits(name: str, conf: ProviderSettings) -> Limits:
    """Limits kept in this process: a run on one machine."""
    return ProviderLimits(conf.concurrency, conf.rpm)


@dataclass(frozen=True)
class Outcome:
    """What the engine got for one request."""

    answer: Answer | None
    error: str | None
    attempts: int
    latency_ms: float | None
    """Wall time of the successful attempt (for a cached answer: the original's)."""
    cached: bool = False
    replay_ms: float | None = None
    """For a cached answer: how long the cache took to return it."""
    token_estimator: str | None = None


class GenerationEngine:
    def __init__(
        self,
        providers: dict[str, Provider],
        settings: Settings,
        cache: AnswerCache | None = None,
        policy: CachePolicy = True,
        sleep: Sleep = asyncio.sleep,
        limits: LimitsFactory = local_limits,
    ) -> None:
        self.providers = providers
        self.settings = settings
        self.cache = cache
        self.policy = policy
        self.sleep = sleep
        self._make_limits = limits
        self._limits: dict[str, Limits] = {}

    def limits(self, name: str) -> Limits:
        if name not in self._limits:
            self._limits[name] = self._make_limits(name, self.providers[name].settings)
        return self._limits[name]

    def _key(self, name: str, request: GenerationRequest) -> str | None:
        provider = self.providers[name]
        if self.cache is None or self.policy is False or not provider.cacheable:
            return None
        conf = provider.settings
        return cache_key(name, conf.type, conf.base_url, request)

    async def answer(self, name: str, request: GenerationRequest) -> Outcome:
        """Answer ``request`` with the provider called ``name``. Never raises for a failed call."""
        key = self._key(name, request)
        if key is not None and self.policy is True:
            start = time.perf_counter()
            hit = self.cache.get(key) if self.cache else None
            if hit is not None:
                answer = Answer(**{f.name: getattr(hit, f.name) for f in fields(Answer)})
                return Outcome(answer, None, 0, hit.latency_ms, cached=True,
                               replay_ms=(time.perf_counter() - start) * 1000)
        outcome = await self._attempts(name, request)
        if outcome.answer is not None and key is not None and self.cache is not None:
            a = outcome.answer  # not asdict(): it would turn the ToolCalls into dicts
            self.cache.put(key, name, request.model,
                           CachedAnswer(**{f.name: getattr(a, f.name) for f in fields(Answer)},
                                        latency_ms=outcome.latency_ms or 0.0))
        return outcome

    async def _attempts(self, name: str, request: GenerationRequest) -> Outcome:
        provider = self.providers[name]
        if not provider.reads_golden and request.golden is not None:
            request = replace(request, golden=None)  # the answer key reaches only the reference
        conf = provider.settings
        limits = self.limits(name)
        last = "no attempt was made"
        for attempt in range(1, conf.max_retries + 2):
            retry_after: float | None = None
            await limits.rate.wait()
            async with limits.slots:
                start = time.perf_counter()
                try:
                    async with asyncio.timeout(conf.timeout_s):
                        answer = await provider.generate(request)
                except ProviderError as e:
                    last = self._redact(provider, str(e))
                    if not e.retryable:
                        return Outcome(None, last, attempt, None)
                    retry_after = e.retry_after
                except TimeoutError:
                    last = f"no answer within {conf.timeout_s:g} s"
                else:
                    latency = (time.perf_counter() - start) * 1000
                    answer, estimator = self._complete(name, request, answer)
                    return Outcome(answer, None, attempt, latency, token_estimator=estimator)
            if attempt <= conf.max_retries:
                await self.sleep(self._delay(conf.backoff_s, conf.max_backoff_s, attempt, retry_after))
        return Outcome(None, f"gave up after {conf.max_retries + 1} attempts: {last}",
                       conf.max_retries + 1, None)

    @staticmethod
    def _redact(provider: Provider, text: str) -> str:
        """Remove the provider's key (and any long piece of it) from a message."""
        key = provider.api_key()
        if key and len(key) >= 8:
            text = text.replace(key, "[redacted]")
            for size in (24, 16, 8):
                for i in range(0, len(key) - size + 1, size // 2):
                    text = text.replace(key[i : i + size], "[redacted]")
        return text

    @staticmethod
    def _delay(base: float, cap: float, attempt: int, retry_after: float | None) -> float:
        """Retry-After when given (capped), else base * 2^(attempt-1) with full jitter."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), max(cap, 0.0))
        return random.uniform(0, min(cap, base * 2 ** (attempt - 1)))

    def _complete(self, name: str, request: GenerationRequest, answer: Answer) -> tuple[Answer, str | None]:
        """Fill in estimated tokens and the cost where the service gave none."""
        estimator = None
        tin, tout, estimated = answer.tokens_in, answer.tokens_out, answer.tokens_estimated
        if tin is None:
            sent = "\n".join(_message_text(m) for m in request.messages) or request.prompt
            tin, estimator = tokens.estimate(sent, request.model)
            estimated = True
        if tout is None:
            said = "\n".join([answer.text, *(f"{c.name}({c.arguments})" for c in answer.tool_calls)])
            tout, estimator = tokens.estimate(said, request.model)
            estimated = True
        cost = answer.cost_usd
        if cost is None:
            price = prices.find_price(request.model, self.providers[name].settings, self.settings)
            cost = prices.cost(price, tin, tout)
        return replace(answer, tokens_in=tin, tokens_out=tout, tokens_estimated=estimated,
                       cost_usd=cost), estimator

    async def aclose(self) -> None:
        for provider in self.providers.values():
            await provider.aclose()


def _message_text(message: dict[str, Any]) -> str:
    """What a chat message says, for estimating tokens (a tool-call turn: its calls)."""
    content = message.get("content")
    parts = [content if isinstance(content, str) else "" if content is None else str(content)]
    for call in message.get("tool_calls") or ():
        function = (call.get("function") if isinstance(call, dict) else None) or {}
        parts.append(f"{function.get('name', '')}({function.get('arguments', '')})")
    return "\n".join(p for p in parts if p)
