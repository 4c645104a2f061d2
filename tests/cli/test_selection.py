"""A config that selects nothing, or names what nobody runs, is refused before any work, by
``validate`` and ``run`` alike; ``validate`` reports every problem of a file in one pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Runner, read_jsonl

SOURCE = """version: 1
name: tiny
tasks:
  - name: add
    difficulty: easy
    area: math
    tags: [arithmetic]
    languages: [python]
    task:
      common_prompt: "Write add(a, b)."
      languages_specific:
        python:
          hidden_tests:
            - code: assert add(1, 2) == 3
    golden_solution:
      python: |
        def add(a, b):
            return a + b
  - name: shout
    difficulty: hard
    area: strings
    tags: [text]
    languages: [python]
    task:
      common_prompt: "Write shout(s)."
      languages_specific:
        python:
          hidden_tests:
            - code: assert shout("a") == "A"
    golden_solution:
      python: |
        def shout(s):
            return s.upper()
"""
BASE = "version: 1\ntask_sources: [tasks/tiny.yaml]\ncriteria: [unit-test]\n"

# (what it is, the lines added to BASE, the field the error names, a word of its hint)
REFUSED = [
    ("a misspelt language", "llms: [reference]\nlanguages: [pyhton]\n", "languages[0]", "'python'"),
    ("a language benchwright does not run", "llms: [reference]\nlanguages: [python, cobol]\n",
     "languages[1]", "benchwright runs"),
    ("a difficulty no task has", "llms: [reference]\ndifficulties: [esay]\n", "difficulties[0]", "'easy'"),
    ("an area no task has", "llms: [reference]\nareas: [graphs]\n", "areas[0]", "strings"),
    ("a tag no task has", "llms: [reference]\ntags: [nope]\n", "tags[0]", "arithmetic"),
    ("filters that together select nothing", "llms: [reference]\ndifficulties: [easy]\nareas: [strings]\n",
     "", "loosen a filter"),
    ("a criterion no selected task can use", "llms: [reference]\ncriteria: [unit-test, java-pmd]\n",
     "criteria[1].name", "java"),
    ("no models", "llms: []\n", "llms", "reference"),
    ("a task source without tasks", "llms: [reference]\ntask_sources: [tasks/empty.yaml]\n",
     "task_sources", "task source"),
]


def _workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "tasks").mkdir(parents=True)
    (ws / "configs").mkdir()
    (ws / "benchwright.yaml").write_text("version: 1\n")
    (ws / "tasks" / "tiny.yaml").write_text(SOURCE)
    (ws / "tasks" / "empty.yaml").write_text("version: 1\nname: empty\ntasks: []\n")
    return ws


def _config(ws: Path, extra: str) -> Path:
    lines = BASE
    for key in ("criteria", "task_sources"):  # a line of extra replaces BASE's line of that key
        if f"\n{key}:" in "\n" + extra:
            lines = "\n".join(x for x in lines.splitlines() if not x.startswith(f"{key}:")) + "\n"
    path = ws / "configs" / "c.yaml"
    path.write_text(lines + extra)
    return path


@pytest.mark.slow
@pytest.mark.parametrize(("what", "extra", "field", "hint"), REFUSED, ids=[r[0] for r in REFUSED])
def test_validate_and_run_refuse_the_same_configs(tmp_path: Path, bw: Runner, what: str, extra: str,
                                                   field: str, hint: str) -> None:
    ws = _workspace(tmp_path)
    _config(ws, extra)
    checked = bw("validate", "configs/c.yaml", cwd=ws)
    assert checked.returncode == 2, f"{what}: validate passed it\n{checked.stdout}{checked.stderr}"
    said = checked.stdout + checked.stderr
    assert f"error: {field}: " in said if field else "error: the config selects no task" in said, said
    assert hint in said, said
    ran = bw("run", "configs/c.yaml", "--run-id", "r", cwd=ws)
    assert ran.returncode == 2, f"{what}: run accepted it\n{ran.stdout}{ran.stderr}"
    assert hint in ran.stdout + ran.stderr
    assert not (ws / "results" / "r" / "records.jsonl").exists(), "work was done before refusing"


@pytest.mark.slow
def test_a_config_that_selects_tasks_is_accepted_by_both(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path)
    _config(ws, "llms: [reference]\nlanguages: [python]\ndifficulties: [hard]\ntags: [text]\n")
    assert bw("validate", "configs/c.yaml", cwd=ws).returncode == 0
    ran = bw("run", "configs/c.yaml", "--run-id", "r", cwd=ws)
    assert ran.returncode == 0, ran.stderr
    tasks = {r["task"] for r in read_jsonl(ws / "results" / "r" / "records.jsonl")}
    assert tasks == {"shout"}


def test_one_pass_reports_every_problem_of_a_config(tmp_path: Path, bw: Runner) -> None:
    """A schema error in one field does not hide the problems of the others."""
    ws = _workspace(tmp_path)
    (ws / "configs" / "c.yaml").write_text(
        "version: 1\ntask_sources: [tasks/nope.yaml]\nllms: [reference]\nsamples: many\n"
        "criteria: [unit-tset]\n")
    checked = bw("validate", "configs/c.yaml", cwd=ws)
    assert checked.returncode == 2
    said = checked.stdout + checked.stderr
    assert "samples:" in said
    assert "task_sources[0]: task source 'tasks/nope.yaml' not found" in said, said
    assert "criteria[0].name:" in said and "'unit-test'" in said, said
