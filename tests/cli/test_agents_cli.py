"""``benchwright agents list|install`` and ``benchwright list agents``."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Runner

PRESETS = {"mini-swe-agent", "aider", "claude-code", "codex", "gemini-cli", "qwen-code", "opencode"}


def test_agents_list_and_list_agents_show_every_preset(bw: Runner, tmp_path: Path) -> None:
    for argv in (("agents", "list"), ("list", "agents")):
        proc = bw(*argv, env={"BENCHWRIGHT_AGENT_TOOLS": str(tmp_path), "COLUMNS": "250"})
        assert proc.returncode == 0, proc.stderr
        rows = [line for line in proc.stdout.splitlines() if line.startswith("│ ")]
        assert {row.split("│")[1].strip() for row in rows} >= PRESETS
        assert "@qwen-code/qwen-code@0.15.10" in proc.stdout and "not installed" in proc.stdout


def test_install_of_an_unknown_preset_exits_2(bw: Runner, tmp_path: Path) -> None:
    proc = bw("agents", "install", "no-such-agent", "--tools", str(tmp_path))
    assert proc.returncode == 2
    assert "no-such-agent" in proc.stderr and "qwen-code" in proc.stderr and "mini-swe-agent" in proc.stderr
    assert list(tmp_path.iterdir()) == []
