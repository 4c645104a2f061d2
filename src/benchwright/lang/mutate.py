"""Text transforms that make mutants of a solution: the entry point returns a zero value, or
fails at once. ``validate --golden`` runs them; tests that still pass a mutant cannot fail.

Brace languages share :func:`insert_in_body`: the first definition of the entry point whose
parameter list is followed by ``{`` gets a statement as the first of its body (on a line of
its own when the ``{`` ends its line, so a completion-mode prompt that ends with the signature
stays the mutant's prefix). Each language picks the signature pattern and the statements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    """A changed solution whose tests must fail."""

    name: str
    """What it does, e.g. ``returns 0`` or ``panics``."""
    code: str


def _close_paren(code: str, start: int) -> int | None:
    """The index after the ``)`` matching the ``(`` at ``start``."""
    depth = 0
    for i in range(start, len(code)):
        c = code[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


@dataclass(frozen=True)
class Body:
    """Where the entry point's body starts, and what lies between its parameters and its ``{``
    (the return type in Rust and Go, ``throws`` in Java)."""

    open_brace: int
    between: str
    before: str
    """The signature's text before the name (the return type in C, C++ and Java)."""


def find_body(code: str, signature: str) -> Body | None:
    """The body of the first match of ``signature`` (a regex that ends at the ``(`` of the
    parameters and has a group ``before``, possibly empty) that is followed by ``{``."""
    for m in re.finditer(signature, code, flags=re.M):
        end = _close_paren(code, m.end() - 1)
        if end is None:
            continue
        rest = re.match(r"[^;{}]*\{", code[end:])
        if rest is None:
            continue
        brace = end + rest.end() - 1
        return Body(brace, code[end:brace].strip(), (m.groupdict().get("before") or "").strip())
    return None


def insert_in_body(code: str, body: Body, statement: str) -> str:
    """``code`` with ``statement`` first in the body at ``body``."""
    at = body.open_brace + 1
    newline = re.match(r"[ \t]*\r?\n", code[at:])
    if newline is not None:
        at += newline.end()
        return code[:at] + statement + "\n" + code[at:]
    return code[:at] + " " + statement + " " + code[at:]


def brace_mutants(code: str, signature: str, statements: list[tuple[str, str]]) -> list[Mutant]:
    """A mutant per (name, statement), the statement first in the entry point's body."""
    body = find_body(code, signature)
    if body is None:
        return []
    return [Mutant(name, insert_in_body(code, body, stmt)) for name, stmt in statements]
