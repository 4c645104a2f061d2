"""The agent workspace: what counts as the agent's change, hidden files, and git that an agent's
files cannot steer."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.agents.scenario import WorkspaceRecipe
from benchwright.agents.workspace import AgentWorkspace
from benchwright.errors import UserError


@pytest.fixture
def scratch() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="bw-ws-test-"))
    os.chmod(root, 0o711)
    repo = root / "repo"
    (repo / "src" / "util").mkdir(parents=True)
    (repo / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "src" / "util" / "strings.py").write_text("X = 1\n")
    (repo / "old.txt").write_text("old\n")
    (repo / "gone.txt").write_text("gone\n")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_hidden.py").write_text("assert True\n")
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _workspace(scratch: Path, **recipe: object) -> AgentWorkspace:
    ws = AgentWorkspace.create(WorkspaceRecipe(repo="repo", **recipe), scratch, scratch / "runs")  # type: ignore[arg-type]
    ws.commit_baseline()
    return ws


def test_every_kind_of_change_counts(scratch: Path) -> None:
    ws = _workspace(scratch)
    (ws.work / "src" / "calc.py").write_text("def add(a, b):\n    return b + a\n")
    (ws.work / "debug.log").write_text("ignored by .gitignore, still the agent's doing\n")
    os.rename(ws.work / "old.txt", ws.work / "new.txt")
    (ws.work / "gone.txt").unlink()
    (ws.work / "blob.bin").write_bytes(b"\x00\x01\x02\xff")
    (ws.work / "src" / "util" / "strings.py").unlink()
    os.symlink("calc.py", ws.work / "src" / "util" / "strings.py")
    change = ws.change()
    by = {f.path: f for f in change.files}
    assert by["src/calc.py"].status == "modified"
    assert by["src/calc.py"].added == ("    return b + a",) and by["src/calc.py"].removed == ("    return a + b",)
    assert by["debug.log"].status == "added"
    assert by["new.txt"].status == "renamed" and by["new.txt"].old_path == "old.txt"
    assert by["gone.txt"].status == "deleted" and by["gone.txt"].removed == ("gone",)
    assert by["blob.bin"].binary
    assert by["src/util/strings.py"].status == "type_changed"
    assert "old.txt" in change.paths() and "new.txt" in change.paths()
    assert "Binary files" in change.patch
    assert ws.baseline_text("src/calc.py") == "def add(a, b):\n    return a + b\n"
    assert ws.baseline_text("debug.log") is None
    ws.remove()


def test_hidden_files_are_away_while_the_agent_works_and_back_as_they_were(scratch: Path) -> None:
    ws = _workspace(scratch, hidden=["tests/test_hidden.py"])
    ws.hide(["tests/test_hidden.py"])
    assert not (ws.work / "tests" / "test_hidden.py").exists()
    (ws.work / "tests" / "test_hidden.py").write_text("the agent's own version\n")
    ws.restore()
    assert (ws.work / "tests" / "test_hidden.py").read_text() == "assert True\n"
    assert ws.change().files == ()
    with pytest.raises(UserError, match="not in the workspace"):
        ws.hide(["tests/nope.py"])
    ws.remove()


def test_what_the_agent_writes_cannot_steer_git(scratch: Path) -> None:
    ws = _workspace(scratch)
    canary = scratch / "canary"
    hook = f"#!/bin/sh\ntouch {canary}\n"
    (ws.work / ".git" / "hooks").mkdir(parents=True)
    (ws.work / ".git" / "config").write_text(
        f"[core]\n\tfsmonitor = touch {canary}\n[diff \"x\"]\n\tcommand = touch {canary}\n"
        f"[filter \"x\"]\n\tclean = touch {canary}\n")
    (ws.work / ".git" / "hooks" / "pre-commit").write_text(hook)
    (ws.work / ".gitattributes").write_text("* diff=x filter=x\n")
    (ws.work / "src" / "calc.py").write_text("changed\n")
    change = ws.change()
    assert not canary.exists()
    assert "src/calc.py" in change.paths()
    ws.remove()


def test_a_missing_repository_or_ref_is_the_user_s_to_fix(scratch: Path) -> None:
    with pytest.raises(UserError, match="not found"):
        AgentWorkspace.create(WorkspaceRecipe(repo="nope"), scratch, scratch / "runs")
    repo = scratch / "repo"
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one"],
                 ["tag", "v1"]):
        import subprocess
        subprocess.run(["git", "-C", str(repo), *args], check=True)
    (repo / "src" / "calc.py").write_text("after the tag\n")
    ws = AgentWorkspace.create(WorkspaceRecipe(repo="repo", ref="v1"), scratch, scratch / "runs")
    assert (ws.work / "src" / "calc.py").read_text().startswith("def add")
    assert not (ws.work / ".git").exists()
    with pytest.raises(UserError, match="ref 'v9' not found"):
        AgentWorkspace.create(WorkspaceRecipe(repo="repo", ref="v9"), scratch, scratch / "runs")
