"""Workspace settings (``benchwright.yaml``): providers and defaults. Never secrets."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ProviderSettings(BaseModel):
    """One named provider. ``api_key_env`` is the *name* of an environment variable."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(min_length=1)
    base_url: str | None = None
    api_key_env: str | None = None


class Settings(BaseModel):
    model_config = ConfigDict(extra="allow")

    version: int = 1
    default_provider: str | None = None
    providers: dict[str, ProviderSettings] = Field(default_factory=dict)
    sandbox: str | None = Field(default=None, description="Sandbox backend (default: best available).")

    def extra(self) -> dict[str, Any]:
        return dict(self.model_extra or {})
