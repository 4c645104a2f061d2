"""Several models per run, n samples per task, filters and parameters through the whole pipeline."""

from __future__ import annotations

from pathlib import Path

from ruamel.yaml import YAML

from tests.conftest import Runner, only_run, read_jsonl

TASKS = """\
version: 1
name: mix
tasks:
  - name: old-easy
    difficulty: easy
    area: math
    release_date: 2023-01-01
    tags: [core]
    languages: [python]
    available_parameters: [all-tests-hidden]
    task:
      common_prompt: |
        Write double(x).{% if not parameters['all-tests-hidden'] %} Tests: ${public_tests}{% endif %}
      languages_specific:
        python:
          public_tests:
            - code: assert ${solution.function_name}(2) == 4
          hidden_tests:
            - code: assert double(0) == 0
    golden_solution:
      python: |
        def double(x):
            return 2 * x
  - name: new-hard
    difficulty: hard
    area: strings
    release_date: 2026-06-01
    languages: [python]
    task:
      common_prompt: Write rev(s).
      languages_specific:
        python:
          hidden_tests:
            - code: assert rev("ab") == "ba"
    golden_solution:
      python: |
        def rev(s):
            return s[::-1]
"""


def _ws(tmp_path: Path, config: str) -> Path:
    ws = tmp_path / "ws"
    (ws / "tasks").mkdir(parents=True)
    (ws / "configs").mkdir()
    (ws / "benchwright.yaml").write_text("version: 1\n")
    (ws / "tasks" / "mix.yaml").write_text(TASKS)
    (ws / "configs" / "c.yaml").write_text(config)
    return ws


def test_two_models_three_samples_pass_at_k(tmp_path: Path, bw: Runner) -> None:
    ws = _ws(tmp_path, "version: 1\ntask_sources: [tasks/mix.yaml]\nsamples: 3\n"
                       "llms:\n  - reference\n  - id: reference/again\n    name: second\n    temperature: 0.5\n")
    proc = bw("run", "configs/c.yaml", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    assert "reference" in proc.stdout and "second" in proc.stdout
    run = only_run(ws)
    gens = read_jsonl(run / "generations.jsonl")
    assert len(gens) == 2 * 2 * 3
    assert {g["model"] for g in gens} == {"reference", "second"}
    summary = YAML(typ="safe").load((run / "summary.yaml").read_text())
    for model in ("reference", "second"):
        assert summary["by_model"][model]["samples"] == 6
        assert summary["by_model"][model]["pass_at_k"]["pass@1"] == 1.0
    assert set(summary["by_difficulty"]) == {"easy", "hard"}


def test_filters_and_parameters(tmp_path: Path, bw: Runner) -> None:
    ws = _ws(tmp_path, "version: 1\ntask_sources: [tasks/mix.yaml]\ndifficulties: [easy]\n"
                       "parameters:\n  - name: all-tests-hidden\n    enabled: true\nllms: [reference]\n")
    assert bw("run", "configs/c.yaml", "--run-id", "hidden", cwd=ws).returncode == 0
    run = ws / "results" / "hidden"
    gens = read_jsonl(run / "generations.jsonl")
    assert [g["task"] for g in gens] == ["old-easy"]
    assert "Tests:" not in gens[0]["prompt"]
    status = YAML(typ="safe").load((run / "status.yaml").read_text())
    assert status["taskSourceStatuses"]["mix"]["filteredOut"] == 1

    (ws / "configs" / "d.yaml").write_text(
        "version: 1\ntask_sources: [tasks/mix.yaml]\nllms: [reference]\nreleased_after: 2025-01-01\n")
    assert bw("run", "configs/d.yaml", "--run-id", "recent", cwd=ws).returncode == 0
    gens = read_jsonl(ws / "results" / "recent" / "generations.jsonl")
    assert [g["task"] for g in gens] == ["new-hard"]

    (ws / "configs" / "e.yaml").write_text(
        "version: 1\ntask_sources: [tasks/mix.yaml]\nllms: [reference]\ntags: [core]\n")
    assert bw("run", "configs/e.yaml", "--run-id", "tagged", cwd=ws).returncode == 0
    gens = read_jsonl(ws / "results" / "tagged" / "generations.jsonl")
    assert [g["task"] for g in gens] == ["old-easy"]
    assert "Tests: assert double(2) == 4" in gens[0]["prompt"]


def test_tasks_option_overrides_config_sources(tmp_path: Path, bw: Runner) -> None:
    ws = _ws(tmp_path, "version: 1\nllms: [reference]\n")
    none = bw("run", "configs/c.yaml", cwd=ws)
    assert none.returncode == 2 and "no task sources" in none.stderr
    proc = bw("run", "configs/c.yaml", "--tasks", "tasks/mix.yaml", cwd=ws)
    assert proc.returncode == 0, proc.stderr


def test_a_run_takes_every_tasks_first_sample_before_any_second(tmp_path: Path, bw: Runner) -> None:
    """Samples run sample-major: a later copy of a task's sample finds what the earlier left (a
    kept test program) instead of waiting for it, and a run stopped halfway has samples of every
    task."""
    ws = _ws(tmp_path, "version: 1\ntask_sources: [tasks/mix.yaml]\nsamples: 3\nllms: [reference]\n"
                       "limits:\n  concurrency: 1\n")
    proc = bw("run", "configs/c.yaml", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(only_run(ws) / "records.jsonl")  # a sample's records come together
    order = list(dict.fromkeys((r["sample"], r["task"]) for r in records))
    assert order == [(s, t) for s in range(3) for t in ("old-easy", "new-hard")]
