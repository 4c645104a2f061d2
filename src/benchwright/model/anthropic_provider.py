"""The ``anthropic`` provider: Anthropic's Messages API through the official ``anthropic`` SDK.

The SDK (the ``benchwright[anthropic]`` extra) is imported when the provider is created, never
when this module is imported. Settings: ``base_url`` (default: Anthropic's), ``api_key_env``,
``timeout_s``.

* Instruct mode: system messages go to ``system`` (joined by a blank line), the others to
  ``messages``.
* Complete mode: the prompt goes in a user message asking for its continuation and is prefilled
  as the assistant's turn (without trailing whitespace, which the API refuses); the answer is
  the continuation of the prompt.
* Tools (:attr:`GenerationRequest.tools`, OpenAI function tools) are sent as ``tools``
  (``{name, description, input_schema}``); the OpenAI-shaped tool-call turns of the messages
  become ``tool_use`` blocks in assistant messages and ``tool_result`` blocks in user messages
  (consecutive messages of one role holding blocks are merged, as the API alternates roles);
  ``tool_use`` blocks of the answer become :attr:`Answer.tool_calls` (input as JSON text).
* Parameters: ``max_tokens`` (the API requires it: 4096 when not given), ``temperature``,
  ``top_p``, ``stop`` (as ``stop_sequences``); the API has no ``seed``, so it is not sent.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from benchwright.config.settings import ProviderSettings
from benchwright.model.base import Answer, GenerationRequest, ProviderError, ToolCall
from benchwright.model.openai_compat import (
    SDKProvider,
    import_sdk,
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


def continuation(prompt: str, prefill: str, text: str) -> str:
    """The continuation of ``prompt`` given the model continued ``prefill`` (the prompt without
    its trailing whitespace) with ``text``."""
    full = prefill + text
    if full.startswith(prompt):
        return full[len(prompt):]
    return text.lstrip(" \t") if prompt[len(prefill):].endswith((" ", "\t")) else text


def _tool_input(arguments: object) -> dict[str, Any]:
    """A tool call's arguments (JSON text) as the object ``tool_use.input`` must be."""
    if isinstance(arguments, dict):
        return arguments
    try:
        value = json.loads(arguments) if isinstance(arguments, str) and arguments.strip() else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _text(content: object) -> str:
    return content if isinstance(content, str) else "" if content is None else str(content)


def messages_api(messages: list[dict[str, Any]]) -> tuple[list[str], list[dict[str, Any]]]:
    """The system texts and the Messages-API messages of OpenAI-shaped ``messages``.

    Plain ``{role, content}`` messages pass as they are. An assistant message with
    ``tool_calls`` becomes text and ``tool_use`` blocks; a ``tool`` message a ``tool_result``
    block in a user message; a message holding blocks absorbs its neighbours of the same role.
    """
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for m in messages:
        role = m.get("role")
        if role == "system":
            system.append(_text(m.get("content")))
            continue
        msg: dict[str, Any]
        if role == "tool":
            msg = {"role": "user", "content": [{
                "type": "tool_result", "tool_use_id": str(m.get("tool_call_id", "")),
                "content": _text(m.get("content"))}]}
        elif role == "assistant" and m.get("tool_calls"):
            blocks: list[dict[str, Any]] = []
            if _text(m.get("content")):
                blocks.append({"type": "text", "text": _text(m.get("content"))})
            for call in m["tool_calls"]:
                function = call.get("function") or {}
                blocks.append({"type": "tool_use", "id": str(call.get("id", "")),
                               "name": str(function.get("name", "")),
                               "input": _tool_input(function.get("arguments"))})
            msg = {"role": "assistant", "content": blocks}
        else:
            msg = {"role": role, "content": m.get("content")}
        prev = out[-1] if out else None
        if prev is not None and prev["role"] == msg["role"] and (
                isinstance(prev["content"], list) or isinstance(msg["content"], list)):
            prev["content"] = _blocks(prev["content"]) + _blocks(msg["content"])
        else:
            out.append(msg)
    return system, out


def _blocks(content: object) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return content
    text = _text(content)
    return [{"type": "text", "text": text}] if text else []


def anthropic_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI function tools as Messages-API tools."""
    out = []
    for tool in tools:
        function = tool.get("function", tool)
        entry: dict[str, Any] = {"name": function["name"],
                                 "input_schema": function.get("parameters") or {"type": "object"}}
        if function.get("description"):
            entry["description"] = function["description"]
        out.append(entry)
    return out


class AnthropicProvider(SDKProvider["anthropic.AsyncAnthropic"]):
    """Anthropic's Messages API (Claude models)."""

    default_url = "https://api.anthropic.com"
    client_class = "AsyncAnthropic"
    supports_tools = True

    def __init__(self, name: str, settings: ProviderSettings) -> None:
        super().__init__(name, settings, import_sdk("anthropic", "anthropic"))

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
            messages: list[dict[str, Any]] = [{"role": "user", "content": user}]
            if prefill:
                messages.append({"role": "assistant", "content": prefill})
        else:
            system, messages = messages_api(request.messages)
            if system:
                kwargs["system"] = "\n\n".join(system)
            if request.tools:
                kwargs["tools"] = anthropic_tools(request.tools)
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
        client: anthropic.AsyncAnthropic = self._ensure_client()
        kwargs, prefill = self._body(request)
        response: Any = await self._call(lambda: client.messages.create(**kwargs))
        try:
            blocks = response.content
            text = "".join(b.text for b in blocks if getattr(b, "type", None) == "text")
            tool_calls = tuple(
                ToolCall(id=str(b.id), name=str(b.name), arguments=json.dumps(b.input))
                for b in blocks if getattr(b, "type", None) == "tool_use")
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
            tool_calls=tool_calls,
        )

