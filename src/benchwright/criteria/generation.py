"""``cost`` and ``latency``: what the generation of a sample cost, in money and in time."""

from __future__ import annotations

from benchwright.criteria.base import Criterion, Measurement, SampleContext


class Cost(Criterion):
    """Price of the generation in USD, from the provider's tokens and the price table."""

    name = "cost"
    unit = "USD"
    higher_is_better = False

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        g = ctx.generation
        if g.cost_usd is None:
            return [Measurement(score=None, unit=self.unit, verdict="n/a", output=(
                f"no price is known for {g.model}: add it under prices in the settings "
                "(see docs/criteria.md#cost)"))]
        return [Measurement(score=float(g.cost_usd), unit=self.unit, details={
            "tokens_in": g.tokens_in, "tokens_out": g.tokens_out,
            "tokens_estimated": g.tokens_estimated, "cached": g.cached,
            "paid_this_run": 0.0 if g.cached else g.cost_usd,
        })]


class Latency(Criterion):
    """Wall time of the generation request, retries included (a cached answer keeps its own)."""

    name = "latency"
    unit = "ms"
    higher_is_better = False

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        g = ctx.generation
        if g.latency_ms is None:
            return [Measurement(score=None, unit=self.unit, verdict="n/a",
                                output="the generation has no recorded latency")]
        return [Measurement(score=float(g.latency_ms), unit=self.unit, details={
            "cached": g.cached, "replay_ms": g.replay_ms, "attempts": g.attempts,
            "tokens_out": g.tokens_out,
        })]


CRITERIA = (Cost, Latency)
