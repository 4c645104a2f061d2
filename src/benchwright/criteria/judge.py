"""``llm-judge-code-quality``, ``llm-judge-comment-quality`` and ``llm-judge-solution-correctness``.

One question per sample: the task's ``llm_judge_prompt`` (else :data:`DEFAULT_PROMPT`) with the
task's prompt and the extracted solution, sent to the config's ``llm-judge`` model. The three
criteria share the answer; each records the score under its own key (``code_quality``,
``comment_quality``, ``solution_correctness``). The answer is read leniently (see
:func:`parse_scores`); an answer with no usable score is recorded as such, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from benchwright.criteria.base import Criterion, Measurement, SampleContext
from benchwright.errors import InfraError, UserError
from benchwright.model.judge import JudgeReply
from benchwright.model.judge_answer import answer_mappings, key_of
from benchwright.task.render import render_judge_prompt

SCALE = (0.0, 10.0)

DEFAULT_PROMPT = """\
You are an experienced software engineer reviewing a candidate's answer to a coding exercise.

The exercise was:
{prompt}

The candidate's solution ({language}):
{solution}

Rate the solution on a scale from 0 (worst) to 10 (best). Respond with YAML only, with these
keys: solution_correctness (does it solve the exercise, edge cases included), code_quality
(clarity, structure, idiomatic use of the language), comment_quality (are comments and
docstrings present where they help, and accurate), style_quality (naming and formatting), and
explanation (one line).
"""
"""The question for a task without an ``llm_judge_prompt``."""

NO_JUDGE = ("the execution config names no judge model: add `llm-judge: provider/model` to it "
            "(see docs/criteria.md#llm-judge-code-quality)")

_NUMBER = re.compile(r"(-?\d+(?:\.\d+)?)\s*(?:/\s*10\b)?(?!\d|\.\d)")


def _number(value: Any) -> float | None:
    """A score written ``7``, ``7.5``, ``7/10`` (words after it allowed: ``9/10 - works``)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        m = _NUMBER.match(value.strip("*` "))
        if m:
            return float(m.group(1))
    return None


def _mapping_scores(data: Any) -> dict[str, float]:
    if not isinstance(data, dict):
        return {}
    out: dict[str, float] = {}
    for k, v in data.items():
        if isinstance(v, dict):  # scores nested under a heading (evaluation: {code_quality: 7})
            for kk, vv in _mapping_scores(v).items():
                out.setdefault(kk, vv)
            continue
        n = _number(v)
        if n is not None:
            out[key_of(str(k))] = n
    return out


def parse_scores(text: str) -> tuple[dict[str, float], str]:
    """The scores in a judge's answer, and where they were found (``fenced``, ``yaml``,
    ``braces``, ``embedded`` or ``pairs``: see
    :func:`~benchwright.model.judge_answer.answer_mappings`; the embedded YAML starts at the
    first ``key: number`` line). Keys are normalised (:func:`key_of`); a value may be written
    ``7``, ``7.5`` or ``7/10``. Returns ``({}, "none")`` when nothing was found.
    """
    for found, data in answer_mappings(text, lambda _key, value: _number(value) is not None):
        scores = _mapping_scores(data)
        if scores:
            return scores, found
    return {}, "none"


@dataclass
class Judgement:
    """The judge's verdict on one sample, shared by the three criteria."""

    reply: JudgeReply
    prompt: str
    scores: dict[str, float] = field(default_factory=dict)
    found: str = "none"
    paid_by: str | None = None
    """The criterion whose record carries the judge's cost (the others share the answer)."""


def judge_prompt(ctx: SampleContext) -> str:
    """The question for this sample: the task's ``llm_judge_prompt`` or the default."""
    try:
        own = render_judge_prompt(ctx.task, ctx.language, ctx.rendered.parameters,
                                  ctx.rendered.prompt, ctx.code)
    except UserError as e:  # validated before the run; a failure here is the harness's
        raise InfraError(f"the task's llm_judge_prompt could not be rendered: {e}") from e
    if own is not None:
        return own
    return DEFAULT_PROMPT.format(prompt=ctx.rendered.prompt.strip(), language=ctx.language,
                                 solution=ctx.code.rstrip())


def judgement(ctx: SampleContext) -> Judgement:
    """Ask the judge about this sample once; every judge criterion of the sample shares it.

    Raises:
        InfraError: the judge model did not answer (after the engine's retries).
    """
    memo = ctx.memo.get("llm-judge")
    if isinstance(memo, Judgement):
        return memo
    if ctx.judge is None:
        raise InfraError(NO_JUDGE)
    prompt = judge_prompt(ctx)
    reply = ctx.judge.ask(prompt, language=ctx.language, task=ctx.task.name)
    if reply.text is None:
        raise InfraError(f"the judge model {reply.model} did not answer: {reply.error}")
    scores, found = parse_scores(reply.text)
    result = Judgement(reply, prompt, scores, found)
    ctx.memo["llm-judge"] = result
    return result


class LlmJudge(Criterion):
    """A score from 0 to 10 given by the judge model."""

    unit = "0-10"
    higher_is_better = True
    key = "?"
    tool = "the config's llm-judge model"
    needs_judge = True

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        if ctx.judge is None and "llm-judge" not in ctx.memo:
            return [Measurement(score=None, verdict="n/a", output=NO_JUDGE)]
        j = judgement(ctx)
        details: dict[str, Any] = {
            "key": self.key, "scores": j.scores, "found": j.found, "judge": j.reply.usage(),
            "prompt_chars": len(j.prompt),
        }
        if j.paid_by is None:
            j.paid_by = self.name
            details["judge"]["paid"] = True
        else:
            details["judge"]["paid"] = False
            details["judge"]["shared_with"] = j.paid_by
        score = j.scores.get(self.key)
        if score is None:
            why = ("the judge's answer has no usable score" if not j.scores else
                   f"the judge's answer has no {self.key} (it gave {', '.join(sorted(j.scores))}; "
                   f"ask for `{self.key}` in the task's llm_judge_prompt)")
            return [Measurement(score=None, status="unparseable", error=why, output=j.reply.text,
                                details=details)]
        low, high = SCALE
        if not low <= score <= high:
            return [Measurement(score=None, status="unparseable", output=j.reply.text, details=details,
                                error=f"the judge gave {self.key} = {score:g}, outside {low:g}-{high:g}")]
        return [Measurement(score=score, output=j.reply.text, details=details)]


class CodeQuality(LlmJudge):
    """LLM judge: code quality (clarity, structure, idiom), 0-10."""

    name = "llm-judge-code-quality"
    key = "code_quality"


class CommentQuality(LlmJudge):
    """LLM judge: quality of the comments and docstrings, 0-10."""

    name = "llm-judge-comment-quality"
    key = "comment_quality"


class SolutionCorrectness(LlmJudge):
    """LLM judge: whether the solution solves the task, 0-10."""

    name = "llm-judge-solution-correctness"
    key = "solution_correctness"


CRITERIA: tuple[type[Criterion], ...] = (CodeQuality, CommentQuality, SolutionCorrectness)
