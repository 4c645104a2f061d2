"""``report``: the summary of a real run folder as a table, markdown, csv and json."""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.table import Table

from benchwright.errors import UserError
from benchwright.results.folder import RunFolder
from benchwright.results.record import Record
from benchwright.results.report import (
    NONE,
    human_bytes,
    report_renderables,
    report_table,
    report_text,
)
from benchwright.results.summary import summarize

MiB = 1024 * 1024


def sample(run_id: str, model: str, task: str, n: int, statuses: list[str], *, language: str = "python",
           cpu: float = 12.5, ram: float = 3 * MiB, tokens: float = 100.0, difficulty: str = "easy",
           infra: bool = False) -> list[Record]:
    base: dict[str, Any] = dict(run_id=run_id, execution_id=f"{model}-{task}-{language}-{n}", task_source="src",
                                task=task, language=language, model=model, sample=n, difficulty=difficulty)
    if infra:
        return [Record(**base, criterion="generation", executor="fake", error="provider down",
                       outcome="infra_error")]
    outcome = "pass" if all(s == "pass" for s in statuses) else "error" if {"error", "timeout"} & set(statuses) else "fail"
    recs = [Record(**base, criterion="unit-test", executor="UnitTest", test_case=f"test_{i}", status=s,
                   score=1.0 if s == "pass" else 0.0, unit="success", time_ms=5.0, code=f"assert f({i}) == {i}",
                   error=None if s == "pass" else f"AssertionError: case {i}", line=None if s == "pass" else 1)
            for i, s in enumerate(statuses)]
    passed = sum(s == "pass" for s in statuses)
    recs.append(Record(**base, criterion="unit-test", executor="UnitTest", unit="success",
                       score=1.0 if outcome == "pass" else 0.0,
                       details={"passed": passed, "total": len(statuses), "statuses": {}}))
    recs.append(Record(**base, criterion="cpu-usage", executor="CpuUsage", score=cpu, unit="ms"))
    recs.append(Record(**base, criterion="ram-usage", executor="RamUsage", score=ram, unit="bytes"))
    recs.append(Record(**base, criterion="token-count", executor="TokenCount", score=tokens, unit="tokens"))
    for r in recs:
        r.outcome = outcome  # type: ignore[assignment]
    return recs


def make_run(root: Path, run_id: str, samples: list[list[Record]], thresholds: dict[str, float] | None = None,
             **extra: Any) -> RunFolder:
    folder = RunFolder.create(root / run_id, {"run_id": run_id, "config": {"thresholds": thresholds or {}}})
    for recs in samples:
        folder.append_records(recs)
    summary = summarize(folder.records(), run_id, thresholds)
    summary.update(extra)
    folder.write_summary(summary)
    return folder


@pytest.fixture
def folder(tmp_path: Path) -> RunFolder:
    rid = "run-1"
    return make_run(tmp_path, rid, [
        # model-a: 2 of 3 samples pass
        sample(rid, "model-a", "add", 0, ["pass", "pass"]),
        sample(rid, "model-a", "add", 1, ["pass", "fail"], cpu=20.0),
        sample(rid, "model-a", "sub", 0, ["pass"], language="java", difficulty="hard", ram=512 * 1024),
        # model-b: 1 of 2 scored samples passes; one infra_error
        sample(rid, "model-b", "add", 0, ["pass", "pass"], tokens=50.5),
        sample(rid, "model-b", "add", 1, ["error", "pass"]),
        sample(rid, "model-b", "sub", 0, [], language="java", infra=True),
    ], thresholds={"unit-test": 0.6, "cpu-usage": 100.0},
        skipped_criteria={"python-pyright": "pyright is not installed"}, isolation="rlimits")


def test_human_bytes() -> None:
    assert human_bytes(512) == "512 B"
    assert human_bytes(1536) == "1.50 KiB"
    assert human_bytes(3 * MiB) == "3.00 MiB"


