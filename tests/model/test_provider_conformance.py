"""Provider conformance: every HTTP API provider behaves the same against its own fake service.

Real HTTP on loopback (benchwright.testing's servers), the real SDKs, no mocks.
"""

from __future__ import annotations

import asyncio
import email.utils
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from benchwright.config.settings import ProviderSettings
from benchwright.model.anthropic_provider import AnthropicProvider, continuation
from benchwright.model.base import Answer, GenerationRequest, Provider, ProviderError
from benchwright.model.openai_compat import (
    OpenAICompatibleProvider,
    is_local_url,
    retry_after_seconds,
)
from benchwright.registry import Registry
from benchwright.testing import AnthropicServer, FakeServer, OpenAIServer, RecordedRequest, Reply

KEY_ENV = "BW_CONFORMANCE_KEY"
KEY = "sk-conformance-0123456789-SECRET"


@dataclass(frozen=True)
class Flavour:
    id: str
    type: str
    server: type[FakeServer]
    provider: type[Provider]
    generation_path: str
    complete_path: str
    stop_finish: str
    """A finish reason other than the default, as this service spells it."""


FLAVOURS = [
    Flavour("openai", "openai-compatible", OpenAIServer, OpenAICompatibleProvider,
            "/v1/chat/completions", "/v1/completions", "length"),
    Flavour("anthropic", "anthropic", AnthropicServer, AnthropicProvider,
            "/v1/messages", "/v1/messages", "max_tokens"),
]


@pytest.fixture(params=FLAVOURS, ids=[f.id for f in FLAVOURS])
def flavour(request: pytest.FixtureRequest) -> Flavour:
    f: Flavour = request.param
    return f


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


def instruct(**params: Any) -> GenerationRequest:
    return GenerationRequest(
        model="test-model", mode="instruct", language="python", prompt="Write f.", params=params,
        messages=[{"role": "system", "content": "You write Python."},
                  {"role": "user", "content": "Write f."}])


def complete(prompt: str = 'def f(x):\n    """Double x."""\n', **params: Any) -> GenerationRequest:
    return GenerationRequest(model="test-model", mode="complete", language="python", prompt=prompt,
                             messages=[], params=params)


def make(flavour: Flavour, base_url: str, *, timeout_s: float = 10.0,
         api_key_env: str | None = KEY_ENV) -> Provider:
    settings = ProviderSettings(type=flavour.type, base_url=base_url, api_key_env=api_key_env,
                                timeout_s=timeout_s)
    return flavour.provider(name="svc", settings=settings)


def generate(provider: Provider, request: GenerationRequest) -> Answer:
    async def go() -> Answer:
        try:
            return await provider.generate(request)
        finally:
            await provider.aclose()
    return asyncio.run(go())


def fails(provider: Provider, request: GenerationRequest) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        generate(provider, request)
    return info.value


@pytest.fixture
def serve(flavour: Flavour) -> Iterator[Callable[..., FakeServer]]:
    """Start ``flavour``'s fake service; stopped at the end of the test."""
    started: list[FakeServer] = []

    def start(answer: Callable[[dict[str, Any]], Reply | str] | Reply | None = None,
              **kwargs: Any) -> FakeServer:
        fn = (lambda _body: answer) if isinstance(answer, Reply) else answer
        srv = flavour.server(answer=fn, **kwargs).start()
        started.append(srv)
        return srv

    yield start
    for srv in started:
        srv.stop()


def only(srv: FakeServer) -> RecordedRequest:
    assert srv.count == 1, srv.requests
    return srv.requests[0]


def auth_key(rec: RecordedRequest) -> str | None:
    if "x-api-key" in rec.headers:
        return rec.headers["x-api-key"]
    auth = rec.headers.get("authorization", "")
    return auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


# -- answers -----------------------------------------------------------------------------------


