"""Paths named inside YAML files: resolved (``..``, symbolic links) and kept inside the workspace
or the folders ``allowed_folders`` lists; never ``.benchwright``; the same refusal whether the
outside path exists or not."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.config.settings import Settings
from benchwright.errors import InputError
from benchwright.workspace import Workspace
from benchwright.workspace.confine import Confinement, PathRefused, confine

SECRET = "CONFINE-SECRET-1b7e"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace (with configs/, tasks/ and .benchwright/) and a secret file beside it."""
    ws = tmp_path / "ws"
    for sub in ("configs", "tasks", ".benchwright"):
        (ws / sub).mkdir(parents=True)
    (ws / "tasks" / "t.yaml").write_text("version: 1\ntasks: []\n")
    (ws / ".benchwright" / "tokens.json").write_text(SECRET)
    secret = tmp_path / "outside" / "secret.yaml"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    return ws, secret


def _confine(ws: Path, value: str | Path, allowed: tuple[Path, ...] = (), base: Path | None = None) -> Path:
    return confine(value, base=base or ws / "configs", workspace=ws, allowed=allowed, field="task_sources[0]",
                   file=ws / "configs" / "c.yaml", line=3)


def _refused(ws: Path, value: str | Path, allowed: tuple[Path, ...] = ()) -> PathRefused:
    with pytest.raises(PathRefused) as info:
        _confine(ws, value, allowed)
    problem = info.value.problem
    assert isinstance(info.value, InputError) and info.value.problems == [problem]
    assert problem.file == str(ws / "configs" / "c.yaml") and problem.path == "task_sources[0]"
    assert problem.line == 3 and problem.severity == "error"
    assert SECRET not in problem.render()
    return info.value


