"""Why samples failed: grouped by kind, each saying whether a retry can fix it; in summary.yaml,
the report's notes, and ``status``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.results.record import Record
from benchwright.results.report import notes
from benchwright.results.summary import summarize
from tests.conftest import Runner


def _rec(eid: str, outcome: str, *, model: str = "m", criterion: str = "unit-test", error: str | None = None,
         test_case: str | None = None, status: str | None = None) -> Record:
    return Record(run_id="r", execution_id=eid, task_source="s", task=f"t-{eid}", language="python", model=model,
                  sample=0, criterion=criterion, executor="x", score=None, unit="success", verdict="fail",
                  required=True, error=error, test_case=test_case, status=status, outcome=outcome)


RECORDS = [
    _rec("a", "infra_error", criterion="generation", error="ProviderError: HTTP 503 from https://api"),
    _rec("b", "infra_error", criterion="generation", error="ProviderError: HTTP 503 from https://api"),
    _rec("c", "infra_error", criterion="generation",
         error="replay: no recorded answer for task s/t [python] sample 3 by model 'm' in gens.jsonl"),
    _rec("d", "infra_error", error="infra_error: the sandbox failed: bwrap: setting up uid map: Permission denied"),
    _rec("e", "error", test_case="t1", status="timeout", error="took longer than 2 s"),
    _rec("f", "error", test_case="t1", status="error", error="SyntaxError: invalid syntax"),
    _rec("f", "error", error="SyntaxError: invalid syntax"),
    _rec("g", "error", test_case="t1", status="error", error="ZeroDivisionError: division by zero"),
    _rec("h", "fail", test_case="t1", status="fail", error="AssertionError"),
    _rec("i", "pass", test_case="t1", status="pass"),
]


def test_each_failed_sample_has_one_reason_of_a_kind() -> None:
    summary = summarize(RECORDS, "r")
    groups = {(g["outcome"], g["kind"]): g for g in summary["failures"]["m"]}
    assert {k: (g["samples"], g["retryable"]) for k, g in groups.items()} == {
        ("infra_error", "provider"): (2, True),
        ("infra_error", "replay gap"): (1, False),
        ("infra_error", "sandbox failure"): (1, True),
        ("error", "time limit"): (1, False),
        ("error", "did not build"): (1, False),  # its test's error is explained by the build
        ("error", "test error"): (1, False),
    }
    assert groups[("infra_error", "provider")]["message"] == "ProviderError: HTTP 503 from https://api"
    assert groups[("error", "did not build")]["example"] == "s/t-f [python] sample 0"


def test_the_report_says_which_a_retry_can_fix() -> None:
    said = notes(summarize(RECORDS, "r"))
    assert any("2 infra_error sample(s), provider (a retry may fix it)" in n for n in said), said
    assert any("replay gap (a retry will not help)" in n for n in said), said
    assert any(n.startswith("3 infra_error sample(s) may succeed again") for n in said), said
    assert any(n.startswith("1 infra_error sample(s) will fail the same way") for n in said), said


def test_a_run_with_nothing_failed_has_no_failures() -> None:
    assert "failures" not in summarize([r for r in RECORDS if r.outcome in ("pass", "fail")], "r")


@pytest.mark.slow
def test_status_and_report_of_a_real_run_say_why(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    (ws / "tasks").mkdir(parents=True)
    (ws / "configs").mkdir()
    (ws / "benchwright.yaml").write_text("version: 1\n")
    (ws / "tasks" / "t.yaml").write_text(
        "version: 1\nname: src\ntasks:\n"
        "  - name: broken\n    languages: [python]\n    task:\n      common_prompt: write f\n"
        "      languages_specific:\n        python:\n          hidden_tests:\n            - code: assert f(1) == 2\n"
        "    golden_solution:\n      python: |\n        def f(a):\n            return (\n"
        "  - name: slow\n    languages: [python]\n    time_limit_s: 1\n    task:\n      common_prompt: write f\n"
        "      languages_specific:\n        python:\n          hidden_tests:\n            - code: assert f(1) == 2\n"
        "    golden_solution:\n      python: |\n        def f(a):\n            while True:\n                pass\n")
    (ws / "configs" / "c.yaml").write_text(
        "version: 1\ntask_sources: [tasks/t.yaml]\nllms: [reference]\ncriteria: [unit-test]\n")
    ran = bw("run", "configs/c.yaml", "--run-id", "r", cwd=ws)
    assert ran.returncode == 0, ran.stderr
    assert "did not build (a retry will not help)" in ran.stdout, ran.stdout
    status = json.loads(bw("status", "r", cwd=ws).stdout)
    kinds = {g["kind"] for g in status["failures"]["reference"]}
    assert kinds == {"did not build", "time limit"}, status["failures"]
    report = bw("report", "r", "--format", "markdown", cwd=ws).stdout
    assert "time limit (a retry will not help)" in report