def test_answer_with_usage(flavour: Flavour, serve: Callable[..., FakeServer]) -> None:
    srv = serve(Reply.answer("def f(x):\n    return 2 * x\n", usage=(17, 9),
                             finish_reason=flavour.stop_finish, model="served-model-2"))
    answer = generate(make(flavour, srv.base_url), instruct())
    assert answer == Answer(text="def f(x):\n    return 2 * x\n", tokens_in=17, tokens_out=9,
                            tokens_estimated=False, finish_reason=flavour.stop_finish,
                            cost_usd=None, model="served-model-2")


def test_answer_without_usage_has_no_tokens(flavour: Flavour, serve: Callable[..., FakeServer]) -> None:
    srv = serve(Reply.answer("x = 1", usage=None))
    answer = generate(make(flavour, srv.base_url), instruct())
    assert answer.text == "x = 1"
    assert answer.tokens_in is None and answer.tokens_out is None
    assert answer.model == "test-model"


def test_request_carries_model_messages_params_and_key(flavour: Flavour,
                                                       serve: Callable[..., FakeServer]) -> None:
    srv = serve(expected_key=KEY)
    generate(make(flavour, srv.base_url),
             instruct(temperature=0.25, max_tokens=321, stop=["\n\n\n"], seed=7, top_p=0.9))
    rec = only(srv)
    body = rec.json
    assert (rec.method, rec.path) == ("POST", flavour.generation_path)
    assert auth_key(rec) == KEY
    assert body["model"] == "test-model"
    assert body["temperature"] == 0.25
    assert body["max_tokens"] == 321
    assert body["top_p"] == 0.9
    if flavour.id == "openai":
        assert body["messages"] == [{"role": "system", "content": "You write Python."},
                                    {"role": "user", "content": "Write f."}]
        assert body["stop"] == ["\n\n\n"]
        assert body["seed"] == 7
    else:
        assert rec.headers["anthropic-version"]
        assert body["system"] == "You write Python."
        assert body["messages"] == [{"role": "user", "content": "Write f."}]
        assert body["stop_sequences"] == ["\n\n\n"]
        assert "seed" not in body  # the Messages API has none


def test_absent_params_are_not_sent(flavour: Flavour, serve: Callable[..., FakeServer]) -> None:
    srv = serve()
    generate(make(flavour, srv.base_url), instruct(temperature=None))
    body = only(srv).json
    for name in ("temperature", "top_p", "stop", "seed", "stop_sequences"):
        assert name not in body
    if flavour.id == "anthropic":
        assert body["max_tokens"] == 4096  # required by the API
    else:
        assert "max_tokens" not in body


def test_complete_mode_uses_the_right_call(flavour: Flavour, serve: Callable[..., FakeServer]) -> None:
    prompt = 'def f(x):\n    """Double x."""\n'
    reply = "    return 2 * x\n" if flavour.id == "openai" else "\n    return 2 * x\n"
    srv = serve(Reply.answer(reply, usage=(5, 4)))
    answer = generate(make(flavour, srv.base_url), complete(prompt, max_tokens=64))
    rec = only(srv)
    assert rec.path == flavour.complete_path
    assert answer.text == "    return 2 * x\n"  # the continuation of the prompt
    assert (answer.tokens_in, answer.tokens_out) == (5, 4)
    if flavour.id == "openai":
        assert rec.json["prompt"] == prompt
        assert "messages" not in rec.json
    else:
        user, assistant = rec.json["messages"]
        assert user["role"] == "user" and prompt in user["content"]
        assert assistant == {"role": "assistant", "content": prompt.rstrip()}  # prefilled


def test_anthropic_continuation_after_trailing_whitespace() -> None:
    assert continuation("x = ", "x =", " 5") == "5"
    assert continuation("x = ", "x =", "5") == "5"
    assert continuation("if a:\n    ", "if a:", "\n    pass") == "pass"
    assert continuation('"""doc"""\n', '"""doc"""', "return 1") == "return 1"


# -- failures ----------------------------------------------------------------------------------


