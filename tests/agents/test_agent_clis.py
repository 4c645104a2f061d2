"""Real coding-agent CLIs, installed from the registries with `benchwright agents install` and
graded with `benchwright run` on the example scenario.

mini-swe-agent comes from PyPI, Qwen Code from the npm registry. Each works, without the
network, against a scripted model (``benchwright.testing.script``) that benchwright's loopback
model endpoint forwards to through an ordinary provider with a key: an honest script passes
the three gates with nothing but the fix in the diff and its tokens recorded; a script that
edits the graded test is caught; the provider's key never reaches the agent or the results.

The installs (about a minute and a half together) happen once for the module, in a tools
folder of its own that the sandbox shows read-only (a mount: it is not under /usr).
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
import yaml

from benchwright.agents.tools import InstallFailed, install, installed
from benchwright.testing.script import ScriptedModel, ScriptedServer
from tests.conftest import only_run, read_jsonl, run_cli

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("agent-clis")]

KEY = "sk-upstream-5b9e0c-never-in-the-sandbox"
"""The provider's real key (of the scripted upstream): it must reach the upstream only."""
FIX = ("python3 -c \"import pathlib; p=pathlib.Path('src/parser.py'); s=p.read_text(); "
       "p.write_text(s.replace('    command = words[0]', "
       "'    if not words:\\n        return []\\n    command = words[0]'))\"")
CHEAT = "printf 'import unittest\\n' > tests/test_parser.py"
TESTS = "python3 -m unittest discover -s tests -t . -q"
VERDICT = ("task_completion: 5\ninstruction_adherence: 5\nefficiency: 5\nverdict: PASS\n"
           "reasoning: parse('') returns [] and nothing else changed.\nfact_check: []\n")


def _script(tool: str, steps: list[str], final: str, end: list[str] | None = None) -> dict[str, Any]:
    """A turns file: one tool call per command, then ``final`` (with mini-swe-agent's way of
    ending, a last command, when ``end`` is given); the judge's question gets a PASS."""
    turns: list[dict[str, Any]] = [
        {"text": f"Step {i + 1}.", "tool_calls": [{"name": tool, "arguments": {"command": c}}]}
        for i, c in enumerate(steps + (end or []))]
    if end is None:
        turns.append({"text": final})
    return {"version": 1, "turns": turns, "replies": [{"match": "task_completion", "text": VERDICT}]}


SCRIPTS = {
    "mini-honest": _script("bash", [FIX, TESTS], "", end=["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"]),
    "mini-cheat": _script("bash", [CHEAT, TESTS], "", end=["echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"]),
    "qwen-honest": _script("run_shell_command", [FIX, TESTS],
                           "parse('') now returns [] and the other cases are unchanged."),
}


class Recording(ScriptedServer):
    record: ClassVar[bool] = True


@pytest.fixture(scope="module")
def tools() -> Iterator[Path]:
    """mini-swe-agent and qwen-code, installed through the CLI into a folder of the module."""
    folder = Path(tempfile.mkdtemp(prefix="bw-agent-tools-", dir="/tmp"))
    folder.chmod(0o755)
    try:
        names = ("mini-swe-agent", "qwen-code")
        with concurrent.futures.ThreadPoolExecutor(2) as pool:  # both at once: mostly downloads
            done = list(pool.map(lambda n: run_cli("agents", "install", n, "--tools", folder, timeout=900),
                                 names))
        for name, proc in zip(names, done, strict=True):
            assert proc.returncode == 0, proc.stdout + proc.stderr
            got = installed(name, folder)
            assert got is not None and f" {got.version} for preset {name}: {got.program}" in proc.stdout
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_install_records_the_version_and_a_program_that_runs(tools: Path, tmp_path: Path) -> None:
    mini, qwen = installed("mini-swe-agent", tools), installed("qwen-code", tools)
    assert mini is not None and qwen is not None
    assert (mini.version, mini.ecosystem) == ("2.4.6", "pip")
    assert mini.program == str(tools / "mini-swe-agent" / "venv" / "bin" / "mini")
    assert (qwen.version, qwen.ecosystem) == ("0.15.10", "npm") and qwen.runtime.startswith("node v")
    assert qwen.program == str(tools / "qwen-code" / "node_modules" / ".bin" / "qwen")
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "NO_COLOR": "1", "MSWEA_SILENT_STARTUP": "1",
           "MSWEA_CONFIGURED": "true"}
    ran = subprocess.run([qwen.program, "--version"], capture_output=True, text=True, timeout=120, env=env)
    assert ran.returncode == 0 and ran.stdout.strip() == "0.15.10", ran.stderr
    ran = subprocess.run([mini.program, "--help"], capture_output=True, text=True, timeout=120, env=env)
    assert ran.returncode == 0 and "--yolo" in ran.stdout, ran.stderr
    for path in [tools / "mini-swe-agent", *(tools / "mini-swe-agent").rglob("*")]:
        mode = path.lstat().st_mode
        assert stat.S_ISLNK(mode) or mode & stat.S_IROTH, path  # the sandbox's uid reads it
    listed = run_cli("list", "agents", env={"BENCHWRIGHT_AGENT_TOOLS": str(tools)})
    assert listed.returncode == 0 and "2.4.6" in listed.stdout and "0.15.10" in listed.stdout


