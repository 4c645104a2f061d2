"""Cost of a generation from a price table: defaults for common models, overridable in settings.

Prices are USD per million tokens (input, output). Settings override them per provider
(``providers.NAME.prices``) or for all providers (``prices``); model ids ending in ``:free``
cost nothing. A model the table does not know has no cost (``None``), never a guessed one.
"""

from __future__ import annotations

from benchwright.config.settings import Price, ProviderSettings, Settings

DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "o3": (2.00, 8.00),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-5-sonnet": (3.00, 15.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-opus-4": (15.00, 75.00),
    "mistral-small": (0.10, 0.30),
    "mistral-medium": (0.40, 2.00),
    "mistral-large": (2.00, 6.00),
    "codestral": (0.30, 0.90),
    "devstral-small": (0.10, 0.30),
    "devstral-medium": (0.40, 2.00),
    "mistral-nemo": (0.15, 0.15),
}


_DEFAULTS = {k: Price(input=i, output=o) for k, (i, o) in DEFAULT_PRICES.items()}


def model_names(model: str) -> list[str]:
    """The names a table may list ``model`` under, most specific first:
    ``openai/gpt-4o-2024-08-06`` -> itself, ``gpt-4o-2024-08-06``, ``gpt-4o``... (the price table
    and the energy figures match a model the same way)."""
    names = [model]
    if "/" in model:
        names.append(model.rsplit("/", 1)[1])
    base = names[-1]
    parts = base.split("-")
    for i in range(len(parts) - 1, 0, -1):
        names.append("-".join(parts[:i]))
    return names


def find_price(model: str, provider: ProviderSettings | None, settings: Settings | None) -> Price | None:
    if model.endswith(":free"):
        return Price(input=0, output=0)
    tables: list[dict[str, Price]] = []
    if provider is not None:
        tables.append(provider.prices)
    if settings is not None:
        tables.append(settings.prices)
    tables.append(_DEFAULTS)
    for table in tables:
        for name in model_names(model):
            if name in table:
                return table[name]
    return None


def cost(price: Price | None, tokens_in: int | None, tokens_out: int | None) -> float | None:
    if price is None or (tokens_in is None and tokens_out is None):
        return None
    return ((tokens_in or 0) * price.input + (tokens_out or 0) * price.output) / 1_000_000
