"""The built-in agent presets: command lines, environments, home files, and converters on
outputs captured by running each CLI (tests/fixtures/agents/<preset>/README.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from benchwright.agents.preset import AgentContext, AgentPreset, Converted, ModelRoute
from benchwright.registry import registry

FIXTURES = Path(__file__).parent.parent / "fixtures" / "agents"
ROUTE = ModelRoute(base_url="http://127.0.0.1:40123", key="bw-run-7f3a", model="qwen3-coder")
NAMES = registry.names("agent-preset")


def ctx(name: str, turn: int = 1) -> AgentContext:
    return AgentContext(route=ROUTE, home="/agent-home", workdir="/work",
                        program=f"/usr/local/lib/benchwright-tools/agents/{name}/bin/prog",
                        prompt_file="/work/.benchwright-agent/prompt.txt", turn=turn)


def preset(name: str) -> AgentPreset:
    made = registry.create("agent-preset", name)
    assert isinstance(made, AgentPreset)
    return made


def test_the_seven_presets_are_registered() -> None:
    assert set(NAMES) >= {"mini-swe-agent", "aider", "claude-code", "codex", "gemini-cli",
                          "qwen-code", "opencode"}


@pytest.mark.parametrize("name", NAMES)
def test_command_environment_and_home_files(name: str) -> None:
    p, c = preset(name), ctx(name)
    command = p.command(c)
    assert command.startswith(c.program + " ")
    assert c.prompt_file in command
    env = p.environment(c)
    files = p.home_files(c)
    everything = command + json.dumps(env) + b"".join(files.values()).decode()
    assert ROUTE.base_url in everything  # the endpoint
    assert ROUTE.key in json.dumps(env)  # its key, through the environment only
    assert not any(ROUTE.key.encode() in data for data in files.values())
    assert not re.search(r"sk-[A-Za-z0-9]{20}|AIza[0-9A-Za-z_-]{20}", everything)
    assert env.get("NO_COLOR") == "1"
    assert all(not path.startswith("/") and ".." not in path for path in files)
    assert p.package.version and p.package.program and p.wire


@pytest.mark.parametrize("name", NAMES)
def test_later_turns(name: str) -> None:
    p = preset(name)
    first, later = p.command(ctx(name, 1)), p.command(ctx(name, 2))
    continues = {"claude-code": "--continue", "qwen-code": "--continue", "opencode": "--continue",
                 "codex": "resume --last", "gemini-cli": "--resume latest",
                 "aider": "--restore-chat-history"}
    if name in continues:
        assert continues[name] in later and continues[name] not in first
    else:  # starts afresh: mini-swe-agent saves each turn's trajectory apart
        assert first != later


def test_config_files_point_at_the_endpoint() -> None:
    codex = preset("codex").home_files(ctx("codex"))[".codex/config.toml"].decode()
    assert 'base_url = "http://127.0.0.1:40123/v1"' in codex and 'wire_api = "responses"' in codex
    qwen = json.loads(preset("qwen-code").home_files(ctx("qwen-code"))[".qwen/settings.json"])
    assert qwen["security"]["auth"]["selectedType"] == "openai"
    opencode = json.loads(preset("opencode").home_files(ctx("opencode"))[".config/opencode/opencode.json"])
    assert opencode["provider"]["benchwright"]["options"]["baseURL"] == "http://127.0.0.1:40123/v1"
    assert preset("claude-code").environment(ctx("claude-code"))["ANTHROPIC_BASE_URL"] == ROUTE.base_url
    assert preset("gemini-cli").environment(ctx("gemini-cli"))["GOOGLE_GEMINI_BASE_URL"] == ROUTE.base_url
    assert "--no-auto-commits" in preset("aider").command(ctx("aider"))


def reader(folder: Path, mapping: dict[str, str]):  # type: ignore[no-untyped-def]
    def read(path: str) -> bytes | None:
        name = mapping.get(path)
        return (folder / name).read_bytes() if name else None
    return read


def convert(name: str, stdout: str, home: dict[str, str] | None = None) -> Converted:
    folder = FIXTURES / name
    data = (folder / stdout).read_bytes() if stdout else b""
    return preset(name).convert(data, reader(folder, home or {}), ctx(name))


def kinds(got: Converted) -> list[str]:
    return [s["kind"] for s in got.steps]


def test_mini_swe_agent_trajectory() -> None:
    got = convert("mini-swe-agent", "stdout.txt",
                  {".benchwright/mini/turn-1.traj.json": "mini.traj.json"})
    calls = [s for s in got.steps if s["kind"] == "tool_call"]
    assert calls[0]["tool"] == "bash"
    assert calls[0]["arguments"] == {"command": "echo hello > hello.txt && cat hello.txt"}
    results = [s for s in got.steps if s["kind"] == "tool_result"]
    assert '"output": "hello\\n"' in results[0]["result"] and results[0]["returncode"] == 0
    assert got.steps[-1]["role"] == "exit"
    assert got.response == "Let me run a command."


@pytest.mark.parametrize("name", ["qwen-code", "claude-code"])
def test_stream_json(name: str) -> None:
    got = convert(name, "stdout.jsonl")
    assert kinds(got) == ["message", "tool_call", "tool_result", "message"]
    assert got.steps[1]["arguments"]["command"] == "echo hello > hello.txt && cat hello.txt"
    assert got.steps[2]["result"] == "hello"
    assert got.response == "I created hello.txt containing hello."


def test_codex_events() -> None:
    got = convert("codex", "stdout.jsonl")
    call = next(s for s in got.steps if s["kind"] == "tool_call")
    assert call["tool"] == "shell" and "echo hello > hello.txt" in call["arguments"]["command"]
    assert next(s for s in got.steps if s["kind"] == "tool_result")["result"] == "hello\n"
    assert got.response == "I created hello.txt containing hello."


def test_gemini_stream() -> None:
    got = convert("gemini-cli", "stdout.jsonl")
    assert kinds(got) == ["message", "message", "tool_call", "tool_result", "message"]
    assert got.steps[2]["tool"] == "run_shell_command"
    assert got.steps[3]["result"] == "hello"
    assert got.response == "I created hello.txt containing hello."


def test_opencode_events() -> None:
    got = convert("opencode", "stdout.jsonl")
    assert got.steps[1]["kind"] == "tool_call" and got.steps[1]["tool"] == "bash"
    assert got.steps[2]["result"] == "hello\n"
    assert got.response == "I created hello.txt containing hello."


def test_aider_history() -> None:
    """The history holds two runs (the second with --restore-chat-history): the last is the turn."""
    got = convert("aider", "stdout.txt", {".aider/chat.history.md": "chat.history.md"})
    assert {"kind": "message", "text": "say done", "role": "user"} in got.steps
    assert not any(s.get("text") == "Create hello.txt containing hello" for s in got.steps)
    assert {"kind": "tool_result", "tool": "apply_edit", "result": "Applied edit to hello.txt"} in got.steps
    assert got.response == "I will create the file.\n\nhello.txt\n```\nhello\n```"


HOSTILE = [
    b"",
    b"not json at all\n\x00\xff\xfe garbage",
    b"{" * 100_000,
    b"[" * 50_000 + b"]" * 50_000 + b"\n",
    b'{"type": "assistant", "message": {"content": [{"type": "tool_use", "input": ' + b"[" * 5000
    + b"]" * 5000 + b"}]}}\n",
    b"x" * 5_000_000,
    b"\n".join([b'{"type": 1}', b'{"type": "result", "result": 5}', b'[1,2,3]', b'"str"', b"null",
                b'{"type": "item.completed", "item": "nope"}', b'{"type": "tool_use", "part": []}',
                b'{"type": "message", "content": {"a": 1}}', b'{"messages": 3}',
                b'{"type": "assistant", "message": {"content": [null, 3, {"type": "tool_use"}]}}',
                b'{"type": "user", "message": {"content": [{"type": "tool_result", "content": [1, {"text": 2}]}]}}']),
]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("index", range(len(HOSTILE)))
def test_converters_never_raise(name: str, index: int) -> None:
    data = HOSTILE[index]
    got = preset(name).convert(data, lambda _path: data, ctx(name))
    assert isinstance(got, Converted)
    json.dumps(got.steps)
    assert all(len(s.get("text", "")) <= 20_001 for s in got.steps)
    got = preset(name).convert(data, lambda _path: None, ctx(name))
    assert isinstance(got, Converted)
