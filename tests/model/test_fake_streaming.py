"""The fake services stream as the real ones do: the real ``openai`` and ``anthropic`` SDKs read
their server-sent events (text, tool calls, usage) in streaming mode. And the HTTP server under
them sends chunked streams and listens on a Unix socket."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import anthropic
import httpx
import openai
import pytest

from benchwright.httpserve import HTTPServerBase, RecordedRequest, Response, sse
from benchwright.testing import AnthropicServer, OpenAIServer, Reply


def test_openai_stream_text_and_usage() -> None:
    text = "Here is a fairly long answer that arrives in several pieces."
    with OpenAIServer(answer=lambda body: Reply.answer(text, usage=(11, 7))) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        stream = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True,
            stream_options={"include_usage": True})
        chunks = list(stream)
    deltas = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(deltas) > 1 and "".join(deltas) == text
    assert chunks[0].choices[0].delta.role == "assistant"
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (11, 7)
    assert srv.requests[0].json["stream"] is True


def test_openai_stream_without_include_usage_has_no_usage_chunk() -> None:
    with OpenAIServer(answer=lambda body: Reply.answer("ok", usage=(1, 1))) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        chunks = list(client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hi"}], stream=True))
    assert all(c.choices for c in chunks) and all(c.usage is None for c in chunks)


def test_openai_stream_tool_calls_with_the_sdk_accumulator() -> None:
    calls = [("call_a", "shell", {"command": "cat src/parser.py | head -n 40"}),
             ("call_b", "read_file", {"path": "a.py"})]
    with OpenAIServer(answer=lambda body: Reply.tool_calls(calls, text="Looking.")) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        with client.chat.completions.stream(
                model="m", messages=[{"role": "user", "content": "fix it"}],
                tools=[{"type": "function", "function": {"name": "shell", "parameters": {
                    "type": "object", "properties": {"command": {"type": "string"}}}}}]) as stream:
            pieces = [e for e in stream if e.type == "tool_calls.function.arguments.delta"]
            final = stream.get_final_completion()
    message = final.choices[0].message
    assert message.content == "Looking."
    assert final.choices[0].finish_reason == "tool_calls"
    got = [(c.id, c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]
    assert got == [(i, n, a) for i, n, a in calls]
    assert len(pieces) > 2  # the arguments came in pieces


def test_anthropic_stream_text_and_tool_use() -> None:
    reply = Reply.tool_calls([("shell", {"command": "ls -la", "timeout": 5})], text="I will look.",
                             usage=(21, 9))
    with AnthropicServer(answer=lambda body: reply) as srv:
        client = anthropic.Anthropic(base_url=srv.base_url, api_key="k", max_retries=0)
        with client.messages.stream(model="claude", max_tokens=100,
                                    messages=[{"role": "user", "content": "look"}]) as stream:
            events = [e.type for e in stream]
            final = stream.get_final_message()
    assert events[0] == "message_start" and events[-1] == "message_stop"
    assert "input_json" in events and "text" in events
    assert [b.type for b in final.content] == ["text", "tool_use"]
    assert final.content[0].text == "I will look."  # type: ignore[union-attr]
    tool = final.content[1]
    assert tool.type == "tool_use" and tool.name == "shell" and tool.id.startswith("toolu_")
    assert tool.input == {"command": "ls -la", "timeout": 5}
    assert final.stop_reason == "tool_use"
    assert (final.usage.input_tokens, final.usage.output_tokens) == (21, 9)


def test_anthropic_stream_raw_events_in_order() -> None:
    with AnthropicServer(answer=lambda body: Reply.answer("a b c d e f g h")) as srv:
        client = anthropic.Anthropic(base_url=srv.base_url, api_key="k", max_retries=0)
        events = list(client.messages.create(model="claude", max_tokens=10, stream=True,
                                             messages=[{"role": "user", "content": "x"}]))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["message_start", "content_block_start"]
    assert kinds[-3:] == ["content_block_stop", "message_delta", "message_stop"]
    text = "".join(e.delta.text for e in events if e.type == "content_block_delta"
                   and e.delta.type == "text_delta")
    assert text == "a b c d e f g h"


def test_a_scripted_error_is_not_streamed() -> None:
    with OpenAIServer(answer=lambda body: Reply.error(429, "slow down")) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0)
        with pytest.raises(openai.RateLimitError):
            list(client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True))


class _Streamer(HTTPServerBase):
    name = "streamer"
    max_body = 100

    async def _respond(self, rec: RecordedRequest) -> Response | None:
        async def gen() -> AsyncIterator[bytes]:
            for n in range(3):
                yield sse({"n": n})
                await asyncio.sleep(0.01)
            if rec.path == "/broken":
                raise RuntimeError("the stream broke")

        return Response(200, b"", {}, "text/event-stream", stream=gen())

    def _plain(self, status: int, message: str, *, close: bool = False) -> Response:
        return Response(status, message.encode(), {}, "text/plain", close=close)


def test_chunked_stream_over_tcp_and_unix_socket(tmp_path: Path) -> None:
    sock = tmp_path / "s.sock"
    with _Streamer(unix_socket=sock, socket_mode=0o666) as srv:
        assert srv.unix_socket == sock and (os.stat(sock).st_mode & 0o777) == 0o666
        tcp = httpx.get(f"{srv.url}/x")
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(sock))) as client:
            uds = client.get("http://proxy/x")
            # keep-alive: a second request on the same connection after a chunked body
            again = client.get("http://proxy/y")
        for r in (tcp, uds, again):
            assert r.status_code == 200 and r.headers["transfer-encoding"] == "chunked"
            assert r.headers["content-type"] == "text/event-stream"
            assert r.text == 'data: {"n":0}\n\ndata: {"n":1}\n\ndata: {"n":2}\n\n'
        assert srv.count == 3
        assert srv.connections == 2
    assert not sock.exists()


def test_a_stream_that_fails_is_truncated_not_complete() -> None:
    with _Streamer() as srv, pytest.raises(httpx.RemoteProtocolError):
        httpx.get(f"{srv.url}/broken")


def test_a_body_over_the_limit_is_413() -> None:
    with _Streamer() as srv:
        r = httpx.post(f"{srv.url}/x", content=b"x" * 101)
        assert r.status_code == 413 and srv.count == 0
        assert httpx.post(f"{srv.url}/x", content=b"x" * 100).status_code == 200


def test_unix_socket_only(tmp_path: Path) -> None:
    sock = tmp_path / "only.sock"
    with _Streamer(unix_socket=sock, tcp=False) as srv:
        with pytest.raises(RuntimeError):
            srv.port  # noqa: B018
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(sock))) as client:
            assert client.get("http://x/").status_code == 200
        assert (os.stat(sock).st_mode & 0o777) == 0o600