def test_markdown_has_a_row_per_criterion_and_a_column_per_model(folder: RunFolder) -> None:
    summary = folder.summary()
    assert summary is not None
    md = report_text(summary, "markdown")
    lines = md.splitlines()
    header = next(line for line in lines if line.startswith("| Criteria"))
    assert [c.strip() for c in header.strip("|").split("|")] == ["Criteria", "Unit", "model-a", "model-b"]
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.strip().strip("|").split("|")]
            for line in lines if line.startswith("| ") and not line.startswith("| ---")}
    for name in ("unit-test", "cpu-usage", "ram-usage", "token-count", "pass@1", "samples",
                 "pass", "fail", "error", "infra_error (not counted)"):
        assert name in rows, name
    # model-a: 2/3 pass (67 %) meets 0.6; model-b: 1/2 (50 %) misses it
    assert rows["unit-test"][2:] == ["67 %", "50 % ✗"]
    assert rows["unit-test"][1] == "success"
    assert rows["cpu-usage"][2] == "15.00"  # (12.5 + 20 + 12.5) / 3
    assert rows["ram-usage"][2] == "2.17 MiB"  # (3 + 3 + 0.5) MiB / 3
    assert rows["token-count"][3] == "75.25"
    assert rows["samples"][2:] == ["3", "3"]
    assert rows["infra_error (not counted)"][2:] == ["0", "1"]
    assert rows["pass"][2:] == ["2", "1"]
    # notes and the per-language / per-difficulty tables
    assert "isolation: rlimits only (no sandbox)" in md
    assert "skipped criteria: python-pyright (pyright is not installed)" in md
    assert "threshold missed: model-b unit-test = 50 % (needs at least 60 %)" in md
    assert "### Pass rate by language" in md and "### Pass rate by difficulty" in md
    java = next(line for line in lines if line.startswith("| java"))
    assert [c.strip() for c in java.strip("|").split("|")] == ["java", "100 %", NONE]


def test_csv_keeps_raw_numbers(folder: RunFolder) -> None:
    summary = folder.summary()
    assert summary is not None
    rows = list(csv.reader(io.StringIO(report_text(summary, "csv"))))
    assert rows[0] == ["criterion", "unit", "model-a", "model-b"]
    by_name = {r[0]: r for r in rows[1:]}
    assert float(by_name["ram-usage"][2]) == pytest.approx(6.5 * MiB / 3)
    assert float(by_name["unit-test"][3]) == 0.5
    assert by_name["infra_error"][2:] == ["0", "1"]
    assert float(by_name["pass_rate[language=python]"][2]) == 0.5


def test_json_is_the_summary(folder: RunFolder) -> None:
    summary = folder.summary()
    assert summary is not None
    data = json.loads(report_text(summary, "json"))
    assert data == json.loads(json.dumps(summary))
    assert data["thresholds"]["model-b"]["unit-test"]["met"] is False


def test_rich_table(folder: RunFolder) -> None:
    summary = folder.summary()
    assert summary is not None
    table = report_table(summary)
    assert isinstance(table, Table)
    assert [str(c.header) for c in table.columns] == ["Criteria", "Unit", "model-a", "model-b"]
    assert "isolation: rlimits only (no sandbox)" in str(table.caption)
    parts = report_renderables(summary)  # main, notes, language, difficulty (area is all "(none)")
    assert len(parts) == 4 and report_table(summary, with_notes=False).caption is None
    text = report_text(summary, "table", width=160)
    assert "50 % ✗" in text
    assert "isolation: rlimits only (no sandbox)" in text
    assert "Pass rate by language" in text


def test_no_notes_without_reason(tmp_path: Path) -> None:
    f = make_run(tmp_path, "r", [sample("r", "m", "t", 0, ["pass"])], isolation="bubblewrap",
                 skipped_criteria={})
    summary = f.summary()
    assert summary is not None
    md = report_text(summary, "markdown")
    assert "skipped" not in md and "✗" not in md and "infra_error (harness" not in md
    assert "isolation: bubblewrap" in md and "no sandbox" not in md  # the backend, no warning


def test_unknown_format(folder: RunFolder) -> None:
    summary = folder.summary()
    assert summary is not None
    with pytest.raises(UserError, match=re.escape("no report-format named 'html' is installed "
                                                  "(known: csv, json, markdown, table)")):
        report_text(summary, "html")


