"""What a user reported of the CLI: ``list`` takes every kind it names, tables at 80 columns keep
long names whole, ``report | head`` is not a missed threshold, ``serve`` on a busy port says so
first, and ``/api/docs`` needs no CDN."""

from __future__ import annotations

import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from benchwright.cli import list_cmd
from benchwright.cli.app import app
from benchwright.registry import KINDS
from benchwright.server.api import create_app
from benchwright.workspace import Workspace
from tests.conftest import BIN, Runner

PROVIDER = "better-than-ever-provider"
MODELS = [f"{PROVIDER}/better-than-ever-model-alpha-2026", f"{PROVIDER}/better-than-ever-model-beta-2026"]
TASKS = [f"an-extraordinarily-long-task-name-that-goes-on-{i}" for i in range(2)]
RUNS = ["a-very-long-run-identifier-for-the-baseline", "a-very-long-run-identifier-for-the-candidate"]
NARROW = {"COLUMNS": "80"}


def test_list_takes_every_kind_it_names_singular_and_plural() -> None:
    runner = CliRunner()
    for kind in KINDS:
        names = list_cmd.kind_names(kind)
        assert kind in names and list_cmd.plural(kind) in names
        for name in names:
            assert list_cmd.resolve(name) == kind
        shown = runner.invoke(app, ["list", names[0]], env={"COLUMNS": "200"})
        assert shown.exit_code == 0, (kind, shown.output)
        assert shown.output.count("\n") > 3, (kind, shown.output)  # a table with rows, not an error
    assert {list_cmd.resolve(n) for n in ("criteria", "criterion", "sandboxes", "sandbox", "agents",
                                          "agent", "importers", "scorer")} == {
        "criterion", "sandbox", "agent-preset", "importer", "scorer"}
    helped = runner.invoke(app, ["list", "--help"], env={"COLUMNS": "300"})
    named = re.search(r"One of (.+?) \(singular", " ".join(helped.output.replace("│", " ").split()))
    assert named, helped.output
    for name in re.split(r", | or ", named.group(1)):  # every kind the help names is accepted
        assert list_cmd.resolve(name) in KINDS


def test_list_sandboxes_through_the_cli_and_an_unknown_kind(bw: Runner) -> None:
    proc = bw("list", "sandboxes")
    assert proc.returncode == 0, proc.stderr
    assert {"bwrap", "rlimit"} <= set(re.findall(r"[a-z]+", proc.stdout))
    assert bw("list", "sandbox").stdout == proc.stdout
    bad = bw("list", "gizmos")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "'gizmos'" in bad.stderr
    for kind in ("criteria", "sandboxes", "providers", "agent-presets", "importers"):
        assert kind in bad.stderr, bad.stderr


