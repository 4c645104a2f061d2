"""The agent-CLI installer: real installs from PyPI (mini-swe-agent) and npm (qwen-code) into a
temporary tools folder, and a failed install that leaves nothing behind."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from benchwright.agents.presets.mini_swe_agent import MiniSweAgent
from benchwright.agents.presets.qwen_code import QwenCode
from benchwright.agents.tools import RECORD, InstallFailed, install, installed, tools_root


def test_tools_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BENCHWRIGHT_AGENT_TOOLS", str(tmp_path))
    assert tools_root() == tmp_path
    monkeypatch.delenv("BENCHWRIGHT_AGENT_TOOLS")
    expected = (Path("/usr/local/lib/benchwright-tools/agents") if os.geteuid() == 0
                else Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local/share") / "benchwright/agents")
    assert tools_root() == expected


def test_installed_is_none_for_missing_or_broken_records(tmp_path: Path) -> None:
    assert installed("mini-swe-agent", tmp_path) is None
    (tmp_path / "mini-swe-agent").mkdir()
    (tmp_path / "mini-swe-agent" / RECORD).write_text('{"preset": 3')
    assert installed("mini-swe-agent", tmp_path) is None
    (tmp_path / "mini-swe-agent" / RECORD).write_text('{"preset": "x"}')
    assert installed("mini-swe-agent", tmp_path) is None


def _world_readable(folder: Path) -> None:
    for path in [folder, *folder.rglob("*")]:
        mode = path.lstat().st_mode
        if stat.S_ISDIR(mode):
            assert stat.S_IMODE(mode) == 0o755, path
        elif stat.S_ISREG(mode):
            assert mode & stat.S_IROTH, path


def test_pip_install_for_real(tmp_path: Path) -> None:
    lines: list[str] = []
    record = install(MiniSweAgent, root=tmp_path, on_line=lines.append)
    assert lines and record.version == "2.4.6" and record.ecosystem == "pip"
    assert record.program == str(tmp_path / "mini-swe-agent" / "venv" / "bin" / "mini")
    assert installed("mini-swe-agent", tmp_path) == record
    assert [p.name for p in tmp_path.iterdir()] == ["mini-swe-agent"]  # no build folder left
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.run([record.program, "--help"], capture_output=True, text=True, timeout=120,
                          env={"HOME": str(home), "PATH": "/usr/bin:/bin", "MSWEA_SILENT_STARTUP": "1",
                               "MSWEA_CONFIGURED": "true", "NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stderr
    assert "--yolo" in proc.stdout and "--exit-immediately" in proc.stdout
    _world_readable(tmp_path / "mini-swe-agent")

    with pytest.raises(InstallFailed) as failed:  # a version that does not exist
        install(MiniSweAgent, version="0.0.999", root=tmp_path)
    message = str(failed.value)
    assert "mini-swe-agent==0.0.999" in message and "fix:" in message
    assert installed("mini-swe-agent", tmp_path) == record  # the previous install is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home", "mini-swe-agent"]


def test_npm_install_for_real(tmp_path: Path) -> None:
    record = install(QwenCode, root=tmp_path)
    assert record.version == "0.15.10" and record.runtime.startswith("node v")
    assert record.program == str(tmp_path / "qwen-code" / "node_modules" / ".bin" / "qwen")
    proc = subprocess.run([record.program, "--version"], capture_output=True, text=True, timeout=120,
                          env={"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "NO_COLOR": "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0.15.10"
    _world_readable(tmp_path / "qwen-code")


def test_a_failed_first_install_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(InstallFailed, match=re.escape("npm install @qwen-code/qwen-code@0.0.0-nope")):
        install(QwenCode, version="0.0.0-nope", root=tmp_path)
    assert list(tmp_path.iterdir()) == []
