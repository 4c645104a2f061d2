"""Workspace settings (``benchwright.yaml``): providers and defaults. Never secrets."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Price(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)


class ProviderSettings(BaseModel):
    """One named provider. ``api_key_env`` is the *name* of an environment variable."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(min_length=1)
    base_url: str | None = None
    api_key_env: str | None = Field(
        default=None, description="Name of the environment variable holding the key (never the key).")
    concurrency: int = Field(default=16, ge=1, le=1024, description="Requests in flight at once.")
    rpm: float | None = Field(default=None, gt=0, description="Requests per minute at most.")
    timeout_s: float = Field(default=120, gt=0, description="One attempt's time limit.")
    max_retries: int = Field(default=6, ge=0, le=50)
    backoff_s: float = Field(default=1.0, ge=0, description="First retry delay; doubles each time.")
    max_backoff_s: float = Field(default=60.0, ge=0)
    prices: dict[str, Price] = Field(default_factory=dict, description="Model name -> price.")


def _presets() -> dict[str, ProviderSettings]:
    from benchwright.model.presets import PRESETS

    return {k: v.model_copy() for k, v in PRESETS.items()}


class Settings(BaseModel):
    model_config = ConfigDict(extra="allow")

    version: int = 1
    default_provider: str | None = None
    providers: dict[str, ProviderSettings] = Field(
        default_factory=lambda: _presets(),
        description="Named providers; without this key, the presets (openai, openrouter, mistral, "
        "anthropic, vllm, ollama, llamacpp, lmstudio).")
    sandbox: str | None = Field(default=None, description="Sandbox backend (default: best available).")
    prices: dict[str, Price] = Field(default_factory=dict, description="Model name -> price, for all providers.")

    def extra(self) -> dict[str, Any]:
        return dict(self.model_extra or {})
