"""``benchwright validate`` and ``benchwright run`` apply the rule for paths inside YAML files:
a config naming ``../elsewhere`` gets a located error with the fix (exit 2, no run folder,
nothing of the outside file shown); ``allowed_folders`` in benchwright.yaml opens a folder; a
path given on the command line is the user's own and is not confined."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Runner

MARKER = "ELSEWHERE-SECRET-41f2"
ELSEWHERE_TASKS = f"""\
version: 1
name: elsewhere
tasks:
  - name: add
    difficulty: easy
    languages: [python]
    task:
      common_prompt: Write add(a, b). {MARKER}
      languages_specific:
        python:
          public_tests:
            - code: assert add(1, 2) == 3
    golden_solution:
      python: |
        def add(a, b):
            return a + b
"""
CONFIG = "version: 1\ntask_sources: [{source}]\nlanguages: [python]\ncriteria: [unit-test]\nllms: [reference]\n"


@pytest.fixture
def elsewhere(workspace: Path) -> Path:
    """A task source beside the workspace, with a broken twin (old code quoted its lines)."""
    folder = workspace.parent / "elsewhere"
    folder.mkdir()
    (folder / "t.yaml").write_text(ELSEWHERE_TASKS)
    (folder / "broken.yaml").write_text(f"version: 1\ntasks: {MARKER}\n{MARKER}_KEY: 1\n")
    return folder


def _located(output: str, field: str, line: int) -> None:
    assert f"configs/x.yaml:{line}: error: {field}: " in output, output
    assert "outside the workspace" in output and "allowed_folders" in output and "benchwright.yaml" in output


@pytest.mark.parametrize("source", ["../elsewhere/t.yaml", "../elsewhere/broken.yaml", "{elsewhere}/broken.yaml",
                                    "tasks/link.yaml"])
def test_validate_refuses_a_task_source_outside_the_workspace(workspace: Path, elsewhere: Path, bw: Runner,
                                                              source: str) -> None:
    (workspace / "tasks" / "link.yaml").symlink_to(elsewhere / "broken.yaml")
    (workspace / "configs" / "x.yaml").write_text(CONFIG.format(source=source.format(elsewhere=elsewhere)))
    proc = bw("validate", "configs/x.yaml", cwd=workspace)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    _located(proc.stderr, "task_sources[0]", 2)
    assert MARKER not in proc.stdout + proc.stderr


def test_run_refuses_it_before_anything_is_written(workspace: Path, elsewhere: Path, bw: Runner) -> None:
    (workspace / "configs" / "x.yaml").write_text(CONFIG.format(source="../elsewhere/t.yaml"))
    proc = bw("run", "configs/x.yaml", cwd=workspace)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    _located(proc.stderr, "task_sources[0]", 2)
    assert not any((workspace / "results").iterdir())


def test_agent_files_and_scenarios_outside_are_refused_too(workspace: Path, elsewhere: Path, bw: Runner) -> None:
    (elsewhere / "agent.py").write_text(f"print('{MARKER}')\n")
    config = workspace / "configs" / "agents.yaml"
    config.write_text(config.read_text().replace("agents/honest.py", "../elsewhere/agent.py"))
    proc = bw("validate", config, cwd=workspace)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "agents[0].files[0]: '../elsewhere/agent.py' leads outside the workspace" in proc.stderr
    assert MARKER not in proc.stdout + proc.stderr
    proc = bw("run", config, cwd=workspace)
    assert proc.returncode == 2 and "agents[0].files[0]" in proc.stderr, proc.stderr
    assert not any((workspace / "results").iterdir())

    scenario = workspace / "scenarios" / "parser-fixes.yaml"
    scenario.write_text(scenario.read_text().replace("repo: parser-repo", f"repo: {(elsewhere).as_uri()}"))
    proc = bw("validate", scenario, cwd=workspace)
    assert proc.returncode == 2 and "workspace.repo" in proc.stderr and "outside the workspace" in proc.stderr


def test_allowed_folders_open_a_folder_and_the_command_line_is_not_confined(workspace: Path, elsewhere: Path,
                                                                            bw: Runner) -> None:
    (workspace / "configs" / "x.yaml").write_text(CONFIG.format(source="../elsewhere/t.yaml"))
    # the command line is the user's own: a file named there is read wherever it is
    proc = bw("validate", elsewhere / "t.yaml", cwd=workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    settings = workspace / "benchwright.yaml"
    settings.write_text(settings.read_text() + f"\nallowed_folders:\n  - {elsewhere}\n")
    proc = bw("validate", "configs/x.yaml", cwd=workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = bw("run", "configs/x.yaml", "--run-id", "opened", cwd=workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (workspace / "results" / "opened" / "records.jsonl").is_file()
    # a relative entry is a located config error of benchwright.yaml
    settings.write_text(settings.read_text().replace(f"  - {elsewhere}", "  - elsewhere"))
    proc = bw("validate", "configs/x.yaml", cwd=workspace)
    assert proc.returncode == 2 and "allowed_folders[0]" in proc.stderr and "absolute" in proc.stderr


def test_the_example_workspace_still_validates(workspace: Path, bw: Runner) -> None:
    files = sorted(str(p.relative_to(workspace)) for sub in ("configs", "tasks", "scenarios")
                   for p in (workspace / sub).glob("*.yaml"))
    proc = bw("validate", *files, cwd=workspace)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_replay_provider_reading_recordings_outside_is_refused(workspace: Path, elsewhere: Path,
                                                                 bw: Runner) -> None:
    (elsewhere / "generations.jsonl").write_text(f'{{"raw": "{MARKER}"}}\n')
    settings = workspace / "benchwright.yaml"
    settings.write_text(settings.read_text().replace(
        "providers:\n", "providers:\n  old:\n    type: replay\n    path: ../elsewhere/generations.jsonl\n", 1))
    (workspace / "configs" / "x.yaml").write_text(CONFIG.format(source="tasks/basics.yaml").replace(
        "[reference]", "[old/reference]"))
    proc = bw("run", "configs/x.yaml", cwd=workspace)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "benchwright.yaml: error: providers.old.path: " in proc.stderr
    assert "outside the workspace" in proc.stderr and MARKER not in proc.stdout + proc.stderr
    assert not any((workspace / "results").iterdir())
