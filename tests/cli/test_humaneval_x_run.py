"""HumanEval-X's first five tasks in Python, C++ and Java, imported with ``benchwright import
humaneval-x`` and run end to end: the reference model's golden solutions pass every case, and a
broken one fails exactly the checks it should, each reported on its own line of code."""

from __future__ import annotations

from pathlib import Path

import pytest
from ruamel.yaml import YAML

from tests.conftest import Runner, only_run, read_jsonl

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "humaneval-x"

CASES = {  # language: (task, number of cases, a case name)
    "python": ("Python/0", 7, "assert-1"),
    "cpp": ("CPP/0", 7, "assert-1"),
    "java": ("Java/0", 7, "check-1"),
}
BROKEN = {  # language: (task, its body answering "no pair is close": the cases that expect True fail)
    "python": ("Python/0", "    return False\n"),
    "cpp": ("CPP/0", "    return false;\n}\n"),
    "java": ("Java/0", "        return false;\n    }\n}\n"),
}


def _workspace(tmp_path: Path, bw: Runner, language: str) -> Path:
    ws = tmp_path / language
    (ws / "configs").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text("version: 1\n")
    proc = bw("import", "humaneval-x", "--language", language,
              "--data", FIXTURES / f"humaneval_{language}_first5.jsonl",
              "--out", ws / "tasks" / "hx.yaml")
    assert proc.returncode == 0, proc.stderr
    assert "wrote 5 tasks" in proc.stdout + proc.stderr
    (ws / "configs" / "hx.yaml").write_text(
        "version: 1\ntask_sources: [tasks/hx.yaml]\ncriteria: [unit-test]\nllms: [reference]\n")
    return ws


@pytest.mark.parametrize("language", list(CASES))
def test_golden_solutions_pass_every_case(tmp_path: Path, bw: Runner, language: str) -> None:
    ws = _workspace(tmp_path, bw, language)
    proc = bw("run", "configs/hx.yaml", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(only_run(ws) / "records.jsonl")
    assert {r["outcome"] for r in records} == {"pass"}
    cases = [r for r in records if r["test_case"]]
    assert {r["status"] for r in cases} == {"pass"}
    assert len({r["task"] for r in cases}) == 5
    task, count, name = CASES[language]
    first = [r for r in cases if r["task"] == task]
    assert len(first) == count
    case = next(r for r in first if r["test_case"] == name)
    assert "has_close_elements" in case["code"] or "hasCloseElements" in case["code"]
    assert not (case.get("details") or {}).get("unsplit")


@pytest.mark.parametrize("language", list(BROKEN))
def test_a_broken_golden_fails_the_checks_that_expect_true(tmp_path: Path, bw: Runner,
                                                           language: str) -> None:
    ws = _workspace(tmp_path, bw, language)
    path = ws / "tasks" / "hx.yaml"
    yaml = YAML()
    data = yaml.load(path.read_text())
    task_name, body = BROKEN[language]
    for task in data["tasks"]:
        if task["name"] == task_name:
            prompt = task["task"]["languages_specific"][language]["description"]
            task["golden_solution"][language] = prompt + body
    with path.open("w") as f:
        yaml.dump(data, f)
    proc = bw("run", "configs/hx.yaml", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(only_run(ws) / "records.jsonl")
    cases = [r for r in records if r["test_case"] and r["task"] == task_name]
    failed = sorted(r["test_case"] for r in cases if r["status"] != "pass")
    stem = "check" if language == "java" else "assert"
    # the dataset's first task: checks 1, 3, 5 and 6 expect True
    assert failed == sorted(f"{stem}-{n}" for n in (1, 3, 5, 6)), cases
    for r in cases:
        if r["status"] != "pass":
            assert r["status"] == "fail", r
            line = r["code"].splitlines()[r["line"] - 1]
            assert line.lstrip().startswith("assert"), r
    others = {r["outcome"] for r in records if r["task"] != task_name}
    assert others == {"pass"}


HARNESS_IMPORTS = {  # language: (task, a correct body that relies on what CodeGeeX's harness imports)
    "python": ("Python/0", "    return any(math.fabs(a - b) < threshold\n"
                           "               for a, b in itertools.combinations(numbers, 2))\n"),
    "cpp": ("CPP/0", "    for (size_t i = 0; i < numbers.size(); i++)\n"
                     "        for (size_t j = i + 1; j < numbers.size(); j++)\n"
                     "            if (std::abs(numbers[i] - numbers[j]) < threshold) { std::cout << \"\"; return true; }\n"
                     "    return false;\n}\n"),
}


@pytest.mark.parametrize("language", list(HARNESS_IMPORTS))
def test_a_solution_relying_on_the_harness_imports_passes_as_it_does_in_codegeex(
        tmp_path: Path, bw: Runner, language: str) -> None:
    """CodeGeeX puts math, itertools, <iostream>... before every program; so does the import
    (the task's solution_header), and the code shown for a case includes it."""
    ws = _workspace(tmp_path, bw, language)
    source = ws / "tasks" / "hx.yaml"
    yaml = YAML()
    data = yaml.load(source.read_text())
    task, body = HARNESS_IMPORTS[language]
    entry = next(t for t in data["tasks"] if t["name"] == task)
    prompt = entry["task"]["languages_specific"][language]["description"]
    assert "import math" not in prompt and "#include<iostream>" not in prompt
    entry["golden_solution"] = {language: prompt + body}
    data["tasks"] = [entry]
    with source.open("w") as f:
        yaml.dump(data, f)
    proc = bw("run", "configs/hx.yaml", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    cases = [r for r in read_jsonl(only_run(ws) / "records.jsonl") if r["test_case"]]
    assert cases and {r["status"] for r in cases} == {"pass"}
    assert ("import itertools" if language == "python" else "#include<iostream>") in cases[0]["code"]