def test_samples_that_hit_a_time_limit_are_listed(tmp_path: Path) -> None:
    rid = "run-t"
    slow = sample(rid, "model-a", "add", 0, ["pass", "timeout"])
    slow[1].details = {"limit": "test", "limit_s": 0.25}
    walled = sample(rid, "model-a", "sub", 2, ["timeout"], language="java")
    walled[0].details = {"limit": "sample", "limit_s": 60.0}
    many = [sample(rid, "model-b", f"t{i:02}", 0, ["timeout"]) for i in range(25)]
    folder = make_run(tmp_path, rid, [slow, walled, sample(rid, "model-a", "mul", 0, ["pass"]), *many],
                      time_limits={"golden_factor": 4.0, "golden_floor_s": 1.0, "measured": 3,
                                   "kept_ceiling": [{"task_source": "src", "task": "mul", "language": "python",
                                                     "reason": "no golden solution for python"}]})
    summary = folder.summary()
    assert summary is not None
    text = report_text(summary, "table", width=200)
    assert "time limits: 4 x the golden solution's time per test case, at least 1 s (3 task/language" in text
    assert "ceiling kept for src/mul [python]: no golden solution for python" in text
    assert "model-a: 2 sample(s) hit a time limit:" in text
    assert "src/add [python] sample 0: test_1 (limit 0.25 s)" in text
    assert "src/sub [java] sample 2: test_0 (the sample's wall limit, 60 s)" in text
    assert "model-b: 25 sample(s) hit a time limit:" in text
    assert "src/t19 [python] sample 0: test_0" in text and "src/t20 [python]" not in text
    assert "... and 5 more (see summary.yaml)" in text
    md = report_text(summary, "markdown")
    assert "> model-a: 2 sample(s) hit a time limit:" in md


def test_every_mean_shows_its_interval_and_power_on_request() -> None:
    from benchwright.results.summary import summarize
    from tests.results.test_summary import build_records

    summary = summarize(build_records(), "r")
    md = report_text(summary, "markdown")
    assert "| unit-test ± SE [95 % CI] |  | ± 25.0 [25.6, 96.3] % | ± 25.0 [3.7, 74.4] % |" in md
    assert "| cpu-usage ± SE [95 % CI] |  | ± 5.00 [15.20, 34.80] |" in md
    assert "wilson-clustered for unit-test; normal-clustered for cpu-usage; bootstrap-tasks for pass@1" in md
    assert "Tasks needed" not in md
    powered = report_text(summary, "markdown", power=True)
    assert "| A | 75 % | 0.125 | 785 | 197 |" in powered and "z(0.975)" in powered
    assert "Tasks for 10 points" in report_text(summary, "table", width=160, power=True)
    assert "± 5.00 [15.20, 34.80]" in report_text(summary, "table", width=160)
    by_name = {r[0]: r for r in csv.reader(io.StringIO(report_text(summary, "csv")))}
    assert float(by_name["unit-test[se]"][2]) == pytest.approx(0.25)
    assert float(by_name["cpu-usage[ci95_lo]"][2]) == pytest.approx(25 - 1.959964 * 5)
    assert by_name["pass@1[ci_method]"][2:] == ["bootstrap-tasks", "bootstrap-tasks"]
    data = json.loads(report_text(summary, "json"))
    assert data["by_model"]["A"]["criteria"]["unit-test"]["ci_method"] == "wilson-clustered"


def test_an_interval_reads_whole_with_or_without_its_standard_error() -> None:
    from benchwright.results.report import NONE, Row, interval_text

    row = Row(key="pass@1", label="pass@1", unit="ratio", values={"m": 0.8}, percent=True, ci={
        "both": {"se": 0.041, "ci95": [0.782, 0.925]},
        "bootstrap": {"se": None, "ci95": [0.782, 0.925]},
        "se-only": {"se": 0.041, "ci95": None},
        "none": {}})
    assert interval_text(row, "both") == "± 4.1 [78.2, 92.5] %"
    assert interval_text(row, "bootstrap") == "[78.2, 92.5] %"  # no "±" and a dash before it
    assert interval_text(row, "se-only") == "± 4.1"
    assert interval_text(row, "none") == NONE
