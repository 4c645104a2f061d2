"""Choosing the executor: on the command line, in the settings; wrong choices are clear."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Runner


def test_an_unknown_executor_names_the_installed_ones_and_writes_nothing(workspace: Path, bw: Runner) -> None:
    proc = bw("run", "configs/python-only.yaml", "--executor", "slurm", cwd=workspace)
    assert proc.returncode != 0
    assert "--executor" in proc.stderr and "slurm" in proc.stderr
    assert "local" in proc.stderr and "ray" in proc.stderr
    assert not (workspace / "results").exists() or not any((workspace / "results").iterdir())


def test_an_unknown_executor_in_the_settings_names_the_file(workspace: Path, bw: Runner) -> None:
    settings = workspace / "benchwright.yaml"
    settings.write_text(settings.read_text() + "\nexecutor: slurm\n")
    proc = bw("run", "configs/python-only.yaml", cwd=workspace)
    assert proc.returncode != 0
    assert "benchwright.yaml" in proc.stderr and "slurm" in proc.stderr


def test_a_ray_address_without_the_ray_executor_says_what_to_add(workspace: Path, bw: Runner) -> None:
    proc = bw("run", "configs/python-only.yaml", "--ray-address", "auto", cwd=workspace)
    assert proc.returncode != 0
    assert "--executor ray" in proc.stderr


def test_an_unreachable_cluster_is_a_clear_error_and_no_run_folder(workspace: Path, bw: Runner) -> None:
    proc = bw("run", "configs/python-only.yaml", "--executor", "ray", "--ray-address", "127.0.0.1:9",
              cwd=workspace, timeout=180)
    assert proc.returncode != 0
    assert "Ray cluster at 127.0.0.1:9" in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr


def test_executors_are_listed_as_plug_ins(bw: Runner) -> None:
    proc = bw("list", "executors")
    assert proc.returncode == 0, proc.stderr
    assert "local" in proc.stdout and "ray" in proc.stdout
    assert "benchwright[ray]" in proc.stdout  # the extra to install, not eaten as markup
