"""The statements of a C-family block (C++, Java), and the earlier ones a statement needs.

Importers split a dataset's test program (a ``main`` full of asserts) into test cases: each
check becomes a case, preceded by the statements it depends on (the declarations of the
variables it reads, and the statements that change them), so the case runs on its own. This
module does the lexical part: it never runs or compiles anything. It knows comments, string and
character literals (Java text blocks too) and bracket nesting; it does not know types, so a
declaration is recognised by its shape (``Type name =``, ``Type<A, B> name;``, ``Type name(...)``).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from benchwright.lang.javasource import blank_java

__all__ = ["MAX_STATEMENTS", "Statement", "blank", "block_body", "declared_names", "needed", "split_statements",
           "top_level_split"]

MAX_STATEMENTS = 2000
"""A block with more statements than this is not split (each case's dependencies are looked up
among all earlier statements: quadratic); HumanEval-X's longest ``main`` has a few dozen."""

_OPEN = "([{"
_CLOSE = ")]}"
_CONTINUES = frozenset(";,).?:+-*/%&|^<>=![")
"""A ``}`` followed by one of these is inside an expression (an initialiser list, a lambda)."""
_CONTINUE_WORDS = ("else", "catch", "finally")
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_KEYWORDS = frozenset({
    "if", "else", "for", "while", "do", "switch", "case", "default", "return", "break",
    "continue", "goto", "throw", "try", "catch", "finally", "new", "delete", "assert", "sizeof",
})
_DECLARATION = re.compile(
    r"""^\s*(?:(?:final|static|const|constexpr|volatile|unsigned|signed|long|short|struct)\s+)*
    (?:[A-Za-z_$][\w$]*\s*(?:::|\.)\s*)*[A-Za-z_$][\w$]*     # the type's name, maybe qualified
    \s*(?:<[^;={}()]*>)?                                      # its template arguments
    (?:\s*\[\s*\])*                                           # Java's array brackets
    (?:\s*[*&]+\s*|\s+)                                       # pointer, reference, or a space
    (?P<name>[A-Za-z_$][\w$]*)\s*(?:=|;|\{|\(|\[|,|:)""",
    re.X,
)
_MORE_NAMES = re.compile(r"^\s*[*&]*\s*(?P<name>[A-Za-z_$][\w$]*)\s*(?:=|;|\{|\(|\[|,|$)")


def blank(src: str) -> str:
    """``src`` with comments and the insides of string and character literals replaced by
    spaces (newlines kept), so offsets are those of ``src`` and no bracket in a literal counts:
    the Java runner's own :func:`~benchwright.lang.javasource.blank_java`, which fits C++ too."""
    return blank_java(src)


def block_body(src: str, open_brace: int) -> tuple[int, int] | None:
    """The span of the text between ``src[open_brace]`` (a ``{``) and its matching ``}``, or
    None when it is not closed. ``src`` must already be :func:`blank`."""
    depth = 0
    for i in range(open_brace, len(src)):
        if src[i] in _OPEN:
            depth += 1
        elif src[i] in _CLOSE:
            depth -= 1
            if depth == 0:
                return (open_brace + 1, i) if src[i] == "}" else None
    return None


@dataclass(frozen=True)
class Statement:
    """One statement of a block: its text (dedented) and what it names."""

    text: str
    names: frozenset[str] = field(default_factory=frozenset)
    """The identifiers it uses (keywords left out)."""
    declares: frozenset[str] = field(default_factory=frozenset)
    """The variables it declares, when it is a declaration."""


_SPACE = re.compile(r"\s*")


def _next_significant(text: str, i: int) -> str:
    start = _SPACE.match(text, i)
    j = start.end() if start else i
    return text[j : j + 1]


def _next_word(text: str, i: int) -> str:
    start = _SPACE.match(text, i)
    m = _IDENT.match(text, start.end() if start else i)
    return m.group() if m else ""


def _spans(body: str) -> list[tuple[int, int]]:
    """Where each top-level statement of ``body`` (blanked) starts and ends."""
    spans: list[tuple[int, int]] = []
    depth = 0
    start: int | None = None
    for i, ch in enumerate(body):
        if start is None:
            if ch.isspace() or ch == ";":
                continue
            start = i
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
            if depth < 0:  # unbalanced: the rest is one statement
                break
            if ch == "}" and depth == 0:
                following = _next_significant(body, i + 1)
                word = _next_word(body, i + 1)
                begins = _next_word(body, start)
                if following and following in _CONTINUES:
                    continue
                if word in _CONTINUE_WORDS or (begins == "do" and word == "while"):
                    continue
                spans.append((start, i + 1))
                start = None
        elif ch == ";" and depth == 0:
            if _next_word(body, i + 1) == "else":
                continue
            spans.append((start, i + 1))
            start = None
    if start is not None and body[start:].strip():
        spans.append((start, len(body.rstrip())))
    return spans


def _dedent(src: str, start: int, end: int) -> str:
    line_start = src.rfind("\n", 0, start) + 1
    head = src[line_start:start]
    text = (head if not head.strip() else " " * len(head)) + src[start:end]
    return textwrap.dedent(text).strip("\n")


def declared_names(blanked: str) -> frozenset[str]:
    """The variables a statement (blanked) declares, when it has a declaration's shape."""
    m = _DECLARATION.match(blanked)
    if m is None or m.group("name") in _KEYWORDS:
        return frozenset()
    first = _IDENT.match(blanked.lstrip())
    if first is None or first.group() in _KEYWORDS or first.group() in ("using", "typedef"):
        return frozenset()
    names = {m.group("name")}
    rest = blanked[m.end("name"):]
    for part in top_level_split(rest.rstrip().rstrip(";"), ",")[1:]:
        more = _MORE_NAMES.match(part)
        if more is not None:
            names.add(more.group("name"))
    return frozenset(names)


def split_statements(body: str) -> list[Statement]:
    """The top-level statements of a block's body (the text between its braces), in order."""
    blanked = blank(body)
    statements = []
    for start, end in _spans(blanked):
        names = frozenset(w for w in _IDENT.findall(blanked[start:end]) if w not in _KEYWORDS)
        statements.append(Statement(_dedent(body, start, end), names,
                                    declared_names(blanked[start:end])))
    return statements


def top_level_split(text: str, separator: str = ",") -> list[str]:
    """``text`` cut at every ``separator`` outside brackets, literals and comments."""
    blanked = blank(text)
    parts: list[str] = []
    depth, last = 0, 0
    for i, ch in enumerate(blanked):
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth -= 1
        elif ch == separator and depth == 0:
            parts.append(text[last:i])
            last = i + 1
    parts.append(text[last:])
    return parts


def needed(before: list[Statement], check: Statement) -> list[Statement]:
    """The statements of ``before`` that ``check`` depends on, in order: each declaration of a
    variable it (or a statement it needs) uses, and each non-declaration statement that uses
    such a variable (a call that fills a list, an assignment)."""
    known = frozenset().union(*(s.declares for s in before)) if before else frozenset()
    wanted = set(check.names & known)
    kept: list[Statement] = []
    for statement in reversed(before):
        if statement.declares:
            take = bool(statement.declares & wanted)
        else:
            take = bool(statement.names & wanted)
        if take:
            kept.append(statement)
            wanted |= statement.names & known
    return kept[::-1]
