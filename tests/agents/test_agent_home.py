"""An agent's private home: what the harness keeps of it never follows what the agent made."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import ValidationError

from benchwright.agents import home as agent_home
from benchwright.config.model import AgentSpec


def test_snapshot_keeps_regular_files_and_follows_no_link(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host secret")
    home = agent_home.make_home(tmp_path)
    (home / ".config" / "cli").mkdir(parents=True)
    (home / ".config" / "cli" / "settings.json").write_text('{"ok": 1}')
    (home / "link").symlink_to(secret)
    (home / "dirlink").symlink_to(tmp_path)
    os.mkfifo(home / "fifo")  # must not block the harness
    kept = agent_home.snapshot(home)
    assert kept.files == {".config/cli/settings.json": '{"ok": 1}'}
    assert "host secret" not in str(kept.files)
    assert {s.split(":")[0] for s in kept.skipped} == {"link", "dirlink", "fifo"}
    agent_home.remove_home(home)
    assert not home.exists() and secret.read_text() == "host secret"


def test_snapshot_caps_file_size_and_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_home, "FILE_CAP", 10)
    monkeypatch.setattr(agent_home, "FILES_MAX", 3)
    home = agent_home.make_home(tmp_path)
    for i in range(5):
        (home / f"f{i}").write_bytes(b"x" * 100)
    kept = agent_home.snapshot(home)
    assert len(kept.files) == 3
    assert all(text.startswith("x" * 10) and "cut at 10 bytes" in text for text in kept.files.values())
    assert sum("over the 3 files" in s for s in kept.skipped) == 2


def test_reader_refuses_links_out_of_home(tmp_path: Path) -> None:
    (tmp_path / "outside").write_text("no")
    home = agent_home.make_home(tmp_path)
    (home / "trajectory.json").write_text("[1]")
    (home / "escape").symlink_to(tmp_path / "outside")
    (home / "up").symlink_to(tmp_path)
    read = agent_home.reader(home)
    assert read("trajectory.json") == b"[1]"
    assert read("escape") is None and read("up/outside") is None and read("../outside") is None
    assert read("missing") is None


def test_home_env_points_every_xdg_folder_inside() -> None:
    env = agent_home.home_env("/tmp/bw-home-x")
    assert env["HOME"] == "/tmp/bw-home-x"
    assert all(v.startswith("/tmp/bw-home-x/") for k, v in env.items() if k.startswith("XDG_"))


def test_a_preset_agent_is_named_after_its_preset_and_model() -> None:
    spec = AgentSpec.model_validate({"preset": "codex", "model": "openrouter/openai/gpt-5"})
    assert spec.name == "codex:openrouter/openai/gpt-5"
    assert spec.proxied and not spec.grants_network  # it reaches its model through benchwright only
    bare = AgentSpec.model_validate({"name": "x", "command": "my-agent"})
    assert not bare.proxied and bare.grants_network
    assert not AgentSpec.model_validate({"name": "y", "command": "a", "model": "p/m"}).grants_network


@pytest.mark.parametrize("fields, said", [
    ({"preset": "codex"}, "needs `model: provider/model`"),
    ({"preset": "codex", "command": "x", "model": "p/m"}, "this one has preset and command"),
    ({"command": "x"}, "needs `name:`"),
    ({"name": "n"}, "exactly one of"),
])
def test_bad_agent_specs_say_what_to_write(fields: dict[str, str], said: str) -> None:
    with pytest.raises(ValidationError, match=said.replace("(", r"\(").replace(")", r"\)")):
        AgentSpec.model_validate(fields)


def test_a_home_full_of_links_and_depth_stays_small(tmp_path: Path) -> None:
    """What is kept of a hostile home is bounded whatever it holds: many links, a deep tree."""
    import json

    home = agent_home.make_home(tmp_path)
    for i in range(5000):
        (home / f"l{i:05}").symlink_to("/etc/passwd")
    fd = os.open(home, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(agent_home.DEPTH_MAX + 40):  # deeper than a path may be long
        os.mkdir("d" * 200, dir_fd=fd)
        child = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = child
        os.mkfifo("f", dir_fd=fd)
    os.close(fd)
    kept = agent_home.snapshot(home)
    assert len(kept.skipped) == agent_home.SKIPPED_MAX + 1
    assert kept.skipped[-1].startswith("… and ") and "more not listed" in kept.skipped[-1]
    assert all(len(s) < agent_home.PATH_SHOWN + 100 for s in kept.skipped)
    assert len(json.dumps(kept.files)) + len(json.dumps(kept.skipped)) < 200_000
    assert not kept.files
    agent_home.remove_home(home)


def test_agent_mounts_never_show_the_cache_or_the_results(workspace: Path) -> None:
    import yaml

    from tests.conftest import run_cli

    (workspace / "results").mkdir(exist_ok=True)
    (workspace / "tools" / "mine").mkdir(parents=True)
    for i, bad in enumerate([".", "results", ".benchwright", "tools/../results"]):
        (workspace / "configs" / f"m{i}.yaml").write_text(yaml.safe_dump({
            "version": 1, "scenarios": ["scenarios/parser-fixes.yaml"],
            "agents": [{"name": "a", "command": "true", "mounts": [bad]}]}))
        proc = run_cli("run", f"configs/m{i}.yaml", cwd=workspace)
        assert proc.returncode == 2, (bad, proc.stdout, proc.stderr)
        assert "agents[0].mounts[0]" in proc.stderr and ".benchwright/" in proc.stderr, proc.stderr
    (workspace / "configs" / "ok.yaml").write_text(yaml.safe_dump({
        "version": 1, "scenarios": ["scenarios/parser-fixes.yaml"],
        "agents": [{"name": "a", "command": "true", "mounts": ["tools/mine", "/root"]}]}))
    proc = run_cli("validate", "configs/ok.yaml", cwd=workspace)
    assert proc.returncode == 2 and "agents[0].mounts[1]" in proc.stdout + proc.stderr  # outside the workspace