def test_a_path_inside_the_workspace_resolves(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    assert _confine(ws, "../tasks/t.yaml") == (ws / "tasks" / "t.yaml").resolve()
    assert _confine(ws, "t.yaml", base=ws / "tasks") == (ws / "tasks" / "t.yaml").resolve()
    assert _confine(ws, str(ws / "tasks" / "t.yaml")) == (ws / "tasks" / "t.yaml").resolve()
    # a link that stays inside is fine
    (ws / "tasks" / "alias.yaml").symlink_to(ws / "tasks" / "t.yaml")
    assert _confine(ws, "../tasks/alias.yaml") == (ws / "tasks" / "t.yaml").resolve()


def test_dot_dot_out_of_the_workspace_is_refused_with_the_fix(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    refused = _refused(ws, "../../outside/secret.yaml")
    assert "outside the workspace" in refused.problem.message
    assert "allowed_folders" in refused.problem.hint and "benchwright.yaml" in refused.problem.hint
    assert "../../outside/secret.yaml" in refused.problem.message  # the path as written


def test_an_absolute_path_outside_is_refused(layout: tuple[Path, Path]) -> None:
    ws, secret = layout
    _refused(ws, str(secret))
    _refused(ws, "/etc/passwd")
    _refused(ws, "~/.ssh/id_rsa")


def test_a_symbolic_link_inside_that_leads_out_is_refused_without_naming_its_target(
        layout: tuple[Path, Path]) -> None:
    ws, secret = layout
    (ws / "tasks" / "link.yaml").symlink_to(secret)
    (ws / "tasks" / "dir").symlink_to(secret.parent, target_is_directory=True)
    for value in ("../tasks/link.yaml", "../tasks/dir/secret.yaml"):
        refused = _refused(ws, value)
        assert "symbolic link" in refused.problem.message
        assert str(secret.parent) not in refused.problem.render()


def test_the_state_folder_is_never_allowed(layout: tuple[Path, Path]) -> None:
    ws, _ = layout
    for value in ("../.benchwright/tokens.json", "../.benchwright", str(ws / ".benchwright" / "x")):
        assert ".benchwright" in _refused(ws, value).problem.message
    # not even when an admin lists the workspace, or the folder itself
    _refused(ws, "../.benchwright/tokens.json", allowed=(ws, ws / ".benchwright"))
    (ws / "tasks" / "state").symlink_to(ws / ".benchwright", target_is_directory=True)
    _refused(ws, "../tasks/state/tokens.json")


def test_allowed_folders_let_a_path_out(layout: tuple[Path, Path]) -> None:
    ws, secret = layout
    assert _confine(ws, str(secret), allowed=(secret.parent,)) == secret.resolve()
    assert _confine(ws, "../../outside/secret.yaml", allowed=(secret.parent,)) == secret.resolve()
    (ws / "tasks" / "link.yaml").symlink_to(secret)
    assert _confine(ws, "../tasks/link.yaml", allowed=(secret.parent,)) == secret.resolve()
    # a sibling of the allowed folder is still outside
    other = secret.parent.parent / "outside-too"
    other.mkdir()
    _refused(ws, str(other / "x.yaml"), allowed=(secret.parent,))


def test_a_missing_path_is_refused_outside_and_returned_inside(layout: tuple[Path, Path]) -> None:
    ws, secret = layout
    # inside: returned, the caller says it is missing
    assert _confine(ws, "../tasks/nope.yaml") == (ws / "tasks" / "nope.yaml").resolve()
    # outside: the same refusal whether it exists or not (no oracle for host files)
    there = _refused(ws, str(secret)).problem
    gone = _refused(ws, str(secret.parent / "gone.yaml")).problem
    assert there.message.replace("secret", "X") == gone.message.replace("gone", "X")
    assert there.hint == gone.hint
    # a link loop or a NUL byte is refused, not a crash
    (ws / "tasks" / "loop").symlink_to(ws / "tasks" / "loop")
    _refused(ws, "../tasks/loop")
    _refused(ws, "tasks/a\x00b")
    assert "cannot be looked at" in _refused(ws, "../tasks/" + "a" * 300).problem.message  # too long


def test_locate_tries_each_base_and_never_prefers_an_outside_file(layout: tuple[Path, Path]) -> None:
    ws, secret = layout
    jail = Confinement(ws)
    bases = [ws, ws / "configs"]
    assert jail.locate("tasks/t.yaml", bases=bases, field="f", file="c.yaml") == (ws / "tasks" / "t.yaml").resolve()
    assert jail.locate("../tasks/t.yaml", bases=bases, field="f", file="c.yaml") == (ws / "tasks" / "t.yaml").resolve()
    # inside but missing: the first inside candidate, for the caller to report
    assert jail.locate("tasks/no.yaml", bases=bases, field="f", file="c.yaml") == (ws / "tasks" / "no.yaml").resolve()
    with pytest.raises(PathRefused):  # outside from every base (it exists)
        jail.locate("../outside/secret.yaml", bases=[ws, ws / "configs"], field="f", file="c.yaml")
    with pytest.raises(PathRefused):  # outside from the workspace, missing from configs/
        jail.locate("../secret.yaml", bases=bases, field="f", file="c.yaml")
    assert jail.contains(ws / "tasks") and not jail.contains(secret) and not jail.contains(ws / ".benchwright")


def test_allowed_folders_is_a_setting_of_absolute_folders(tmp_path: Path) -> None:
    assert Settings().allowed_folders == []
    assert "workspace" in (Settings.model_fields["allowed_folders"].description or "")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "benchwright.yaml").write_text(f"version: 1\nallowed_folders: [{tmp_path / 'shared'}]\n")
    opened = Workspace.open(ws)
    assert opened.confinement == Confinement(ws.resolve(), (tmp_path / "shared",))
    (ws / "benchwright.yaml").write_text("version: 1\nallowed_folders: [shared]\n")
    with pytest.raises(InputError) as info:
        Workspace.open(ws)
    (problem,) = info.value.problems
    assert problem.path == "allowed_folders[0]" and problem.line == 2 and "absolute" in problem.message
