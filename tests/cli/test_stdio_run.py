"""LiveCodeBench and APPS imported from their fixture files and run end to end with the
reference model: every test case a record, stdin/stdout cases judged on the program's output."""

from __future__ import annotations

import json
from pathlib import Path

from ruamel.yaml import YAML

from tests.conftest import Runner, only_run, read_jsonl

FIXTURES = Path(__file__).parent.parent / "fixtures"


def _workspace(tmp_path: Path, bw: Runner, *import_args: str | Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "configs").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text("version: 1\n")
    proc = bw("import", *import_args, "--out", ws / "tasks" / "t.yaml")
    assert proc.returncode == 0, proc.stderr
    (ws / "configs" / "c.yaml").write_text(
        "version: 1\ntask_sources: [tasks/t.yaml]\ncriteria: [unit-test]\nllms: [reference]\n")
    return ws


def _set_golden(ws: Path, solutions: dict[str, str]) -> None:
    path = ws / "tasks" / "t.yaml"
    yaml = YAML()
    data = yaml.load(path.read_text())
    for task in data["tasks"]:
        if task["name"] in solutions:
            task["golden_solution"] = {"python": solutions[task["name"]]}
    with path.open("w") as f:
        yaml.dump(data, f)


def _cases(records: list[dict[str, object]]) -> dict[tuple[object, object], dict[str, object]]:
    return {(r["task"], r["test_case"]): r for r in records if r["test_case"]}


def test_livecodebench_solutions_run_end_to_end(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path, bw, "livecodebench", "--data", FIXTURES / "livecodebench",
                    "--subset", "release_v2")
    solutions = json.loads((FIXTURES / "livecodebench" / "solutions.json").read_text())
    wrong = "n, k = map(int, input().split())\na = list(map(int, input().split()))\nprint(sum(a))\n"
    _set_golden(ws, {**solutions, "atcoder/abc900_a": wrong})
    assert bw("validate", "tasks/t.yaml", cwd=ws).returncode == 0

    proc = bw("run", "configs/c.yaml", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(only_run(ws) / "records.jsonl")
    outcomes = {r["task"]: r["outcome"] for r in records}
    assert outcomes == {"atcoder/abc900_a": "fail", "leetcode/9001": "pass",
                        "codeforces/1900_A": "pass", "atcoder/abc950_b": "pass"}
    cases = _cases(records)
    assert len([c for c in cases if c[0] == "atcoder/abc900_a"]) == 5  # 2 public + 3 private
    public = cases[("atcoder/abc900_a", "public-1")]  # sums all 3 where K=2 asks for 2
    assert public["status"] == "fail" and public["hidden"] is False
    assert str(public["error"]).startswith("wrong output at line 1: '6' where '3' expected")
    assert "input:\n3 2\n1 2 3\n" in str(public["error"])
    assert str(public["code"]).endswith(wrong)  # the program that ran: header, then the solution
    assert str(public["code"]).startswith("from string import *\n")
    assert cases[("atcoder/abc900_a", "public-2")]["status"] == "pass"  # K = N: right by luck
    assert cases[("atcoder/abc900_a", "private-3")]["hidden"] is True
    # 1.50 and 4.00 printed where 1.5 and 4 are expected: the same numbers
    assert cases[("codeforces/1900_A", "private-1")]["status"] == "pass"
    leetcode = cases[("leetcode/9001", "private-2")]
    assert leetcode["status"] == "pass" and leetcode["details"] == {"judged": "harness"}
    assert str(leetcode["code"]).rstrip().endswith("assert Solution().pairSum([1, 5, 8, 3], 11) == [2, 3]")

    golden = bw("validate", "--golden", "tasks/t.yaml", cwd=ws)
    assert golden.returncode == 2
    assert [line for line in golden.stderr.splitlines() if line.startswith("broken:")] != []


def test_apps_golden_solutions_pass_end_to_end(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path, bw, "apps", "--data", FIXTURES / "apps" / "test.jsonl")
    golden = bw("validate", "--golden", "tasks/t.yaml", cwd=ws)
    assert golden.returncode == 0, golden.stderr
    assert "golden solutions: 4/4 pass; 8 mutants, each failed by the tests" in golden.stdout + golden.stderr

    proc = bw("run", "configs/c.yaml", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(only_run(ws) / "records.jsonl")
    assert {r["task"]: r["outcome"] for r in records} == {
        "apps/4000": "pass", "apps/4001": "pass", "apps/4002": "pass", "apps/4003": "pass"}
    cases = _cases(records)
    assert sorted(c[1] for c in cases if c[0] == "apps/4000") == ["test-1", "test-2", "test-3"]
    assert all(r["status"] == "pass" and r["hidden"] is True for r in cases.values())


def test_validate_refuses_stdin_cases_in_a_language_that_cannot_run_them(tmp_path: Path,
                                                                          bw: Runner) -> None:
    tasks = tmp_path / "t.yaml"
    tasks.write_text(
        "version: 1\ntasks:\n  - name: echo\n    languages: [bash]\n    task:\n"
        "      common_prompt: Print what you read.\n      languages_specific:\n        bash:\n"
        "          hidden_tests:\n            - stdin: \"hi\\n\"\n              stdout: \"hi\\n\"\n")
    proc = bw("validate", tasks)
    assert proc.returncode == 2
    assert "is a stdin/stdout case, and benchwright cannot run those in bash (only in python)" in proc.stderr
    bad = tmp_path / "bad.yaml"
    bad.write_text(tasks.read_text().replace('              stdout: "hi\\n"\n', ""))
    proc = bw("validate", bad)
    assert proc.returncode == 2
    assert "a stdin/stdout test case needs both stdin and stdout" in proc.stderr
