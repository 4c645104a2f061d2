"""Token counts for services that report none: always marked as estimates.

The estimate uses a tiktoken-compatible BPE (cl100k_base / o200k_base) when one is available
offline: ``tiktoken`` with its encodings already cached, or ``bpe-openai``, which ships them.
Failing both, a word-and-punctuation count.
"""

from __future__ import annotations

import importlib.util
import re
import warnings
from collections.abc import Callable
from functools import lru_cache
from importlib.machinery import ExtensionFileLoader
from pathlib import Path
from typing import Any

Encoder = Callable[[str], int]


def _o200k(model: str) -> bool:
    m = model.lower()
    return any(k in m for k in ("gpt-4o", "gpt-4.1", "gpt-5", "o1", "o3", "o4"))


@lru_cache(maxsize=1)
def _rust_tokenizers() -> Any | None:
    """bpe-openai's Rust module (``bpe_openai._bindings``), loaded without its package.

    Importing the package ``bpe_openai`` decodes three whole vocabularies in Python at import
    time (cl100k, o200k and voyage3: about 3 s, every process that estimates a token count,
    which was most of a small ``benchwright run``). The Rust module carries its own
    vocabularies and builds one in 0.05-0.15 s; its counts are the package's
    (``encode(text, disallowed_special=())``), a test compares them."""
    spec = importlib.util.find_spec("bpe_openai")  # finds the package without running it
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        for path in sorted(Path(folder).glob("_bindings*.so")):
            loader = ExtensionFileLoader("bpe_openai._bindings", str(path))
            found = importlib.util.spec_from_loader("bpe_openai._bindings", loader)
            if found is None:
                continue
            module = importlib.util.module_from_spec(found)
            loader.exec_module(module)
            return module
    return None


@lru_cache(maxsize=4)
def _encoder(name: str) -> tuple[Encoder, str] | None:
    try:
        rust = _rust_tokenizers()
        if rust is not None:
            tokenizer = rust.tokenizer_for_encoding(name)
            return (lambda text: int(tokenizer.count(text))), f"bpe-openai:{name}"
    except Exception:
        pass
    try:
        with warnings.catch_warnings():  # it loads its data with a deprecated importlib call
            warnings.simplefilter("ignore", DeprecationWarning)
            import bpe_openai  # type: ignore[import-not-found, import-untyped, unused-ignore]

            enc = bpe_openai.get_encoding(name)
            enc.encode("warm up", disallowed_special=())  # loads its data now, warnings muted
        return (lambda text: len(enc.encode(text, disallowed_special=()))), f"bpe-openai:{name}"
    except Exception:
        pass
    try:
        import tiktoken  # type: ignore[import-not-found, import-untyped, unused-ignore]

        tenc = tiktoken.get_encoding(name)  # works only when the encoding is cached locally
        return (lambda text: len(tenc.encode(text, disallowed_special=()))), f"tiktoken:{name}"
    except Exception:
        return None


def heuristic(text: str) -> int:
    """Words, numbers and runs of punctuation: within about 25 % of BPE counts on code."""
    return len(re.findall(r"\w+|[^\w\s]+", text))


def estimate(text: str, model: str = "") -> tuple[int, str]:
    """(token count, estimator name) for ``text`` as ``model`` would count it, roughly."""
    found = _encoder("o200k_base" if _o200k(model) else "cl100k_base")
    if found is not None:
        count, name = found
        return count(text), name
    return heuristic(text), "heuristic"
