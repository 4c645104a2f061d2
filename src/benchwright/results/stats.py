"""Error bars: every mean over samples clustered by task, with its standard error and 95 % interval.

Following Miller (2024), "Adding Error Bars to Evals" (arXiv:2411.00640): a run's samples are
clustered by task (several samples of one task are not independent), so a mean's standard
error is the cluster-robust one::

    SE = sqrt( C / (C - 1) * sum_c (S_c - n_c * mean)^2 ) / n

over the C tasks, where task c has n_c samples summing to S_c and n = sum n_c. With the same
number of samples a task this is ``sqrt(var(task means) / C)`` (sample variance, ddof 1).

* Proportions (pass rates, every value 0 or 1): the 95 % interval is Wilson's score interval
  (Wilson 1927) at the effective sample size ``p (1 - p) / SE^2`` (the samples divided by the
  design effect, kept between C and n) when the rate is near 0 or 1 or that size is small
  (``wilson-clustered``), else ``mean ± 1.96 SE`` (``normal-clustered``). Wilson's interval stays
  inside [0, 1] and is never a single point, even for 0/10 or 10/10.
* Other means (CPU ms, bytes, scores): ``mean ± 1.96 SE`` (``normal-clustered``).
* pass@k: a percentile bootstrap over tasks (Efron & Tibshirani 1993), seeded
  (``bootstrap-tasks``).
* Two runs or two models on the same tasks: the paired difference of task-level means with a
  t interval and a paired t-test (``paired-t``); with one pass/fail sample a task, McNemar's
  exact mid-p test (McNemar 1947) and a normal interval (``mcnemar-midp``). A difference whose
  interval holds 0 is "no significant difference".
* Power: tasks needed to detect a difference ``delta`` at two-sided alpha with power ``1 - beta``,
  ``n = 2 sigma^2 (z_{1-alpha/2} + z_{1-beta})^2 / delta^2``, sigma^2 the variance of task means.

Only the standard library is used (no numpy or scipy at run time).
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Hashable, Mapping, Sequence
from statistics import NormalDist
from typing import Literal, TypeVar

from pydantic import BaseModel, Field

Z95 = NormalDist().inv_cdf(0.975)
"""The normal quantile of a two-sided 95 % interval (1.95996...)."""
BOOTSTRAP_RESAMPLES = 1000
SEED = 0
"""Every bootstrap is seeded: the same run gives the same interval."""
WILSON_BELOW = 30
"""Wilson's interval is used when the effective sample size is below this, or when fewer than
``WILSON_TAIL`` successes or failures are expected."""
WILSON_TAIL = 5

CiMethod = Literal["wilson-clustered", "normal-clustered", "bootstrap-tasks", "none"]
TestName = Literal["paired-t", "mcnemar-midp", "none"]
Difference = Literal["better", "worse", "same", "no significant difference", ""]
K = TypeVar("K", bound=Hashable)


class Estimate(BaseModel):
    """A mean over samples clustered by task, with its uncertainty."""

    mean: float = Field(description="The mean over every sample (for pass@k: over tasks).")
    se: float | None = Field(description="Its cluster-robust standard error; null with fewer than two tasks.")
    ci95: list[float] | None = Field(description="The 95 % interval [lo, hi]; null when it cannot be computed.")
    ci_method: CiMethod = Field(description=(
        "How the interval was computed: wilson-clustered (Wilson score interval at the clustered "
        "effective sample size), normal-clustered (mean ± 1.96 SE), bootstrap-tasks (percentile "
        "bootstrap over tasks, seeded) or none."))
    n: int = Field(description="Samples counted.")
    tasks: int = Field(description="Tasks (clusters) they belong to.")


class PairedDifference(BaseModel):
    """B minus A over the tasks both have, per model and criterion."""

    model: str = Field(description="The model compared (present in both runs).")
    criterion: str = Field(description="The criterion, or pass_rate for the share of samples that passed.")
    tasks: int = Field(description="Tasks (task source, task, language) scored in both runs.")
    a: float | None = Field(description="Mean of A's task-level means over the shared tasks.")
    b: float | None = Field(description="Mean of B's task-level means over the shared tasks.")
    diff: float | None = Field(description="b - a: the mean of the per-task differences.")
    se: float | None = Field(description="Standard error of the mean difference (null with fewer than two tasks).")
    ci95: list[float] | None = Field(description="The 95 % interval of the difference.")
    p_value: float | None = Field(description="Two-sided p-value of no difference.")
    test: TestName = Field(description=(
        "paired-t (t-test and t interval on task-level differences) or mcnemar-midp (one pass/fail "
        "sample a task: McNemar's exact mid-p test, normal interval)."))
    significant: bool = Field(description="Whether the 95 % interval excludes 0.")
    verdict: Difference = Field(description=(
        "better or worse (given the criterion's direction) when significant, 'same' when every "
        "task is unchanged, else 'no significant difference'; '' when the criterion has no direction."))


# -- distributions -------------------------------------------------------------------------------


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (Numerical Recipes' betacf)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-14:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return betainc(df / 2.0, 0.5, df / (df + t * t))


@functools.lru_cache(maxsize=4096)
def t_quantile(q: float, df: float) -> float:
    """The ``q`` quantile (q > 0.5) of Student's t, by bisection (kept: a server's pages ask
    for the same few again and again)."""
    target = 2.0 * (1.0 - q)  # two-sided tail
    lo, hi = 0.0, 1e6
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if mid in (lo, hi):  # converged: further steps would not move lo or hi
            break
        if t_two_sided_p(mid, df) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def mcnemar_midp(b: int, c: int) -> float:
    """McNemar's exact two-sided mid-p value for ``b`` and ``c`` discordant pairs."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    exact = min(1.0, 2.0 * sum(math.comb(n, i) for i in range(k + 1)) / 2.0**n)
    return max(0.0, min(1.0, exact - math.comb(n, k) / 2.0**n))


