"""The example workspace's tasks with broken solutions: they fail, test case by test case, and
each failing record points at the line of the assert that failed."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import Runner, only_run, read_jsonl

BROKEN = {
    # collapse-runs that forgets to count the runs: "aaabcc" -> "abc"
    "python": "def collapse_runs(text):\n    out = []\n    for ch in text:\n"
              "        if not out or out[-1] != ch:\n            out.append(ch)\n"
              "    return ''.join(out)\n",
    "java": "public class Solution {\n    public static String collapseRuns(String text) {\n"
            "        StringBuilder out = new StringBuilder();\n"
            "        for (int i = 0; i < text.length(); i++) {\n"
            "            if (i == 0 || text.charAt(i) != text.charAt(i - 1)) out.append(text.charAt(i));\n"
            "        }\n        return out.toString();\n    }\n}\n",
}


@pytest.mark.parametrize("language", sorted(BROKEN))
def test_a_broken_solution_fails_with_the_failing_lines(workspace: Path, bw: Runner,
                                                        language: str) -> None:
    yaml = YAML()
    path = workspace / "tasks" / "basics.yaml"
    doc = yaml.load(path.read_text())
    task = next(t for t in doc["tasks"] if t["name"] == "collapse-runs")
    task["golden_solution"][language] = BROKEN[language]  # the reference model answers this
    doc["tasks"] = [task]
    broken = workspace / "tasks" / "broken-basics.yaml"
    with broken.open("w") as f:
        yaml.dump(doc, f)
    (workspace / "configs" / "broken.yaml").write_text(
        "version: 1\ntask_sources: [tasks/broken-basics.yaml]\n"
        f"languages: [{language}]\ncriteria: [unit-test]\nllms: [reference]\n")

    proc = bw("run", "configs/broken.yaml", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(only_run(workspace) / "records.jsonl")
    tests = {r["test_case"]: r for r in records if r["test_case"]}
    assert len(tests) == 7
    failing = {name for name, r in tests.items() if r["status"] == "fail"}
    passing = {name for name, r in tests.items() if r["status"] == "pass"}
    # runs of one character (and the empty string) do not need counting
    assert passing == {"empty", "public-2"}, tests
    assert failing == set(tests) - passing
    for name in failing:
        r = tests[name]
        line = r["code"].splitlines()[r["line"] - 1]
        assert "assert" in line and ("collapse_runs" in line or "collapseRuns" in line), (name, line)
        assert r["error"]
    assert {r["outcome"] for r in records} == {"fail"}
