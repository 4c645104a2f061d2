"""The ``openai-compatible`` provider: any service speaking the OpenAI wire format.

OpenAI, OpenRouter, Mistral, vLLM, Ollama, llama.cpp server, LM Studio... through the official
``openai`` SDK (the ``benchwright[openai]`` extra), imported when the provider is created, never
when this module is imported. Instruct mode calls ``chat.completions``, complete mode the legacy
``completions`` endpoint. Settings: ``base_url`` (default: OpenAI's), ``api_key_env`` (the name of
the variable holding the key; a local service needs none), ``timeout_s``.

The helpers at the bottom (``retry_after_seconds``, ``service_message``, ``is_local_url``,
``reachability_problems``, ``scrub``) are shared with the ``anthropic`` provider.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import importlib
import ipaddress
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from types import ModuleType
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar
from urllib.parse import urlsplit

from benchwright.config.settings import ProviderSettings
from benchwright.errors import MissingDependency
from benchwright.model.base import Answer, GenerationRequest, Provider, ProviderError, ToolCall

if TYPE_CHECKING:
    import openai

RETRYABLE_STATUSES = frozenset({408, 409, 429})
"""Besides every status >= 500."""

PARAMS = ("temperature", "max_tokens", "top_p", "stop", "seed")
"""Request parameters passed on to the OpenAI API when given."""


def import_sdk(module: str, provider: str) -> ModuleType:
    """The SDK ``module``, imported when the ``provider`` (its type's name) is created; a
    :class:`MissingDependency` naming the extra that installs it (``benchwright[module]``) when
    it is not installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependency(
            f"the {provider} provider needs the {module} package: pip install 'benchwright[{module}]'"
        ) from None


C = TypeVar("C")
T = TypeVar("T")


class SDKProvider(Provider, Generic[C]):
    """What the SDK-backed providers share: one client per event loop (its connections belong
    to the loop that made them), the local-endpoint preflight, the SDK's errors as
    :class:`ProviderError` and closing the client."""

    default_url = ""
    client_class: ClassVar[str] = ""
    """The name of the SDK's asynchronous client class (``AsyncOpenAI``)."""

    def __init__(self, name: str, settings: ProviderSettings, sdk: ModuleType) -> None:
        super().__init__(name, settings)
        self._sdk = sdk
        """The SDK module (``openai``, ``anthropic``): both name their client options and error
        classes alike."""
        self._client: C | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def where(self) -> str:
        return self.settings.base_url or self.default_url

    async def preflight(self, models: Sequence[str] = ()) -> list[str]:
        """A local endpoint (loopback or private network) needs no key but must be listening;
        any other needs its key's environment variable set."""
        url = self.settings.base_url
        if url and is_local_url(url):
            return await reachability_problems(url)
        return await super().preflight(models)

    def _new_client(self) -> C:
        """A client for the running event loop. An explicit key (even a dummy one) keeps the SDK
        from looking for credentials anywhere else; the SDK retries nothing (the engine does)."""
        client: C = getattr(self._sdk, self.client_class)(
            base_url=self.settings.base_url, api_key=self.api_key() or "not-needed",
            max_retries=0, timeout=self.settings.timeout_s, http_client=aiohttp_client(self._sdk))
        return client

    async def _call(self, request: Callable[[], Awaitable[T]]) -> T:
        """What the SDK call ``request`` returns; its failure as a :class:`ProviderError`."""
        sdk = self._sdk
        try:
            return await request()
        except sdk.APIStatusError as exc:
            raise status_error(self.name, self.where, exc.status_code, exc.body, exc.message,
                               exc.response.headers, self.api_key(),
                               self.settings.api_key_env) from None
        except sdk.APITimeoutError:
            raise ProviderError(
                f"{self.name}: no answer from {self.where} within {self.settings.timeout_s:g} s",
                retryable=True) from None
        except sdk.APIConnectionError as exc:
            raise connection_error(self.name, self.where, exc, self.api_key()) from None
        except (sdk.APIError, ValueError) as exc:  # invalid JSON, an unexpected shape
            raise malformed(self.name, self.where, exc, self.api_key()) from None

    def _ensure_client(self) -> C:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = self._new_client()
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        client, self._client, self._loop = self._client, None, None
        if client is not None:
            await client.close()  # type: ignore[attr-defined]


class OpenAICompatibleProvider(SDKProvider["openai.AsyncOpenAI"]):
    """Any OpenAI-compatible endpoint (OpenAI, OpenRouter, Mistral, vLLM, Ollama, llama.cpp, LM Studio)."""

    default_url = "https://api.openai.com/v1"
    client_class = "AsyncOpenAI"
    supports_tools = True

    def __init__(self, name: str, settings: ProviderSettings) -> None:
        super().__init__(name, settings, import_sdk("openai", "openai-compatible"))

    async def generate(self, request: GenerationRequest) -> Answer:
        client: openai.AsyncOpenAI = self._ensure_client()
        kwargs: dict[str, Any] = {k: request.params[k] for k in PARAMS
                                  if request.params.get(k) is not None}
        path = "/completions" if request.mode == "complete" else "/chat/completions"
        body: dict[str, Any] = {"model": request.model, **kwargs}
        if request.mode == "complete":
            body["prompt"] = request.prompt
        else:
            body["messages"] = request.messages
            if request.tools:
                body["tools"] = request.tools
                body["tool_choice"] = "auto"
        # the SDK's own low-level call: its client, auth, timeouts and error classes, without
        # building typed request and response objects (about 0.5 ms of CPU a request)
        raw: bytes = await self._call(lambda: client.post(path, body=body, cast_to=bytes))
        try:
            data = json.loads(raw)
        except ValueError as exc:
            raise malformed(self.name, self.where, exc, self.api_key()) from None
        return self._answer(request, data)

    def _answer(self, request: GenerationRequest, data: Any) -> Answer:
        try:
            choice = data["choices"][0]
            text = choice["text"] if request.mode == "complete" else choice["message"]["content"]
            calls = () if request.mode == "complete" else choice["message"].get("tool_calls")
            finish = choice.get("finish_reason")
            usage = data.get("usage") or {}
            tokens_in = usage.get("prompt_tokens")
            tokens_out = usage.get("completion_tokens")
            model = data.get("model")
        except (AttributeError, IndexError, KeyError, TypeError) as exc:
            raise ProviderError(
                f"{self.name}: malformed answer from {self.where} (no choices: {type(exc).__name__})",
                retryable=True) from None
        if text is not None and not isinstance(text, str):
            raise ProviderError(f"{self.name}: malformed answer from {self.where} (text is not a string)",
                                retryable=True)
        tool_calls = self._tool_calls(calls)
        return Answer(
            text=text or "",
            tokens_in=tokens_in if isinstance(tokens_in, int) else None,
            tokens_out=tokens_out if isinstance(tokens_out, int) else None,
            finish_reason=finish if isinstance(finish, str) else None,
            model=model if isinstance(model, str) and model else None,
            tool_calls=tool_calls,
        )

    def _tool_calls(self, calls: object) -> tuple[ToolCall, ...]:
        """``message.tool_calls`` (``[{id, type: "function", function: {name, arguments}}]``).
        Arguments given as an object (some servers) become JSON text; a call without an id gets
        one (``call_N``, its position)."""
        if not calls:
            return ()
        bad = ProviderError(f"{self.name}: malformed answer from {self.where} (bad tool_calls)",
                            retryable=True)
        if not isinstance(calls, list):
            raise bad
        out = []
        for n, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not isinstance(function.get("name"), str):
                raise bad
            arguments = function.get("arguments")
            if arguments is None:
                arguments = "{}"
            elif not isinstance(arguments, str):
                arguments = json.dumps(arguments)
            call_id = call.get("id")
            out.append(ToolCall(id=call_id if isinstance(call_id, str) and call_id else f"call_{n}",
                                name=function["name"], arguments=arguments))
        return tuple(out)

# -- shared by the HTTP API providers --------------------------------------------------------


def aiohttp_client(sdk: ModuleType) -> Any:
    """The SDK's aiohttp transport when aiohttp is installed (half the CPU a request of the
    default one: it matters at high concurrency), else None for the SDK's default."""
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        return None
    factory = getattr(sdk, "DefaultAioHttpClient", None)
    return factory() if factory is not None else None


def scrub(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` (a key) replaced by ``***``."""
    if secret and len(secret) >= 4:
        return text.replace(secret, "***")
    return text


def retry_after_seconds(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """How long the service asked us to wait: ``retry-after-ms``, or ``retry-after`` in seconds
    or as an HTTP date. ``None`` when it said nothing usable."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            value = float(ms) / 1000
            if value >= 0:
                return value
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    return max(when.timestamp() - (time.time() if now is None else now), 0.0)


def service_message(body: object, fallback: str) -> str:
    """The service's own error message from an error body (OpenAI: ``{"error": {"message"}}``
    or its inner object; Anthropic: ``{"type": "error", "error": {"message"}}``)."""
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return str(err["message"])
        if isinstance(err, str):
            return err
        if isinstance(body.get("message"), str):
            return str(body["message"])
        if isinstance(body.get("detail"), str):
            return str(body["detail"])
    if isinstance(body, str) and body.strip():
        return body.strip()[:500]
    return fallback


def status_error(name: str, where: str, status: int, body: object, fallback: str,
                 headers: Mapping[str, str], key: str | None, key_env: str | None) -> ProviderError:
    """The :class:`ProviderError` for an HTTP error status: 429, 408, 409 and >= 500 retryable."""
    retryable = status in RETRYABLE_STATUSES or status >= 500
    message = f"{name}: HTTP {status} from {where}: {service_message(body, fallback)}"
    if status in (401, 403):
        message += (f" (check the key in the environment variable {key_env})" if key_env
                    else " (no api_key_env is set for this provider)")
    retry_after = retry_after_seconds(headers) if retryable else None
    return ProviderError(scrub(message, key), retryable=retryable, retry_after=retry_after,
                         status=status)


def connection_error(name: str, where: str, exc: BaseException, key: str | None) -> ProviderError:
    """A retryable :class:`ProviderError` for a failed or dropped connection."""
    cause = exc.__cause__ or exc.__context__
    detail = f"{cause}" if cause is not None and str(cause) else str(exc)
    return ProviderError(scrub(f"{name}: connection to {where} failed: {detail}", key),
                         retryable=True)


def malformed(name: str, where: str, exc: BaseException, key: str | None) -> ProviderError:
    """A retryable :class:`ProviderError` for an answer that could not be read."""
    return ProviderError(
        scrub(f"{name}: malformed answer from {where}: {type(exc).__name__}: {exc}"[:1000], key),
        retryable=True)


_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".lan", ".home.arpa")


def is_local_url(url: str) -> bool:
    """Whether ``url`` points at this machine or a private network: ``localhost``, a loopback,
    private or link-local address, a single-label host name (``vllm``, as in Docker Compose)
    or a name under ``.local``, ``.internal``, ``.lan``, ``.home.arpa``."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    if not host:
        return False
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(_LOCAL_SUFFIXES) or host == "host.docker.internal":
        return True
    try:
        ip = ipaddress.ip_address(host)
    except ValueError:
        return "." not in host
    return ip.is_loopback or ip.is_private or ip.is_link_local


async def reachability_problems(url: str, timeout_s: float = 3.0) -> list[str]:
    """``["cannot reach URL (is the server running?)"]`` unless a TCP connection to the host and
    port of ``url`` opens within ``timeout_s``."""
    problem = [f"cannot reach {url} (is the server running?)"]
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return problem
    if not host:
        return problem
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_s)
    except (OSError, TimeoutError):
        return problem
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return []