# -- one mean ------------------------------------------------------------------------------------


def wilson(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson's score interval for a proportion ``p`` observed over ``n`` trials."""
    if n <= 0:
        return (0.0, 1.0)
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2.0 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z * z / (4.0 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def clustered_se(clusters: Sequence[Sequence[float]]) -> float | None:
    """The cluster-robust standard error of the mean of every value (None with < 2 clusters)."""
    groups = [g for g in clusters if g]
    c = len(groups)
    n = sum(len(g) for g in groups)
    if c < 2:
        return None
    mean = sum(sum(g) for g in groups) / n
    resid = sum((sum(g) - len(g) * mean) ** 2 for g in groups)
    return math.sqrt(c / (c - 1) * resid) / n


def _is_binary(clusters: Sequence[Sequence[float]]) -> bool:
    return all(v in (0.0, 1.0) for g in clusters for v in g)


def estimate(clusters: Sequence[Sequence[float]], proportion: bool | None = None) -> Estimate | None:
    """Mean, clustered SE and 95 % interval of values grouped by task (None for no values).
    ``proportion``: whether the values are 0/1 outcomes (default: whether every value is 0 or 1)."""
    groups = [list(g) for g in clusters if g]
    n = sum(len(g) for g in groups)
    if not n:
        return None
    tasks = len(groups)
    mean = sum(sum(g) for g in groups) / n
    se = clustered_se(groups)
    if proportion is None:
        proportion = _is_binary(groups)
    if proportion:
        if se is None:
            n_eff = 1.0
        elif se > 0 and 0 < mean < 1:
            n_eff = min(float(n), max(float(tasks), mean * (1 - mean) / se**2))
        else:  # every task agrees with itself: count each task once
            n_eff = float(tasks)
        if n_eff < WILSON_BELOW or min(mean, 1 - mean) * n_eff < WILSON_TAIL or se is None:
            lo, hi = wilson(mean, n_eff)
            return Estimate(mean=mean, se=se, ci95=[lo, hi], ci_method="wilson-clustered", n=n, tasks=tasks)
        assert se is not None
        lo, hi = max(0.0, mean - Z95 * se), min(1.0, mean + Z95 * se)
        return Estimate(mean=mean, se=se, ci95=[lo, hi], ci_method="normal-clustered", n=n, tasks=tasks)
    if se is None:
        return Estimate(mean=mean, se=None, ci95=None, ci_method="none", n=n, tasks=tasks)
    return Estimate(mean=mean, se=se, ci95=[mean - Z95 * se, mean + Z95 * se], ci_method="normal-clustered",
                    n=n, tasks=tasks)


def bootstrap_mean(values: Sequence[float], n_samples: int, seed: int = SEED,
                   resamples: int = BOOTSTRAP_RESAMPLES) -> Estimate | None:
    """The mean of one value a task (e.g. pass@k) with a percentile bootstrap over tasks."""
    if not values:
        return None
    c = len(values)
    mean = sum(values) / c
    if c < 2:
        return Estimate(mean=mean, se=None, ci95=None, ci_method="none", n=n_samples, tasks=c)
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=c)) / c for _ in range(resamples))
    centre = sum(means) / resamples
    se = math.sqrt(sum((m - centre) ** 2 for m in means) / (resamples - 1))
    lo, hi = means[int(0.025 * resamples)], means[min(resamples - 1, math.ceil(0.975 * resamples) - 1)]
    return Estimate(mean=mean, se=se, ci95=[lo, hi], ci_method="bootstrap-tasks", n=n_samples, tasks=c)


# -- two runs ------------------------------------------------------------------------------------


