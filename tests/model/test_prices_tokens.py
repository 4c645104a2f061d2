"""Price table and token estimates."""

from __future__ import annotations

import pytest

from benchwright.config import prices
from benchwright.config.settings import Price, ProviderSettings, Settings
from benchwright.model import tokens


def test_default_prices_and_overrides() -> None:
    assert prices.find_price("gpt-4o", None, None) == Price(input=2.5, output=10.0)
    assert prices.find_price("openai/gpt-4o-2024-08-06", None, None) == Price(input=2.5, output=10.0)
    assert prices.find_price("mistralai/devstral-small-2505:free", None, None) == Price(input=0, output=0)
    assert prices.find_price("my-finetune", None, None) is None
    settings = Settings(prices={"my-finetune": Price(input=1, output=2)})
    assert prices.find_price("my-finetune", None, settings) == Price(input=1, output=2)
    provider = ProviderSettings(type="openai-compatible", prices={"gpt-4o": Price(input=0, output=0)})
    assert prices.find_price("gpt-4o", provider, settings) == Price(input=0, output=0)
    assert prices.cost(Price(input=2, output=4), 1_000_000, 500_000) == pytest.approx(4.0)
    assert prices.cost(None, 10, 10) is None


def test_token_estimate_is_a_real_bpe_offline() -> None:
    count, name = tokens.estimate("def add(a, b):\n    return a + b\n", "gpt-4")
    assert name.endswith("cl100k_base")
    assert count == 12
    count4o, name4o = tokens.estimate("hello world", "gpt-4o-mini")
    assert name4o.endswith("o200k_base") and count4o == 2
    assert tokens.heuristic("def f(x): return x") == 7


def test_the_rust_tokenizer_counts_what_the_package_counts_without_loading_it() -> None:
    """The estimate loads bpe-openai's Rust module alone (the package decodes three vocabularies
    at import, about 3 s a process); its counts are the package's own ``encode``, special-token
    text counted as text."""
    import subprocess
    import sys
    from pathlib import Path

    texts = ["<|endoftext|> and <|fim_prefix|> as text", "é ü 日本語 🙂 \t\r\n", "",
             *(p.read_text() for p in sorted(Path(tokens.__file__).parent.glob("*.py"))[:6])]
    script = ("import sys, json; from benchwright.model import tokens\n"
              "texts = json.load(sys.stdin)\n"
              "counts = {m: [tokens.estimate(t, m) for t in texts] for m in ('gpt-4', 'gpt-4o')}\n"
              "print(json.dumps({'counts': counts, 'package': 'bpe_openai' in sys.modules}))\n")
    import json

    proc = subprocess.run([sys.executable, "-c", script], input=json.dumps(texts), text=True,
                          capture_output=True, check=True)
    out = json.loads(proc.stdout)
    assert out["package"] is False  # the package's import never ran
    import warnings

    with warnings.catch_warnings():  # the package loads its data with a deprecated importlib call
        warnings.simplefilter("ignore", DeprecationWarning)
        import bpe_openai  # type: ignore[import-not-found, import-untyped, unused-ignore]

        for model, encoding in (("gpt-4", "cl100k_base"), ("gpt-4o", "o200k_base")):
            enc = bpe_openai.get_encoding(encoding)
            assert out["counts"][model] == [
                [len(enc.encode(t, disallowed_special=())), f"bpe-openai:{encoding}"] for t in texts]
