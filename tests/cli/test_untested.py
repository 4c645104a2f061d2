"""A sample that no test case applies to is ``untested`` (never a pass), or ``error`` when its
code does not compile or load: through the real CLI, the reference model answering with the
golden solution."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.conftest import FIXTURES, Runner, only_run, read_jsonl

DATASETS = FIXTURES / "humaneval-x"  # the first five tasks of two HumanEval-X files, unchanged

BROKEN = {  # code that does not compile (or, for Python, parse)
    "python": "def f(:\n    return 1\n",
    "rust": "fn f(x: i32) -> i32 {\n    x +\n}\n",
    "java": "public class Solution {\n    public static int f(int x) { return x }\n}\n",
    "c": "int f(int x) { return x }\n",
    "go": "package main\n\nfunc f(x int) int {\n    return x +\n}\n",
    "typescript": "function f(x: number): number {\n    return (x;\n}\n",
}
VALID = {
    "python": "def f(x):\n    return x + 1\n",
    "rust": "fn f(x: i32) -> i32 {\n    x + 1\n}\n",
}


def _source(tmp: Path, golden: dict[str, str], tests: dict[str, str] | None = None) -> Path:
    """A one-task source whose task has ``golden`` solutions and, per language, ``tests``."""
    specific: dict[str, Any] = {}
    for lang in golden:
        spec: dict[str, Any] = {}
        if tests and lang in tests:
            spec["public_tests"] = [{"code": tests[lang]}]
        specific[lang] = spec
    doc = {"version": 1, "name": "bare", "tasks": [{
        "name": "f", "difficulty": "easy", "languages": sorted(golden),
        "task": {"common_prompt": "Write f(x).", "languages_specific": specific},
        "golden_solution": golden,
    }]}
    path = tmp / "tasks" / "bare.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        YAML().dump(doc, f)
    return path


def _run(bw: Runner, ws: Path, source: Path, *extra: str) -> tuple[Any, list[dict[str, Any]], dict[str, Any]]:
    (ws / "configs").mkdir(parents=True, exist_ok=True)
    (ws / "configs" / "c.yaml").write_text(
        f"version: 1\ntask_sources: [{source}]\ncriteria: [unit-test]\nllms: [reference]\n")
    proc = bw("run", "configs/c.yaml", *extra, cwd=ws)
    assert proc.returncode == 0, proc.stderr
    run = only_run(ws)
    summary = YAML(typ="safe").load((run / "summary.yaml").read_text())
    return proc, read_jsonl(run / "records.jsonl"), summary


def _outcomes(records: list[dict[str, Any]]) -> dict[str, str]:
    return {r["language"]: r["outcome"] for r in records}


def test_no_tests_and_code_that_does_not_parse_is_an_error_not_a_pass(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    source = _source(ws, {"python": BROKEN["python"]})
    proc, records, summary = _run(bw, ws, source)
    assert _outcomes(records) == {"python": "error"}
    level = next(r for r in records if r["criterion"] == "unit-test" and r["test_case"] is None)
    assert level["verdict"] == "fail" and "SyntaxError" in (level["error"] or ""), level
    data = summary["by_model"]["reference"]
    assert data["outcomes"]["pass"] == 0 and data["outcomes"]["error"] == 1
    assert data["pass_at_k"]["pass@1"] == 0.0
    assert "100.00 %" not in proc.stdout and "100 %" not in proc.stdout


def test_no_tests_and_valid_code_is_untested_and_apart(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    # one task with no test, one with a passing test: pass@1 is the tested one's alone
    source = _source(ws, {"python": VALID["python"]})
    other = ws / "tasks" / "tested.yaml"
    doc = YAML(typ="safe").load(source.read_text())
    doc["name"] = "tested"
    doc["tasks"][0]["task"]["languages_specific"]["python"]["public_tests"] = [{"code": "assert f(1) == 2"}]
    with other.open("w") as f:
        YAML().dump(doc, f)
    (ws / "configs").mkdir(parents=True, exist_ok=True)
    (ws / "configs" / "c.yaml").write_text(
        f"version: 1\ntask_sources: [{source}, {other}]\ncriteria: [unit-test]\nllms: [reference]\n")
    proc = bw("run", "configs/c.yaml", "--run-id", "u", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    run = only_run(ws)
    records = read_jsonl(run / "records.jsonl")
    by_source = {r["task_source"]: r["outcome"] for r in records}
    assert by_source == {"bare": "untested", "tested": "pass"}
    untested = next(r for r in records if r["task_source"] == "bare" and r["test_case"] is None)
    assert untested["verdict"] == "n/a" and untested["score"] is None
    assert "no test case applies" in untested["output"]
    summary = YAML(typ="safe").load((run / "summary.yaml").read_text())
    data = summary["by_model"]["reference"]
    assert data["outcomes"] == {"pass": 1, "fail": 0, "error": 0, "untested": 1, "infra_error": 0}
    assert data["tasks"] == 1 and data["pass_at_k"]["pass@1"] == 1.0
    assert data["criteria"]["unit-test"]["mean"] == 1.0  # the untested sample is not a 0 nor a 1
    assert "untested (not counted)" in proc.stdout  # the end-of-run table shows it apart
    assert "1 sample(s) are untested" in proc.stdout

    table = bw("report", "u", cwd=ws)
    assert table.returncode == 0, table.stderr
    line = next(ln for ln in table.stdout.splitlines() if "untested (not counted)" in ln)
    assert line.rstrip(" │").endswith("1"), line
    markdown = bw("report", "u", "--format", "markdown", cwd=ws).stdout
    assert "untested (not counted)" in markdown
    csv_report = bw("report", "u", "--format", "csv", cwd=ws).stdout
    assert "untested" in csv_report
    as_json = json.loads(bw("report", "u", "--format", "json", cwd=ws).stdout)
    assert as_json["by_model"]["reference"]["outcomes"]["untested"] == 1

    junit = bw("export", "u", "--format", "junit", cwd=ws).stdout
    assert 'name="untested [sample 0]"' in junit and "<skipped" in junit
    assert 'skipped="1"' in junit
    exported = json.loads(bw("export", "u", "--format", "json", cwd=ws).stdout)
    assert {r["outcome"] for r in exported["records"] if r["task_source"] == "bare"} == {"untested"}
    csv_export = bw("export", "u", "--format", "csv", cwd=ws).stdout
    assert ",untested," in csv_export


def test_compare_never_counts_an_untested_sample_as_a_flip(tmp_path: Path, bw: Runner) -> None:
    """A task that passed in A and lost its tests in B is not a regression: B did not test it."""
    ws = tmp_path / "ws"
    (ws / "configs").mkdir(parents=True, exist_ok=True)
    (ws / "configs" / "c.yaml").write_text(
        "version: 1\ntask_sources: [tasks/bare.yaml]\ncriteria: [unit-test]\nllms: [reference]\n")
    _source(ws, {"python": VALID["python"]}, {"python": "assert f(1) == 2"})
    assert bw("run", "configs/c.yaml", "--run-id", "a", cwd=ws).returncode == 0
    _source(ws, {"python": VALID["python"]})
    assert bw("run", "configs/c.yaml", "--run-id", "b", cwd=ws).returncode == 0
    proc = bw("compare", "a", "b", "--format", "json", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert not result["regressions"] and not result["fixes"], result
    assert result["tasks_only_a"] == 1 and result["tasks_compared"] == 0
    untested = next(d for d in result["deltas"] if d["criterion"] == "untested (not counted)")
    assert untested["a"] == 0 and untested["b"] == 1 and untested["change"] == ""


@pytest.mark.parametrize("language", sorted(set(BROKEN) - {"python"}))
def test_no_tests_and_code_that_does_not_compile_is_an_error(tmp_path: Path, bw: Runner,
                                                             language: str) -> None:
    ws = tmp_path / "ws"
    _, records, summary = _run(bw, ws, _source(ws, {language: BROKEN[language]}))
    assert _outcomes(records) == {language: "error"}, records
    level = next(r for r in records if r["criterion"] == "unit-test" and r["test_case"] is None)
    assert level["error"], level  # the compiler's message
    assert summary["by_model"]["reference"]["outcomes"]["error"] == 1


def test_no_tests_and_rust_that_compiles_is_untested(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    _, records, _ = _run(bw, ws, _source(ws, {"rust": VALID["rust"]}))
    assert _outcomes(records) == {"rust": "untested"}


def test_validate_golden_lists_an_untested_task_as_broken(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    source = _source(ws, {"python": VALID["python"]})
    proc = bw("validate", "--golden", source, cwd=ws)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = " ".join(proc.stderr.split())
    assert "broken: bare / f [python]" in err and "no test case applies" in err, proc.stderr
    broken = bw("validate", "--golden", _source(ws, {"python": BROKEN["python"]}), cwd=ws)
    assert broken.returncode == 2 and "SyntaxError" in broken.stderr, broken.stderr
    fine = bw("validate", "--golden", _source(ws, {"python": VALID["python"]},
                                               {"python": "assert f(1) == 2"}), cwd=ws)
    assert fine.returncode == 0, fine.stderr


def test_humaneval_x_tasks_imported_without_tests_are_never_passes(tmp_path: Path, bw: Runner) -> None:
    """HumanEval-X imported with no test key: Python goldens load (untested); Rust goldens are a
    body without its declaration and do not compile (error). None is a pass."""
    ws = tmp_path / "ws"
    (ws / "tasks").mkdir(parents=True)
    sources = []
    for lang, name in (("python", "python"), ("rust", "rust")):
        out = ws / "tasks" / f"{lang}.yaml"
        proc = bw("import", "jsonl", DATASETS / f"humaneval_{name}_first5.jsonl", "--out", out,
                  "-m", "name=task_id", "-m", "prompt=prompt", "-m", "golden=canonical_solution",
                  "-m", "golden_is_continuation=true", "-m", f"language_value={lang}",
                  "-m", "mode=complete", "-m", f"source_name=hx-{lang}", cwd=ws)
        assert proc.returncode == 0, proc.stderr
        sources.append(str(out))
    (ws / "configs").mkdir()
    (ws / "configs" / "c.yaml").write_text(textwrap.dedent(f"""\
        version: 1
        task_sources: [{", ".join(sources)}]
        criteria: [unit-test]
        llms: [reference]
        """))
    proc = bw("run", "configs/c.yaml", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(only_run(ws) / "records.jsonl")
    outcomes = {(r["language"], r["task"]): r["outcome"] for r in records}
    assert len(outcomes) == 10
    assert {o for (lang, _), o in outcomes.items() if lang == "python"} == {"untested"}
    assert {o for (lang, _), o in outcomes.items() if lang == "rust"} == {"error"}