def paired_difference(model: str, criterion: str, a: Mapping[K, Sequence[float]],
                      b: Mapping[K, Sequence[float]], higher_is_better: bool | None) -> PairedDifference:
    """B - A over the tasks scored in both (``a`` and ``b``: values per task key)."""
    shared = [k for k in a if a[k] and k in b and b[k]]
    ta = [sum(a[k]) / len(a[k]) for k in shared]
    tb = [sum(b[k]) / len(b[k]) for k in shared]
    d = [y - x for x, y in zip(ta, tb, strict=True)]
    c = len(d)
    none = PairedDifference(model=model, criterion=criterion, tasks=c, a=None, b=None, diff=None, se=None,
                            ci95=None, p_value=None, test="none", significant=False, verdict="")
    if not c:
        return none
    mean_a, mean_b, diff = sum(ta) / c, sum(tb) / c, sum(d) / c
    base = none.model_copy(update={"a": mean_a, "b": mean_b, "diff": diff})
    if all(abs(x) < 1e-12 for x in d):
        return base.model_copy(update={"se": 0.0, "ci95": [0.0, 0.0], "p_value": 1.0, "test": "paired-t",
                                       "verdict": "same" if higher_is_better is not None else ""})
    if c < 2:
        return base.model_copy(update={"verdict": "no significant difference" if higher_is_better is not None else ""})
    se = math.sqrt(sum((x - diff) ** 2 for x in d) / (c - 1) / c)
    single = all(len(a[k]) == 1 and len(b[k]) == 1 for k in shared)
    test: TestName
    if single and _is_binary([a[k] for k in shared] + [b[k] for k in shared]):
        test = "mcnemar-midp"
        p = mcnemar_midp(sum(1 for x in d if x < 0), sum(1 for x in d if x > 0))
        half = Z95 * se
    else:
        test = "paired-t"
        p = 0.0 if se == 0 else t_two_sided_p(diff / se, c - 1)
        half = t_quantile(0.975, c - 1) * se
    lo, hi = diff - half, diff + half
    if all(0.0 <= v <= 1.0 for v in (*ta, *tb)):  # a difference of two rates stays within [-1, 1]
        lo, hi = max(-1.0, lo), min(1.0, hi)
    significant = lo > 0 or hi < 0
    verdict: Difference = ""
    if higher_is_better is not None:
        verdict = ("better" if (diff > 0) == higher_is_better else "worse") if significant else \
            "no significant difference"
    return base.model_copy(update={"se": se, "ci95": [lo, hi], "p_value": p, "test": test,
                                   "significant": significant, "verdict": verdict})


# -- power ---------------------------------------------------------------------------------------


def tasks_needed(variance: float, delta: float, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Tasks needed to detect a difference ``delta`` between two models' means at two-sided
    ``alpha`` with ``power``, given the variance of task-level means (unpaired, so an upper bound
    for two models on the same tasks). None when the run shows no variance."""
    if variance <= 0 or delta <= 0:
        return None
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return math.ceil(2 * variance * z * z / (delta * delta))


def task_variance(clusters: Sequence[Sequence[float]]) -> float | None:
    """The sample variance of task-level means (None with fewer than two tasks)."""
    means = [sum(g) / len(g) for g in clusters if g]
    if len(means) < 2:
        return None
    m = sum(means) / len(means)
    return sum((x - m) ** 2 for x in means) / (len(means) - 1)


POWER_DELTAS = (0.05, 0.10)
"""The differences in pass rate (5 and 10 points) the power estimate is given for."""
ALPHA = 0.05
POWER = 0.8


class TasksNeeded(BaseModel):
    """How many tasks a difference of one size needs."""

    delta: float = Field(description="The difference in pass rate to detect (0.05 = 5 points).")
    tasks: int | None = Field(description="Tasks needed; null when the run shows no task-level variance.")


class Power(BaseModel):
    """Tasks needed to tell two models apart, at this run's task-level variance of the pass rate."""

    alpha: float = Field(description="Two-sided significance level.")
    power: float = Field(description="Chance of detecting a true difference of the given size.")
    task_variance: float | None = Field(description=(
        "Sample variance of the task-level pass rates (null with fewer than two tasks)."))
    formula: str = Field(description="How tasks_needed is computed.")
    tasks_needed: list[TasksNeeded] = Field(description="Per difference size.")


POWER_FORMULA = "n = 2 * task_variance * (z(1 - alpha/2) + z(power))^2 / delta^2"


def power_of(clusters: Sequence[Sequence[float]], deltas: Sequence[float] = POWER_DELTAS) -> Power:
    """The power estimate of a pass rate whose samples are grouped by task."""
    variance = task_variance(clusters)
    return Power(alpha=ALPHA, power=POWER, task_variance=variance, formula=POWER_FORMULA, tasks_needed=[
        TasksNeeded(delta=d, tasks=tasks_needed(variance, d, ALPHA, POWER) if variance is not None else None)
        for d in deltas])
