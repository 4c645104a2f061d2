"""Providers every workspace has unless its ``benchwright.yaml`` lists its own ``providers:``.

``benchwright init`` writes them into the example settings, so they can be edited there.
"""

from __future__ import annotations

from benchwright.config.settings import ProviderSettings


def _p(type_: str, base_url: str, key: str | None = None) -> ProviderSettings:
    return ProviderSettings(type=type_, base_url=base_url, api_key_env=key)


DEFAULT_PROVIDERS: dict[str, ProviderSettings] = {
    "openai": _p("openai-compatible", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    "openrouter": _p("openai-compatible", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "mistral": _p("openai-compatible", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    "anthropic": _p("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"),
    "vllm": _p("openai-compatible", "http://127.0.0.1:8000/v1"),
    "ollama": _p("openai-compatible", "http://127.0.0.1:11434/v1"),
    "llamacpp": _p("openai-compatible", "http://127.0.0.1:8080/v1"),
    "lmstudio": _p("openai-compatible", "http://127.0.0.1:1234/v1"),
}
