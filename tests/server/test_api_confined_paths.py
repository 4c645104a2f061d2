"""Paths inside YAML files through the API: a viewer cannot read a host file with
``POST /api/validate`` (a task source, a scenario or an agent file naming it, directly, with
``..`` or through a symbolic link in the workspace), and an editor cannot copy one into a run
(``agents[].files``, a scenario's ``repo`` as a folder or a ``file://`` URL, or a git transport
that runs a command). The refusal names the field and the fix; the outside content never appears."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from benchwright.server.api import create_app
from benchwright.server.auth import TokenStore
from benchwright.workspace import Workspace

MARKER = "HOST-SECRET-5e0c9a"
SECRET_YAML = (f"{MARKER}_KEY: 1\nname: {MARKER}-name\ntasks: {MARKER}-tasks\n"
               f"workspace: {MARKER}-workspace\nscorers: {MARKER}-scorers\n")


@pytest.fixture
def host(workspace: Path) -> Path:
    """Outside the workspace: a secret file, and a git repository holding it."""
    outside = workspace.parent / "host"
    outside.mkdir()
    (outside / "secret.yaml").write_text(SECRET_YAML)
    repo = outside / "repo"
    repo.mkdir()
    (repo / "secret.txt").write_text(MARKER + "\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "secret"], check=True)
    return outside


@pytest.fixture
def tokens(workspace: Path) -> dict[str, str]:
    store = TokenStore(Workspace.open(workspace))
    return {role: store.create(role)[0] for role in ("viewer", "editor")}  # type: ignore[arg-type]


@pytest.fixture
def client(workspace: Path, tokens: dict[str, str]) -> Iterator[TestClient]:
    with TestClient(create_app(Workspace.open(workspace), auth_on=True), base_url="http://localhost") as c:
        yield c


def _as(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _errors(problems: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {p["path"]: p for p in problems if p["severity"] == "error"}


def _refused(problem: dict[str, Any], file: str) -> None:
    assert problem["file"] == file, problem
    assert "outside the workspace" in problem["message"] or ".benchwright" in problem["message"], problem
    assert problem["line"] is not None


def _no_leak(response: Any, host: Path, sent: str = "") -> None:
    assert MARKER not in response.text
    if str(host) not in sent:  # not even where a link leads
        assert str(host) not in response.text


def test_a_viewer_cannot_read_a_host_file_through_validate(client: TestClient, tokens: dict[str, str],
                                                           workspace: Path, host: Path) -> None:
    secret = host / "secret.yaml"
    (workspace / "tasks" / "link.yaml").symlink_to(secret)
    (workspace / ".benchwright" / "tokens-copy.yaml").write_text(SECRET_YAML)
    config = ("version: 1\nllms: [reference]\ntask_sources:\n"
              f"  - {secret}\n"                          # absolute
              "  - ../host/secret.yaml\n"                # .. from the workspace
              "  - tasks/link.yaml\n"                    # a link in the workspace
              "  - .benchwright/tokens-copy.yaml\n"      # the workspace's own state
              "  - ../host/missing.yaml\n"               # outside and missing: the same answer
              f"scenarios: [{secret}]\n"
              "agents:\n  - {name: a, command: 'true', files: [../host/secret.yaml]}\n")
    r = client.post("/api/validate", json={"path": "configs/leak.yaml", "text": config},
                    headers=_as(tokens["viewer"]))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] is False
    _no_leak(r, host, config)
    assert str(host) not in r.text.replace(str(secret), "")  # not where the link leads
    errors = _errors(body["problems"])
    for field in ("task_sources[0]", "task_sources[1]", "task_sources[2]", "task_sources[3]",
                  "task_sources[4]", "scenarios[0]", "agents[0].files[0]"):
        _refused(errors[field], "configs/leak.yaml")
    assert "allowed_folders" in errors["task_sources[0]"]["hint"]
    assert "benchwright.yaml" in errors["task_sources[0]"]["hint"]
    assert "symbolic link" in errors["task_sources[2]"]["message"]
    assert errors["task_sources[1]"]["line"] == 5
    # a missing outside file is refused exactly like an existing one (no oracle)
    assert (errors["task_sources[4]"]["message"].replace("missing", "secret")
            == errors["task_sources[1]"]["message"])
    # every problem is in the file being validated: nothing from another file is quoted
    assert {p["file"] for p in body["problems"]} == {"configs/leak.yaml"}

    # a scenario validated by a viewer: its repo is a path like any other
    scenario = ("version: 1\nname: s\nworkspace: {repo: ../../host/repo}\n"
                "tasks: [{name: t, prompt: go}]\n")
    r = client.post("/api/validate", json={"path": "scenarios/leak.yaml", "text": scenario},
                    headers=_as(tokens["viewer"]))
    _no_leak(r, host)
    _refused(_errors(r.json()["problems"])["workspace.repo"], "scenarios/leak.yaml")


def test_inside_the_workspace_a_task_source_is_still_read_and_quoted(client: TestClient, tokens: dict[str, str],
                                                                     workspace: Path) -> None:
    (workspace / "tasks" / "mine.yaml").write_text("version: 1\ntasks: INSIDE-VALUE\n")
    r = client.post("/api/validate", json={"path": "configs/ok.yaml",
                                           "text": "version: 1\nllms: [reference]\ntask_sources: [tasks/mine.yaml]\n"},
                    headers=_as(tokens["viewer"]))
    assert "INSIDE-VALUE" in r.text  # the rule is about where a path leads, not about quoting


def test_allowed_folders_let_an_admin_open_a_folder(workspace: Path, tokens: dict[str, str], host: Path) -> None:
    tasks = host / "tasks"
    tasks.mkdir()
    (tasks / "basics.yaml").write_bytes((workspace / "tasks" / "basics.yaml").read_bytes())
    settings = workspace / "benchwright.yaml"
    settings.write_text(settings.read_text() + f"\nallowed_folders: [{tasks}]\n")
    config = f"version: 1\nllms: [reference]\ntask_sources: [{tasks / 'basics.yaml'}, ../host/secret.yaml]\n"
    with TestClient(create_app(Workspace.open(workspace), auth_on=True), base_url="http://localhost") as c:
        r = c.post("/api/validate", json={"path": "configs/x.yaml", "text": config}, headers=_as(tokens["viewer"]))
    errors = _errors(r.json()["problems"])
    assert "task_sources[0]" not in errors
    _refused(errors["task_sources[1]"], "configs/x.yaml")  # its sibling stays closed
    _no_leak(r, host)


AGENTS = """\
version: 1
scenarios: [scenarios/{scenario}]
agents:
  - name: copier
    command: "cat $BENCHWRIGHT_AGENT_DIR/* > copied.txt"
    files: [{file}]