@pytest.fixture(scope="module")
def long_names(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with two runs of two long-named models on two long-named tasks."""
    ws = tmp_path_factory.mktemp("long") / "ws"
    (ws / "configs").mkdir(parents=True)
    (ws / "tasks").mkdir()
    (ws / "benchwright.yaml").write_text(f"version: 1\nproviders:\n  {PROVIDER}: {{type: reference}}\n")
    lines = ["version: 1", "name: long", "tasks:"]
    for i, task in enumerate(TASKS):
        lines += [f"  - name: {task}", "    languages: [python]", "    task:",
                  "      common_prompt: Write add(a, b).", "      languages_specific:", "        python:",
                  "          entry_point: add", "          public_tests:",
                  f"            - code: assert add({i}, 1) == {i + 1}", "    golden_solution:",
                  "      python: |", "        def add(a, b):", "            return a + b"]
    (ws / "tasks" / "long.yaml").write_text("\n".join(lines) + "\n")
    (ws / "configs" / "long.yaml").write_text(
        f"version: 1\ntask_sources: [tasks/long.yaml]\ncriteria: [unit-test]\nllms: [{', '.join(MODELS)}]\n")
    for run_id in RUNS:
        proc = subprocess.run([str(BIN), "run", "configs/long.yaml", "--run-id", run_id], cwd=ws,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
    return ws


def column(table: str, index: int) -> str:
    """The ``index``-th column of the first table in ``table``, its cells' lines joined: a name
    folded over several lines reads whole again."""
    parts = []
    for line in table.splitlines():
        if line.startswith("└"):
            break
        if line[:1] in ("│", "┃"):
            cells = re.split("[│┃]", line)[1:-1]
            if index < len(cells):
                parts.append(cells[index].strip())
    return "".join(parts)


@pytest.mark.parametrize("args, columns, names", [
    (["status"], [0], RUNS),
    (["report", RUNS[0]], [2, 3], MODELS),  # a column per model
    (["report", RUNS[0], "--tasks"], [0], TASKS),
    (["compare", *RUNS], [0], MODELS),
    (["list", "agents"], [0], ["mini-swe-agent", "claude-code"]),
], ids=["status", "report", "report-tasks", "compare", "list"])
def test_at_80_columns_tables_wrap_names_and_never_cut_them(
        long_names: Path, bw: Runner, args: list[str], columns: list[int], names: list[str]) -> None:
    proc = bw(*args, cwd=long_names, env=NARROW)
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout, proc.stdout
    tables = [line for line in proc.stdout.splitlines() if line[:1] in "┏┃┡│├└"]
    assert max(len(line) for line in tables) <= 80, proc.stdout
    shown = [column(proc.stdout, index) for index in columns]
    for name in names:  # whole, in its column
        assert any(name in text for text in shown), (name, proc.stdout)


def _closed_reader(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``benchwright ARGS | head -0``: the reader is gone before the first byte."""
    proc = subprocess.Popen([str(BIN), *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read()
    return subprocess.CompletedProcess(args, proc.wait(timeout=120), "", err)


@pytest.mark.parametrize("args", [["report", RUNS[0]], ["report", RUNS[0], "--format", "json"],
                                  ["export", RUNS[0]], ["list"]], ids=["table", "json", "export", "list"])
def test_a_closed_pipe_exits_141_quietly_not_1(long_names: Path, args: list[str]) -> None:
    done = _closed_reader(args, cwd=long_names)
    assert done.returncode == 141, done.stderr  # as `yes | head -1`; 1 would mean a threshold missed
    assert done.stderr == ""


def test_serve_on_a_busy_port_says_so_before_anything_else(workspace: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        proc = subprocess.run([str(BIN), "serve", str(workspace), "--port", str(port)],
                              capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert proc.stderr.startswith("error: "), proc.stderr  # no banner first
    assert f"port {port}" in proc.stderr and "--port" in proc.stderr and "in use" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.fixture
def api(workspace: Path) -> Iterator[TestClient]:
    with TestClient(create_app(Workspace.open(workspace)), base_url="http://localhost") as c:
        yield c


def test_api_docs_load_swagger_ui_from_the_server_itself(api: TestClient) -> None:
    page = api.get("/api/docs")
    assert page.status_code == 200
    urls = re.findall(r"""(?:src|href)=["']([^"']+)["']|url: ?'([^']+)'""", page.text)
    refs = [a or b for a, b in urls]
    assert len(refs) >= 4, page.text  # the script, the style, the icon and the OpenAPI document
    for ref in refs:
        assert ref.startswith("/") and not ref.startswith("//"), ref  # this server, no CDN
    assert "cdn" not in page.text.lower()
    kinds = {"swagger-ui-bundle.js": ("javascript", "SwaggerUIBundle"), "swagger-ui.css": ("css", ".swagger-ui")}
    for ref in refs:
        got = api.get(ref)
        assert got.status_code == 200, ref
        for name, (ctype, marker) in kinds.items():
            if ref.endswith(name):
                assert ctype in got.headers["content-type"] and marker in got.text, ref
    assert any(r.endswith("swagger-ui-bundle.js") for r in refs) and any(r.endswith(".css") for r in refs)


def test_a_token_name_that_looks_like_markup_is_listed_as_written(workspace: Path, bw: Runner) -> None:
    name = "[red]ci-bot[/nope] of [link=http://x]team[/link]"
    made = bw("token", "create", "--role", "viewer", "--name", name, "-w", workspace)
    assert made.returncode == 0, made.stderr
    listed = bw("token", "list", "-w", workspace, env=NARROW)
    assert listed.returncode == 0, listed.stderr
    shown = column(listed.stdout, 2)  # wrapped at 80 columns: where it wraps, the space goes
    assert name.replace(" ", "") in shown.replace(" ", ""), listed.stdout  # whole, as text
