"""``compare``: deltas per model and criterion, and per-task regressions and fixes, between two
real run folders."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.table import Table

from benchwright.errors import UserError
from benchwright.results.compare import compare, compare_table, compare_text
from benchwright.results.folder import RunFolder
from benchwright.results.record import Record
from benchwright.results.summary import summarize


def sample(run_id: str, model: str, task: str, n: int, ok: bool, *, cpu: float = 10.0,
           infra: bool = False) -> list[Record]:
    base: dict[str, Any] = dict(run_id=run_id, execution_id=f"{run_id}-{model}-{task}-{n}", task_source="src",
                                task=task, language="python", model=model, sample=n)
    if infra:
        return [Record(**base, criterion="generation", executor="fake", error="timeout", outcome="infra_error")]
    outcome = "pass" if ok else "fail"
    return [
        Record(**base, criterion="unit-test", executor="UnitTest", test_case="t0", status="pass", score=1.0,
               unit="success", outcome=outcome),
        Record(**base, criterion="unit-test", executor="UnitTest", test_case="t1", status=outcome,
               score=1.0 if ok else 0.0, unit="success", outcome=outcome),
        Record(**base, criterion="unit-test", executor="UnitTest", unit="success", score=1.0 if ok else 0.0,
               details={"passed": 2 if ok else 1, "total": 2, "statuses": {}}, outcome=outcome),
        Record(**base, criterion="cpu-usage", executor="CpuUsage", unit="ms", score=cpu, outcome=outcome),
    ]


def make_run(root: Path, run_id: str, samples: list[list[Record]]) -> RunFolder:
    folder = RunFolder.create(root / run_id, {"run_id": run_id})
    for recs in samples:
        folder.append_records(recs)
    folder.write_summary(summarize(folder.records(), run_id))
    return folder


@pytest.fixture
def runs(tmp_path: Path) -> tuple[RunFolder, RunFolder]:
    a = make_run(tmp_path, "A", [
        sample("A", "m1", "stable", 0, True), sample("A", "m1", "stable", 1, True),
        sample("A", "m1", "regressed", 0, True), sample("A", "m1", "regressed", 1, True),
        sample("A", "m1", "fixed", 0, False), sample("A", "m1", "fixed", 1, True),
        sample("A", "m1", "flaky-infra", 0, True),
        sample("A", "old", "stable", 0, True),
    ])
    b = make_run(tmp_path, "B", [
        sample("B", "m1", "stable", 0, True, cpu=20.0), sample("B", "m1", "stable", 1, True, cpu=20.0),
        sample("B", "m1", "regressed", 0, True, cpu=20.0), sample("B", "m1", "regressed", 1, False, cpu=20.0),
        sample("B", "m1", "fixed", 0, True, cpu=20.0), sample("B", "m1", "fixed", 1, True, cpu=20.0),
        sample("B", "m1", "flaky-infra", 0, True, infra=True),  # infra_error: never a regression
        sample("B", "new", "stable", 0, False),
    ])
    return a, b


def test_flips(runs: tuple[RunFolder, RunFolder]) -> None:
    result = compare(*runs)
    assert [(f.model, f.task, f.a_passed, f.a_samples, f.b_passed, f.b_samples) for f in result.regressions] == [
        ("m1", "regressed", 2, 2, 1, 2)]
    assert [(f.model, f.task, f.a_passed, f.b_passed) for f in result.fixes] == [("m1", "fixed", 1, 2)]
    assert result.tasks_compared == 3  # m1: stable, regressed, fixed
    assert result.tasks_only_a == 2  # m1/flaky-infra (no scored sample in B), old/stable
    assert result.tasks_only_b == 1  # new/stable


def test_deltas(runs: tuple[RunFolder, RunFolder]) -> None:
    result = compare(*runs)
    assert result.only_a == ["old"] and result.only_b == ["new"]
    assert result.models == ["m1", "old", "new"]
    d = {(x.model, x.criterion): x for x in result.deltas}
    ut = d[("m1", "unit-test")]
    assert ut.a == pytest.approx(6 / 7) and ut.b == pytest.approx(5 / 6)
    assert ut.delta == pytest.approx(5 / 6 - 6 / 7)
    assert ut.points == pytest.approx((5 / 6 - 6 / 7) * 100)
    assert ut.change == "worse" and ut.presence == "both"
    cpu = d[("m1", "cpu-usage")]
    assert (cpu.a, cpu.b, cpu.delta, cpu.points, cpu.change) == (10.0, 20.0, 10.0, None, "worse")
    assert cpu.verdict == "worse" and ut.verdict == "no significant difference"  # ut.change stays "worse"
    assert d[("m1", "infra_error (not counted)")].b == 1 and d[("m1", "infra_error (not counted)")].change == ""
    assert d[("m1", "fail")].delta == 0 and d[("m1", "fail")].change == "same"
    old = d[("old", "unit-test")]
    assert old.presence == "only_a" and old.a == 1.0 and old.b is None and old.delta is None
    assert d[("new", "unit-test")].presence == "only_b"


def test_formats(runs: tuple[RunFolder, RunFolder]) -> None:
    result = compare(*runs)
    data = json.loads(compare_text(result, "json"))
    assert data["regressions"][0]["task"] == "regressed" and data["fixes"][0]["task"] == "fixed"
    md = compare_text(result, "markdown")
    # unit-test: per shared task 0, -0.5, +0.5: the -2.4 pp cannot be told from noise
    assert "| m1 | unit-test | success | 86 % | 83 % | -2.4 pp | [-100.0, 100.0] pp | 1.000 | no significant difference |" in md
    # cpu-usage: +10 ms on every task, a difference with no noise at all
    assert "| m1 | cpu-usage | ms | 10.00 | 20.00 | +10.00 | [10.00, 10.00] | < 0.001 | worse |" in md
    assert "m1: pass rate B - A = +0.0 pp [-100.0, 100.0] pp, p = 1 (paired-t over 3 shared task(s)): " \
        "no significant difference" in md
    pairs = {(p["model"], p["criterion"]): p for p in data["paired"]}
    assert set(pairs) == {("m1", "pass_rate"), ("m1", "unit-test"), ("m1", "cpu-usage")}
    assert pairs[("m1", "cpu-usage")]["significant"] and pairs[("m1", "cpu-usage")]["verdict"] == "worse"
    assert pairs[("m1", "pass_rate")]["tasks"] == 3 and pairs[("m1", "pass_rate")]["diff"] == 0
    assert "| regression | m1 | src.regressed | python | 2/2 | 1/2 |" in md
    assert "| fix | m1 | src.fixed | python | 1/2 | 2/2 |" in md
    assert "old (only in A)" in md and "new (only in B)" in md
    assert isinstance(compare_table(result), Table)
    text = compare_text(result, "table", width=140)
    assert "regression" in text and "-2.4 pp" in text


def test_unknown_format(runs: tuple[RunFolder, RunFolder]) -> None:
    with pytest.raises(UserError, match=re.escape("no compare-format named 'csv' is installed "
                                                  "(known: json, markdown, table)")):
        compare_text(compare(*runs), "csv")