"""
SCENARIO = """\
version: 1
name: {name}
workspace: {{repo: "{repo}"}}
scorers:
  - {{type: file_exists, path: copied.txt}}
tasks:
  - name: t
    prompt: go
"""


def _runs(workspace: Path) -> list[Path]:
    results = workspace / "results"
    return [p for p in results.iterdir()] if results.is_dir() else []


def test_an_editor_cannot_copy_a_host_file_into_a_run(client: TestClient, tokens: dict[str, str],
                                                      workspace: Path, host: Path) -> None:
    editor = _as(tokens["editor"])
    # saving such a config is refused, nothing written
    text = AGENTS.format(scenario="parser-fixes.yaml", file="../host/secret.yaml")
    r = client.put("/api/files/configs/copy.yaml", json={"text": text}, headers=editor)
    assert r.status_code == 422, r.text
    _no_leak(r, host)
    _refused(_errors(r.json()["error"]["problems"])["agents[0].files[0]"], "configs/copy.yaml")
    assert not (workspace / "configs" / "copy.yaml").exists()
    # a config already on disk (written before, by someone else): the launch is refused
    (workspace / "configs" / "copy.yaml").write_text(text)
    r = client.post("/api/runs", json={"config": "configs/copy.yaml"}, headers=editor)
    assert r.status_code == 422, r.text
    _no_leak(r, host)
    (problem,) = _errors(r.json()["error"]["problems"]).values()
    assert problem["path"] == "agents[0].files[0]"
    assert _runs(workspace) == []


@pytest.mark.parametrize("form", ["folder", "file-url", "link"])
def test_an_editor_cannot_copy_a_host_repository_into_a_run(client: TestClient, tokens: dict[str, str],
                                                            workspace: Path, host: Path, form: str) -> None:
    editor = _as(tokens["editor"])
    if form == "link":
        (workspace / "scenarios" / "vendored").symlink_to(host / "repo", target_is_directory=True)
    repo = {"folder": "../../host/repo", "file-url": (host / "repo").as_uri(), "link": "vendored"}[form]
    text = SCENARIO.format(name="leak", repo=repo)
    r = client.put("/api/files/scenarios/leak.yaml", json={"text": text}, headers=editor)
    assert r.status_code == 422, r.text
    _no_leak(r, host, text)
    _refused(_errors(r.json()["error"]["problems"])["workspace.repo"], "scenarios/leak.yaml")
    assert not (workspace / "scenarios" / "leak.yaml").exists()
    # on disk already: a launch of a config naming it is refused before anything starts
    (workspace / "scenarios" / "leak.yaml").write_text(text)
    (workspace / "configs" / "leak.yaml").write_text(AGENTS.format(scenario="leak.yaml", file="agents/honest.py"))
    r = client.post("/api/runs", json={"config": "configs/leak.yaml"}, headers=editor)
    assert r.status_code == 422, r.text
    _no_leak(r, host, text)
    problems = _errors(r.json()["error"]["problems"])
    assert list(problems) == ["workspace.repo"]
    assert problems["workspace.repo"]["file"].endswith("scenarios/leak.yaml")
    assert _runs(workspace) == []


@pytest.mark.parametrize("repo", [
    "ext::sh -c touch% {host}/pwned",
    "--upload-pack=touch {host}/pwned",
    "-u touch {host}/pwned",
    "fd::3",
    "https://example.com/r.git --upload-pack=x",
    "ssh://-oProxyCommand=touch {host}/pwned/x",
    "-oProxyCommand=x@host:path",
])
def test_a_repo_that_is_no_plain_git_url_is_refused(client: TestClient, tokens: dict[str, str], host: Path,
                                                     repo: str) -> None:
    text = SCENARIO.format(name="inject", repo=repo.format(host=host))
    r = client.put("/api/files/scenarios/inject.yaml", json={"text": text}, headers=_as(tokens["editor"]))
    assert r.status_code == 422, r.text
    problem = _errors(r.json()["error"]["problems"])["workspace.repo"]
    assert "https://" in problem["message"] and problem["line"] == 3
    assert not (host / "pwned").exists()


@pytest.mark.parametrize("repo", ["https://example.com/org/r.git", "ssh://git@example.com/org/r.git",
                                  "git://example.com/r.git", "git@example.com:org/r.git", "http://git.internal/r.git",
                                  "deploy@git.example.com:r.git", "parser-repo"])
def test_remote_urls_and_workspace_folders_stay_allowed(client: TestClient, tokens: dict[str, str],
                                                        repo: str) -> None:
    text = SCENARIO.format(name="fine", repo=repo)
    r = client.post("/api/validate", json={"path": "scenarios/fine.yaml", "text": text},
                    headers=_as(tokens["viewer"]))
    assert r.json()["ok"] is True, r.text
