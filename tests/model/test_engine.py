"""The generation engine around any provider: retries, Retry-After, limits, cache policy."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from benchwright.config.settings import ProviderSettings, Settings
from benchwright.model.base import Answer, GenerationRequest, Provider, ProviderError
from benchwright.model.cache import GenerationCache
from benchwright.model.engine import GenerationEngine


class Scripted(Provider):
    """A provider that plays a script of outcomes, one per attempt (then answers)."""

    def __init__(self, script: list[BaseException | float], **conf: object) -> None:
        super().__init__("scripted", ProviderSettings(type="scripted", **conf))  # type: ignore[arg-type]
        self.script = list(script)
        self.calls = 0
        self.active = 0
        self.peak = 0

    async def generate(self, request: GenerationRequest) -> Answer:
        self.calls += 1
        self.active += 1
        self.peak = max(self.peak, self.active)
        try:
            step = self.script.pop(0) if self.script else 0.0
            if isinstance(step, BaseException):
                raise step
            await asyncio.sleep(step)
            return Answer(text=f"answer to {request.prompt}", tokens_in=3, tokens_out=4, model="m-1")
        finally:
            self.active -= 1


def request(prompt: str = "p", sample: int = 0) -> GenerationRequest:
    return GenerationRequest(model="gpt-4o", mode="instruct", messages=[{"role": "user", "content": prompt}],
                             prompt=prompt, language="python", sample=sample)


def run(engine: GenerationEngine, req: GenerationRequest | None = None):  # type: ignore[no-untyped-def]
    return asyncio.run(engine.answer("scripted", req or request()))


def test_retries_retryable_errors_then_answers() -> None:
    delays: list[float] = []

    async def sleep(s: float) -> None:
        delays.append(s)

    p = Scripted([ProviderError("503", retryable=True, status=503),
                  ProviderError("429", retryable=True, retry_after=7.0, status=429)], backoff_s=1.0)
    out = run(GenerationEngine({"scripted": p}, Settings(), sleep=sleep))
    assert out.answer is not None and out.error is None
    assert out.attempts == 3 and p.calls == 3
    assert 0 <= delays[0] <= 1.0          # first backoff: jitter within base
    assert delays[1] == 7.0               # Retry-After honoured
    assert out.answer.cost_usd == pytest.approx((3 * 2.5 + 4 * 10.0) / 1e6)  # default gpt-4o price


def test_backoff_grows_exponentially_and_is_capped() -> None:
    delays: list[float] = []

    async def sleep(s: float) -> None:
        delays.append(s)

    errors: list[BaseException | float] = [ProviderError("x", retryable=True) for _ in range(6)]
    p = Scripted(errors, backoff_s=1.0, max_backoff_s=5.0, max_retries=6)
    run(GenerationEngine({"scripted": p}, Settings(), sleep=sleep))
    caps = [1, 2, 4, 5, 5, 5]
    assert len(delays) == 6
    assert all(0 <= d <= c for d, c in zip(delays, caps, strict=True))


def test_non_retryable_error_fails_at_once() -> None:
    p = Scripted([ProviderError("401 bad key", retryable=False, status=401)])
    out = run(GenerationEngine({"scripted": p}, Settings()))
    assert out.answer is None and out.attempts == 1 and "401" in (out.error or "")


def test_gives_up_after_max_retries() -> None:
    async def sleep(s: float) -> None:
        return None

    p = Scripted([ProviderError("boom", retryable=True) for _ in range(10)], max_retries=2)
    out = run(GenerationEngine({"scripted": p}, Settings(), sleep=sleep))
    assert out.answer is None and out.attempts == 3 and p.calls == 3
    assert "gave up after 3 attempts" in (out.error or "")


def test_timeout_is_retried() -> None:
    async def sleep(s: float) -> None:
        return None

    p = Scripted([5.0], timeout_s=0.05, max_retries=1)
    out = run(GenerationEngine({"scripted": p}, Settings(), sleep=sleep))
    assert out.answer is not None and out.attempts == 2


def test_concurrency_limit_per_provider() -> None:
    p = Scripted([0.02] * 40, concurrency=3)
    engine = GenerationEngine({"scripted": p}, Settings())

    async def many() -> None:
        await asyncio.gather(*(engine.answer("scripted", request(str(i))) for i in range(40)))

    asyncio.run(many())
    assert p.peak == 3


def test_requests_per_minute_spacing() -> None:
    p = Scripted([], rpm=600)  # one start every 0.1 s
    engine = GenerationEngine({"scripted": p}, Settings())

    async def many() -> float:
        start = time.monotonic()
        await asyncio.gather(*(engine.answer("scripted", request(str(i))) for i in range(6)))
        return time.monotonic() - start

    assert asyncio.run(many()) >= 0.45  # five gaps of 0.1 s between six starts


def test_cache_policies(tmp_path: Path) -> None:
    cache = GenerationCache(tmp_path / "cache.sqlite3")
    p = Scripted([0.05])
    first = run(GenerationEngine({"scripted": p}, Settings(), cache, True))
    assert not first.cached and p.calls == 1
    again = run(GenerationEngine({"scripted": p}, Settings(), cache, True))
    assert again.cached and p.calls == 1
    assert again.latency_ms == first.latency_ms and again.replay_ms is not None
    assert again.answer == first.answer
    other_sample = run(GenerationEngine({"scripted": p}, Settings(), cache, True), request(sample=1))
    assert not other_sample.cached and p.calls == 2
    refreshed = run(GenerationEngine({"scripted": p}, Settings(), cache, "refresh"))
    assert not refreshed.cached and p.calls == 3
    off = run(GenerationEngine({"scripted": p}, Settings(), cache, False))
    assert not off.cached and p.calls == 4
    cache.close()


def test_tokens_estimated_when_the_service_gives_none() -> None:
    class NoUsage(Scripted):
        async def generate(self, request: GenerationRequest) -> Answer:
            return Answer(text="def f():\n    return 1\n")

    out = run(GenerationEngine({"scripted": NoUsage([])}, Settings()))
    assert out.answer is not None and out.answer.tokens_estimated
    assert out.answer.tokens_in and out.answer.tokens_out and out.token_estimator


def test_a_key_in_an_error_message_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-test-0123456789abcdefghijklmnop"
    monkeypatch.setenv("BW_ENGINE_KEY", key)
    p = Scripted([ProviderError(f"Incorrect API key provided: {key[:20]}****", retryable=False)],
                 api_key_env="BW_ENGINE_KEY")
    out = run(GenerationEngine({"scripted": p}, Settings()))
    assert out.error is not None and "Incorrect API key" in out.error
    assert key[:16] not in out.error and key[8:24] not in out.error


class Peeking(Scripted):
    """A provider (a third party's, say) that would answer with the answer key if it got it."""

    async def generate(self, request: GenerationRequest) -> Answer:
        return Answer(text=request.golden or "no answer key")


def test_the_golden_solution_reaches_only_the_reference_provider() -> None:
    """The request a run builds carries the task's golden solution; the engine strips it for
    every provider but the one that answers with it."""
    from dataclasses import replace

    from benchwright.model.reference import ReferenceProvider

    asked = replace(request("def f(): pass"), golden="def f():\n    return 42\n")
    peek = Peeking([])
    out = asyncio.run(GenerationEngine({"scripted": peek}, Settings()).answer("scripted", asked))
    assert out.answer is not None and out.answer.text == "no answer key"
    reference = ReferenceProvider("reference", ProviderSettings(type="reference"))
    out = asyncio.run(GenerationEngine({"reference": reference}, Settings()).answer("reference", asked))
    assert out.answer is not None and "return 42" in out.answer.text
