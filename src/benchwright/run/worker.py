"""What happens to one sample: generate, extract, execute, evaluate."""

from __future__ import annotations

import re
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from benchwright.config.model import Limits
from benchwright.config.settings import Settings
from benchwright.criteria.base import Criterion, Measurement, SampleContext
from benchwright.errors import InfraError
from benchwright.lang.base import Language
from benchwright.model.engine import GenerationEngine
from benchwright.model.judge import Judge
from benchwright.model.resolve import ResolvedModel
from benchwright.registry import registry
from benchwright.results.record import Generation, Outcome, Record
from benchwright.run.plan import SampleUnit
from benchwright.sandbox.base import Sandbox
from benchwright.task.model import LanguageSpec


def finish_continuation(continuation: str, spec: LanguageSpec) -> str:
    """A continuation cut at the first of the task's stop sequences, then the task's suffix
    (what closes the prompt's function, as the dataset's own harness appends it)."""
    cuts = [i for i in (continuation.find(s) for s in spec.stop if s) if i >= 0]
    if cuts:
        continuation = continuation[: min(cuts)]
    return continuation + (spec.completion_suffix or "")


def extract(unit: SampleUnit, raw: str, lang: Language | None) -> str:
    """The code to run, from the raw answer (which is always kept beside it).

    * a continuation (completion API, completion task): prompt + continuation, cut at the
      task's stop sequences and followed by its completion suffix (an answer that starts
      with the prompt, or is the golden solution, is whole code, used as it is);
    * a chat answer to a completion task: its code block when that repeats the prompt or
      defines the entry point (then with the prompt's imports in front), else prompt + block;
    * otherwise: the fenced block of the task's language (or the whole answer).
    """
    prompt = unit.rendered.prompt
    if unit.api == "complete" and unit.task.mode == "complete":
        if raw.startswith(prompt):  # a model that repeated the prompt
            return raw
        if unit.golden is not None and prompt + raw == unit.golden:  # the golden continuation (the
            return unit.golden  # reference model's, or a mutant's) is whole code: never cut
        return prompt + finish_continuation(raw, unit.task.spec(unit.language))
    code = lang.extract_code(raw) if lang is not None else raw
    if unit.task.mode != "complete":
        return code
    if code.lstrip().startswith(prompt.strip()[:200]):
        return code
    entry = unit.rendered.entry_point
    if entry and re.search(rf"^\s*(def|class)\s+{re.escape(entry)}\b", code, flags=re.M):
        header = [line for line in prompt.splitlines()
                  if line.startswith(("import ", "from ")) and line not in code]
        return "\n".join(header) + ("\n\n" if header else "") + code
    return prompt + code


@dataclass(frozen=True)
class WorkerSpec:
    """What it takes to build a run's :class:`Worker` in another process or on another machine
    (a Ray worker): no open clients, no secrets (keys are read from that machine's environment
    by the providers it creates)."""

    run_id: str
    settings: Settings
    providers: dict[str, ResolvedModel]
    """One resolved model per provider the run uses, by provider name."""
    workspace: Path
    sandbox: str
    """The sandbox backend's name (a resumed run keeps its own)."""
    sample_cap_s: float | None
    limits: Limits
    judge: ResolvedModel | None
    cache_policy: bool | Literal["refresh"]
    cache_path: Path | None
    """The workspace's generation cache, where the driver runs; None: no cache."""


