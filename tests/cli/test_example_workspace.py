"""The README's first command: the example workspace run with the reference model."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from benchwright.sandbox.select import best_sandbox
from tests.conftest import Runner, only_run, read_jsonl, run_cli

SPEC_KEYS = {"run_id", "execution_id", "task_source", "task", "language", "model", "sample", "criterion",
             "executor", "score", "unit", "verdict", "required", "output", "error", "time_ms",
             "test_case", "code"}


@dataclass(frozen=True)
class ExampleRun:
    workspace: Path
    run: Path
    proc: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def example_run(tmp_path_factory: pytest.TempPathFactory) -> ExampleRun:
    """The README's first command, once for the tests that read its run: the whole example (every
    task, both languages, every criterion) with the reference model, as run id ``a``."""
    ws = tmp_path_factory.mktemp("example") / "ws"
    assert run_cli("init", ws).returncode == 0
    proc = run_cli("run", "configs/example.yaml", "--run-id", "a", cwd=ws, timeout=900)  # the suite's longest run
    return ExampleRun(ws, ws / "results" / "a", proc)


SHARED_RUN = pytest.mark.xdist_group("example-workspace-run")
"""The tests of :func:`example_run` on one xdist worker, so the run is made once."""


@SHARED_RUN
def test_example_run_prints_the_model_by_criterion_table(example_run: ExampleRun) -> None:
    proc, run = example_run.proc, example_run.run
    assert proc.returncode == 0, proc.stderr
    for row in ("unit-test", "cpu-usage", "ram-usage", "token-count"):
        assert row in proc.stdout
    assert "reference" in proc.stdout
    for name in ("run.yaml", "status.yaml", "records.jsonl", "generations.jsonl", "summary.yaml"):
        assert (run / name).is_file(), name

    records = read_jsonl(run / "records.jsonl")
    assert records and all(set(r) >= SPEC_KEYS for r in records)
    langs = {r["language"] for r in records}
    assert langs == {"python", "java"}
    tests = [r for r in records if r["criterion"] == "unit-test" and r["test_case"]]
    assert tests and all(r["status"] == "pass" and r["code"] for r in tests)
    assert {r["hidden"] for r in tests} == {True, False}

    yaml = YAML(typ="safe")
    status = yaml.load((run / "status.yaml").read_text())
    assert status["state"] == "completed"
    (source,) = status["taskSourceStatuses"].values()
    unfinished = [(r["task"], r["language"], r["criterion"], r["outcome"], r["error"]) for r in records
                  if r["outcome"] != "pass"]
    assert source["completed"] == source["total"] > 12 and source["error"] == 0, unfinished
    summary = yaml.load((run / "summary.yaml").read_text())
    assert summary["by_model"]["reference"]["criteria"]["unit-test"]["mean"] == 1.0
    assert set(summary["by_language"]) == {"java", "python"}
    manifest = yaml.load((run / "run.yaml").read_text())
    assert manifest["sandbox"]["isolation"] == best_sandbox().isolation  # bwrap where it works
    assert len(manifest["task_sources"][0]["sha256"]) == 64

    gens = read_jsonl(run / "generations.jsonl")
    assert len(gens) == source["total"]
    assert len({g["execution_id"] for g in gens}) == len(gens)
    assert all(g["raw"].startswith("```") or g["mode"] == "complete" for g in gens)


@SHARED_RUN
def test_report_export_status_compare(example_run: ExampleRun, bw: Runner) -> None:
    workspace = example_run.workspace  # run "a": the example; "b": a few of its Python tasks
    assert bw("run", "configs/python-only.yaml", "--run-id", "b", "--limit", "3",
              cwd=workspace).returncode == 0

    table = bw("report", "a", cwd=workspace)
    assert table.returncode == 0 and "unit-test" in table.stdout
    data = json.loads(bw("report", "a", "--format", "json", cwd=workspace).stdout)
    assert data["by_model"]["reference"]["pass_at_k"]["pass@1"] == 1.0
    md = bw("report", "latest", "--format", "markdown", cwd=workspace).stdout
    assert "| unit-test" in md
    rows = list(csv.reader(io.StringIO(bw("report", "a", "--format", "csv", cwd=workspace).stdout)))
    assert any("unit-test" in r for r in rows)
    bad = bw("report", "a", "--format", "pdf", cwd=workspace)
    assert bad.returncode == 2 and "pdf" in bad.stderr and "Traceback" not in bad.stderr

    junit = ET.fromstring(bw("export", "a", "--format", "junit", cwd=workspace).stdout)
    cases = junit.findall(".//testcase")
    assert cases and not junit.findall(".//failure")
    out = workspace / "a.csv"
    assert bw("export", "a", "--format", "csv", "--per", "record", "--out", out, cwd=workspace).returncode == 0
    header = next(csv.reader(out.open()))
    assert header[: len(SPEC_KEYS)] and set(header) >= SPEC_KEYS
    per_sample = workspace / "s.csv"  # the default: a row per sample
    assert bw("export", "a", "--format", "csv", "--out", per_sample, cwd=workspace).returncode == 0
    header = next(csv.reader(per_sample.open()))
    assert header[:6] == ["task_source", "task", "language", "model", "sample", "execution_id"]

    st = bw("status", cwd=workspace)
    assert st.returncode == 0 and "a" in st.stdout and "completed" in st.stdout
    cmp = bw("compare", "a", "b", "--format", "json", cwd=workspace)
    assert cmp.returncode == 0, cmp.stderr
    missing = bw("report", "nope", cwd=workspace)
    assert missing.returncode == 2 and "nope" in missing.stderr


def test_threshold_missed_exits_1(workspace: Path, bw: Runner) -> None:
    tasks = workspace / "tasks" / "broken.yaml"
    tasks.write_text(
        "version: 1\nname: broken\ntasks:\n"
        "  - name: add\n    languages: [python]\n"
        "    task:\n      common_prompt: add two numbers\n"
        "      languages_specific:\n        python:\n          hidden_tests:\n"
        "            - code: assert add(1, 2) == 3\n"
        "    golden_solution:\n      python: |\n        def add(a, b):\n            return a - b\n"
    )
    cfg = workspace / "configs" / "gate.yaml"
    cfg.write_text("version: 1\ntask_sources: [tasks/broken.yaml]\nllms: [reference]\n"
                   "thresholds: {unit-test: 0.8}\n")
    proc = bw("run", "configs/gate.yaml", cwd=workspace)
    assert proc.returncode == 1, proc.stderr
    assert "threshold" in proc.stderr


def test_schema_and_list(bw: Runner) -> None:
    schema = json.loads(bw("schema", "task-source").stdout)
    assert "tasks" in schema["properties"]
    cfg = json.loads(bw("schema", "exec-config").stdout)
    assert "llm-judge" in cfg["properties"]
    assert bw("schema", "nope").returncode == 2
    listed = bw("list", "criteria")
    for name in ("unit-test", "cpu-usage", "ram-usage", "token-count"):
        assert name in listed.stdout
    languages = bw("list", "languages").stdout
    assert "python" in languages and "java" in languages


def test_every_language_runs_its_example_tasks(workspace: Path, bw: Runner) -> None:
    """configs/languages.yaml: the same tasks in all nine languages, golden solutions pass,
    with a record per test case and the sample's CPU time and memory."""
    proc = bw("run", "configs/languages.yaml", cwd=workspace)
    records = read_jsonl(only_run(workspace) / "records.jsonl")
    failed = [(r["language"], r["task"], r["test_case"], r["status"], r["error"]) for r in records
              if r["criterion"] == "unit-test" and r["verdict"] not in ("pass", None)]
    assert proc.returncode == 0, f"{proc.stderr}\n{failed}"
    langs = {r["language"] for r in records}
    assert langs == {"python", "java", "javascript", "typescript", "c", "cpp", "rust", "go", "bash"}
    for lang in langs:
        mine = [r for r in records if r["language"] == lang]
        tests = [r for r in mine if r["criterion"] == "unit-test" and r["test_case"]]
        assert len(tests) >= 3 * 4 and all(r["status"] == "pass" and r["time_ms"] is not None
                                           for r in tests), lang
        usage = {r["criterion"]: r["score"] for r in mine if r["criterion"] in ("cpu-usage", "ram-usage")}
        assert usage and all(isinstance(v, (int, float)) and v > 0 for v in usage.values()), (lang, usage)
    others = [(r["language"], r["task"], r["criterion"], r["outcome"], r["error"], r.get("details"))
              for r in records if r["outcome"] != "pass"]
    assert not others, others