def test_429_with_retry_after_is_retryable(flavour: Flavour, serve: Callable[..., FakeServer]) -> None:
    srv = serve(Reply.error(429, "rate limited, slow down", headers={"Retry-After": "7"}))
    err = fails(make(flavour, srv.base_url), instruct())
    assert err.retryable and err.status == 429 and err.retry_after == 7
    assert "429" in str(err) and "rate limited, slow down" in str(err)


@pytest.mark.parametrize(("headers", "expected"), [
    ({"retry-after-ms": "1500"}, 1.5),
    ({"Retry-After": "0"}, 0.0),
    ({}, None),
    ({"Retry-After": "soon"}, None),
])
def test_429_retry_after_forms(flavour: Flavour, serve: Callable[..., FakeServer],
                               headers: dict[str, str], expected: float | None) -> None:
    srv = serve(Reply.error(429, "slow", headers=headers))
    err = fails(make(flavour, srv.base_url), instruct())
    assert err.retryable and err.retry_after == expected


def test_429_retry_after_as_http_date(flavour: Flavour, serve: Callable[..., FakeServer]) -> None:
    srv = serve(lambda _body: Reply.error(429, "slow", headers={
        "Retry-After": email.utils.formatdate(time.time() + 30, usegmt=True)}))
    start = time.monotonic()
    err = fails(make(flavour, srv.base_url), instruct())
    took = time.monotonic() - start
    assert err.retry_after is not None and 29 - took <= err.retry_after <= 31


def test_retry_after_parsing() -> None:
    now = 1_700_000_000.0
    assert retry_after_seconds({"retry-after": "12"}) == 12
    assert retry_after_seconds({"retry-after": "2.5"}) == 2.5
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": email.utils.formatdate(now + 60, usegmt=True)},
                               now=now) == 60
    assert retry_after_seconds({"retry-after": email.utils.formatdate(now - 60, usegmt=True)},
                               now=now) == 0
    assert retry_after_seconds({"retry-after": "-3"}) == 0
    assert retry_after_seconds({"retry-after": "whenever"}) is None
    assert retry_after_seconds({}) is None


@pytest.mark.parametrize("status", [500, 502, 503, 504, 529, 408, 409])
def test_server_errors_are_retryable(flavour: Flavour, serve: Callable[..., FakeServer],
                                     status: int) -> None:
    srv = serve(Reply.error(status, "the service is having a bad day"))
    err = fails(make(flavour, srv.base_url), instruct())
    assert err.retryable and err.status == status
    assert str(status) in str(err) and "bad day" in str(err)


def test_503_with_retry_after(flavour: Flavour, serve: Callable[..., FakeServer]) -> None:
    srv = serve(Reply.error(503, "overloaded", headers={"Retry-After": "3"}))
    err = fails(make(flavour, srv.base_url), instruct())
    assert err.retryable and err.retry_after == 3


@pytest.mark.parametrize("status", [400, 403, 404, 413, 422])
def test_client_errors_are_not_retryable(flavour: Flavour, serve: Callable[..., FakeServer],
                                         status: int) -> None:
    srv = serve(Reply.error(status, f"nope, this request is wrong ({status})"))
    err = fails(make(flavour, srv.base_url), instruct())
    assert not err.retryable and err.status == status
    assert f"HTTP {status}" in str(err) and "nope, this request is wrong" in str(err)


def test_wrong_key_is_401_not_retryable_and_never_shown(flavour: Flavour,
                                                        serve: Callable[..., FakeServer]) -> None:
    srv = serve(expected_key="the-right-key")
    err = fails(make(flavour, srv.base_url), instruct())
    assert not err.retryable and err.status == 401
    assert KEY not in str(err) and KEY not in repr(err.args)
    assert KEY_ENV in str(err)  # names the variable to check
    assert auth_key(only(srv)) == KEY  # the key was sent, from the variable


def test_key_echoed_by_the_service_is_scrubbed(flavour: Flavour,
                                               serve: Callable[..., FakeServer]) -> None:
    srv = serve(Reply.error(401, f"Incorrect API key provided: {KEY}."))
    err = fails(make(flavour, srv.base_url), instruct())
    assert KEY not in str(err) and "***" in str(err)


