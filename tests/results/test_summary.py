"""``summary.yaml``: pass@k, means, slices and thresholds over hand-built records."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from benchwright.results.record import Record
from benchwright.results.summary import (
    check_thresholds,
    higher_is_better,
    pass_at_k,
    summarize,
    thresholds_met,
)


def closed_form(n: int, c: int, k: int) -> float:
    """Chen et al.'s numerically stable form: 1 - prod(1 - k / arange(n - c + 1, n + 1))."""
    if n - c < k:
        return 1.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (5, 2, 1, 0.4),
        (10, 0, 1, 0.0),
        (10, 0, 5, 0.0),
        (10, 10, 1, 1.0),
        (10, 10, 10, 1.0),
        (1, 1, 1, 1.0),
        (1, 0, 1, 0.0),
        (4, 1, 2, 0.5),  # 1 - C(3,2)/C(4,2) = 1 - 3/6
        (10, 9, 2, 1.0),  # n - c < k: every pair holds a passing sample
    ],
)
def test_pass_at_k_small_cases(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_pass_at_k_matches_closed_form_randomly():
    rng = random.Random(1234)
    for _ in range(500):
        n = rng.randint(1, 200)
        c = rng.randint(0, n)
        k = rng.randint(1, n)
        got = pass_at_k(n, c, k)
        assert got == pytest.approx(closed_form(n, c, k), rel=1e-9, abs=1e-12), (n, c, k)
        assert 0.0 <= got <= 1.0


def test_pass_at_1_is_the_pass_ratio():
    for n in range(1, 30):
        for c in range(n + 1):
            assert pass_at_k(n, c, 1) == pytest.approx(c / n)


def test_pass_at_k_grows_with_k():
    values = [pass_at_k(20, 3, k) for k in range(1, 21)]
    assert values == sorted(values)
    assert values[-1] == 1.0


# -- records ---------------------------------------------------------------------------------

def rec(model: str, eid: str, outcome: str, criterion: str = "unit-test", score: float | None = None,
        *, task: str = "t1", language: str = "python", difficulty: str | None = "easy",
        area: str | None = "math", test_case: str | None = None, unit: str | None = None,
        details: dict[str, Any] | None = None, source: str = "src", sample: int = 0) -> Record:
    if unit is None:
        unit = {"unit-test": "success", "cpu-usage": "ms", "ram-usage": "bytes"}.get(criterion)
    return Record(
        run_id="run-1", execution_id=eid, task_source=source, task=task, language=language,
        model=model, sample=sample, criterion=criterion, executor=criterion, score=score,
        unit=unit, test_case=test_case, outcome=outcome, difficulty=difficulty, area=area,
        details=details,
    )


def sample(model: str, eid: str, outcome: str, *, cpu: float | None = None, tests: tuple[int, int] = (1, 1),
           **kw: Any) -> list[Record]:
    """The records of one sample: per-test records, the unit-test record, maybe cpu-usage."""
    passed, total = tests
    out = [
        rec(model, eid, outcome, "unit-test", 1.0 if i < passed else 0.0, test_case=f"test-{i}", **kw)
        for i in range(total)
    ]
    score = 1.0 if outcome == "pass" else 0.0  # an infra_error's 0.0 must be ignored
    out.append(rec(model, eid, outcome, "unit-test", score,
                   details={"passed": passed, "total": total}, **kw))
    if cpu is not None:
        out.append(rec(model, eid, outcome, "cpu-usage", cpu, **kw))
    return out


def build_records() -> list[Record]:
    records: list[Record] = []
    # model A, task t1 (easy, math, python): pass, fail, infra_error
    records += sample("A", "a1", "pass", cpu=10.0, task="t1")
    records += sample("A", "a2", "fail", cpu=30.0, task="t1", tests=(1, 2))
    records += sample("A", "a3", "infra_error", cpu=1000.0, task="t1", tests=(0, 0))
    # model A, task t2 (hard, strings, java): pass, pass
    records += sample("A", "a4", "pass", cpu=20.0, task="t2", language="java", difficulty="hard",
                      area="strings")
    records += sample("A", "a5", "pass", cpu=40.0, task="t2", language="java", difficulty="hard",
                      area="strings")
    # model B, task t1: fail, error
    records += sample("B", "b1", "fail", cpu=100.0, task="t1", tests=(0, 2))
    records += sample("B", "b2", "error", cpu=200.0, task="t1", tests=(0, 1))
    # model B, task t2: pass, fail
    records += sample("B", "b3", "pass", cpu=50.0, task="t2", language="java", difficulty="hard",
                      area="strings")
    records += sample("B", "b4", "fail", cpu=50.0, task="t2", language="java", difficulty="hard",
                      area="strings", tests=(2, 3))
    return records


def test_summary_counts_and_means():
    s = summarize(build_records(), "run-1")
    assert s["run_id"] == "run-1"
    assert s["models"] == ["A", "B"]
    a = s["by_model"]["A"]
    assert a["samples"] == 5
    assert a["tasks"] == 2
    assert a["outcomes"] == {"pass": 3, "fail": 1, "error": 0, "untested": 0, "infra_error": 1}
    ut = a["criteria"]["unit-test"]
    assert ut["mean"] == pytest.approx(3 / 4)  # the infra_error sample is not counted
    assert ut["n"] == 4
    assert ut["unit"] == "success"
    assert ut["test_pass_ratio"] == pytest.approx((1 + 0.5 + 1 + 1) / 4)
    cpu = a["criteria"]["cpu-usage"]
    assert cpu["mean"] == pytest.approx((10 + 30 + 20 + 40) / 4)  # not 1000 from infra_error
    assert cpu["n"] == 4
    assert cpu["unit"] == "ms"
    b = s["by_model"]["B"]
    assert b["outcomes"] == {"pass": 1, "fail": 2, "error": 1, "untested": 0, "infra_error": 0}
    assert b["criteria"]["unit-test"]["mean"] == pytest.approx(1 / 4)
    assert b["criteria"]["cpu-usage"]["mean"] == pytest.approx(100.0)
    assert s["units"] == {"cpu-usage": "ms", "unit-test": "success"}


def test_per_test_records_are_not_averaged():
    records = sample("A", "x1", "pass", tests=(0, 5))  # per-test 0.0s, sample-level 1.0
    s = summarize(records, "r")
    assert s["by_model"]["A"]["criteria"]["unit-test"]["mean"] == 1.0
    assert s["by_model"]["A"]["criteria"]["unit-test"]["n"] == 1


def test_pass_at_k_excludes_infra_errors():
    s = summarize(build_records(), "run-1")
    a = s["by_model"]["A"]["pass_at_k"]
    # t1: 1 of 2 (infra_error excluded), t2: 2 of 2
    assert a["pass@1"] == pytest.approx((0.5 + 1.0) / 2)
    assert "pass@5" not in a  # needs n >= 5 for every task
    b = s["by_model"]["B"]["pass_at_k"]
    assert b["pass@1"] == pytest.approx((0.0 + 0.5) / 2)


def test_pass_at_k_needs_enough_samples_per_task():
    records: list[Record] = []
    outcomes = ["pass", "fail", "fail", "pass", "fail", "fail", "fail", "fail", "fail", "fail"]
    for i, o in enumerate(outcomes):
        records += sample("M", f"m{i}", o, task="t1", sample=i)
    s = summarize(records, "r")
    pak = s["by_model"]["M"]["pass_at_k"]
    assert pak["pass@1"] == pytest.approx(pass_at_k(10, 2, 1))
    assert pak["pass@5"] == pytest.approx(pass_at_k(10, 2, 5))
    assert pak["pass@10"] == pytest.approx(1.0)
    assert "pass@100" not in pak
    # one more infra_error sample does not change n
    records += sample("M", "m-infra", "infra_error", task="t1", sample=10)
    s2 = summarize(records, "r")
    assert s2["by_model"]["M"]["pass_at_k"] == pak


def test_only_infra_errors_gives_no_scores():
    records = sample("Z", "z1", "infra_error", cpu=5.0) + sample("Z", "z2", "infra_error", cpu=5.0)
    s = summarize(records, "r")
    z = s["by_model"]["Z"]
    assert z["outcomes"]["infra_error"] == 2
    assert z["criteria"] == {}
    assert z["pass_at_k"] == {}
    assert z["tasks"] == 0
    assert s["by_language"] == {}


def test_slices_by_difficulty_area_language():
    s = summarize(build_records(), "run-1")
    easy = s["by_difficulty"]["easy"]
    assert easy["A"]["pass_rate"] == pytest.approx(1 / 2)
    assert easy["A"]["unit-test"] == pytest.approx(1 / 2)
    assert easy["A"]["cpu-usage"] == pytest.approx(20.0)
    assert easy["B"]["pass_rate"] == 0.0
    hard = s["by_difficulty"]["hard"]
    assert hard["A"]["pass_rate"] == 1.0
    assert hard["B"]["pass_rate"] == pytest.approx(0.5)
    assert set(s["by_area"]) == {"math", "strings"}
    assert s["by_area"]["strings"]["A"]["cpu-usage"] == pytest.approx(30.0)
    assert set(s["by_language"]) == {"python", "java"}
    assert s["by_language"]["java"]["B"]["pass_rate"] == pytest.approx(0.5)
    assert s["by_language"]["python"]["A"]["pass_rate"] == pytest.approx(0.5)


def test_missing_labels_are_grouped():
    records = sample("A", "n1", "pass", difficulty=None, area=None)
    s = summarize(records, "r")
    assert s["by_difficulty"] == {"(none)": {"A": {"pass_rate": 1.0, "unit-test": 1.0}}}
    assert "(none)" in s["by_area"]


def test_direction_of_criteria():
    assert higher_is_better("unit-test") is True
    assert higher_is_better("cpu-usage") is False
    assert higher_is_better("ram-usage") is False
    assert higher_is_better("token-count") is False


def test_thresholds_min_and_max():
    s = summarize(build_records(), "run-1",
                  thresholds={"unit-test": 0.7, "cpu-usage": 60.0, "pass@1": 0.5})
    a = s["thresholds"]["A"]
    assert a["unit-test"] == {"limit": 0.7, "value": pytest.approx(0.75), "met": True, "direction": "min"}
    assert a["cpu-usage"]["direction"] == "max"
    assert a["cpu-usage"]["value"] == pytest.approx(25.0)
    assert a["cpu-usage"]["met"] is True
    assert a["pass@1"]["met"] is True
    b = s["thresholds"]["B"]
    assert b["unit-test"]["met"] is False  # 0.25 < 0.7
    assert b["cpu-usage"]["met"] is False  # 100 > 60: lower is better
    assert b["pass@1"]["met"] is False
    assert thresholds_met(s) is False


def test_threshold_boundary_is_met():
    s = summarize(build_records(), "run-1", thresholds={"unit-test": 0.75, "cpu-usage": 25.0})
    assert s["thresholds"]["A"]["unit-test"]["met"] is True
    assert s["thresholds"]["A"]["cpu-usage"]["met"] is True


def test_threshold_without_data_is_not_met():
    s = summarize(build_records(), "run-1", thresholds={"ram-usage": 1e9, "pass@100": 0.1})
    for model in ("A", "B"):
        row = s["thresholds"][model]["ram-usage"]
        assert row["value"] is None
        assert row["met"] is False
        assert s["thresholds"][model]["pass@100"]["met"] is False
    assert thresholds_met(s) is False


def test_thresholds_met_when_all_are():
    records = [r for r in build_records() if r.model == "A"]
    s = summarize(records, "run-1", thresholds={"unit-test": 0.5, "cpu-usage": 100.0})
    assert thresholds_met(s) is True
    s_none = summarize(records, "run-1")
    assert "thresholds" not in s_none
    assert thresholds_met(s_none) is True


def test_check_thresholds_directly():
    by_model = {
        "m": {"criteria": {"cpu-usage": {"mean": 10.0}, "unit-test": {"mean": 0.9}},
              "pass_at_k": {"pass@1": 0.9}},
    }
    rows = check_thresholds(by_model, {"cpu-usage": 5.0, "unit-test": 0.95, "pass@1": 0.9})["m"]
    assert rows["cpu-usage"]["met"] is False
    assert rows["unit-test"]["met"] is False
    assert rows["pass@1"]["met"] is True


def test_samples_that_hit_a_time_limit_are_counted() -> None:
    from benchwright.results.record import Record
    from benchwright.results.summary import summarize

    def rec(eid: str, status: str | None, test_case: str | None, outcome: str) -> Record:
        return Record(run_id="r", execution_id=eid, task_source="s", task=eid, language="python",
                      model="m", sample=0, criterion="unit-test", executor="UnitTest",
                      score=1.0 if outcome == "pass" else 0.0, status=status, test_case=test_case,
                      outcome=outcome)  # type: ignore[arg-type]

    records = [
        rec("a", "timeout", "t1", "error"), rec("a", "timeout", "t2", "error"), rec("a", None, None, "error"),
        rec("b", "pass", "t1", "pass"), rec("b", None, None, "pass"),
    ]
    summary = summarize(records, "r")
    assert summary["by_model"]["m"]["timed_out"] == 1
    assert summary["by_model"]["m"]["timed_out_samples"] == [
        {"task_source": "s", "task": "a", "language": "python", "sample": 0,
         "tests": [{"test_case": "t1"}, {"test_case": "t2"}]}]


def test_timed_out_samples_carry_the_limit_that_applied() -> None:
    def rec(eid: str, task: str, sample: int, status: str | None, test_case: str | None,
            details: dict[str, Any] | None = None, model: str = "m") -> Record:
        return Record(run_id="r", execution_id=eid, task_source="s", task=task, language="java",
                      model=model, sample=sample, criterion="unit-test", executor="UnitTest",
                      score=0.0, status=status, test_case=test_case, outcome="error", details=details)

    records = [
        rec("z1", "zeta", 1, "timeout", "slow", {"limit": "test", "limit_s": 0.25}),
        rec("z1", "zeta", 1, "not_run", "after"),
        rec("a0", "alpha", 0, "timeout", "big", {"limit": "sample", "limit_s": 60.0}),
        rec("a0", "alpha", 0, "timeout", "bigger", {"limit": "sample", "limit_s": 60.0}),
        rec("o", "alpha", 0, "fail", "x", model="other"),
    ]
    by_model = summarize(records, "r")["by_model"]
    assert by_model["m"]["timed_out"] == 2
    assert by_model["m"]["timed_out_samples"] == [  # sorted by task source, task, language, sample
        {"task_source": "s", "task": "alpha", "language": "java", "sample": 0, "tests": [
            {"test_case": "big", "limit_s": 60.0, "limit": "sample"},
            {"test_case": "bigger", "limit_s": 60.0, "limit": "sample"}]},
        {"task_source": "s", "task": "zeta", "language": "java", "sample": 1, "tests": [
            {"test_case": "slow", "limit_s": 0.25, "limit": "test"}]},
    ]
    assert by_model["other"]["timed_out"] == 0 and by_model["other"]["timed_out_samples"] == []


def test_suspicious_passes_are_listed_per_model() -> None:
    def rec(eid: str, test_case: str | None, details: dict[str, Any] | None) -> Record:
        return Record(run_id="r", execution_id=eid, task_source="s", task=eid, language="python",
                      model="m", sample=0, criterion="unit-test", executor="UnitTest", score=1.0,
                      status="pass" if test_case else None, test_case=test_case, outcome="pass",
                      details=details)

    why = "the value is a Anything (not a plain value) where the expected value is a int"
    records = [
        rec("a", "t1", {"judged": "sample", "suspicious": why}), rec("a", "t2", {"judged": "harness"}),
        rec("a", None, None), rec("b", "t1", {"judged": "harness"}), rec("b", None, None),
    ]
    summary = summarize(records, "r")["by_model"]["m"]
    assert summary["suspicious"] == 1
    assert summary["suspicious_samples"] == [
        {"task_source": "s", "task": "a", "language": "python", "sample": 0, "tests": {"t1": why}}]
    assert summary["outcomes"]["pass"] == 2  # flagged, not overturned


def test_an_untested_sample_is_never_in_pass_rates_or_pass_at_k():
    """An untested sample (no test case applies) is counted apart, like infra_error: a task
    whose samples are all untested is not a task of pass@k, and one untested sample of a task
    neither raises nor lowers its pass@1."""
    records = sample("A", "a1", "pass", task="t1")
    records.append(rec("A", "a2", "untested", "unit-test", None, task="t1",
                       details={"passed": 0, "total": 0, "untested": True}))
    records.append(rec("A", "a3", "untested", "unit-test", None, task="t2",
                       details={"passed": 0, "total": 0, "untested": True}))
    a = summarize(records, "run-1")["by_model"]["A"]
    assert a["outcomes"] == {"pass": 1, "fail": 0, "error": 0, "untested": 2, "infra_error": 0}
    assert a["samples"] == 3 and a["tasks"] == 1
    assert a["pass_at_k"] == {"pass@1": 1.0}
    assert a["criteria"]["unit-test"]["mean"] == 1.0 and a["criteria"]["unit-test"]["unscored"] == 2


def test_every_mean_carries_its_clustered_standard_error_and_interval():
    from benchwright.results.stats import Z95, wilson

    a = summarize(build_records(), "run-1")["by_model"]["A"]
    # counted samples: t1 pass, fail (the infra_error left out); t2 pass, pass -> task means 0.5, 1
    rate = a["pass_rate"]
    assert rate["mean"] == pytest.approx(0.75) and rate["n"] == 4 and rate["tasks"] == 2
    assert rate["se"] == pytest.approx(math.sqrt(0.125 / 2))
    assert rate["ci_method"] == "wilson-clustered"  # two tasks: far too few for the normal interval
    lo, hi = rate["ci95"]
    assert 0 < lo < 0.75 < hi <= 1
    ut = a["criteria"]["unit-test"]
    assert ut["mean"] == pytest.approx(0.75) and ut["se"] == pytest.approx(rate["se"])
    assert ut["ci_method"] == "wilson-clustered"
    # effective n: p (1 - p) / se^2 = 0.1875 / 0.0625 = 3 (between the 2 tasks and the 4 samples)
    assert ut["ci95"] == pytest.approx(list(wilson(0.75, 3)))
    cpu = a["criteria"]["cpu-usage"]  # t1: 10, 30; t2: 20, 40 -> task means 20, 30
    assert cpu["mean"] == pytest.approx(25.0) and cpu["se"] == pytest.approx(5.0)
    assert cpu["ci_method"] == "normal-clustered"
    assert cpu["ci95"] == pytest.approx([25 - Z95 * 5, 25 + Z95 * 5])
    assert set(a["pass_at_k_ci"]) == set(a["pass_at_k"]) == {"pass@1"}
    assert a["pass_at_k_ci"]["pass@1"]["ci_method"] == "bootstrap-tasks"
    power = a["power"]
    assert power["task_variance"] == pytest.approx(0.125)
    assert [(t["delta"], t["tasks"]) for t in power["tasks_needed"]] == [(0.05, 785), (0.10, 197)]
