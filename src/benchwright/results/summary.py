"""``summary.yaml``: per model and criterion; per difficulty, area and language; pass@k.

Every criterion mean carries ``se`` (its standard error, clustered by task), ``ci95`` ([lo, hi])
and ``ci_method`` (see :mod:`benchwright.results.stats` and ``docs/statistics.md``); pass@k's
live under ``pass_at_k_ci`` (a seeded bootstrap over tasks). Per model, ``pass_rate`` is the
share of counted samples that passed with the same three, and ``power`` how many tasks a
difference of 5 or 10 points would need at this run's task-level variance.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from math import comb
from typing import TYPE_CHECKING, Any

from benchwright.registry import registry
from benchwright.results.reasons import Reasons
from benchwright.results.record import Record
from benchwright.results.stats import Estimate, bootstrap_mean, estimate, power_of

if TYPE_CHECKING:
    from benchwright.results.folder import RunFolder

PASS_AT = (1, 5, 10, 100)
OUTCOMES = ("pass", "fail", "error", "untested", "infra_error")
"""Every sample outcome, in the order ``summary.yaml`` counts them."""
NOT_COUNTED = ("untested", "infra_error")
"""Outcomes left out of pass rates and pass@k (numerators and denominators), shown apart."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimator of pass@k (Chen et al. 2021) for n samples of which c pass."""
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


class _Mean:
    __slots__ = ("n", "total")

    def __init__(self) -> None:
        self.n = 0
        self.total = 0.0

    def add(self, value: float) -> None:
        self.n += 1
        self.total += value

    def value(self) -> float | None:
        return self.total / self.n if self.n else None


def higher_is_better(criterion: str) -> bool:
    if registry.has("criterion", criterion):
        return bool(registry.create("criterion", criterion).higher_is_better)
    return True


def _ref(r: Record) -> dict[str, Any]:
    return {"model": r.model, "task_source": r.task_source, "task": r.task, "language": r.language,
            "sample": r.sample}


