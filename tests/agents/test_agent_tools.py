"""The agent-CLI installer: real installs from PyPI (mini-swe-agent) and npm (qwen-code) into a
temporary tools folder, and a failed install that leaves nothing behind."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

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


def test_a_failed_first_install_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(InstallFailed, match=re.escape("npm install @qwen-code/qwen-code@0.0.0-nope")):
        install(QwenCode, version="0.0.0-nope", root=tmp_path)
    assert list(tmp_path.iterdir()) == []