def test_an_imported_benchmark_in_two_languages(workspace: Path, bw: Runner, tmp_path: Path) -> None:
    """configs/humaneval-x.yaml: five HumanEval-X tasks in Python and Java, imported from the
    dataset's own files in data/ (the shipped task sources are exactly what the README's import
    commands make), each check its own test case, all passing with the reference model."""
    for language in ("python", "java"):
        fresh = tmp_path / f"{language}.yaml"
        proc = bw("import", "humaneval-x", "--language", language, "--data",
                  workspace / "data" / "humaneval-x" / f"humaneval_{language}_first5.jsonl",
                  "--out", fresh)
        assert proc.returncode == 0, proc.stderr
        shipped = workspace / "tasks" / f"humaneval-x-{language}.yaml"
        assert fresh.read_text() == shipped.read_text(), f"{shipped} is stale: re-run the import"
    proc = bw("run", "configs/humaneval-x.yaml", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(only_run(workspace) / "records.jsonl")
    cases = [r for r in records if r["criterion"] == "unit-test" and r["test_case"]]
    assert {r["language"] for r in cases} == {"python", "java"}
    assert len({(r["language"], r["task"]) for r in cases}) == 10
    assert len(cases) > 40 and {r["status"] for r in cases} == {"pass"}
    assert {r["outcome"] for r in records} == {"pass"}
