"""Every kind of malformed file: exit 2, the file and the line, no traceback, nothing written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import Runner

GOOD_TASKS = """\
version: 1
name: small
tasks:
  - name: add
    difficulty: easy
    languages: [python]
    task:
      common_prompt: Write add(a, b).
      languages_specific:
        python:
          public_tests:
            - code: assert add(1, 2) == 3
    golden_solution:
      python: |
        def add(a, b):
            return a + b
"""
GOOD_CONFIG = """\
version: 1
task_sources: [tasks/t.yaml]
criteria:
  - name: unit-test
    enabled: true
llms: [reference]
"""
BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9)
)

# (name, file that is bad, its text, the line the message must name, a word the message must hold)
CASES = [
    ("bad-yaml", "tasks/t.yaml", GOOD_TASKS.replace("languages: [python]", "languages: [python"), 7,
     "YAML"),
    ("wrong-type", "configs/c.yaml", GOOD_CONFIG + "samples: many\n", 7, "samples"),
    ("unknown-key", "tasks/t.yaml", GOOD_TASKS.replace("    difficulty: easy\n",
                                                       "    difficulty: easy\n    dificulty: hard\n"), 6,
     "did you mean"),
    ("unknown-criterion", "configs/c.yaml", GOOD_CONFIG.replace("unit-test", "unit-tset"), 4,
     "did you mean 'unit-test'"),
    ("template-error", "tasks/t.yaml",
     GOOD_TASKS.replace("Write add(a, b).", "'{% if parameters.x %}Write add(a, b).'"), 8, "template"),
    ("undefined-variable", "tasks/t.yaml",
     GOOD_TASKS.replace("assert add(1, 2) == 3", "assert ${nothing}(1, 2) == 3"), 12, "nothing"),
    ("duplicate-task", "tasks/t.yaml",
     GOOD_TASKS + GOOD_TASKS.split("tasks:\n", 1)[1], 17, "duplicate task name"),
    ("missing-file", "configs/c.yaml", GOOD_CONFIG.replace("tasks/t.yaml", "tasks/missing.yaml"), 2,
     "not found"),
    ("empty-file", "tasks/t.yaml", "", 1, "empty"),
    ("alias-bomb", "tasks/t.yaml", BOMB, 1, "alias"),
]


def _workspace(tmp_path: Path, bad: str, text: str | bytes) -> Path:
    ws = tmp_path / "ws"
    (ws / "tasks").mkdir(parents=True)
    (ws / "configs").mkdir()
    (ws / "benchwright.yaml").write_text("version: 1\n")
    (ws / "tasks" / "t.yaml").write_text(GOOD_TASKS)
    (ws / "configs" / "c.yaml").write_text(GOOD_CONFIG)
    target = ws / bad
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text)
    return ws


def _check(proc_stderr: str, bad: str, line: int, word: str) -> None:
    assert "Traceback" not in proc_stderr
    assert re.search(rf"{re.escape(bad)}:{line}\b", proc_stderr), proc_stderr
    assert word.lower() in proc_stderr.lower(), proc_stderr


@pytest.mark.parametrize(("name", "bad", "text", "line", "word"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_reported_with_file_and_line(
    tmp_path: Path, bw: Runner, name: str, bad: str, text: str, line: int, word: str
) -> None:
    ws = _workspace(tmp_path, bad, text)
    proc = bw("validate", "configs/c.yaml", cwd=ws, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    _check(proc.stderr, bad, line, word)

    run = bw("run", "configs/c.yaml", cwd=ws, timeout=60)
    assert run.returncode == 2, run.stdout + run.stderr
    _check(run.stderr, bad, line, word)
    results = ws / "results"
    assert not results.exists() or not any(results.iterdir()), "bad input must write nothing"


def test_binary_file(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path, "tasks/t.yaml", b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    proc = bw("validate", "tasks/t.yaml", cwd=ws, timeout=60)
    assert proc.returncode == 2
    assert "tasks/t.yaml" in proc.stderr and "binary" in proc.stderr and "Traceback" not in proc.stderr


def test_every_problem_at_once(tmp_path: Path, bw: Runner) -> None:
    text = GOOD_TASKS.replace("    difficulty: easy\n", "    difficulty: [easy]\n    colour: red\n")
    text = text.replace("assert add(1, 2) == 3", "assert ${nope}")
    ws = _workspace(tmp_path, "tasks/t.yaml", text)
    proc = bw("validate", "tasks/t.yaml", cwd=ws, timeout=60)
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if ": error: " in line]
    assert len(errors) >= 2, proc.stderr  # the type error and the unknown key, both reported
    assert any("tasks[0].difficulty" in e for e in errors)
    assert any("colour" in e for e in errors)


def test_template_error_names_the_place_in_the_document(tmp_path: Path, bw: Runner) -> None:
    text = GOOD_TASKS.replace(
        "          public_tests:\n            - code: assert add(1, 2) == 3\n",
        "          public_tests:\n            - code: assert add(1, 2) == 3\n"
        "          hidden_tests:\n            - code: assert add(2, 2) == 4\n"
        "            - code: assert add(${oops}) == 0\n",
    )
    ws = _workspace(tmp_path, "tasks/t.yaml", text)
    proc = bw("validate", "tasks/t.yaml", cwd=ws, timeout=60)
    assert proc.returncode == 2
    assert "tasks[0].task.languages_specific.python.hidden_tests[1].code" in proc.stderr
    assert "tasks/t.yaml:15" in proc.stderr


def test_unknown_available_criterion_is_a_warning(tmp_path: Path, bw: Runner) -> None:
    text = GOOD_TASKS.replace("    difficulty: easy\n", "    difficulty: easy\n    available_criteria: [unit-test, nope]\n")
    ws = _workspace(tmp_path, "tasks/t.yaml", text)
    proc = bw("validate", "tasks/t.yaml", cwd=ws, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "warning" in proc.stdout and "nope" in proc.stdout


def test_broken_golden_is_listed(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path, "tasks/t.yaml", GOOD_TASKS.replace("return a + b", "return a * b"))
    proc = bw("validate", "--golden", "tasks/t.yaml", cwd=ws, timeout=60)
    assert proc.returncode == 2
    assert "broken: small / add [python]" in proc.stderr
    assert "line" in proc.stderr


def test_unknown_provider_is_bad_input(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path, "configs/c.yaml", GOOD_CONFIG.replace("[reference]", "[nosuch/model]"))
    proc = bw("run", "configs/c.yaml", cwd=ws, timeout=60)
    assert proc.returncode == 2
    assert "configs/c.yaml:6" in proc.stderr and "nosuch" in proc.stderr and "default_provider" in proc.stderr
    assert not (ws / "results").exists()

    (ws / "benchwright.yaml").write_text(
        "version: 1\ndefault_provider: openrouter\nproviders:\n"
        "  openrouter: {type: openai-compatible, base_url: 'https://openrouter.ai/api/v1', "
        "api_key_env: OPENROUTER_API_KEY}\n")
    proc = bw("run", "configs/c.yaml", cwd=ws, timeout=60, env={"OPENROUTER_API_KEY": ""})
    assert proc.returncode == 2
    assert "OPENROUTER_API_KEY" in proc.stderr and "Traceback" not in proc.stderr
    assert not (ws / "results").exists()


def test_run_warns_about_parameters_no_task_offers(tmp_path: Path, bw: Runner) -> None:
    text = GOOD_TASKS.replace("    difficulty: easy\n", "    difficulty: easy\n    available_parameters: [all-tests-public]\n")
    ws = _workspace(tmp_path, "tasks/t.yaml", text)
    (ws / "configs" / "c.yaml").write_text(GOOD_CONFIG + "parameters:\n  - name: all-tests-publik\n    enabled: true\n")
    proc = bw("run", "configs/c.yaml", cwd=ws, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "configs/c.yaml:8" in proc.stderr and "all-tests-publik" in proc.stderr and "offered by no task" in proc.stderr
