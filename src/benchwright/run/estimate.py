"""What a run of a config will do, before it starts: how many generations and test executions,
how many of those generations the workspace's generation cache already holds (looked up with
the very keys the run's generation engine uses), and what the rest should cost from the price
table. Nothing is asked of any provider and nothing is written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from benchwright.agents.plan import agent_units, load_scenarios
from benchwright.config.load import load_config
from benchwright.config.prices import cost, find_price
from benchwright.errors import InputError, PluginNotFound
from benchwright.model import resolve as model_resolve
from benchwright.model.cache import CACHE_FILE, GenerationCache, cache_key
from benchwright.model.tokens import estimate as estimate_tokens
from benchwright.run.engine import load_sources, task_source_paths
from benchwright.run.plan import SampleUnit, build_plan
from benchwright.run.selection import selection_problems
from benchwright.workspace import Workspace


class ModelPreview(BaseModel):
    """One model's share of the run."""

    model: str = Field(description="The model's label in results.")
    provider: str
    generations: int = Field(description="Samples the model is asked for.")
    cached: int | None = Field(description="Of those, answers already in the generation cache (served "
                               "without a call); None: this provider's answers are never cached.")
    tokens_in: int = Field(description="Estimated prompt tokens of the generations not cached.")
    tokens_out: int | None = Field(description="Estimated answer tokens of those (from the golden "
                                   "solutions, else max_tokens); None: no way to estimate.")
    price_known: bool = Field(description="Whether the price table has the model.")
    cost_usd: float | None = Field(description="Estimated cost of the generations not cached; None: "
                                   "no price for the model (never shown as 0), or no token estimate.")


class Preview(BaseModel):
    """What a launch of the config will run and cost."""

    config: str
    tasks: int = Field(description="Tasks selected (over every task source).")
    languages: list[str]
    models: list[str]
    samples: int = Field(description="Samples per task, language and model.")
    generations: int = Field(description="tasks x languages x models x samples, as the filters leave them.")
    executions: int = Field(description="Test executions: every test of every sample.")
    agent_runs: int = Field(0, description="Coding-agent runs (scenario tasks x agents).")
    cached: int = Field(description="Generations already in the generation cache.")
    cache_used: bool = Field(description="Whether the run reads the cache (cache: true).")
    cost_usd: float | None = Field(description="Estimated cost of the priced models' generations not "
                                   "cached; None when no model has a price.")
    unpriced: list[str] = Field(default_factory=list, description="Models with no price (their cost is not in cost_usd).")
    judge: str | None = Field(None, description="The llm-judge model (its calls are not in the estimate).")
    by_model: list[ModelPreview] = Field(default_factory=list)


def preview(ws: Workspace, config_path: Path, tasks: Sequence[str] = ()) -> Preview:
    """The preview of ``benchwright run CONFIG [--tasks ...]``.

    Raises:
        InputError: the config, a task source or a scenario does not validate.
        UserError: a model names no known provider.
    """
    doc, config = load_config(config_path)
    paths = task_source_paths(ws, config, config_path, tasks, doc)
    sources = load_sources(paths)
    plan = build_plan(config, str(config_path), sources, ws.settings, config_doc=doc)
    if chosen := selection_problems(config, str(config_path), doc, sources, plan):
        raise InputError(chosen)
    agents = agent_units(ws, config, config_path, load_scenarios(ws, config, config_path, doc), doc)
    use_cache = config.cache is True
    by_model = [_model_preview(ws, units, use_cache) for units in _by_model(plan.units).values()]
    priced = [m.cost_usd for m in by_model if m.cost_usd is not None]
    return Preview(
        config=str(config_path.relative_to(ws.root)) if config_path.is_relative_to(ws.root) else str(config_path),
        tasks=len({(u.task_source, u.task.name) for u in plan.units}),
        languages=sorted({u.language for u in plan.units}),
        models=[m.model for m in by_model],
        samples=max((u.sample + 1 for u in plan.units), default=0),
        generations=len(plan.units),
        executions=sum(len(u.rendered.tests) for u in plan.units),
        agent_runs=len(agents),
        cached=sum(m.cached or 0 for m in by_model),
        cache_used=use_cache,
        cost_usd=sum(priced) if priced else None,
        unpriced=[m.model for m in by_model if m.cost_usd is None],
        judge=plan.judge.id if plan.judge is not None else None,
        by_model=by_model,
    )


def _by_model(units: Sequence[SampleUnit]) -> dict[str, list[SampleUnit]]:
    out: dict[str, list[SampleUnit]] = {}
    for u in units:
        out.setdefault(u.model.label, []).append(u)
    return out


def _cacheable(ws: Workspace, resolved: model_resolve.ResolvedModel) -> bool:
    """Whether the provider's answers go to the cache (as the generation engine decides)."""
    try:
        return model_resolve.create(resolved, ws.settings).cacheable
    except PluginNotFound:
        return False


def _hits(ws: Workspace, units: Sequence[SampleUnit]) -> set[str]:
    """The execution ids of ``units`` whose answer the workspace's cache holds, found with the
    key :class:`~benchwright.model.engine.GenerationEngine` uses."""
    path = ws.state / CACHE_FILE
    if not units or not path.is_file():
        return set()
    conf = model_resolve.providers(ws.settings)[units[0].resolved.provider]
    found = set()
    with GenerationCache(path) as cache:
        for u in units:
            if cache.get(cache_key(u.resolved.provider, conf.type, conf.base_url, u.request())) is not None:
                found.add(u.execution_id)
    return found


def _model_preview(ws: Workspace, units: Sequence[SampleUnit], use_cache: bool) -> ModelPreview:
    first = units[0]
    cacheable = _cacheable(ws, first.resolved)
    hits = _hits(ws, units) if cacheable else set()
    paid = [u for u in units if not (use_cache and u.execution_id in hits)]
    tokens_in = sum(_tokens_in(u) for u in paid)
    outs = [_tokens_out(u) for u in paid]
    tokens_out = None if any(t is None for t in outs) else sum(t for t in outs if t is not None)
    conf = model_resolve.providers(ws.settings).get(first.resolved.provider)
    price = find_price(first.resolved.model, conf, ws.settings)
    spent = 0.0 if not paid and price is not None else cost(price, tokens_in, tokens_out)
    return ModelPreview(model=first.model.label, provider=first.resolved.provider, generations=len(units),
                        cached=len(hits) if cacheable else None, tokens_in=tokens_in, tokens_out=tokens_out,
                        price_known=price is not None,
                        cost_usd=spent if tokens_out is not None or not paid else None)


def _tokens_in(unit: SampleUnit) -> int:
    text = "\n".join(m["content"] for m in unit.messages()) or unit.rendered.prompt
    return estimate_tokens(text, unit.resolved.model)[0]


def _tokens_out(unit: SampleUnit) -> int | None:
    """The answer's likely length: the golden solution's, else the model's max_tokens."""
    if unit.golden:
        return estimate_tokens(unit.golden, unit.resolved.model)[0]
    return unit.model.max_tokens