def test_slow_answer_times_out_retryably(flavour: Flavour, serve: Callable[..., FakeServer]) -> None:
    srv = serve(Reply.answer("late", delay_s=20.0))
    start = time.monotonic()
    err = fails(make(flavour, srv.base_url, timeout_s=0.3), instruct())
    assert time.monotonic() - start < 15  # gave up long before the answer came
    assert err.retryable and err.status is None
    assert "0.3" in str(err)


def test_server_wide_delay_applies(flavour: Flavour, serve: Callable[..., FakeServer]) -> None:
    srv = serve(delay_s=20.0)
    err = fails(make(flavour, srv.base_url, timeout_s=0.3), instruct())
    assert err.retryable


def test_malformed_json_is_retryable(flavour: Flavour, serve: Callable[..., FakeServer]) -> None:
    srv = serve(Reply.malformed())
    err = fails(make(flavour, srv.base_url), instruct())
    assert err.retryable and "malformed" in str(err)


@pytest.mark.parametrize("reply", [
    Reply.raw('{"id": "x", "object": "chat.completion"}'),
    Reply.raw('{"choices": []}'),
    Reply.raw("<html>502 Bad Gateway</html>", content_type="text/html"),
    Reply.raw("[1, 2, 3]"),
], ids=["no-choices", "empty-choices", "html", "json-list"])
def test_unexpected_answer_shape_is_retryable(flavour: Flavour, serve: Callable[..., FakeServer],
                                              reply: Reply) -> None:
    srv = serve(reply)
    err = fails(make(flavour, srv.base_url), instruct())
    assert err.retryable, err


def test_dropped_connection_is_retryable(flavour: Flavour, serve: Callable[..., FakeServer]) -> None:
    srv = serve(Reply.drop())
    err = fails(make(flavour, srv.base_url), instruct())
    assert err.retryable and err.status is None
    assert srv.count == 1


def test_nothing_listening_is_retryable(flavour: Flavour) -> None:
    err = fails(make(flavour, f"http://127.0.0.1:{free_port()}/v1"), instruct())
    assert err.retryable and err.status is None


def test_a_failure_does_not_break_the_next_request(flavour: Flavour,
                                                   serve: Callable[..., FakeServer]) -> None:
    replies = iter([Reply.drop(), Reply.malformed(), Reply.error(500, "x"), Reply.answer("fine")])
    srv = serve(lambda _body: next(replies))
    provider = make(flavour, srv.base_url)

    async def go() -> list[str]:
        out = []
        for _ in range(4):
            try:
                out.append((await provider.generate(instruct())).text)
            except ProviderError as e:
                out.append(f"error {e.status}")
        await provider.aclose()
        return out

    assert asyncio.run(go()) == ["error None", "error None", "error 500", "fine"]


def test_provider_survives_separate_event_loops(flavour: Flavour,
                                                serve: Callable[..., FakeServer]) -> None:
    srv = serve(Reply.answer("again"))
    provider = make(flavour, srv.base_url)
    assert asyncio.run(provider.generate(instruct())).text == "again"
    assert generate(provider, instruct()).text == "again"
    assert srv.count == 2


def test_concurrent_requests_share_keep_alive_connections(flavour: Flavour,
                                                          serve: Callable[..., FakeServer]) -> None:
    srv = serve(Reply.answer("ok"), delay_s=0.2)
    provider = make(flavour, srv.base_url)

    async def go() -> float:
        sem = asyncio.Semaphore(16)

        async def one() -> Answer:
            async with sem:
                return await provider.generate(instruct())

        start = time.monotonic()
        answers = await asyncio.gather(*[one() for _ in range(96)])
        assert all(a.text == "ok" for a in answers)
        await provider.aclose()
        return time.monotonic() - start

    elapsed = asyncio.run(go())
    assert srv.count == 96
    assert srv.connections <= 16  # connections were reused
    assert 8 <= srv.peak_in_flight <= 16  # answered concurrently, never more than asked
    assert elapsed < 15  # 6 waves of 0.2 s, one after the other would take 19 s


