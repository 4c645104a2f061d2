"""The provider interface: one request in, one answer out.

A provider is registered under kind ``provider`` by its *type* (``openai-compatible``,
``anthropic``, ``hf``, ``replay``, ``reference``); the factory takes ``name`` (the provider's name
in ``benchwright.yaml``) and ``settings`` (its :class:`ProviderSettings`). SDKs are imported when
a provider is first created, never at import time of benchwright.

Retries, rate limits, the cache and timing live in the generation engine
(:mod:`benchwright.model.engine`), not in providers: a provider makes exactly one attempt and
says, by raising :class:`ProviderError`, whether another attempt could succeed.
"""

from __future__ import annotations

import abc
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchwright.config.settings import ProviderSettings
from benchwright.errors import InfraError
from benchwright.workspace.confine import Confinement


@dataclass(frozen=True)
class GenerationRequest:
    model: str
    """The model name inside its provider (``openai/gpt-4o`` -> ``gpt-4o``)."""
    mode: Literal["instruct", "complete"]
    messages: list[dict[str, Any]]
    """Chat messages (instruct mode), in the OpenAI shape: ``{"role", "content"}``; a tool-using
    conversation also has assistant turns with ``tool_calls`` (``[{"id", "type": "function",
    "function": {"name", "arguments"}}]``, ``content`` may be ``None``) and ``{"role": "tool",
    "tool_call_id", "content"}`` turns with each call's result. Providers that do not support
    tools (:attr:`Provider.supports_tools`) only get ``role``/``content`` string messages."""
    prompt: str
    """The text to continue (complete mode) or the user prompt (instruct mode)."""
    language: str
    params: dict[str, Any] = field(default_factory=dict)
    """temperature, max_tokens, top_p, stop, seed."""
    sample: int = 0
    golden: str | None = None
    """The task's golden solution: the answer key. The engine hands it only to a provider whose
    :attr:`Provider.reads_golden` is set (the ``reference`` provider); every other provider,
    third-party ones included, gets None."""
    task: str = ""
    """``task_source/task`` (the ``replay`` provider finds answers by it)."""
    tools: list[dict[str, Any]] | None = None
    """Tools the model may call, as OpenAI function tools: ``{"type": "function", "function":
    {"name", "description", "parameters": JSON schema}}``; ``None``: no tools (nothing sent)."""


@dataclass(frozen=True)
class ToolCall:
    """One tool call in an answer."""

    id: str
    """The call's id, quoted back in the tool result (``tool_call_id`` / ``tool_use_id``)."""
    name: str
    arguments: str
    """The arguments as the model wrote them: JSON text (not checked: a model may write
    invalid JSON, and the caller says so to it)."""


@dataclass(frozen=True)
class Answer:
    text: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_estimated: bool = False
    finish_reason: str | None = None
    cost_usd: float | None = None
    model: str | None = None
    """The model name the service says answered (it may differ from the one asked for)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The tools the model asked to call (only when the request offered ``tools``)."""


class ProviderError(InfraError):
    """One attempt failed. ``retryable`` says whether the engine should try again."""

    def __init__(self, message: str, *, retryable: bool, retry_after: float | None = None,
                 status: int | None = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        """Seconds the service asked us to wait (``Retry-After``), if it said."""
        self.status = status
        """HTTP status, when there was one."""


class Provider(abc.ABC):
    """Talks to one model service."""

    cacheable: bool = True
    """Whether answers may be stored in and served from the generation cache."""
    shared_service: bool = True
    """Whether it calls a service that every machine of a run shares (an API): then its
    ``concurrency`` and ``rpm`` hold for the whole run, on a cluster too. False for providers
    that answer in the process itself (the reference, recorded answers, a local model): their
    limits hold per process."""
    reads_golden: bool = False
    """Whether this provider answers with the task's golden solution (the ``reference``
    provider): only then does :attr:`GenerationRequest.golden` reach it. A model, an API or a
    third-party plug-in is asked without the answer key."""
    supports_tools: bool = False
    """Whether it sends :attr:`GenerationRequest.tools` and tool-call turns to the model and
    returns :attr:`Answer.tool_calls` (what the built-in agent needs)."""

    def __init__(self, name: str, settings: ProviderSettings) -> None:
        self.name = name
        self.settings = settings
        self.workspace: Path | None = None
        """The workspace whose settings name this provider: relative paths in them are read
        from there (set by the run; None: the current folder's workspace)."""
        self.allowed_folders: tuple[Path, ...] = ()
        """The workspace settings' ``allowed_folders`` (set by :func:`~benchwright.model.resolve.create`):
        with the workspace, where a path its settings or a config name may lead."""

    def confinement(self) -> Confinement | None:
        """Where paths this provider is given (its settings, a model folder) may lead, once a
        run has set its :attr:`workspace`; None for a provider used on its own (a library
        caller's, or a test's), which reads what it is given."""
        return Confinement(self.workspace, self.allowed_folders) if self.workspace is not None else None

    def api_key(self) -> str | None:
        """The key from the environment variable the settings name (never from a file)."""
        var = self.settings.api_key_env
        return os.environ.get(var) or None if var else None

    async def preflight(self, models: Sequence[str] = ()) -> list[str]:
        """Problems that stop a run before any work: a missing key (name the variable), an
        unreachable local endpoint (name the URL), a model that is not there. ``models`` are
        the model names the run will ask for. Never includes a key's value."""
        var = self.settings.api_key_env
        if var and not os.environ.get(var):
            return [f"the environment variable {var} is not set (it must hold the API key)"]
        return []

    def unanswerable(self, requests: Sequence[GenerationRequest]) -> list[GenerationRequest]:
        """Of ``requests`` (what a run will ask), those this provider can already tell it will not
        answer: a provider of recorded answers that lacks some. A live model answers anything: []."""
        return []

    @abc.abstractmethod
    async def generate(self, request: GenerationRequest) -> Answer:
        """Answer one request with one attempt.

        Raises:
            ProviderError: the attempt failed (``retryable`` for 429, 5xx, timeouts, dropped
                connections; not for 400/401/404 and the like).
        """

    async def aclose(self) -> None:  # noqa: B027 - optional hook, nothing to release by default
        """Release connections; called once when the run ends."""
