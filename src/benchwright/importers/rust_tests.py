"""Split a Rust test module (``#[cfg(test)] mod tests { use super::*; #[test] fn ... }``) into
benchwright test cases: one per check (each ``assert!``/``assert_eq!``/``assert_ne!`` statement,
or a statement holding some, such as a loop), in each ``#[test]`` function.

benchwright's Rust test case is the body of a function that returns ``()``, compiled in a module
that sees the solution (``use super::*``) and the prelude (see docs/languages/rust.md). So a
case is a check with the earlier statements of its function that it needs (the ``let``
bindings it uses and the statements that change them); the module's other items (``use``
lines, helper functions, types) and items outside it become the prelude. A ``#[test]`` function
without a check is one case (it passes when it does not panic). A ``#[should_panic]`` or
``#[ignore]`` function cannot be a case of that form: it is left out and named in
:attr:`RustTests.skipped`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from benchwright.importers.braces import (
    RUST,
    Statement,
    block_end,
    check_cases,
    identifiers,
    mask,
)
from benchwright.task.model import TestCase

__all__ = ["RustTests", "split_rust_tests"]

_CHECK = re.compile(r"\b(?:debug_)?assert(?:_eq|_ne)?\s*!")
_ATTRIBUTE = re.compile(r"#!?\[")
_FN = re.compile(r"\A(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe)\s+)*fn\s+(\w+)")
_MOD = re.compile(r"\A(?:pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{")
_SUPER_GLOB = re.compile(r"\A\s*use\s+super\s*::\s*\*\s*;\s*\Z")


@dataclass(frozen=True)
class RustTests:
    """What :func:`split_rust_tests` makes of one test module (source text, unescaped)."""

    prelude: str
    cases: list[TestCase]
    skipped: list[str] = field(default_factory=list)
    """``#[test]`` functions that cannot be a case (``#[should_panic]``, ``#[ignore]``), with why."""


@dataclass(frozen=True)
class _Item:
    attributes: list[str]
    text: str
    """The item without its attributes."""
    source: str
    """The item with its attributes, as written."""
    start: int
    """Where the item (without attributes) starts in the scanned text."""


def _items(code: str, masked: str) -> list[_Item]:
    """The items of a module body, each with its outer attributes."""
    items: list[_Item] = []
    k, n = 0, len(masked)
    while k < n:
        while k < n and (masked[k].isspace() or masked[k] == ";"):
            k += 1
        if k >= n:
            break
        first = k
        attributes: list[str] = []
        while (m := _ATTRIBUTE.match(masked, k)) is not None:
            end = block_end(masked, m.end() - 1)
            attributes.append(re.sub(r"\s+", "", masked[k:end]))
            k = end
            while k < n and masked[k].isspace():
                k += 1
        start = k
        depth = 0
        while k < n:
            c = masked[k]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
                if depth == 0 and c == "}":
                    k += 1
                    break
            elif c == ";" and depth == 0:
                k += 1
                break
            k += 1
        items.append(_Item(attributes, code[start:k], code[first:k], start))
    return items


def _declared(statement: Statement) -> set[str]:
    """The names a ``let`` statement binds (its pattern, before any type or value), or the name of
    a nested item (``fn helper``)."""
    item = re.match(r"\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe)\s+)*"
                    r"(?:fn|struct|enum|trait|mod)\s+(\w+)", statement.masked)
    if item is not None:  # a nested item: its name
        return {item.group(1)}
    m = re.match(r"\s*let\s+(.*)", statement.masked, re.S)
    if m is None:
        return set()
    pattern = re.split(r"[:=]", m.group(1), maxsplit=1)[0]
    return identifiers(pattern) - {"mut", "ref"}


def split_rust_tests(test: str) -> RustTests:
    """The prelude and test cases of a Rust test module (or of bare ``#[test]`` functions).

    Items outside a module, and the module's items that are not ``#[test]`` functions, make the
    prelude (``use super::*`` is dropped: benchwright's test module has it). No ``#[test]``
    function at all (a module commented out): no case.
    """
    masked = mask(test, RUST)
    top = _items(test, masked)
    prelude: list[str] = []
    functions: list[tuple[str, str]] = []
    skipped: list[str] = []

    def take(items: list[_Item], code: str, scanned: str) -> None:
        for item in items:
            inner = scanned[item.start:item.start + len(item.text)]
            if _MOD.match(inner) and not any(a.startswith("#[test") for a in item.attributes):
                open_at = item.start + inner.index("{")
                close = block_end(scanned, open_at)
                take(_items(code[open_at + 1:close - 1], scanned[open_at + 1:close - 1]),
                     code[open_at + 1:close - 1], scanned[open_at + 1:close - 1])
                continue
            fn = _FN.match(inner)
            if fn is not None and "#[test]" in item.attributes:
                if any(a.startswith(("#[should_panic", "#[ignore")) for a in item.attributes):
                    skipped.append(f"{fn.group(1)}: {', '.join(item.attributes)} (a test case must "
                                   "not panic, and always runs)")
                    continue
                open_at = item.start + inner.index("{", fn.end())
                close = block_end(scanned, open_at)
                functions.append((fn.group(1), code[open_at + 1:close - 1]))
                continue
            if _SUPER_GLOB.match(item.text):
                continue
            kept = [a for a in item.attributes if not a.startswith("#[cfg(test)")]
            lines = item.source.split("\n")
            text = "\n".join([lines[0], *_dedent_rest(lines[1:])])
            prelude.append(text if not kept or len(kept) == len(item.attributes)
                           else text.replace("#[cfg(test)]", "", 1).strip())

    take(top, test, masked)
    several = len(functions) > 1
    cases: list[TestCase] = []
    for name, body in functions:
        cases.extend(check_cases(body, RUST, _CHECK, _declared, whole=name,
                                 prefix=f"{name}/" if several else ""))
    text = "\n\n".join(p.strip() for p in prelude if p.strip())
    return RustTests(prelude=text + "\n" if text else "", cases=cases, skipped=skipped)


def _dedent_rest(lines: list[str]) -> list[str]:
    """Continuation lines of an item, without the indentation they share."""
    widths = [len(x) - len(x.lstrip(" \t")) for x in lines if x.strip()]
    cut = min(widths) if widths else 0
    return [x[cut:] if x.strip() else "" for x in lines]
