"""The provider interface: one request in, one answer out."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field
from typing import Any, Literal

from benchwright.config.settings import ProviderSettings


@dataclass(frozen=True)
class GenerationRequest:
    model: str
    """The model name inside its provider (``openai/gpt-4o`` -> ``gpt-4o``)."""
    mode: Literal["instruct", "complete"]
    messages: list[dict[str, str]]
    """Chat messages (instruct mode)."""
    prompt: str
    """The text to continue (complete mode) or the user prompt (instruct mode)."""
    language: str
    params: dict[str, Any] = field(default_factory=dict)
    """temperature, max_tokens, top_p, stop, seed."""
    sample: int = 0
    golden: str | None = None
    """The task's golden solution; only the ``reference`` provider reads it."""


@dataclass(frozen=True)
class Answer:
    text: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_estimated: bool = False
    finish_reason: str | None = None
    cost_usd: float | None = None


class Provider(abc.ABC):
    """Talks to one model service. Registered under kind ``provider`` by its type; the factory
    takes ``name`` (the provider's name in the settings) and ``settings``."""

    def __init__(self, name: str, settings: ProviderSettings) -> None:
        self.name = name
        self.settings = settings

    def preflight(self) -> list[str]:
        """Problems that stop a run before any work (a missing key, an unreachable endpoint)."""
        return []

    @abc.abstractmethod
    async def generate(self, request: GenerationRequest) -> Answer:
        """Answer one request.

        Raises:
            InfraError: the service failed after retries (the sample becomes ``infra_error``).
        """
