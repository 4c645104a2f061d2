"""HumanEval-X in JavaScript, Go and Rust, and HumanEval Rust, imported from their published
rows (tests/fixtures) and run end to end with the reference model: every golden solution passes
every split test case, in the real sandbox with the real toolchains. And a task that needs an
npm package is reported as such, never as the model's failure."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import Runner, only_run, read_jsonl

FIXTURES = Path(__file__).parents[1] / "fixtures"
HX = FIXTURES / "humaneval-x"
HER = FIXTURES / "humaneval-rust" / "HumanEval_rust_sample.jsonl"


def _run(ws: Path, bw: Runner, sources: list[str]) -> list[dict[str, object]]:
    (ws / "configs").mkdir(exist_ok=True)
    (ws / "configs" / "c.yaml").write_text(
        f"version: 1\ntask_sources: [{', '.join(sources)}]\ncriteria: [unit-test]\nllms: [reference]\n")
    proc = bw("run", "configs/c.yaml", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    return read_jsonl(only_run(ws) / "records.jsonl")


@pytest.mark.parametrize(("language", "ours"), [("js", "javascript"), ("go", "go"), ("rust", "rust")])
def test_humaneval_x_golden_solutions_pass_every_split_case(tmp_path: Path, bw: Runner, language: str,
                                                           ours: str) -> None:
    ws = tmp_path / "ws"
    (ws / "tasks").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text("version: 1\n")
    out = f"tasks/hx_{language}.yaml"
    proc = bw("import", "humaneval-x", "--language", language, "--data",
              HX / f"humaneval_{language}_first5.jsonl", "--out", ws / out, cwd=ws)
    assert proc.returncode == 0, proc.stderr
    assert bw("validate", out, cwd=ws).returncode == 0
    records = _run(ws, bw, [out])
    rows = [json.loads(line) for line in (HX / f"humaneval_{language}_first5.jsonl").read_text().splitlines()]
    cases = [r for r in records if r["test_case"]]
    assert {r["task"] for r in records} == {row["task_id"] for row in rows}
    assert {r["outcome"] for r in records} == {"pass"}
    assert {r["status"] for r in cases} == {"pass"} and all(r["language"] == ours for r in cases)
    check = {"js": r"console\.assert\(", "go": r"assert\.Equal\(", "rust": r"assert(?:_eq|_ne)?!"}[language]
    for row in rows:
        mine = [r for r in cases if r["task"] == row["task_id"]]
        # one case per check of the dataset's test program, each named, its code the code run
        assert len(mine) == len(re.findall(check, row["test"]))
        assert [r["test_case"] for r in mine] == [f"assert-{i}" for i in range(1, len(mine) + 1)]
        for r in mine:
            assert row["prompt"] in str(r["code"])
            assert row["canonical_solution"].strip()[:40] in str(r["code"])

def test_humaneval_rust_golden_solutions_and_its_cut_test_module(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    (ws / "tasks").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text("version: 1\n")
    proc = bw("import", "humaneval-rust", "--data", HER, "--out", ws / "tasks" / "her.yaml", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    records = _run(ws, bw, ["tasks/her.yaml"])
    outcomes = {str(r["task"]): r["outcome"] for r in records}
    cut = "CodeGen/82db89a9b398"  # the published row's test module stops after `// BEGIN_TESTS`
    assert outcomes.pop(cut) == "error"  # and its canonical solution repeats the prompt: no build
    assert set(outcomes.values()) == {"pass"}, outcomes
    explain = [r for r in records if r["task"] == "Explain/39428d3bf5b9" and r["test_case"]]
    assert [r["test_case"] for r in explain] == ["assert-1", "assert-2", "assert-3"]
    assert all("let explanation = explain();" in str(r["code"]) for r in explain)


def test_a_task_needing_an_npm_package_is_unsupported_not_failed(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    (ws / "tasks").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text("version: 1\n")
    (ws / "tasks" / "md5.yaml").write_text(textwrap.dedent("""\
        version: 1
        tasks:
          - name: md5
            languages: [javascript]
            mode: complete
            task:
              languages_specific:
                javascript:
                  description: "const stringToMd5 = (text) => {\\n"
                  hidden_tests:
                    - name: hello
                      code: console.assert(stringToMd5('Hello world') === '3e25960a79dbc69b674cd4ec67a72c62')
            golden_solution:
              javascript: "const stringToMd5 = (text) => {\\n  const md5 = require('js-md5')\\n  return md5(text)\\n}\\n"
          - name: add
            languages: [javascript]
            task:
              languages_specific:
                javascript:
                  description: Write add(a, b).
                  hidden_tests:
                    - code: console.assert(add(1, 2) === 3)
            golden_solution:
              javascript: "function add(a, b) {\\n  return a + b;\\n}\\n"
        """))
    golden = bw("validate", "--golden", "tasks/md5.yaml", cwd=ws)
    assert golden.returncode == 0, golden.stderr
    assert ("unsupported: md5 / md5 [javascript]: needs the npm package 'js-md5', which benchwright's "
            "sandbox does not offer") in golden.stderr
    assert "broken:" not in golden.stderr
    assert "golden solutions: 1/1 pass (1 unsupported here)" in golden.stdout
    records = _run(ws, bw, ["tasks/md5.yaml"])
    md5 = [r for r in records if r["task"] == "md5"]
    assert {r["outcome"] for r in md5} == {"infra_error"}  # never counted against the model
    (case,) = [r for r in md5 if r["test_case"]]
    assert "Cannot find module 'js-md5': an npm package" in str(case["error"])
    (summary,) = [r for r in md5 if not r["test_case"]]
    assert summary["verdict"] == "n/a" and "js-md5" in summary["details"]["unsupported"]  # type: ignore[index]
    assert {r["outcome"] for r in records if r["task"] == "add"} == {"pass"}
    run = only_run(ws)
    summary = YAML(typ="safe").load((run / "summary.yaml").read_text())
    groups = [g for groups in summary["failures"].values() for g in groups]
    assert [(g["kind"], g["retryable"]) for g in groups] == [("unsupported by the sandbox", False)]
    before = (run / "records.jsonl").read_text()
    retry = bw("run", "--resume", run.name, "--retry-errors", cwd=ws)  # it would fail the same way
    assert retry.returncode == 0, retry.stderr
    assert (run / "records.jsonl").read_text() == before