def summarize(records: Iterable[Record], run_id: str, thresholds: dict[str, float] | None = None,
              unreadable: Mapping[str, dict[str, Any] | None] | None = None) -> dict[str, Any]:
    """Aggregate sample-level records (those with no ``test_case``). Samples that ended
    ``untested`` or ``infra_error`` are counted apart and left out of pass rates and pass@k.

    ``unreadable``: samples some of whose records could not be read, by execution id, with
    their model, task source, task, language and sample when known (else from their readable
    records). Each is not scored: counted as ``infra_error`` and listed under its model's
    ``unreadable_samples``; none of its records counts.
    """
    damaged: dict[str, dict[str, Any] | None] = dict(unreadable or {})
    outcomes: dict[str, dict[str, str]] = defaultdict(dict)  # model -> execution_id -> outcome
    groups: dict[str, dict[tuple[str, str, str], list[bool]]] = defaultdict(lambda: defaultdict(list))
    means: dict[str, dict[str, _Mean]] = defaultdict(lambda: defaultdict(_Mean))
    # model -> criterion -> task -> the sample scores (for the clustered standard errors)
    scores: dict[str, dict[str, dict[tuple[str, str, str], list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list)))
    units: dict[str, str] = {}
    test_ratio: dict[str, _Mean] = defaultdict(_Mean)
    # model -> criterion -> how many samples it did not score, and the first reason why
    unscored: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    # model -> the judge model's own tokens and cost (never the candidate's)
    judges: dict[str, dict[str, Any]] = defaultdict(dict)
    # model -> execution_id -> the sample that had a test hit a time limit, and those tests
    limited: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    # model -> execution_id -> a sample with a pass that looks forged (TestOutcome.suspicious)
    suspicious: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    slices: dict[str, dict[str, dict[str, dict[str, _Mean]]]] = {
        k: defaultdict(lambda: defaultdict(lambda: defaultdict(_Mean))) for k in ("difficulty", "area", "language")
    }
    reasons = Reasons()  # why samples ended in error or infra_error
    for r in records:
        if r.execution_id in damaged:
            damaged[r.execution_id] = damaged[r.execution_id] or _ref(r)
            continue
        reasons.add(r)
        if r.execution_id not in outcomes[r.model]:
            outcome = r.outcome or "pass"  # a record written without an outcome had nothing fail
            outcomes[r.model][r.execution_id] = outcome
            if outcome not in NOT_COUNTED:
                groups[r.model][(r.task_source, r.task, r.language)].append(outcome == "pass")
                for key in slices:
                    label = getattr(r, key) or "(none)"
                    slices[key][label][r.model]["pass_rate"].add(1.0 if outcome == "pass" else 0.0)
        if r.status == "timeout":
            _limit_hit(limited[r.model], r)
        if r.test_case is not None and r.details and r.details.get("suspicious"):
            flagged = suspicious[r.model].setdefault(r.execution_id, {
                "task_source": r.task_source, "task": r.task, "language": r.language,
                "sample": r.sample, "tests": {}})
            flagged["tests"][r.test_case] = r.details["suspicious"]
        if r.test_case is not None or r.outcome == "infra_error" or r.criterion == "generation":
            continue
        if r.unit:
            units[r.criterion] = r.unit
        judged = (r.details or {}).get("judge")
        if isinstance(judged, dict) and judged.get("paid"):
            _judge_usage(judges[r.model], judged)
        if r.score is None:  # n/a (the output says why) or unscored (the error says why)
            miss = unscored[r.model].setdefault(r.criterion, {"n": 0, "reason": None})
            miss["n"] += 1
            miss["reason"] = miss["reason"] or r.error or r.output
        else:
            means[r.model][r.criterion].add(r.score)
            scores[r.model][r.criterion][(r.task_source, r.task, r.language)].append(r.score)
            for key in slices:
                label = getattr(r, key) or "(none)"
                slices[key][label][r.model][r.criterion].add(r.score)
        if r.criterion == "unit-test" and r.details and r.details.get("total"):
            test_ratio[r.model].add(r.details["passed"] / r.details["total"])

    missing: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for eid, ref in damaged.items():
        if ref:
            outcomes[ref["model"]][eid] = "infra_error"
            missing[ref["model"]].append({k: v for k, v in ref.items() if k != "model"})
    by_model: dict[str, Any] = {}
    for model in outcomes:
        counts = dict.fromkeys(OUTCOMES, 0)
        for o in outcomes[model].values():
            counts[o] = counts.get(o, 0) + 1
        crit: dict[str, Any] = {}
        for name in sorted(set(means[model]) | set(unscored[model])):
            m = means[model][name]
            entry: dict[str, Any] = {"mean": m.value(), "n": m.n, "unit": units.get(name)}
            entry.update(_uncertainty(estimate(list(scores[model][name].values()))))
            if name == "unit-test" and test_ratio[model].n:
                entry["test_pass_ratio"] = test_ratio[model].value()
            if name in unscored[model]:
                entry["unscored"] = unscored[model][name]["n"]
                entry["unscored_reason"] = unscored[model][name]["reason"]
            crit[name] = entry
        pak: dict[str, float] = {}
        pak_ci: dict[str, dict[str, Any]] = {}
        tasks = groups[model]
        for k in PASS_AT:
            if tasks and all(len(v) >= k for v in tasks.values()):
                per_task = [pass_at_k(len(v), sum(v), k) for v in tasks.values()]
                pak[f"pass@{k}"] = sum(per_task) / len(tasks)
                pak_ci[f"pass@{k}"] = _uncertainty(bootstrap_mean(per_task, sum(map(len, tasks.values()))))
        outcome_clusters = [[1.0 if p else 0.0 for p in v] for v in tasks.values()]
        rate = estimate(outcome_clusters, proportion=True)
        by_model[model] = {
            "samples": len(outcomes[model]),
            "tasks": len(tasks),
            "outcomes": counts,
            "timed_out": len(limited[model]),
            "timed_out_samples": sorted(limited[model].values(), key=lambda d: (
                d["task_source"], d["task"], d["language"], d["sample"])),
            "suspicious": len(suspicious[model]),
            "suspicious_samples": sorted(suspicious[model].values(), key=lambda d: (
                d["task_source"], d["task"], d["language"], d["sample"])),
            "criteria": crit,
            "pass_at_k": pak,
            "pass_at_k_ci": pak_ci,
            "pass_rate": rate.model_dump(mode="json") if rate else None,
            "power": power_of(outcome_clusters).model_dump(mode="json"),
        }
        if judges[model]:
            by_model[model]["judge"] = judges[model]
        if missing[model]:
            by_model[model]["unreadable"] = len(missing[model])
            by_model[model]["unreadable_samples"] = sorted(missing[model], key=lambda d: (
                d["task_source"], d["task"], d["language"], d["sample"]))
    out: dict[str, Any] = {
        "run_id": run_id,
        "models": list(by_model),
        "units": dict(sorted(units.items())),
        "by_model": by_model,
    }
    for key, table in slices.items():
        out[f"by_{key}"] = {
            label: {model: {c: m.value() for c, m in sorted(per.items())} for model, per in models.items()}
            for label, models in sorted(table.items())
        }
    if failures := reasons.groups():
        out["failures"] = {m: [g.model_dump() for g in groups] for m, groups in failures.items()}
    if thresholds:
        out["thresholds"] = check_thresholds(by_model, thresholds)
    return out


