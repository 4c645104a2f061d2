"""The model proxy between agent CLIs and benchwright's providers: real SDK clients (openai chat
and Responses, anthropic messages) and plain HTTP (a Unix socket, Gemini) against a real proxy,
forwarding through the real generation engine (its loop in another thread) and the real
openai-compatible provider to a fake OpenAI service on loopback. No mocks."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from benchwright.agents.proxy import Meter, ModelProxy
from benchwright.config.settings import Price, ProviderSettings, Settings
from benchwright.errors import UserError
from benchwright.model.base import Provider
from benchwright.model.engine import GenerationEngine
from benchwright.registry import registry
from benchwright.testing import OpenAIServer, Reply

SECRET = "sk-upstream-secret-0123456789abcdef"
TOOLS = [{"type": "function", "function": {"name": "shell", "description": "Run a command.",
                                           "parameters": {"type": "object", "properties": {
                                               "command": {"type": "string"}}}}}]


class Rig:
    def __init__(self, upstream: OpenAIServer, proxy: ModelProxy) -> None:
        self.upstream = upstream
        self.proxy = proxy
        self.key, self.meter = proxy.open("local", "qwen-coder", label="run-1")
        self.reply: Reply | Callable[[dict[str, Any]], Reply] = Reply.answer("ok", usage=(10, 5))

    def answer(self, body: dict[str, Any]) -> Reply:
        return self.reply(body) if callable(self.reply) else self.reply

    @property
    def base(self) -> str:
        return self.proxy.url

    def sent(self) -> dict[str, Any]:
        """The last request the upstream service got."""
        body: dict[str, Any] = self.upstream.requests[-1].json
        return body


@pytest.fixture
def engine_loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


@pytest.fixture
def rig(engine_loop: asyncio.AbstractEventLoop, monkeypatch: pytest.MonkeyPatch) -> Iterator[Rig]:
    monkeypatch.setenv("BW_PROXY_TEST_KEY", SECRET)
    folder = Path(tempfile.mkdtemp(prefix="bwp-"))
    holder: dict[str, Rig] = {}
    with OpenAIServer(answer=lambda body: holder["rig"].answer(body), expected_key=SECRET) as srv:
        settings = ProviderSettings(type="openai-compatible", base_url=srv.base_url,
                                    api_key_env="BW_PROXY_TEST_KEY", max_retries=1, backoff_s=0,
                                    prices={"qwen-coder": Price(input=1.0, output=2.0)})
        provider: Provider = registry.create("provider", "openai-compatible", name="local",
                                             settings=settings)
        engine = GenerationEngine({"local": provider}, Settings(providers={"local": settings}))
        with ModelProxy(engine, engine_loop, socket_dir=folder / "sock") as proxy:
            holder["rig"] = Rig(srv, proxy)
            yield holder["rig"]
        asyncio.run_coroutine_threadsafe(engine.aclose(), engine_loop).result(10)
    shutil.rmtree(folder, ignore_errors=True)


def _oai(rig: Rig, key: str | None = None) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{rig.base}/v1", api_key=key or rig.key, max_retries=0)


def _ant(rig: Rig, key: str | None = None) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=rig.base, api_key=key or rig.key, max_retries=0)


COST = (10 * 1.0 + 5 * 2.0) / 1_000_000


def test_openai_chat_tool_call_round_trip_and_meter(rig: Rig) -> None:
    rig.reply = Reply.tool_calls([("call_9", "shell", {"command": "ls"})], usage=(10, 5))
    got = _oai(rig).chat.completions.create(
        model="whatever-the-cli-says", temperature=0.2, max_tokens=300, tools=TOOLS,  # type: ignore[arg-type]
        messages=[{"role": "system", "content": "be brief"},
                  {"role": "user", "content": "list files"},
                  {"role": "assistant", "content": None, "tool_calls": [
                      {"id": "c1", "type": "function",
                       "function": {"name": "shell", "arguments": '{"command": "pwd"}'}}]},
                  {"role": "tool", "tool_call_id": "c1", "content": "/work"}])
    choice = got.choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = choice.message.tool_calls or []
    assert [(c.id, c.function.name, json.loads(c.function.arguments)) for c in calls] == \
        [("call_9", "shell", {"command": "ls"})]
    assert (got.usage.prompt_tokens, got.usage.completion_tokens) == (10, 5)  # type: ignore[union-attr]
    sent = rig.sent()
    assert sent["model"] == "qwen-coder" and sent["temperature"] == 0.2 and sent["max_tokens"] == 300
    assert sent["tools"] == TOOLS
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "tool"]
    assert sent["messages"][2]["tool_calls"][0]["id"] == "c1"
    assert sent["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": "/work"}
    m = rig.meter
    assert (m.requests, m.failed, m.cached, m.tokens_in, m.tokens_out) == (1, 0, 0, 10, 5)
    assert m.cost_usd == pytest.approx(COST) and m.latency_ms > 0 and not m.tokens_estimated
    assert rig.proxy.meter(rig.key).to_dict()["requests"] == 1


def test_openai_chat_streaming_text_tools_and_usage(rig: Rig) -> None:
    rig.reply = Reply.tool_calls([("call_1", "shell", {"command": "cat src/parser.py"})],
                                 text="I will look at the code.", usage=(10, 5))
    stream = _oai(rig).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "fix"}], tools=TOOLS,  # type: ignore[arg-type]
        stream=True, stream_options={"include_usage": True})
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "I will look at the code."
    args = "".join(t.function.arguments or "" for c in chunks if c.choices
                   for t in c.choices[0].delta.tool_calls or [] if t.function)
    assert json.loads(args) == {"command": "cat src/parser.py"}
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 5
    assert "stream" not in rig.sent()  # the upstream call is a whole answer
    assert rig.meter.requests == 1 and rig.meter.tokens_out == 5


def test_anthropic_messages_tool_use_both_ways(rig: Rig) -> None:
    rig.reply = Reply.tool_calls([("call_7", "shell", {"command": "pytest -q"})], text="Running.",
                                 usage=(10, 5))
    got = _ant(rig).messages.create(
        model="claude-sonnet-4", max_tokens=1000, system="You are Claude Code.",
        tools=[{"name": "shell", "description": "Run a command.",
                "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}],
        messages=[{"role": "user", "content": "fix the bug"},
                  {"role": "assistant", "content": [
                      {"type": "text", "text": "Looking."},
                      {"type": "tool_use", "id": "toolu_1", "name": "shell", "input": {"command": "ls"}}]},
                  {"role": "user", "content": [
                      {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"},
                      {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                   "data": "AAAA"}},
                      {"type": "text", "text": "go on"}]}])
    assert got.stop_reason == "tool_use"
    assert [b.type for b in got.content] == ["text", "tool_use"]
    tool = got.content[1]
    assert tool.type == "tool_use" and tool.name == "shell" and tool.input == {"command": "pytest -q"}
    assert (got.usage.input_tokens, got.usage.output_tokens) == (10, 5)
    sent = rig.sent()
    assert sent["model"] == "qwen-coder" and sent["max_tokens"] == 1000
    assert sent["tools"] == [{"type": "function", "function": {
        "name": "shell", "description": "Run a command.",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}}]
    assert sent["messages"] == [
        {"role": "system", "content": "You are Claude Code."},
        {"role": "user", "content": "fix the bug"},
        {"role": "assistant", "content": "Looking.", "tool_calls": [
            {"id": "toolu_1", "type": "function",
             "function": {"name": "shell", "arguments": '{"command": "ls"}'}}]},
        {"role": "tool", "tool_call_id": "toolu_1", "content": "a.py"},
        {"role": "user", "content": "[image content omitted]\ngo on"}]
    assert rig.meter.cost_usd == pytest.approx(COST)


def test_anthropic_streaming_and_count_tokens(rig: Rig) -> None:
    rig.reply = Reply.tool_calls([("shell", "not json")], text="Plan: run it.", usage=(10, 5))
    client = _ant(rig)
    with client.messages.stream(model="claude", max_tokens=100,
                                messages=[{"role": "user", "content": "go"}]) as stream:
        final = stream.get_final_message()
    assert final.content[0].text == "Plan: run it."  # type: ignore[union-attr]
    assert final.content[1].input == {}  # type: ignore[union-attr]  # unparseable arguments
    assert final.stop_reason == "tool_use" and final.usage.output_tokens == 5
    counted = client.messages.count_tokens(model="claude", messages=[{"role": "user", "content": "x" * 400}])
    assert 100 <= counted.input_tokens <= 140
    assert rig.upstream.count == 1 and rig.meter.requests == 1


def test_responses_api_streaming_and_items(rig: Rig) -> None:
    rig.reply = Reply.tool_calls([("call_3", "shell", {"command": "make test"})], text="Testing.",
                                 usage=(10, 5))
    stream = _oai(rig).responses.create(
        model="gpt-5-codex", instructions="You are Codex.", stream=True,
        tools=[{"type": "function", "name": "shell", "description": "Run a command.",
                "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
                "strict": False}],
        input=[{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix"}]},
               {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": '{"command":"ls"}'},
               {"type": "function_call_output", "call_id": "c1", "output": "a.py"}])
    events = list(stream)
    kinds = [e.type for e in events]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert "response.output_text.delta" in kinds and "response.function_call_arguments.delta" in kinds
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text == "Testing."
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert [i.type for i in done] == ["message", "function_call"]
    assert done[1].call_id == "call_3" and json.loads(done[1].arguments) == {"command": "make test"}  # type: ignore[union-attr]
    final = events[-1].response  # type: ignore[union-attr]
    assert final.usage.input_tokens == 10 and final.usage.output_tokens == 5
    sent = rig.sent()
    assert sent["messages"] == [
        {"role": "system", "content": "You are Codex."}, {"role": "user", "content": "fix"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "shell", "arguments": '{"command":"ls"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py"}]
    assert sent["tools"][0]["function"]["name"] == "shell"


def test_responses_api_not_streaming(rig: Rig) -> None:
    got = _oai(rig).responses.create(model="x", input="hello", max_output_tokens=50)
    assert got.output_text == "ok" and got.status == "completed"
    assert rig.sent()["max_tokens"] == 50


def test_gemini_generate_and_stream_over_the_unix_socket(rig: Rig) -> None:
    assert rig.proxy.socket is not None
    assert (os.stat(rig.proxy.socket).st_mode & 0o777) == 0o666
    assert (os.stat(rig.proxy.socket.parent).st_mode & 0o777) == 0o711
    rig.reply = Reply.tool_calls([("call_1", "run_shell_command", {"command": "ls"})], usage=(10, 5))
    body = {"systemInstruction": {"parts": [{"text": "You are Gemini CLI."}]},
            "contents": [{"role": "user", "parts": [{"text": "list"}]},
                         {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command",
                                                                       "args": {"command": "pwd"}}}]},
                         {"role": "user", "parts": [{"functionResponse": {
                             "name": "run_shell_command", "response": {"output": "/w"}}}]}],
            "tools": [{"functionDeclarations": [{"name": "run_shell_command", "parameters": {
                "type": "object", "properties": {"command": {"type": "string"}}}}]}],
            "generationConfig": {"temperature": 0, "maxOutputTokens": 99}}
    with httpx.Client(transport=httpx.HTTPTransport(uds=str(rig.proxy.socket)),
                      base_url="http://model") as client:
        got = client.post(f"/v1beta/models/gemini-2.5-pro:generateContent?key={rig.key}", json=body)
        streamed = client.post("/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
                               headers={"x-goog-api-key": rig.key}, json=body)
    assert got.status_code == 200, got.text
    parts = got.json()["candidates"][0]["content"]["parts"]
    assert parts == [{"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}}]
    assert got.json()["usageMetadata"]["totalTokenCount"] == 15
    sent = rig.sent()
    assert sent["temperature"] == 0 and sent["max_tokens"] == 99
    assert [m["role"] for m in sent["messages"]] == ["system", "user", "assistant", "tool"]
    assert sent["messages"][3]["tool_call_id"] == sent["messages"][2]["tool_calls"][0]["id"]
    assert streamed.headers["content-type"] == "text/event-stream"
    events = [json.loads(line[6:]) for line in streamed.text.splitlines() if line.startswith("data: ")]
    assert events[-1]["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] == {"command": "ls"}
    assert rig.meter.requests == 2


def test_models_lists_the_bound_model(rig: Rig) -> None:
    assert [m.id for m in _oai(rig).models.list()] == ["qwen-coder"]
    assert [m.id for m in _ant(rig).models.list()] == ["qwen-coder"]
    assert rig.upstream.count == 0 and rig.meter.requests == 0


def test_a_wrong_or_missing_key_is_401_and_nothing_is_forwarded(rig: Rig) -> None:
    with pytest.raises(openai.AuthenticationError):
        _oai(rig, "bw-wrong").chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    with pytest.raises(anthropic.AuthenticationError) as caught:
        _ant(rig, SECRET).messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    assert caught.value.body["error"]["type"] == "authentication_error"  # type: ignore[index]
    bare = httpx.post(f"{rig.base}/v1/responses", json={"model": "m", "input": "x"})
    assert bare.status_code == 401 and "error" in bare.json()
    gem = httpx.post(f"{rig.base}/v1beta/models/g:generateContent?key=nope", json={"contents": []})
    assert gem.status_code == 401 and gem.json()["error"]["status"] == "UNAUTHENTICATED"
    assert rig.upstream.count == 0 and rig.meter.requests == 0


def test_a_closed_key_stops_working(rig: Rig) -> None:
    client = _oai(rig)
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    meter = rig.proxy.close(rig.key)
    assert meter is rig.meter and meter.requests == 1
    with pytest.raises(openai.AuthenticationError):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert rig.upstream.count == 1
    with pytest.raises(KeyError):
        rig.proxy.close(rig.key)


def test_two_keys_two_meters(rig: Rig) -> None:
    other, meter = rig.proxy.open("local", "qwen-coder")
    assert other != rig.key and other.startswith("bw-") and len(other) > 40
    _oai(rig, other).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert (meter.requests, rig.meter.requests) == (1, 0)
    with pytest.raises(UserError, match="no provider named 'nope'"):
        rig.proxy.open("nope", "m")


def test_upstream_failure_is_502_counted_and_never_shows_the_key(rig: Rig) -> None:
    rig.reply = Reply.error(500, f"internal error for key {SECRET}")
    with pytest.raises(openai.APIStatusError) as caught:
        _oai(rig).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert caught.value.status_code == 502
    assert "upstream model failed" in caught.value.message and SECRET not in caught.value.message
    assert rig.upstream.count == 2  # the engine retried (max_retries=1)
    with pytest.raises(anthropic.APIStatusError) as ant:
        _ant(rig).messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "x"}])
    assert ant.value.status_code == 502 and ant.value.body["type"] == "error"  # type: ignore[index]
    m = rig.meter
    assert (m.requests, m.failed, m.tokens_in, m.cost_usd) == (2, 2, 0, None)
    assert len(m.errors) == 2 and all(SECRET not in e for e in m.errors)
    assert all(SECRET[8:24] not in e for e in m.errors)
    assert m.to_dict()["failed"] == 2


def test_bad_bodies(rig: Rig) -> None:
    headers = {"Authorization": f"Bearer {rig.key}", "Content-Type": "application/json"}
    bad = httpx.post(f"{rig.base}/v1/chat/completions", content=b"{not json", headers=headers)
    assert bad.status_code == 400 and "not valid JSON" in bad.json()["error"]["message"]
    shape = httpx.post(f"{rig.base}/v1/chat/completions", json={"model": "m"}, headers=headers)
    assert shape.status_code == 400 and "messages" in shape.json()["error"]["message"]
    big = httpx.post(f"{rig.base}/v1/messages", content=b" " * (32 * 1024 * 1024 + 1),
                     headers={"x-api-key": rig.key})
    assert big.status_code == 413 and big.json()["error"]["type"] == "request_too_large"
    chained = httpx.post(f"{rig.base}/v1/responses", headers=headers,
                         json={"model": "m", "input": "x", "previous_response_id": "resp_1"})
    assert chained.status_code == 400
    assert rig.upstream.count == 0 and rig.meter.requests == 0


def test_the_key_never_appears_in_answers(rig: Rig) -> None:
    got = httpx.post(f"{rig.base}/v1/chat/completions", headers={"Authorization": f"Bearer {rig.key}"},
                     json={"model": "m", "messages": [{"role": "user", "content": "x"}]})
    assert got.status_code == 200
    assert rig.key not in got.text and SECRET not in got.text
    assert all(rig.key not in v and SECRET not in v for v in got.headers.values())
    assert rig.upstream.requests[-1].headers["authorization"] == f"Bearer {SECRET}"


def test_meter_to_dict() -> None:
    m = Meter(requests=2, tokens_in=3, cost_usd=0.5, errors=["x"])
    assert m.to_dict() == {"requests": 2, "failed": 0, "cached": 0, "tokens_in": 3, "tokens_out": 0,
                           "tokens_estimated": False, "cost_usd": 0.5, "latency_ms": 0.0,
                           "errors": ["x"]}


def test_the_agent_is_told_only_that_the_upstream_failed(rig: Rig) -> None:
    rig.reply = Reply.error(400, "temperature must be a number (internal-host.corp:8443)")
    with pytest.raises(openai.APIStatusError) as caught:
        _oai(rig).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert caught.value.status_code == 502
    assert "internal-host" not in str(caught.value.body) and rig.upstream.url not in str(caught.value.body)
    assert "internal-host.corp" in rig.meter.errors[-1]  # the run's records keep the reason


def test_a_request_without_a_key_is_refused_before_its_body_is_read(rig: Rig) -> None:
    import socket
    import time

    with socket.create_connection(("127.0.0.1", rig.proxy.port), timeout=10) as conn:
        conn.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer bw-forged\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 33554431\r\n\r\n{")
        start = time.monotonic()
        got = conn.recv(4096)
        assert got.startswith(b"HTTP/1.1 401") and time.monotonic() - start < 5  # no body awaited
        conn.settimeout(5)
        assert conn.recv(4096) == b""  # and the connection is closed
    assert rig.upstream.count == 0


def test_closing_a_key_cancels_what_it_still_asked(rig: Rig) -> None:
    import time

    rig.reply = Reply.answer("late", usage=(10, 5), delay_s=30)
    done: list[object] = []

    def ask() -> None:
        try:
            done.append(_oai(rig).with_options(timeout=60).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "x"}]))
        except openai.APIError as e:
            done.append(e)

    asker = threading.Thread(target=ask)
    asker.start()
    deadline = time.monotonic() + 10
    while rig.upstream.count == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    start = time.monotonic()
    meter = rig.proxy.close(rig.key)
    asker.join(30)
    assert time.monotonic() - start < 10 and done and not isinstance(done[0], openai.types.chat.ChatCompletion)
    assert (meter.requests, meter.failed) == (1, 1) and "cancelled" in meter.errors[-1]


def test_one_run_cannot_take_every_slot(rig: Rig) -> None:
    from benchwright.agents.proxy import MAX_PENDING

    rig.reply = Reply.answer("slow", usage=(1, 1), delay_s=2)
    results: list[int] = []

    def ask() -> None:
        r = httpx.post(f"{rig.base}/v1/chat/completions", timeout=30,
                       headers={"Authorization": f"Bearer {rig.key}"},
                       json={"model": "m", "messages": [{"role": "user", "content": "x"}]})
        results.append(r.status_code)

    threads = [threading.Thread(target=ask) for _ in range(MAX_PENDING + 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(results).count(200) <= MAX_PENDING and results.count(502) >= 4
    assert rig.upstream.count <= MAX_PENDING


def test_a_token_budget_stops_forwarding_once_spent(rig: Rig) -> None:
    key, meter = rig.proxy.open("local", "qwen-coder", label="budgeted", budget=20)
    ask = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
    codes = [httpx.post(f"{rig.base}/v1/chat/completions", json=ask, timeout=30,
                        headers={"Authorization": f"Bearer {key}"}).status_code for _ in range(3)]
    assert codes == [200, 200, 502]  # 15 tokens, then 30 >= 20: the third is not forwarded
    assert rig.upstream.count == 2
    assert meter.failed == 1 and "token budget (20 tokens, max_tokens) is spent" in meter.errors[-1]