# -- preflight ---------------------------------------------------------------------------------


def test_preflight_missing_key_names_the_variable(flavour: Flavour,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV)
    monkeypatch.setenv("BW_OTHER_KEY", "sk-other-value-123")
    provider = make(flavour, "https://api.example.com/v1")
    problems = asyncio.run(provider.preflight())
    assert len(problems) == 1 and KEY_ENV in problems[0]
    assert "sk-" not in problems[0]


def test_preflight_remote_with_key_is_fine(flavour: Flavour) -> None:
    provider = make(flavour, "https://api.example.com/v1")
    assert asyncio.run(provider.preflight()) == []


def test_preflight_local_url_with_nothing_listening_names_the_url(
        flavour: Flavour, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV)
    url = f"http://127.0.0.1:{free_port()}/v1"
    problems = asyncio.run(make(flavour, url).preflight())
    assert problems == [f"cannot reach {url} (is the server running?)"]


def test_preflight_local_live_server_needs_no_key(flavour: Flavour, serve: Callable[..., FakeServer],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV)
    srv = serve()
    provider = make(flavour, srv.base_url)
    assert asyncio.run(provider.preflight()) == []
    answer = generate(provider, instruct())  # and a local service works without a key
    assert answer.text == "ok"
    assert auth_key(only(srv)) == "not-needed"


def test_local_urls() -> None:
    for url in ("http://127.0.0.1:8000/v1", "http://localhost:11434/v1", "http://[::1]:8080",
                "http://10.0.0.5:8000/v1", "http://192.168.1.20/v1", "http://172.16.3.4:1234",
                "http://vllm:8000/v1", "http://gpu-box.local:8000", "http://host.docker.internal:1234"):
        assert is_local_url(url), url
    for url in ("https://api.openai.com/v1", "https://api.anthropic.com", "http://8.8.8.8/v1",
                "https://openrouter.ai/api/v1", "not a url"):
        assert not is_local_url(url), url


# -- packaging ---------------------------------------------------------------------------------


def test_registered_as_builtins(flavour: Flavour) -> None:
    from benchwright.builtins import register

    reg = Registry()
    register(reg)
    provider = reg.create("provider", flavour.type, name="x",
                          settings=ProviderSettings(type=flavour.type))
    assert isinstance(provider, flavour.provider)


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_importing_providers_does_not_import_the_sdks() -> None:
    proc = run_python(
        "import sys\n"
        "import benchwright.model.openai_compat, benchwright.model.anthropic_provider\n"
        "from benchwright.builtins import register\n"
        "from benchwright.registry import Registry\n"
        "register(Registry())\n"
        "import benchwright.testing\n"
        "assert 'openai' not in sys.modules, 'openai imported'\n"
        "assert 'anthropic' not in sys.modules, 'anthropic imported'\n")
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize(("module", "cls", "sdk", "extra"), [
    ("benchwright.model.openai_compat", "OpenAICompatibleProvider", "openai", "openai"),
    ("benchwright.model.anthropic_provider", "AnthropicProvider", "anthropic", "anthropic"),
])
def test_missing_sdk_names_the_extra(module: str, cls: str, sdk: str, extra: str) -> None:
    proc = run_python(
        "import sys\n"
        f"sys.modules[{sdk!r}] = None  # as if it were not installed\n"
        "from benchwright.config.settings import ProviderSettings\n"
        "from benchwright.errors import MissingDependency\n"
        f"from {module} import {cls}\n"
        "try:\n"
        f"    {cls}('p', ProviderSettings(type='x'))\n"
        "except MissingDependency as e:\n"
        "    print(e)\n")
    assert proc.returncode == 0, proc.stderr
    assert f"pip install 'benchwright[{extra}]'" in proc.stdout