def _uncertainty(e: Estimate | None) -> dict[str, Any]:
    """``se``, ``ci95`` and ``ci_method`` of an estimate, to sit next to its mean."""
    if e is None:
        return {"se": None, "ci95": None, "ci_method": "none"}
    return e.model_dump(mode="json", include={"se", "ci95", "ci_method"})


def summarize_folder(folder: RunFolder, thresholds: dict[str, float] | None = None) -> dict[str, Any]:
    """:func:`summarize` of a run folder's records. When lines cannot be read, the samples they
    leave incomplete are not scored (see ``unreadable``) and the summary says so under
    ``skipped_lines``; the folder is then read twice more (to find those samples), else once."""
    from benchwright.results.jsonl import SkippedLines

    skipped = SkippedLines()
    summary = summarize(folder.records(skipped), folder.run_id, thresholds)
    if not skipped:
        return summary
    damaged = folder.scan().damaged()
    refs: dict[str, dict[str, Any] | None] = dict.fromkeys(damaged)
    for eid, gen in folder.generations(only=damaged).items():
        refs[eid] = {"model": gen.model, "task_source": gen.task_source, "task": gen.task,
                     "language": gen.language, "sample": gen.sample}
    summary = summarize(folder.records(), folder.run_id, thresholds, unreadable=refs)
    skipped.samples = len(damaged)
    summary["skipped_lines"] = skipped.model_dump(mode="json")
    return summary


def _judge_usage(total: dict[str, Any], judged: dict[str, Any]) -> None:
    """Add one judge answer's tokens and cost to a model's judge totals."""
    total["model"] = judged.get("model")
    total["answers"] = total.get("answers", 0) + 1
    total["cached"] = total.get("cached", 0) + (1 if judged.get("cached") else 0)
    for key in ("tokens_in", "tokens_out", "cost_usd"):
        value = judged.get(key)
        if isinstance(value, int | float):
            total[key] = total.get(key, 0) + value
    cost = judged.get("cost_usd")
    if isinstance(cost, int | float) and not judged.get("cached"):
        total["paid_this_run_usd"] = total.get("paid_this_run_usd", 0) + cost


def _limit_hit(samples: dict[str, dict[str, Any]], r: Record) -> None:
    """Note that test ``r`` of its sample hit a time limit (``details.limit_s``: which one)."""
    entry = samples.setdefault(r.execution_id, {
        "task_source": r.task_source, "task": r.task, "language": r.language, "sample": r.sample,
        "tests": []})
    test: dict[str, Any] = {"test_case": r.test_case}
    details = r.details or {}
    if details.get("limit_s") is not None:
        test["limit_s"] = details["limit_s"]
    if details.get("limit"):
        test["limit"] = details["limit"]
    entry["tests"].append(test)


def check_thresholds(by_model: dict[str, Any], thresholds: dict[str, float]) -> dict[str, Any]:
    """Per model and criterion: the limit, the value and whether it is met.

    A criterion where higher is better (unit-test, pass@k) needs at least the limit; one where
    lower is better (cpu-usage, ram-usage, token-count) at most the limit.
    """
    out: dict[str, Any] = {}
    for model, data in by_model.items():
        rows = {}
        for name, limit in thresholds.items():
            if name.startswith("pass@"):
                value = data["pass_at_k"].get(name)
                better_high = True
            else:
                value = (data["criteria"].get(name) or {}).get("mean")
                better_high = higher_is_better(name)
            met = value is not None and (value >= limit if better_high else value <= limit)
            rows[name] = {"limit": limit, "value": value, "met": met,
                          "direction": "min" if better_high else "max"}
        out[model] = rows
    return out


def thresholds_met(summary: dict[str, Any]) -> bool:
    return all(row["met"] for rows in (summary.get("thresholds") or {}).values() for row in rows.values())
