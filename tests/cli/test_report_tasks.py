"""``report --tasks``: which model failed which task, and why, one command away."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.conftest import Runner

HOSTILE = "[bold red]x[/]|`y`"  # rich markup, a markdown cell break and code: all shown as text


def _task(name: str, body: str, tests: list[str]) -> str:
    listed = "".join(f"            - code: {t}\n" for t in tests)
    tests_yaml = f"          hidden_tests:\n{listed}" if tests else "          hidden_tests: []\n"
    return (f"  - name: {json.dumps(name)}\n    languages: [python]\n"
            f"    task:\n      common_prompt: write f\n      languages_specific:\n        python:\n"
            f"{tests_yaml}"
            f"    golden_solution:\n      python: |\n        def f(a):\n            {body}\n")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import run_cli

    ws = tmp_path_factory.mktemp("report-tasks") / "ws"
    (ws / "tasks").mkdir(parents=True)
    (ws / "configs").mkdir()
    (ws / "benchwright.yaml").write_text("version: 1\n")
    (ws / "tasks" / "t.yaml").write_text("version: 1\nname: src\ntasks:\n" + "".join([
        _task("good", "return a + 1", ["assert f(1) == 2", "assert f(2) == 3"]),
        _task("wrong", "return a", ["assert f(1) == 1", "assert f(2) == 3, 'f(2) should be 3'"]),
        _task(HOSTILE, "return a - 1", ["assert f(1) == 0", "assert f(5) == 4"]),
        _task("broken", "return (", ["assert f(1) == 2"]),
    ]))
    (ws / "configs" / "c.yaml").write_text(
        "version: 1\ntask_sources: [tasks/t.yaml]\nllms: [reference]\nsamples: 2\ncriteria: [unit-test]\n")
    proc = run_cli("run", "configs/c.yaml", "--run-id", "r", cwd=ws)
    assert proc.returncode in (0, 1), proc.stderr
    return ws


@pytest.mark.slow
def test_the_matrix_says_which_task_failed_and_why(run: Path, bw: Runner) -> None:
    proc = bw("report", "r", "--tasks", cwd=run)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout
    lines = {line.split("│")[1].strip(): line for line in text.splitlines() if line.count("│") >= 3}
    assert "pass 2/2, tests 4/4" in lines["good"]
    assert "fail 0/2, tests 2/4" in lines["wrong"] and "f(2) should be 3" in lines["wrong"]
    assert "fail 0/2" in lines["broken"]
    assert HOSTILE in text  # the name as it is: no markup taken from it
    assert "Samples that did not pass (4)" in text


@pytest.mark.slow
def test_markdown_for_a_pull_request_comment(run: Path, bw: Runner) -> None:
    proc = bw("report", "r", "--tasks", "--format", "markdown", cwd=run)
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| src/")]
    assert len(rows) == 4
    # a '|' in a name never adds a column
    assert all(line.replace("\\|", "").count("|") == 4 for line in rows), rows
    assert any("wrong" in line and "fail 0/2" in line for line in rows)


@pytest.mark.slow
def test_csv_has_one_row_per_sample_and_json_the_cells(run: Path, bw: Runner) -> None:
    got = bw("report", "r", "--tasks", "--format", "csv", cwd=run)
    assert got.returncode == 0, got.stderr
    rows = list(csv.DictReader(io.StringIO(got.stdout)))
    assert len(rows) == 8 and {r["sample"] for r in rows} == {"0", "1"}
    wrong = [r for r in rows if r["task"] == "wrong"]
    assert {r["outcome"] for r in wrong} == {"fail"}
    assert all(r["tests_passed"] == "1" and r["tests_total"] == "2" for r in wrong)
    assert all("f(2) should be 3" in r["first_failure"] for r in wrong)
    broken = [r for r in rows if r["task"] == "broken"]
    assert {r["outcome"] for r in broken} == {"error"} and all(r["first_failure"] for r in broken)
    cells = json.loads(bw("report", "r", "--tasks", "--format", "json", cwd=run).stdout)["tasks"]
    assert {c["task"]: c["verdict"] for c in cells} == {"good": "pass", "wrong": "fail", HOSTILE: "pass",
                                                        "broken": "fail"}


@pytest.mark.slow
def test_export_csv_per_sample(run: Path, bw: Runner) -> None:
    got = bw("export", "r", "--format", "csv", cwd=run)  # a row per sample is the default
    assert got.returncode == 0, got.stderr
    rows = list(csv.DictReader(io.StringIO(got.stdout)))
    assert len(rows) == 8 and len({r["execution_id"] for r in rows}) == 8
    refused = bw("export", "r", "--format", "junit", "--per", "sample", cwd=run)
    assert refused.returncode == 2 and "--per sample" in refused.stderr
