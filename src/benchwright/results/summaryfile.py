"""What ``summary.yaml`` holds, key by key: the models that document the file and check it.

The summary is written as plain data by :func:`benchwright.results.summary.summarize` and the run
engine; these models say what each key means (``docs/formats.md`` is made from them) and a test
validates real summaries against them, extra keys refused, so that a key the writers add without
a description here fails it.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchwright.results.jsonl import SkippedLines
from benchwright.results.reasons import FailureGroup
from benchwright.results.stats import Estimate, Power

__all__ = ["CriterionSummary", "ModelSummary", "SampleRef", "SummaryFile", "ThresholdCheck",
           "TimeLimitsSummary"]


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SampleRef(_Closed):
    """One sample named in a list of the summary."""

    task_source: str = Field(description="The task source's name.")
    task: str = Field(description="The task.")
    language: str = Field(description="The language.")
    sample: int = Field(description="Which sample of the task (0, 1...).")
    tests: dict[str, Any] | None = Field(default=None, description=(
        "Per test case: what hit its time limit (in `timed_out_samples`) or why its pass looks "
        "forged (in `suspicious_samples`)."))


class CriterionSummary(_Closed):
    """One criterion's figures for one model."""

    mean: float | None = Field(description="The mean score over the samples it scored.")
    n: int = Field(description="How many samples it scored.")
    unit: str | None = Field(description="The unit of its scores (`ms`, `bytes`...; null: a share).")
    se: float | None = Field(description=(
        "The standard error of the mean, clustered by task (null with fewer than two tasks)."))
    ci95: list[float] | None = Field(description="The 95 % confidence interval of the mean.")
    ci_method: str = Field(description="How the interval was computed (`none`: it could not be).")
    test_pass_ratio: float | None = Field(default=None, description=(
        "`unit-test` only: the mean share of a sample's test cases that passed."))
    unscored: int | None = Field(default=None, description=(
        "Samples it did not score (not applicable, or it failed): left out of the mean."))
    unscored_reason: str | None = Field(default=None, description="Why, for the first of them.")


class ModelSummary(_Closed):
    """One model's (or agent's) figures."""

    samples: int = Field(description="Its samples.")
    tasks: int = Field(description="The tasks (task source, task, language) counted in its pass rate.")
    outcomes: dict[str, int] = Field(description=(
        "Samples per outcome: `pass`, `fail`, `error`, `timeout`, `untested`, `infra_error`..."
        " (`untested` and `infra_error` are not counted in pass rates)."))
    timed_out: int = Field(description="Samples with a test case that hit its time limit.")
    timed_out_samples: list[SampleRef] = Field(description="Those samples and their test cases.")
    suspicious: int = Field(description="Samples with a pass that looks forged.")
    suspicious_samples: list[SampleRef] = Field(description="Those samples, and why.")
    criteria: dict[str, CriterionSummary] = Field(description="Per criterion.")
    pass_at_k: dict[str, float] = Field(description=(
        "`pass@1`, `pass@5`...: the unbiased estimate, over tasks with at least k counted samples."))
    pass_at_k_ci: dict[str, dict[str, Any]] = Field(description=(
        "Per `pass@k`: its `se`, `ci95` and `ci_method` (a bootstrap over tasks)."))
    pass_rate: Estimate | None = Field(description=(
        "The share of counted samples that passed, with its clustered standard error and interval."))
    power: Power = Field(description="How many tasks a comparison would need to see a difference.")
    judge: dict[str, Any] | None = Field(default=None, description=(
        "The LLM judge's own tokens and cost for this model's samples (never the model's)."))
    unreadable: int | None = Field(default=None, description=(
        "Samples some of whose lines could not be read: not scored, counted as `infra_error`."))
    unreadable_samples: list[SampleRef] | None = Field(default=None, description="Those samples.")


class ThresholdCheck(_Closed):
    """One threshold of the execution config, checked for one model."""

    limit: float = Field(description="The threshold.")
    value: float | None = Field(description="The model's figure (null: not measured).")
    met: bool = Field(description="Whether the figure is at least (`min`) or at most (`max`) the limit.")
    direction: Literal["min", "max"] = Field(description="`min`: higher is better; `max`: lower is.")


class KeptCeiling(_Closed):
    """A task whose time limit stayed the config's ceiling."""

    task_source: str = Field(description="The task source's name.")
    task: str = Field(description="The task.")
    language: str = Field(description="The language.")
    reason: str = Field(description="Why its limit was not measured from its golden solution.")


class TimeLimitsSummary(_Closed):
    """The per-task time limits measured from the golden solutions."""

    golden_factor: float = Field(description="A test's limit: this many times its golden solution's time.")
    golden_floor_s: float = Field(description="A test's limit is never below this many seconds.")
    measured: int = Field(description="Tasks whose limits were measured.")
    kept_ceiling: list[KeptCeiling] = Field(description="Tasks that kept the config's ceiling, and why.")


class SummaryFile(_Closed):
    """``summary.yaml``: a run's aggregates."""

    run_id: str = Field(description="The run.")
    models: list[str] = Field(description="The models (and agents), in order.")
    units: dict[str, str] = Field(description="The unit of each criterion that has one.")
    by_model: dict[str, ModelSummary] = Field(description="Per model (or agent).")
    by_difficulty: dict[str, dict[str, dict[str, float | None]]] = Field(description=(
        "Per difficulty label, per model: the pass rate and each criterion's mean."))
    by_area: dict[str, dict[str, dict[str, float | None]]] = Field(description="The same per area.")
    by_language: dict[str, dict[str, dict[str, float | None]]] = Field(description=(
        "The same per language."))
    failures: dict[str, list[FailureGroup]] | None = Field(default=None, description=(
        "Per model: why samples ended in `error` or `infra_error`, grouped by reason."))
    thresholds: dict[str, dict[str, ThresholdCheck]] | None = Field(default=None, description=(
        "Per model and threshold of the execution config: whether it is met (`benchwright run` "
        "then exits 1 when one is not)."))
    skipped_lines: SkippedLines | None = Field(default=None, description=(
        "Lines of the run folder that could not be read (each names its file, line and why)."))
    agents: list[dict[str, Any]] | None = Field(default=None, description=(
        "Per agent and scenario task: its three gates (`objective`, `judge`, `run-badge`), the "
        "objective score, tokens, cost, requests, agent version and whether the gates disagree."))
    skipped_criteria: dict[str, str] | None = Field(default=None, description=(
        "Criteria the config turned on that this run could not measure, and why."))
    isolation: str | None = Field(default=None, description="The sandbox's isolation level.")
    executor: dict[str, Any] | None = Field(default=None, description=(
        "The executor and its figures (`local` and its workers, or the Ray cluster)."))
    time_limits: TimeLimitsSummary | None = Field(default=None, description=(
        "With time limits from the golden solutions: what was measured."))
    energy: dict[str, Any] | None = Field(default=None, description=(
        "With `energy` on: the whole run's energy (Wh), CO2 (g), the method, the carbon "
        "intensity and its source, and the process's own CPU time and share."))
