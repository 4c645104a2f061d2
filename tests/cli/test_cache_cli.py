"""``benchwright cache stats`` and ``benchwright cache clear`` through the real CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from benchwright.model.cache import CachedAnswer, GenerationCache, cache_path
from tests.conftest import BIN, Runner


@pytest.fixture
def filled(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / ".benchwright").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text("version: 1\n")
    cache = GenerationCache(cache_path(ws / ".benchwright"))
    try:
        for i in range(3):
            cache.put(f"a{i}", "openai", "gpt-4o", CachedAnswer(text=f"a{i}", latency_ms=1000.0, cost_usd=0.5))
        for i in range(2):
            cache.put(f"b{i}", "openai", "gpt-4o-mini", CachedAnswer(text=f"b{i}", latency_ms=250.0))
        cache.put("c0", "ollama", "qwen2.5-coder:7b", CachedAnswer(text="c0", latency_ms=4000.0))
    finally:
        cache.close()
    return ws


def stats_json(bw: Runner, ws: Path, cwd: Path | None = None) -> dict[str, object]:
    args = ["cache", "stats", "--format", "json"] + ([] if cwd else ["--workspace", str(ws)])
    proc = bw(*args, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    data: dict[str, object] = json.loads(proc.stdout)
    return data


def test_stats_json_and_table(bw: Runner, filled: Path, tmp_path: Path) -> None:
    data = stats_json(bw, filled)
    assert data["entries"] == 6
    assert data["path"] == str(filled / ".benchwright" / "cache.sqlite3")
    assert isinstance(data["size_bytes"], int) and data["size_bytes"] > 0
    assert data["latency_saved_ms"] == 7500.0
    assert data["cost_usd"] == 1.5
    models = data["models"]
    assert isinstance(models, list)
    assert [(m["provider"], m["model"], m["entries"]) for m in models] == [
        ("ollama", "qwen2.5-coder:7b", 1), ("openai", "gpt-4o", 3), ("openai", "gpt-4o-mini", 2)]
    # found from inside the workspace without --workspace
    (filled / "configs").mkdir()
    assert stats_json(bw, filled, cwd=filled / "configs")["entries"] == 6

    proc = bw("cache", "stats", "--workspace", filled)
    assert proc.returncode == 0, proc.stderr
    assert "6 entries" in proc.stdout
    for word in ("ollama", "qwen2.5-coder:7b", "gpt-4o-mini", "7.5 s"):
        assert word in proc.stdout

    empty = tmp_path / "empty"
    empty.mkdir()
    assert stats_json(bw, empty)["entries"] == 0
    assert not (empty / ".benchwright" / "cache.sqlite3").exists()  # stats creates nothing

    proc = bw("cache", "stats", "--format", "xml", "--workspace", filled)
    assert proc.returncode == 2 and "xml" in proc.stderr


def test_clear_with_filters_and_yes(bw: Runner, filled: Path) -> None:
    proc = bw("cache", "clear", "--model", "gpt-4o-mini", "--yes", "--workspace", filled)
    assert proc.returncode == 0, proc.stderr
    assert "removed 2" in proc.stdout
    assert stats_json(bw, filled)["entries"] == 4

    proc = bw("cache", "clear", "--provider", "openai", "--model", "gpt-4o", "--yes", "--workspace", filled)
    assert proc.returncode == 0 and "removed 3" in proc.stdout
    proc = bw("cache", "clear", "--provider", "nobody", "--yes", "--workspace", filled)
    assert proc.returncode == 0 and "removed 0" in proc.stdout

    proc = bw("cache", "clear", "--yes", "--workspace", filled)
    assert proc.returncode == 0 and "removed 1" in proc.stdout
    assert stats_json(bw, filled)["entries"] == 0


def test_clear_without_yes_and_without_a_terminal_refuses(filled: Path) -> None:
    proc = subprocess.run([str(BIN), "cache", "clear", "--workspace", str(filled)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "--yes" in proc.stderr
    cache = GenerationCache(cache_path(filled / ".benchwright"))
    try:
        assert cache.stats().entries == 6
    finally:
        cache.close()


def test_clear_asks_on_a_terminal(filled: Path) -> None:
    """With a terminal on stdin, typer.confirm asks; 'n' keeps everything, 'y' removes."""
    pty = pytest.importorskip("pty")
    import os

    def run_on_tty(answer: bytes) -> tuple[int, str]:
        controller, terminal = pty.openpty()
        try:
            proc = subprocess.Popen([str(BIN), "cache", "clear", "--workspace", str(filled)],
                                    stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            os.write(controller, answer + b"\n")
            out, _ = proc.communicate(timeout=60)
        finally:
            os.close(controller)
            os.close(terminal)
        return proc.returncode, out.decode()

    code, out = run_on_tty(b"n")
    assert code == 1 and "nothing removed" in out
    code, out = run_on_tty(b"y")
    assert code == 0 and "removed 6" in out, out


def test_clear_resets_a_corrupted_cache(bw: Runner, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    path = ws / ".benchwright" / "cache.sqlite3"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage, not sqlite " * 100)
    proc = bw("cache", "stats", "--workspace", ws)
    assert proc.returncode == 2
    assert str(path) in proc.stderr and "benchwright cache clear" in proc.stderr
    proc = bw("cache", "clear", "--yes", "--workspace", ws)
    assert proc.returncode == 0, proc.stderr
    assert not path.exists()
    assert stats_json(bw, ws)["entries"] == 0
