"""``export``: a real run folder as JUnit XML, JSON, CSV and markdown."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from benchwright.errors import UserError
from benchwright.results.export import SPEC_KEYS, export
from benchwright.results.folder import RunFolder
from benchwright.results.record import Record
from benchwright.results.summary import summarize

RID = "run-x"


def sample(model: str, task: str, n: int, cases: list[tuple[str, str]], *, language: str = "python",
           infra: bool = False, build_error: str | None = None) -> list[Record]:
    """``cases``: (status, error message) per test case."""
    base: dict[str, Any] = dict(run_id=RID, execution_id=f"{model}-{task}-{language}-{n}", task_source="humaneval",
                                task=task, language=language, model=model, sample=n)
    if infra:
        return [Record(**base, criterion="generation", executor="openai", error="HTTP 503 from provider",
                       outcome="infra_error")]
    statuses = [s for s, _ in cases]
    outcome = ("error" if build_error or {"error", "timeout"} & set(statuses)
               else "pass" if all(s == "pass" for s in statuses) else "fail")
    recs = [Record(**base, criterion="unit-test", executor="UnitTest", test_case=f"case_{i}", status=s,
                   score=1.0 if s == "pass" else 0.0, unit="success", time_ms=250.0, error=msg or None,
                   code=f"from solution import f\nassert f({i}) == {i}\n", line=2 if s == "fail" else None,
                   hidden=i == 1)
            for i, (s, msg) in enumerate(cases)]
    passed = statuses.count("pass")
    recs.append(Record(**base, criterion="unit-test", executor="UnitTest", unit="success",
                       score=1.0 if outcome == "pass" else 0.0, error=build_error, output=f"{passed}/{len(cases)}",
                       details={"passed": passed, "total": len(cases), "statuses": {"pass": passed}}))
    recs.append(Record(**base, criterion="cpu-usage", executor="CpuUsage", score=7.25, unit="ms",
                       details={"tests_cpu_ms": 7.25}))
    for r in recs:
        r.outcome = outcome  # type: ignore[assignment]
    return recs


@pytest.fixture
def folder(tmp_path: Path) -> RunFolder:
    f = RunFolder.create(tmp_path / RID, {"run_id": RID, "sandbox": {"isolation": "bubblewrap"}})
    for recs in [
        sample("gpt", "HumanEval/0", 0, [("pass", ""), ("fail", "AssertionError: expected 0, got 1\x1b[0m")]),
        sample("gpt", "HumanEval/0", 1, [("pass", ""), ("pass", "")]),
        sample("gpt", "HumanEval/1", 0, [("timeout", "timed out after 10 s"), ("not_run", "")]),
        sample("gpt", "Sum", 0, [("pass", "")], language="java"),
        sample("llama", "HumanEval/0", 0, [("error", "ZeroDivisionError"), ("pass", "")]),
        sample("llama", "HumanEval/1", 0, [], infra=True),
        sample("llama", "HumanEval/2", 0, [], build_error="SyntaxError: invalid syntax"),
    ]:
        f.append_records(recs)
    summary = summarize(f.records(), RID)
    summary["isolation"] = "bubblewrap"
    f.write_summary(summary)
    return f


def test_junit(folder: RunFolder) -> None:
    root = ET.fromstring(export(folder, "junit").encode())
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"gpt/python", "gpt/java", "llama/python"}

    gpt = suites["gpt/python"]
    assert (gpt.get("tests"), gpt.get("failures"), gpt.get("errors"), gpt.get("skipped")) == ("6", "1", "1", "1")
    assert sorted((c.get("classname"), c.get("name")) for c in gpt.findall("testcase")) == [
        ("humaneval.HumanEval/0", "case_0 [sample 0]"), ("humaneval.HumanEval/0", "case_0 [sample 1]"),
        ("humaneval.HumanEval/0", "case_1 [sample 0]"), ("humaneval.HumanEval/0", "case_1 [sample 1]"),
        ("humaneval.HumanEval/1", "case_0 [sample 0]"), ("humaneval.HumanEval/1", "case_1 [sample 0]"),
    ]
    failed = [c for c in gpt.findall("testcase") if c.find("failure") is not None]
    assert len(failed) == 1
    case = failed[0]
    assert case.get("classname") == "humaneval.HumanEval/0"
    assert case.get("name") == "case_1 [sample 0]"
    assert case.get("time") == "0.250"
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("type") == "fail"
    assert failure.get("message", "").startswith("AssertionError: expected 0, got 1")
    assert "line 2" in (failure.text or "") and "assert f(1) == 1" in (failure.text or "")
    timeout = [c for c in gpt.findall("testcase") if c.find("error") is not None]
    assert len(timeout) == 1 and timeout[0].find("error").get("type") == "timeout"  # type: ignore[union-attr]
    assert len([c for c in gpt.findall("testcase") if c.find("skipped") is not None]) == 1

    llama = suites["llama/python"]
    # 2 test cases, 1 infra_error sample, 1 build-error sample
    assert (llama.get("tests"), llama.get("failures"), llama.get("errors"), llama.get("skipped")) == ("4", "0", "3", "0")
    infra = [e for e in llama.iter("error") if e.get("type") == "infra_error"]
    assert len(infra) == 1 and infra[0].get("message") == "HTTP 503 from provider"
    build = [e for e in llama.iter("error") if "SyntaxError" in (e.get("message") or "")]
    assert len(build) == 1

    assert (root.get("tests"), root.get("failures"), root.get("errors"), root.get("skipped")) == ("11", "1", "4", "1")
    assert root.get("name") == RID


def test_csv(folder: RunFolder) -> None:
    rows = list(csv.DictReader(io.StringIO(export(folder, "csv"))))
    reader = csv.reader(io.StringIO(export(folder, "csv")))
    header = next(reader)
    assert tuple(header[: len(SPEC_KEYS)]) == SPEC_KEYS
    assert {"outcome", "status", "line", "hidden", "details"} <= set(header[len(SPEC_KEYS):])
    assert len(rows) == len(list(folder.records()))
    cpu = next(r for r in rows if r["criterion"] == "cpu-usage")
    assert json.loads(cpu["details"]) == {"tests_cpu_ms": 7.25}
    assert float(cpu["score"]) == 7.25
    failed = next(r for r in rows if r["status"] == "fail")
    assert failed["code"] == "from solution import f\nassert f(1) == 1\n"  # multi-line cells survive
    assert failed["line"] == "2" and failed["hidden"] == "true"


def test_json(folder: RunFolder) -> None:
    doc = json.loads(export(folder, "json"))
    assert doc["run"]["run_id"] == RID
    assert set(doc["summary"]["by_model"]) == {"gpt", "llama"}
    assert len(doc["records"]) == len(list(folder.records()))
    assert doc["records"][0]["run_id"] == RID


def test_markdown(folder: RunFolder) -> None:
    md = export(folder, "markdown")
    assert "| Criteria | Unit | gpt | llama |" in md
    assert "| cpu-usage | ms | 7.25 | 7.25 |" in md


def test_summary_computed_when_missing(tmp_path: Path) -> None:
    f = RunFolder.create(tmp_path / "unfinished", {"run_id": "unfinished", "config": {"thresholds": {"unit-test": 1}}})
    f.append_records(sample("gpt", "T", 0, [("fail", "nope")]))
    assert f.summary() is None
    assert "| unit-test | success | 0 % ✗ |" in export(f, "markdown")


def test_unknown_format(folder: RunFolder) -> None:
    with pytest.raises(UserError, match=re.escape("no export-format named 'xlsx' is installed "
                                                  "(known: csv, json, junit, markdown)")):
        export(folder, "xlsx")