class Worker:
    """Does the work of units; shared by every executor. Thread-safe for ``evaluate``."""

    spec: WorkerSpec | None = None
    """How to build this worker elsewhere (set by the engine; executors that leave this
    process need it)."""

    def __init__(self, run_id: str, engine: GenerationEngine, sandbox: Sandbox, limits: Limits,
                 judge: Judge | None = None) -> None:
        self.run_id = run_id
        self.judge = judge
        self.engine = engine
        self.sandbox = sandbox
        self.limits = limits
        self._langs: dict[str, Language | None] = {}
        self._criteria: dict[str, Criterion] = {}
        self._missing: dict[str, str | None] = {}

    def language(self, name: str) -> Language | None:
        if name not in self._langs:
            self._langs[name] = registry.create("language", name) if registry.has("language", name) else None
        return self._langs[name]

    def close(self) -> None:
        """Stop what the languages and criteria keep running between samples (fork servers,
        javac servers, a type checker). The worker stays usable: they start again when needed."""
        for lang in list(self._langs.values()):
            if lang is not None:
                lang.close()
        for criterion in list(self._criteria.values()):
            criterion.close()

    def criterion(self, name: str) -> Criterion:
        if name not in self._criteria:
            self._criteria[name] = registry.create("criterion", name)
        return self._criteria[name]

    def missing(self, name: str) -> str | None:
        """Why criterion ``name`` cannot run on this machine (asked once a run), or None."""
        if name not in self._missing:
            self._missing[name] = self.criterion(name).missing()
        return self._missing[name]

    async def generate(self, unit: SampleUnit) -> Generation:
        messages = unit.messages()
        gen = Generation(
            run_id=self.run_id, execution_id=unit.execution_id, task_source=unit.task_source,
            task=unit.task.name, language=unit.language, model=unit.model.label,
            provider=unit.resolved.provider, sample=unit.sample, mode=unit.api,
            messages=messages, prompt=unit.rendered.prompt,
        )
        request = unit.request()
        try:
            outcome = await self.engine.answer(unit.resolved.provider, request)
        except Exception as e:  # a provider bug must not stop the run
            gen.error = f"{type(e).__name__}: {e}"
            return gen
        gen.attempts, gen.cached, gen.replay_ms = outcome.attempts, outcome.cached, outcome.replay_ms
        gen.latency_ms, gen.token_estimator = outcome.latency_ms, outcome.token_estimator
        answer = outcome.answer
        if answer is None:
            gen.error = outcome.error or "no answer"
            return gen
        gen.answered_by = answer.model
        gen.raw = answer.text
        gen.code = extract(unit, answer.text, self.language(unit.language))
        gen.tokens_in, gen.tokens_out = answer.tokens_in, answer.tokens_out
        gen.tokens_estimated = answer.tokens_estimated
        gen.finish_reason, gen.cost_usd = answer.finish_reason, answer.cost_usd
        return gen

    def _record(self, unit: SampleUnit, criterion: str, executor: str, m: Measurement) -> Record:
        return Record(
            run_id=self.run_id, execution_id=unit.execution_id, task_source=unit.task_source,
            task=unit.task.name, language=unit.language, model=unit.model.label, sample=unit.sample,
            criterion=criterion, executor=executor, score=m.score, unit=m.unit,
            verdict=m.verdict, required=m.required, output=m.output, error=m.error,
            time_ms=m.time_ms, test_case=m.test_case, code=m.code, status=m.status, line=m.line,
            hidden=m.hidden, details=m.details, difficulty=unit.task.difficulty, area=unit.task.area,
        )

    def evaluate(self, unit: SampleUnit, gen: Generation) -> list[Record]:
        """Every record of the sample, its outcome set on each. Never raises for a sample."""
        if gen.error is not None or gen.code is None:
            rec = self._record(unit, "generation", unit.resolved.provider_type,
                               Measurement(score=None, error=gen.error or "no answer"))
            rec.outcome = "infra_error"
            return [rec]
        ctx = SampleContext(
            task=unit.task, language=unit.language, rendered=unit.rendered, generation=gen,
            code=gen.code, lang=self.language(unit.language), sandbox=self.sandbox, limits=self.limits,
            judge=self.judge,
            settings=self.engine.settings,
        )
        records: list[Record] = []
        infra: str | None = None
        for name in sorted(unit.criteria, key=lambda n: self.criterion(n).evaluated_last):
            plugin = self.criterion(name)
            executor = type(plugin).__name__
            start = time.perf_counter()
            try:
                why = self.missing(name)
                if why is not None:  # its tool is not installed: said on every sample, never an error
                    measurements = [Measurement(score=None, verdict="n/a", output=why)]
                else:
                    measurements = plugin.evaluate(ctx)
            except InfraError as e:
                infra = infra or str(e)
                measurements = [Measurement(score=None, error=f"infra_error: {e}")]
            except Exception as e:
                infra = infra or f"{type(e).__name__}: {e}"
                tb = traceback.format_exc(limit=5)
                measurements = [Measurement(score=None, error=f"infra_error: {e}", output=tb)]
            elapsed = (time.perf_counter() - start) * 1000
            for m in measurements:
                if m.time_ms is None and m.test_case is None:
                    m.time_ms = elapsed
                if m.unit is None:
                    m.unit = plugin.unit
                records.append(self._record(unit, name, executor, m))
        outcome = self.outcome(ctx, infra)
        if not records:
            records.append(self._record(unit, "generation", unit.resolved.provider_type,
                                        Measurement(score=None, output="no criterion applies")))
        for r in records:
            r.outcome = outcome
        return records

    @staticmethod
    def outcome(ctx: SampleContext, infra: str | None) -> Outcome:
        if infra is not None:
            return "infra_error"
        result = ctx.executed
        if result is None:
            return "pass"
        if result.unsupported is not None:  # needs what the sandbox cannot offer: never counted
            return "infra_error"
        if result.build_error is not None:
            return "error"
        if not ctx.rendered.tests:  # no test case applies (and the code compiled or loaded)
            return "untested"
        statuses = {t.status for t in result.tests}
        if statuses <= {"pass"} and result.tests:
            return "pass"
        if statuses & {"error", "timeout", "not_run"}:
            return "error"
        return "fail"
