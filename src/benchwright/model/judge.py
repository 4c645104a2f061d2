"""The judge model: the config's ``llm-judge``, asked by the LLM-judge criteria from the
executor's threads through the run's generation engine (its limits, retries and cache).

The judge's answers are cached like any generation (the prompt holds the solution, so a
changed solution is a new question), and its tokens and cost are its own: they never count
towards the candidate model's ``token-count`` or ``cost``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchwright.model.base import GenerationRequest
from benchwright.model.engine import GenerationEngine
from benchwright.model.resolve import ResolvedModel

JUDGE_PARAMS: dict[str, Any] = {"temperature": 0.0, "max_tokens": 1024}
"""What the judge is asked with: deterministic, and room for a short explanation."""


@dataclass(frozen=True)
class JudgeReply:
    """The judge's raw answer to one prompt, and what it cost."""

    text: str | None
    error: str | None
    """Why there is no answer (the provider failed after its retries)."""
    model: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    cached: bool = False
    latency_ms: float | None = None

    def usage(self) -> dict[str, Any]:
        """The judge's own tokens and cost, for a record's ``details.judge``."""
        return {"model": self.model, "tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                "cost_usd": self.cost_usd, "cached": self.cached, "latency_ms": self.latency_ms}


class Judge:
    """Asks the judge model; usable from any thread while the run's event loop runs."""

    def __init__(self, engine: GenerationEngine, model: ResolvedModel) -> None:
        self.engine = engine
        self.model = model
        self._loop: asyncio.AbstractEventLoop | None = None

    def bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """The loop the engine's provider clients live on (the run's)."""
        self._loop = loop

    async def ask_async(self, prompt: str, *, language: str, task: str, sample: int = 0,
                        params: Mapping[str, Any] | None = None) -> JudgeReply:
        """Ask ``prompt`` once. ``sample`` makes the same prompt a distinct request (its own
        cache entry: asking again with another index is a new answer, not the cached one);
        ``params`` override :data:`JUDGE_PARAMS` (e.g. a larger ``max_tokens``)."""
        request = GenerationRequest(
            model=self.model.model, mode="instruct", messages=[{"role": "user", "content": prompt}],
            prompt=prompt, language=language, params={**JUDGE_PARAMS, **(params or {})}, task=task,
            sample=sample)
        start = time.perf_counter()
        outcome = await self.engine.answer(self.model.provider, request)
        answer = outcome.answer
        if answer is None:
            return JudgeReply(None, outcome.error or "no answer", self.model.id)
        return JudgeReply(
            answer.text, None, self.model.id, answer.tokens_in, answer.tokens_out, answer.cost_usd,
            outcome.cached, outcome.latency_ms if outcome.latency_ms is not None
            else (time.perf_counter() - start) * 1000)

    def ask(self, prompt: str, *, language: str, task: str, sample: int = 0,
            params: Mapping[str, Any] | None = None) -> JudgeReply:
        """Ask from a worker thread (blocks it until the answer or the engine gives up);
        ``sample`` and ``params`` as in :meth:`ask_async`."""
        if self._loop is None:
            raise RuntimeError("the judge is not bound to the run's event loop")
        future = asyncio.run_coroutine_threadsafe(
            self.ask_async(prompt, language=language, task=task, sample=sample, params=params),
            self._loop)
        return future.result()
