"""The built-in agent loop against a scripted model on a real loopback server speaking tool calls
in the wire format, through the real generation engine and provider, with commands in a real
bwrap sandbox over a real workspace folder. No mocks."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from benchwright.agents.builtin import TOOLS, BuiltinAgent, BuiltinLimits
from benchwright.config.settings import ProviderSettings, Settings
from benchwright.errors import UserError
from benchwright.model.base import Answer, GenerationRequest, Provider, ToolCall
from benchwright.model.cache import CachedAnswer, GenerationCache
from benchwright.model.engine import GenerationEngine
from benchwright.registry import registry
from benchwright.sandbox.base import Sandbox
from benchwright.testing import AnthropicServer, FakeServer, OpenAIServer, Reply

BUGGY = '''def parse(line):
    """The comma-separated fields of ``line``, stripped; [] for an empty or comment line."""
    if line[0] == "#":
        return []
    return [field.strip() for field in line.split(",")]
'''

TESTS = '''import unittest

from csvline import parse


class ParseTest(unittest.TestCase):
    def test_fields(self):
        self.assertEqual(parse("a, b,c"), ["a", "b", "c"])

    def test_comment(self):
        self.assertEqual(parse("# x"), [])

    def test_empty(self):
        self.assertEqual(parse(""), [])


if __name__ == "__main__":
    unittest.main()
'''

OLD = '    if line[0] == "#":'
NEW = '    if not line or line.startswith("#"):'


@pytest.fixture
def repo() -> Iterator[Path]:
    """A workspace folder the sandbox's uid can reach (its parent is 0711, as AgentWorkspace
    makes it), holding a small package with a bug."""
    root = Path(tempfile.mkdtemp(prefix="bw-builtin-"))
    os.chmod(root, 0o711)
    work = root / "work"
    work.mkdir()
    (work / "csvline.py").write_text(BUGGY)
    (work / "test_csvline.py").write_text(TESTS)
    yield work
    shutil.rmtree(root, ignore_errors=True)


def scripted(replies: Sequence[Reply]) -> Callable[[dict[str, Any]], Reply]:
    """The model: its n-th answer of the conversation (counted from the assistant turns the
    request carries, so it depends on the conversation only) is ``replies[n]``; then "done"."""

    def answer(body: dict[str, Any]) -> Reply:
        n = sum(1 for m in body["messages"] if m.get("role") == "assistant")
        return replies[n] if n < len(replies) else Reply.answer("done")

    return answer


def openai_engine(srv: FakeServer, cache: GenerationCache | None = None,
                  **conf: Any) -> GenerationEngine:
    settings = ProviderSettings(type="openai-compatible", base_url=srv.base_url, **conf)
    provider: Provider = registry.create("provider", "openai-compatible", name="local",
                                         settings=settings)
    return GenerationEngine({"local": provider}, Settings(providers={"local": settings}), cache=cache)


def agent(srv: FakeServer, sandbox: Sandbox, limits: BuiltinLimits | None = None,
          cache: GenerationCache | None = None, **conf: Any) -> BuiltinAgent:
    return BuiltinAgent(openai_engine(srv, cache, **conf), "local", "qwen2.5-coder", sandbox,
                        limits or BuiltinLimits(command_timeout_s=60))


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m.get("role") == "tool"]


@pytest.mark.slow
def test_fixes_a_bug_reading_editing_testing_and_finishing(repo: Path, sandbox: Sandbox) -> None:
    replies = [
        Reply.tool_calls([("call_1", "shell", {"command": "python3 -m unittest -q"})],
                         text="Let me run the tests first.", usage=(100, 10)),
        Reply.tool_calls([("call_2", "read_file", {"path": "csvline.py"})], usage=(200, 10)),
        Reply.tool_calls([("call_3", "edit_file", {"path": "csvline.py", "old": OLD, "new": NEW})],
                         usage=(300, 30)),
        Reply.tool_calls([("call_4", "shell", {"command": "python3 -m unittest -v"})], usage=(400, 10)),
        Reply.tool_calls([("call_5", "finish", {"response": "parse('') now returns []; tests pass."})],
                         usage=(500, 20)),
    ]
    with OpenAIServer(answer=scripted(replies)) as srv:
        out = agent(srv, sandbox).run(repo, ["parse('') raises IndexError; make it return []."])
        bodies = [r.json for r in srv.requests]

    assert out.stopped is None and out.error is None and not out.timed_out, out
    assert out.exit_code == 0
    assert out.responses == ["parse('') now returns []; tests pass."]
    assert (repo / "csvline.py").read_text() == BUGGY.replace(OLD, NEW)
    assert sorted(p.name for p in repo.iterdir()) == ["csvline.py", "test_csvline.py"]  # no __pycache__
    assert [s["tool"] for s in out.trajectory] == ["shell", "read_file", "edit_file", "shell", "finish"]
    assert [s["step"] for s in out.trajectory] == [1, 2, 3, 4, 5] and out.steps == 5
    first, _, edit, second, _ = out.trajectory
    assert first["exit_code"] == 1 and "IndexError" in first["result"] and not first["ok"]
    assert first["arguments"] == {"command": "python3 -m unittest -q"}
    assert edit["result"] == "edited csvline.py at line 3" and edit["ok"]
    assert second["exit_code"] == 0 and "OK" in second["result"] and second["ok"]
    assert all(isinstance(s["ms"], float) for s in out.trajectory)
    assert (out.tokens_in, out.tokens_out) == (1500, 80)
    assert out.wall_ms > 0 and out.cpu_ms is not None and out.cpu_ms > 0

    # the wire: the tools offered, and each result sent back in the next request
    assert len(bodies) == 5
    assert bodies[0]["tools"] == TOOLS and bodies[0]["tool_choice"] == "auto"
    assert bodies[0]["messages"][0]["role"] == "system" and "/work" in bodies[0]["messages"][0]["content"]
    assert bodies[0]["messages"][1] == {"role": "user",
                                        "content": "parse('') raises IndexError; make it return []."}
    assistant = bodies[1]["messages"][2]
    assert assistant["role"] == "assistant" and assistant["content"] == "Let me run the tests first."
    assert assistant["tool_calls"] == [{"id": "call_1", "type": "function", "function": {
        "name": "shell", "arguments": json.dumps({"command": "python3 -m unittest -q"})}}]
    shell1 = tool_messages(bodies[1])[-1]
    assert shell1["tool_call_id"] == "call_1" and shell1["content"].startswith("exit code: 1\n")
    assert "FAILED" in shell1["content"]
    read = tool_messages(bodies[2])[-1]
    assert read == {"role": "tool", "tool_call_id": "call_2", "content": BUGGY}
    assert tool_messages(bodies[3])[-1]["content"] == "edited csvline.py at line 3"
    shell2 = tool_messages(bodies[4])[-1]
    assert shell2["tool_call_id"] == "call_4" and shell2["content"].startswith("exit code: 0\n")
    assert "Ran 3 tests" in shell2["content"]


@pytest.mark.slow
def test_path_escapes_are_refused_without_touching_the_host(repo: Path, sandbox: Sandbox) -> None:
    outside = repo.parent / "outside.txt"
    outside.write_text("host secret\n")
    (repo / "etc").symlink_to("/etc")
    (repo / "out").symlink_to(outside)
    attempts: list[tuple[str, dict[str, str]]] = [
        ("read_file", {"path": "../outside.txt"}),
        ("read_file", {"path": "/etc/passwd"}),
        ("read_file", {"path": "etc/passwd"}),
        ("read_file", {"path": "out"}),
        ("write_file", {"path": "../outside.txt", "content": "pwned"}),
        ("write_file", {"path": "etc/benchwright-pwned", "content": "pwned"}),
        ("write_file", {"path": "/tmp/benchwright-pwned", "content": "pwned"}),
        ("write_file", {"path": "out", "content": "pwned"}),
        ("edit_file", {"path": "out", "old": "host", "new": "pwned"}),
        ("edit_file", {"path": "/work/../outside.txt", "old": "host", "new": "pwned"}),
        ("write_file", {"path": "sub/../../outside.txt", "content": "pwned"}),
    ]
    replies = [Reply.tool_calls([(f"call_{i}", name, args)]) for i, (name, args) in enumerate(attempts)]
    # links and a FIFO the agent makes itself, then tries to use
    n = len(attempts)
    replies += [
        Reply.tool_calls([(f"call_{n}", "shell", {
            "command": f"ln -s {outside} mine && ln -s /work/csvline.py inside && mkfifo pipe"})]),
        Reply.tool_calls([(f"call_{n + 1}", "read_file", {"path": "mine"})]),
        Reply.tool_calls([(f"call_{n + 2}", "read_file", {"path": "pipe"})]),
        Reply.tool_calls([(f"call_{n + 3}", "read_file", {"path": "/work/csvline.py"})]),
        Reply.tool_calls([(f"call_{n + 4}", "finish", {"response": "tried"})]),
    ]
    with OpenAIServer(answer=scripted(replies)) as srv:
        out = agent(srv, sandbox).run(repo, ["escape"])
    assert out.stopped is None and out.responses == ["tried"], out
    results = [s["result"] for s in out.trajectory]
    for (name, args), result in zip(attempts, results, strict=False):
        assert result.startswith("error: "), (name, args, result)
        assert "outside the repository" in result or "'..' is not allowed" in result, (name, args, result)
    assert "host secret" not in "".join(results)
    assert outside.read_text() == "host secret\n"
    assert not Path("/etc/benchwright-pwned").exists() and not Path("/tmp/benchwright-pwned").exists()
    assert (repo / "out").is_symlink() and (repo / "etc").is_symlink()
    made, mine, pipe, inside = out.trajectory[n : n + 4]
    assert made["exit_code"] == 0, made
    assert mine["result"].startswith("error: ") and "symbolic link" in mine["result"]
    assert pipe["result"] == "error: 'pipe' is not a regular file"
    assert inside["result"] == BUGGY  # /work/... is the workspace


@pytest.mark.slow
def test_max_steps_stops_a_model_that_never_finishes(repo: Path, sandbox: Sandbox) -> None:
    with OpenAIServer(answer=lambda body: Reply.tool_calls([("shell", {"command": "echo again"})])) as srv:
        out = agent(srv, sandbox, BuiltinLimits(max_steps=3)).run(repo, ["loop"])
        last = tool_messages(srv.requests[-1].json)[-1]["content"]
        count = srv.count
    assert out.stopped == "max_steps" and not out.timed_out and out.exit_code is None
    assert out.steps == 3 and [s["result"] for s in out.trajectory] == ["exit code: 0\nagain"] * 3
    assert "step limit reached" in last and count == 4  # told to finish, then stopped
    assert out.responses == [""]


def test_finish_after_the_last_step_is_honoured(repo: Path, sandbox: Sandbox) -> None:
    replies = [Reply.tool_calls([("read_file", {"path": "csvline.py"})])] * 2 + [
        Reply.tool_calls([("finish", {"response": "out of steps"})])]
    with OpenAIServer(answer=scripted(replies)) as srv:
        out = agent(srv, sandbox, BuiltinLimits(max_steps=2)).run(repo, ["look"])
    assert out.stopped is None and out.exit_code == 0 and out.responses == ["out of steps"]
    assert out.steps == 3


@pytest.mark.slow
def test_timeout_cuts_a_command_at_the_run_deadline(repo: Path, sandbox: Sandbox) -> None:
    with OpenAIServer(answer=lambda body: Reply.tool_calls([("shell", {"command": "sleep 60"})])) as srv:
        start = time.monotonic()
        out = agent(srv, sandbox, BuiltinLimits(timeout_s=3, command_timeout_s=60)).run(repo, ["wait"])
        took = time.monotonic() - start
    assert out.stopped == "timeout" and out.timed_out and out.exit_code is None
    assert took < 20, took
    assert out.trajectory[0]["timed_out"] is True and out.trajectory[0]["exit_code"] is None


@pytest.mark.slow
def test_a_command_over_its_own_limit_is_killed_and_the_run_goes_on(repo: Path, sandbox: Sandbox) -> None:
    replies = [Reply.tool_calls([("shell", {"command": "echo started; sleep 60"})]),
               Reply.tool_calls([("finish", {"response": "gave up"})])]
    with OpenAIServer(answer=scripted(replies)) as srv:
        out = agent(srv, sandbox, BuiltinLimits(command_timeout_s=1)).run(repo, ["wait"])
        result = tool_messages(srv.requests[-1].json)[-1]["content"]
    assert out.stopped is None and out.responses == ["gave up"]
    assert result.startswith("timed out after 1 s (killed)\n") and "started" in result


def test_timeout_cuts_a_slow_model(repo: Path, sandbox: Sandbox) -> None:
    with OpenAIServer(answer=lambda body: Reply.answer("late", delay_s=10)) as srv:
        start = time.monotonic()
        out = agent(srv, sandbox, BuiltinLimits(timeout_s=1)).run(repo, ["hurry"])
        took = time.monotonic() - start
    assert out.stopped == "timeout" and out.timed_out and out.steps == 0
    assert took < 5, took


def test_max_tokens_stops_the_run(repo: Path, sandbox: Sandbox) -> None:
    reply = Reply.tool_calls([("read_file", {"path": "csvline.py"})], usage=(1000, 10))
    with OpenAIServer(answer=lambda body: reply) as srv:
        out = agent(srv, sandbox, BuiltinLimits(max_tokens=2500)).run(repo, ["go"])
        count = srv.count
    assert out.stopped == "max_tokens" and not out.timed_out
    assert count == 3 and (out.tokens_in, out.tokens_out) == (3000, 30) and out.steps == 3


def test_a_provider_error_mid_run_ends_it_with_the_error(repo: Path, sandbox: Sandbox) -> None:
    replies = [Reply.tool_calls([("read_file", {"path": "csvline.py"})], text="Looking."),
               Reply.error(400, "context length exceeded")]
    with OpenAIServer(answer=scripted(replies)) as srv:
        out = agent(srv, sandbox).run(repo, ["go", "and then"])
    assert out.stopped is not None and "HTTP 400" in out.stopped
    assert "context length exceeded" in out.stopped
    assert out.error is None and not out.timed_out and out.exit_code is None
    assert out.steps == 1 and out.responses == ["Looking."]


def test_retryable_failures_are_retried_by_the_engine(repo: Path, sandbox: Sandbox) -> None:
    failures = [Reply.error(503, "busy")]

    def answer(body: dict[str, Any]) -> Reply:
        return failures.pop() if failures else Reply.tool_calls([("finish", {"response": "ok"})])

    with OpenAIServer(answer=answer) as srv:
        out = agent(srv, sandbox, max_retries=2, backoff_s=0.01).run(repo, ["go"])
    assert out.stopped is None and out.responses == ["ok"]


def test_text_without_a_tool_call_is_the_response_and_turns_share_the_conversation(repo: Path, sandbox: Sandbox) -> None:
    replies = [
        Reply.answer("There is a bug in parse."),
        Reply.tool_calls([("w1", "write_file", {"path": "docs/NOTES.md", "content": "# Notes\n"}),
                          ("f1", "finish", {"response": "documented"}),
                          ("r1", "read_file", {"path": "csvline.py"})]),
    ]
    with OpenAIServer(answer=scripted(replies)) as srv:
        out = agent(srv, sandbox).run(repo, ["what is wrong?", "write notes"])
        bodies = [r.json for r in srv.requests]
    assert out.responses == ["There is a bug in parse.", "documented"] and out.exit_code == 0
    assert (repo / "docs" / "NOTES.md").read_text() == "# Notes\n"
    assert [s["tool"] for s in out.trajectory] == ["write_file", "finish"]  # the call after finish: not run
    roles = [m["role"] for m in bodies[1]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    assert bodies[1]["messages"][2] == {"role": "assistant", "content": "There is a bug in parse."}
    assert len(bodies) == 2


def test_bad_calls_get_an_error_result_and_the_run_goes_on(repo: Path, sandbox: Sandbox) -> None:
    replies = [
        Reply.tool_calls([("a", "read_file", '{"path": "csvline.py"'), ("b", "delete_all", {}),
                          ("c", "read_file", {"file": "x"}), ("d", "edit_file",
                                                                {"path": "csvline.py", "old": "line",
                                                                 "new": "x"}),
                          ("e", "read_file", {"path": "missing.py"}), ("f", "read_file", {"path": "."}),
                          ("g", "write_file", {"path": "new/deep/file.txt", "content": "hi"})]),
        Reply.tool_calls([("h", "finish", {})], text="all done"),
    ]
    with OpenAIServer(answer=scripted(replies)) as srv:
        out = agent(srv, sandbox).run(repo, ["go"])
        results = [m["content"] for m in tool_messages(srv.requests[1].json)]
    assert out.stopped is None and out.responses == ["all done"]
    assert results[0].startswith("error: the arguments of read_file are not valid JSON")
    assert results[1].startswith("error: there is no tool 'delete_all'")
    assert results[2] == "error: the argument 'path' is missing or not a string"
    assert results[3].startswith(f"error: `old` occurs {BUGGY.count('line')} times in csvline.py")
    assert results[4] == "error: 'missing.py' does not exist"
    assert "is a folder" in results[5]
    assert results[6] == "created new/deep/file.txt (2 bytes)"
    assert (repo / "new" / "deep" / "file.txt").read_text() == "hi"
    assert out.trajectory[0]["arguments"] == '{"path": "csvline.py"'  # as the model wrote it
    assert (repo / "csvline.py").read_text() == BUGGY


def test_a_provider_without_tool_calls_is_refused(repo: Path, sandbox: Sandbox) -> None:
    settings = ProviderSettings(type="reference")
    provider: Provider = registry.create("provider", "reference", name="reference", settings=settings)
    engine = GenerationEngine({"reference": provider}, Settings(providers={"reference": settings}))
    with pytest.raises(UserError, match="openai-compatible"):
        BuiltinAgent(engine, "reference", "m", sandbox)
    with pytest.raises(UserError, match="not configured"):
        BuiltinAgent(engine, "nope", "m", sandbox)


def test_a_second_identical_run_is_answered_from_the_cache(tmp_path: Path, sandbox: Sandbox) -> None:
    replies = [
        Reply.tool_calls([("c1", "read_file", {"path": "csvline.py"})], usage=(50, 5)),
        Reply.tool_calls([("c2", "edit_file", {"path": "csvline.py", "old": OLD, "new": NEW})],
                         text="Fixing.", usage=(60, 6)),
        Reply.tool_calls([("c3", "finish", {"response": "fixed"})], usage=(70, 7)),
    ]
    outs = []
    with GenerationCache(tmp_path / "cache.sqlite3") as cache, OpenAIServer(answer=scripted(replies)) as srv:
        for _ in range(2):
            root = Path(tempfile.mkdtemp(prefix="bw-builtin-cache-"))
            try:
                (root / "csvline.py").write_text(BUGGY)
                outs.append(agent(srv, sandbox, cache=cache).run(root, ["fix it"]))
                assert (root / "csvline.py").read_text() == BUGGY.replace(OLD, NEW)
            finally:
                shutil.rmtree(root)
        assert srv.count == 3  # the second run asked nobody
        assert cache.stats().entries == 3
    first, second = outs
    assert first.responses == second.responses == ["fixed"]
    assert first.trajectory[1]["result"] == second.trajectory[1]["result"] == "edited csvline.py at line 3"
    assert (second.tokens_in, second.tokens_out) == (180, 18)


def test_the_cache_keeps_tool_calls_and_upgrades_an_old_file(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    conn = sqlite3.connect(path)
    conn.executescript("""CREATE TABLE generations (key TEXT PRIMARY KEY, provider TEXT NOT NULL,
        model TEXT NOT NULL, text TEXT NOT NULL, tokens_in INTEGER, tokens_out INTEGER,
        tokens_estimated INTEGER NOT NULL DEFAULT 0, finish_reason TEXT, cost_usd REAL,
        answer_model TEXT, latency_ms REAL, created TEXT NOT NULL);
        INSERT INTO generations VALUES ('k0', 'p', 'm', 'old', 1, 2, 0, 'stop', NULL, NULL, 3.0, 'then');""")
    conn.close()
    calls = (ToolCall("call_1", "shell", '{"command": "ls"}'), ToolCall("call_2", "finish", "{bad"))
    with GenerationCache(path) as cache:
        old = cache.get("k0")
        assert old is not None and old.text == "old" and old.tool_calls == ()
        cache.put("k1", "p", "m", CachedAnswer(text="", tool_calls=calls, finish_reason="tool_calls"))
        got = cache.get("k1")
    assert got is not None and got.tool_calls == calls
    with GenerationCache(path) as again:  # opened once more: nothing to upgrade
        assert again.get("k1") == got


def test_tools_are_part_of_the_cache_key() -> None:
    from benchwright.model.cache import cache_key

    base = GenerationRequest(model="m", mode="instruct", messages=[{"role": "user", "content": "x"}],
                             prompt="x", language="python")
    with_tools = GenerationRequest(model="m", mode="instruct", messages=[{"role": "user", "content": "x"}],
                                   prompt="x", language="python", tools=TOOLS)
    other = GenerationRequest(model="m", mode="instruct", messages=[{"role": "user", "content": "x"}],
                              prompt="x", language="python", tools=TOOLS[:1])
    keys = {cache_key("p", "t", None, r) for r in (base, with_tools, other)}
    assert len(keys) == 3


def test_anthropic_tool_calls_in_the_messages_format(repo: Path, sandbox: Sandbox) -> None:
    replies = [
        Reply.tool_calls([("call_1", "read_file", {"path": "csvline.py"}),
                          ("call_2", "edit_file", {"path": "csvline.py", "old": OLD, "new": NEW})],
                         text="Reading and fixing."),
        Reply.tool_calls([("call_3", "finish", {"response": "fixed"})]),
        Reply.answer("Nothing else to do."),
    ]
    with AnthropicServer(answer=scripted(replies)) as srv:
        settings = ProviderSettings(type="anthropic", base_url=srv.base_url)
        provider: Provider = registry.create("provider", "anthropic", name="claude", settings=settings)
        engine = GenerationEngine({"claude": provider}, Settings(providers={"claude": settings}))
        out = BuiltinAgent(engine, "claude", "claude-x", sandbox).run(repo, ["fix", "anything else?"])
        bodies = [r.json for r in srv.requests]
    assert out.stopped is None and out.responses == ["fixed", "Nothing else to do."], out
    assert (repo / "csvline.py").read_text() == BUGGY.replace(OLD, NEW)
    assert bodies[0]["tools"][0] == {"name": "shell", "description": TOOLS[0]["function"]["description"],
                                     "input_schema": TOOLS[0]["function"]["parameters"]}
    assert "/work" in bodies[0]["system"]
    second = bodies[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"] == [
        {"type": "text", "text": "Reading and fixing."},
        {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "csvline.py"}},
        {"type": "tool_use", "id": "toolu_2", "name": "edit_file",
         "input": {"path": "csvline.py", "old": OLD, "new": NEW}}]
    assert second[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": BUGGY},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "edited csvline.py at line 3"}]
    third = bodies[2]["messages"]  # the finish result and the next turn in one user message
    assert third[-1]["role"] == "user" and third[-1]["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_3", "content": "finished"},
        {"type": "text", "text": "anything else?"}]


def test_the_provider_returns_tool_calls_and_sends_tool_turns() -> None:
    """The openai-compatible provider alone: tools and tool turns out, tool calls in."""
    with OpenAIServer(answer=lambda body: Reply.tool_calls(
            [("x1", "shell", {"command": "ls"}), ("x2", "finish", '{"response": "r"}')])) as srv:
        settings = ProviderSettings(type="openai-compatible", base_url=srv.base_url)
        provider: Provider = registry.create("provider", "openai-compatible", name="p", settings=settings)
        messages = [{"role": "user", "content": "go"},
                    {"role": "assistant", "content": None, "tool_calls": [
                        {"id": "a", "type": "function", "function": {"name": "shell", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": "a", "content": "exit code: 0"}]
        request = GenerationRequest(model="m", mode="instruct", messages=messages, prompt="",
                                    language="", tools=TOOLS)

        async def ask() -> Answer:
            try:
                return await provider.generate(request)
            finally:
                await provider.aclose()

        answer = asyncio.run(ask())
        body = srv.requests[0].json
        bad = GenerationRequest(model="m", mode="instruct", messages=messages[:2], prompt="",
                                language="", tools=TOOLS)

        async def ask_bad() -> str:
            try:
                await provider.generate(bad)
            except Exception as e:
                return str(e)
            finally:
                await provider.aclose()
            return ""

        refused = asyncio.run(ask_bad())
    assert answer.tool_calls == (ToolCall("x1", "shell", '{"command": "ls"}'),
                                 ToolCall("x2", "finish", '{"response": "r"}'))
    assert answer.text == "" and answer.finish_reason == "tool_calls"
    assert body["messages"] == messages and body["tools"] == TOOLS and body["tool_choice"] == "auto"
    assert "HTTP 400" in refused and "tool_call_id" in refused  # the fake checks tool turns too



def test_tokens_are_estimated_when_the_service_gives_no_usage(repo: Path, sandbox: Sandbox) -> None:
    replies = [Reply.tool_calls([("read_file", {"path": "csvline.py"})], usage=None),
               Reply.tool_calls([("finish", {"response": "read it"})], usage=None)]
    with OpenAIServer(answer=scripted(replies)) as srv:
        out = agent(srv, sandbox).run(repo, ["read"])
    assert out.stopped is None and out.responses == ["read it"]
    # the second prompt holds the tool-call turn (content None) and the file: estimated, not lost
    assert out.tokens_in is not None and out.tokens_in > 2 * len(BUGGY) // 8
    assert out.tokens_out is not None and out.tokens_out > 0
