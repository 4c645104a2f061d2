"""The ``anthropic`` provider: Anthropic's Messages API through the official ``anthropic`` SDK.

The SDK (the ``benchwright[anthropic]`` extra) is imported when the provider is created, never
when this module is imported. Settings: ``base_url`` (default: Anthropic's), ``api_key_env``,
``timeout_s``.

* Instruct mode: system messages go to ``system`` (joined by a blank line), the others to
  ``messages``.
* Complete mode: the prompt goes in a user message asking for its continuation and is prefilled
  as the assistant's turn (without trailing whitespace, which the API refuses); the answer is
  the continuation of the prompt.
* Parameters: ``max_tokens`` (the API requires it: 4096 when not given), ``temperature``,
  ``top_p``, ``stop`` (as ``stop_sequences``); the API has no ``seed``, so it is not sent.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any

from benchwright.config.settings import ProviderSettings
from benchwright.errors import MissingDependency
from benchwright.model.base import Answer, GenerationRequest, ProviderError
from benchwright.model.openai_compat import (
    SDKProvider,
    aiohttp_client,
    connection_error,
    malformed,
    status_error,
)

if TYPE_CHECKING:
    import anthropic

DEFAULT_MAX_TOKENS = 4096

COMPLETE_INSTRUCTION = (
    "Continue the following {language} code from exactly where it stops. Reply with the "
    "continuation only: no explanation, no repetition of the given code, no code fences.\n\n"
    "{prompt}"
)
"""The user turn of complete mode (the assistant turn is prefilled with the prompt)."""


def _import_anthropic() -> ModuleType:
    try:
        import anthropic
    except ImportError:
        raise MissingDependency(
            "the anthropic provider needs the anthropic package: pip install 'benchwright[anthropic]'"
        ) from None
    return anthropic


def continuation(prompt: str, prefill: str, text: str) -> str:
    """The continuation of ``prompt`` given the model continued ``prefill`` (the prompt without
    its trailing whitespace) with ``text``."""
    full = prefill + text
    if full.startswith(prompt):
        return full[len(prompt):]
    return text.lstrip(" \t") if prompt[len(prefill):].endswith((" ", "\t")) else text


class AnthropicProvider(SDKProvider["anthropic.AsyncAnthropic"]):
    """Anthropic's Messages API (Claude models)."""

    default_url = "https://api.anthropic.com"

    def __init__(self, name: str, settings: ProviderSettings) -> None:
        self._anthropic = _import_anthropic()
        super().__init__(name, settings)

    def _new_client(self) -> anthropic.AsyncAnthropic:
        client: anthropic.AsyncAnthropic = self._anthropic.AsyncAnthropic(
            base_url=self.settings.base_url, api_key=self.api_key() or "not-needed",
            max_retries=0, timeout=self.settings.timeout_s,
            http_client=aiohttp_client(self._anthropic))
        return client

    def _body(self, request: GenerationRequest) -> tuple[dict[str, Any], str | None]:
        """The create() arguments, and the prefill in complete mode."""
        params = request.params
        kwargs: dict[str, Any] = {
            "model": request.model,
            "max_tokens": int(params.get("max_tokens") or DEFAULT_MAX_TOKENS),
        }
        prefill: str | None = None
        if request.mode == "complete":
            prefill = request.prompt.rstrip()
            user = COMPLETE_INSTRUCTION.format(language=request.language, prompt=request.prompt)
            messages: list[dict[str, str]] = [{"role": "user", "content": user}]
            if prefill:
                messages.append({"role": "assistant", "content": prefill})
        else:
            system = [m["content"] for m in request.messages if m.get("role") == "system"]
            messages = [{"role": m["role"], "content": m["content"]}
                        for m in request.messages if m.get("role") != "system"]
            if system:
                kwargs["system"] = "\n\n".join(system)
        kwargs["messages"] = messages
        stop = params.get("stop")
        if stop:
            kwargs["stop_sequences"] = [stop] if isinstance(stop, str) else list(stop)
        # sent as extra body fields: some SDK versions no longer list them as arguments
        extra = {k: params[k] for k in ("temperature", "top_p", "top_k") if params.get(k) is not None}
        if extra:
            kwargs["extra_body"] = extra
        return kwargs, prefill

    async def generate(self, request: GenerationRequest) -> Answer:
        client = self._ensure_client()
        kwargs, prefill = self._body(request)
        sdk = self._anthropic
        try:
            response: Any = await client.messages.create(**kwargs)
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
        try:
            blocks = response.content
            text = "".join(b.text for b in blocks if getattr(b, "type", None) == "text")
            usage = getattr(response, "usage", None)
            tokens_in = getattr(usage, "input_tokens", None) if usage is not None else None
            tokens_out = getattr(usage, "output_tokens", None) if usage is not None else None
            finish = getattr(response, "stop_reason", None)
            model = getattr(response, "model", None)
        except (AttributeError, TypeError) as exc:
            raise ProviderError(
                f"{self.name}: malformed answer from {self.where} (no content: {type(exc).__name__})",
                retryable=True) from None
        if prefill is not None:
            text = continuation(request.prompt, prefill, text)
        return Answer(
            text=text,
            tokens_in=tokens_in if isinstance(tokens_in, int) else None,
            tokens_out=tokens_out if isinstance(tokens_out, int) else None,
            finish_reason=finish if isinstance(finish, str) else None,
            model=model if isinstance(model, str) and model else None,
        )