def test_a_failed_install_keeps_the_previous_one(tools: Path) -> None:
    from benchwright.agents.presets.mini_swe_agent import MiniSweAgent

    before = installed("mini-swe-agent", tools)
    with pytest.raises(InstallFailed, match=re.escape("mini-swe-agent==0.0.999")):
        install(MiniSweAgent, version="0.0.999", root=tools)
    assert installed("mini-swe-agent", tools) == before
    assert sorted(p.name for p in tools.iterdir()) == ["mini-swe-agent", "qwen-code"]


def _provider(workspace: Path, name: str, url: str) -> None:
    settings = workspace / "benchwright.yaml"
    settings.write_text(settings.read_text().replace(
        "providers:\n", f"providers:\n  {name}:\n    type: openai-compatible\n    base_url: {url}/v1\n"
                        "    api_key_env: SCRIPT_KEY\n", 1))


def _every_file(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


def test_real_clis_graded_through_the_model_endpoint(tools: Path, workspace: Path) -> None:
    servers = {}
    for name, script in SCRIPTS.items():
        path = workspace / "models" / f"{name}.yaml"
        path.parent.mkdir(exist_ok=True)
        path.write_text(yaml.safe_dump(script))
        servers[name] = Recording(ScriptedModel.load(path))
    for server in servers.values():
        server.start()
    try:
        for name, server in servers.items():
            _provider(workspace, name, server.url)
        (workspace / "configs" / "clis.yaml").write_text(yaml.safe_dump({
            "version": 1, "scenarios": ["scenarios/parser-fixes.yaml"], "llm-judge": "mini-honest/judge",
            "agents": [{"preset": "mini-swe-agent", "model": "mini-honest/m", "timeout_s": 300},
                       {"preset": "qwen-code", "model": "qwen-honest/m", "timeout_s": 300},
                       {"preset": "mini-swe-agent", "model": "mini-cheat/m", "timeout_s": 300}]}))
        env = {"BENCHWRIGHT_AGENT_TOOLS": str(tools), "SCRIPT_KEY": KEY}
        proc = run_cli("run", "configs/clis.yaml", cwd=workspace, env=env, timeout=900)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        run = only_run(workspace)
        records = read_jsonl(run / "records.jsonl")
        by: dict[str, dict[str, dict[str, Any]]] = {}
        for r in records:
            by.setdefault(r["model"], {})[r["criterion"]] = r
        for agent, cli in (("mini-swe-agent:mini-honest/m", "mini"), ("qwen-code:qwen-honest/m", "qwen")):
            gates = by[agent]
            assert {g: gates[g]["verdict"] for g in ("objective", "judge", "run-badge")} == \
                {"objective": "pass", "judge": "pass", "run-badge": "pass"}, gates["run-badge"]["output"]
            details = gates["run-badge"]["details"]
            files = details["files"]
            diff = (run / files["diff"]).read_text()
            assert details["change"]["paths"] == ["src/parser.py"] and "+    if not words:" in diff
            model = details["model"]  # the agent's traffic, metered by the endpoint
            assert model["requests"] >= 2 and model["failed"] == 0
            assert details["tokens_in"] > 0 and details["tokens_out"] > 0
            assert details["agent_version"] == {"mini": "2.4.6", "qwen": "0.15.10"}[cli]
            steps = read_jsonl(run / files["trajectory"])
            assert any(s.get("kind") == "tool_call" and "src/parser.py" in json.dumps(s.get("arguments"))
                       for s in steps), steps
            home = json.loads((run / files["home"]).read_text())  # the CLI's own state, kept apart
            assert home["files"], home
            if cli == "qwen":
                assert ".qwen/settings.json" in home["files"]
        cheat = by["mini-swe-agent:mini-cheat/m"]
        assert cheat["tests_unmodified"]["verdict"] == "fail" and cheat["objective"]["verdict"] == "fail"
        assert cheat["run-badge"]["verdict"] == "pass"
        # the upstream got the provider's key; the sandbox, the results and the logs never did
        assert all(r.headers.get("authorization") == f"Bearer {KEY}"
                   for s in servers.values() for r in s.requests if r.path.endswith("/chat/completions"))
        assert servers["qwen-honest"].requests and servers["mini-honest"].requests
        assert KEY not in _every_file(run) and KEY not in proc.stdout + proc.stderr
        manifest = yaml.safe_load((run / "run.yaml").read_text())
        versions = {a["name"]: a["installed"]["version"] for a in manifest["agents"]}
        assert versions["qwen-code:qwen-honest/m"] == "0.15.10"
        assert "Model use" in proc.stdout and " req" in proc.stdout
    finally:
        for server in servers.values():
            server.stop()


def test_a_preset_that_is_not_installed_stops_the_run_before_it_starts(workspace: Path) -> None:
    empty = Path(tempfile.mkdtemp(prefix="bw-no-tools-", dir="/tmp"))
    try:
        (workspace / "configs" / "codex.yaml").write_text(yaml.safe_dump({
            "version": 1, "scenarios": ["scenarios/parser-fixes.yaml"],
            "agents": [{"preset": "codex", "model": "reference/x"}]}))
        env = {"BENCHWRIGHT_AGENT_TOOLS": str(empty)}
        checked = run_cli("validate", "configs/codex.yaml", cwd=workspace, env=env)
        assert "benchwright agents install codex" in checked.stdout + checked.stderr
        proc = run_cli("run", "configs/codex.yaml", cwd=workspace, env=env)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "run `benchwright agents install codex`" in proc.stderr
        assert not (workspace / "results").exists() or not any((workspace / "results").iterdir())
    finally:
        os.rmdir(empty)


def test_a_program_the_sandbox_cannot_see_stops_the_run_before_it_starts(workspace: Path) -> None:
    hidden = Path(tempfile.mkdtemp(prefix="bw-invisible-", dir="/tmp"))
    try:
        program = hidden / "my-agent"
        program.write_text("#!/bin/sh\necho hi\n")
        program.chmod(0o755)
        (workspace / "configs" / "mine.yaml").write_text(yaml.safe_dump({
            "version": 1, "scenarios": ["scenarios/parser-fixes.yaml"],
            "agents": [{"name": "mine", "command": f"{program} --yes", "network": False}]}))
        proc = run_cli("run", "configs/mine.yaml", cwd=workspace)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert f"agent 'mine': '{program}' does not resolve inside the" in proc.stderr
        assert "mounts:" in proc.stderr  # the fix is named
        assert not (workspace / "results").exists() or not any((workspace / "results").iterdir())
    finally:
        shutil.rmtree(hidden)


def test_why_a_run_badge_failed_is_in_the_report(workspace: Path) -> None:
    (workspace / "configs" / "broken.yaml").write_text(yaml.safe_dump({
        "version": 1, "scenarios": ["scenarios/parser-fixes.yaml"],
        "agents": [{"name": "crashes", "command": "echo 'Traceback: model unreachable' >&2; exit 3",
                    "network": False},
                   {"name": "missing", "command": "sh -c 'no-such-agent-cli --yes'", "network": False}]}))
    proc = run_cli("run", "configs/broken.yaml", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    report = run_cli("report", only_run(workspace).name, "--format", "markdown", cwd=workspace)
    assert report.returncode == 0, report.stderr
    rows = {line.split("|")[3].strip(): line for line in report.stdout.splitlines() if "| parser-fixes |" in line}
    assert "exit status 3" in rows["crashes"] and "Traceback: model unreachable" in rows["crashes"]
    assert "exit status 127" in rows["missing"] and "did not find the agent's program" in rows["missing"]
    assert "no-such-agent-cli" in rows["missing"]


KIT_AGENT_PLUGIN = r'''
import json
import shlex

from benchwright.plugin import AgentContext, AgentPreset, Converted, Package, step

AGENT = """
import json, os, subprocess, sys, urllib.request

base, key, model, prompt_file = sys.argv[1:5]
messages = [{"role": "user", "content": open(prompt_file).read()}]
tools = [{"type": "function", "function": {"name": "bash", "parameters": {
    "type": "object", "properties": {"command": {"type": "string"}}}}}]
for _ in range(8):
    asked = json.dumps({"model": model, "messages": messages, "tools": tools}).encode()
    request = urllib.request.Request(base + "/chat/completions", asked, {
        "Authorization": "Bearer " + key, "Content-Type": "application/json"})
    reply = json.load(urllib.request.urlopen(request, timeout=60))["choices"][0]["message"]
    messages.append(reply)
    if not reply.get("tool_calls"):
        print(json.dumps({"final": reply.get("content") or ""}))
        break
    for call in reply["tool_calls"]:
        command = json.loads(call["function"]["arguments"])["command"]
        done = subprocess.run(command, shell=True, capture_output=True, text=True)
        print(json.dumps({"ran": command, "exit": done.returncode}), flush=True)
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": done.stdout + done.stderr})
"""


class KitAgent(AgentPreset):
    """A third party's agent CLI: a loop of shell tool calls over the OpenAI wire."""

    name = "kit-agent"
    title = "Kit agent"
    homepage = "https://example.org/kit-agent"
    package = Package("pip", "wheel", "0.45.1", "wheel", note="stands for the kit's own package")
    wire = "openai"

    def command(self, ctx: AgentContext) -> str:
        python = ctx.program.rsplit("/", 1)[0] + "/python"
        return " ".join(shlex.quote(a) for a in (python, ctx.home + "/kit_agent.py", ctx.route.openai_base,
                                                  ctx.route.key, ctx.route.model, ctx.prompt_file))

    def home_files(self, ctx: AgentContext) -> dict[str, bytes]:
        return {"kit_agent.py": AGENT.encode()}

    def convert(self, stdout, home, ctx):
        out = Converted()
        for line in stdout.decode(errors="replace").splitlines():
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict) and "ran" in event:
                out.steps.append(step("tool_call", tool="bash", arguments={"command": event["ran"]}))
            elif isinstance(event, dict) and "final" in event:
                out.response = str(event["final"])
        return out


def register(reg):
    reg.add("agent-preset", "kit-agent", KitAgent, "a third party's agent CLI")
'''


def test_a_third_party_agent_preset_is_installed_and_graded_from_yaml(workspace: Path, tmp_path: Path) -> None:
    """An agent preset a plug-in package registers works as benchwright's own do: ``list
    agents`` shows it, ``agents install`` installs its package, and a config naming it with
    ``preset:`` runs it in the sandbox against its model, with its trajectory converted."""
    from tests.test_plugins import install as install_plugin

    site = tmp_path / "site"
    install_plugin(site, "bw-kit-agent", "bw_kit_agent", KIT_AGENT_PLUGIN, "bw_kit_agent:register")
    folder = Path(tempfile.mkdtemp(prefix="bw-kit-tools-", dir="/tmp"))
    folder.chmod(0o755)
    path = workspace / "models" / "kit.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(yaml.safe_dump(_script("bash", [FIX, TESTS], "parse('') returns [] now.")))
    server = Recording(ScriptedModel.load(path))
    server.start()
    try:
        env = {"PYTHONPATH": str(site), "BENCHWRIGHT_AGENT_TOOLS": str(folder), "SCRIPT_KEY": KEY,
               "COLUMNS": "200"}
        listed = run_cli("list", "agents", env=env)
        assert listed.returncode == 0 and "kit-agent" in listed.stdout, listed.stdout + listed.stderr
        done = run_cli("agents", "install", "kit-agent", env=env, timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        assert installed("kit-agent", folder) is not None
        _provider(workspace, "kit", server.url)
        (workspace / "configs" / "kit.yaml").write_text(yaml.safe_dump({
            "version": 1, "scenarios": ["scenarios/parser-fixes.yaml"], "llm-judge": "kit/judge",
            "agents": [{"preset": "kit-agent", "model": "kit/m", "timeout_s": 300}]}))
        proc = run_cli("run", "configs/kit.yaml", cwd=workspace, env=env, timeout=900)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        run = only_run(workspace)
        gates = {r["criterion"]: r for r in read_jsonl(run / "records.jsonl") if r["model"] == "kit-agent:kit/m"}
        assert {g: gates[g]["verdict"] for g in ("objective", "judge", "run-badge")} == \
            {"objective": "pass", "judge": "pass", "run-badge": "pass"}, gates["run-badge"]["output"]
        details = gates["run-badge"]["details"]
        assert details["change"]["paths"] == ["src/parser.py"] and details["model"]["requests"] >= 3
        steps = read_jsonl(run / details["files"]["trajectory"])
        assert [s["arguments"]["command"] for s in steps if s.get("kind") == "tool_call"] == [FIX, TESTS]
        assert KEY not in _every_file(run)
        # without the package, the same config says the preset is unknown
        without = run_cli("validate", "configs/kit.yaml", cwd=workspace,
                          env={"BENCHWRIGHT_AGENT_TOOLS": str(folder)})
        assert without.returncode == 2 and "kit-agent" in without.stdout + without.stderr
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
