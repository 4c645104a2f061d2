"""Statements of brace languages (JavaScript, Go, Rust), for importers that split a dataset's test
function into one test case per check.

Nothing here runs or compiles code: the text is scanned. :func:`mask` blanks comments and the
insides of string and character literals (keeping every offset and newline), so brackets,
semicolons and names are found in the masked text and cut from the original.
:func:`statements` cuts a block's body into its top-level statements; :func:`slice_for` keeps,
for one check, the earlier statements it needs (the ``let``/``const``/``:=`` bindings it uses, and
what changes them), so a check can run on its own; :func:`check_cases` makes the test cases of a
test function's body so.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchwright.task.model import TestCase

__all__ = ["Dialect", "Statement", "block_end", "check_cases", "identifiers", "mask", "slice_for",
           "statements", "tested_function"]


@dataclass(frozen=True)
class Dialect:
    """What differs between the languages for scanning."""

    name: str
    quotes: str
    """Characters that open a string that may hold escapes (and ends at the same character)."""
    raw_quotes: str = ""
    """Characters that open a string without escapes, which may span lines (Go's and JS's `)."""
    newline_ends: bool = True
    """A newline at depth 0 may end a statement (JavaScript's and Go's semicolon insertion)."""
    rust_literals: bool = False
    """Rust: ``r#"..."#`` raw strings, ``'a'`` characters versus ``'a`` lifetimes, nested
    block comments."""
    header_semicolons: bool = False
    """Go: ``for i := 0; i < n; i++ {`` and ``if x := f(); x > 0 {`` hold semicolons before
    their block."""


JS = Dialect("javascript", quotes="'\"", raw_quotes="`")
GO = Dialect("go", quotes="\"'", raw_quotes="`", header_semicolons=True)
RUST = Dialect("rust", quotes='"', newline_ends=False, rust_literals=True)

_RUST_CHAR = re.compile(r"'(?:[^'\\\n]|\\(?:x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]{1,6}\}|.))'")
_RUST_RAW = re.compile(r'b?r(#*)"')
_NAME = re.compile(r"[A-Za-z_$][\w$]*")


def _blank(text: str) -> str:
    return "".join("\n" if c == "\n" else " " for c in text)


def mask(code: str, dialect: Dialect) -> str:
    """``code`` with comments and the insides of literals blanked (same length, same lines).

    A literal keeps its quotes (``"  "``), so the masked text still shows where a value is."""
    out: list[str] = []
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if code.startswith("//", i):
            end = code.find("\n", i)
            end = n if end < 0 else end
            out.append(_blank(code[i:end]))
            i = end
            continue
        if code.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if dialect.rust_literals and code.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif code.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(_blank(code[i:j]))
            i = j
            continue
        if dialect.rust_literals:
            raw = _RUST_RAW.match(code, i) if c in "br" and (i == 0 or not _is_word(code[i - 1])) else None
            if raw is not None:
                close = '"' + raw.group(1)
                end = code.find(close, raw.end())
                end = n if end < 0 else end + len(close)
                out.append(code[i:raw.end()] + _blank(code[raw.end():max(raw.end(), end - len(close))])
                           + code[max(raw.end(), end - len(close)):end])
                i = end
                continue
            if c == "'":
                m = _RUST_CHAR.match(code, i)
                if m is not None:
                    out.append("'" + _blank(m.group()[1:-1]) + "'")
                    i = m.end()
                    continue
                out.append(c)  # a lifetime
                i += 1
                continue
        if c in dialect.quotes or c in dialect.raw_quotes:
            escapes = c in dialect.quotes
            j = i + 1
            while j < n and code[j] != c:
                if escapes and code[j] == "\\":
                    j += 1
                elif escapes and code[j] == "\n" and c != '"' and dialect.name != "rust":
                    break  # an unterminated one-line literal: stop at the line's end
                j += 1
            end = min(j + 1, n)
            out.append(c + _blank(code[i + 1:end - 1]) + (code[end - 1] if end - 1 > i else ""))
            i = end
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")", "]", "}"}
_CONTINUES_LINE = set("([{,.=+-*/%&|^<>!?:~")
"""A line ending with one of these goes on (``a +``, ``f(``, ``x =``)."""
_STARTS_CONTINUATION = set(".?:&|+*/%=,)]}>")
"""A line starting with one of these continues the previous one (``.map(...)``, ``&& b``)."""
_BLOCK_KEYWORDS = re.compile(
    r"\A\s*(?:(?:unsafe|async)\s+)?(?:if|for|while|loop|match|unsafe)\b|\A\s*\{"
    r"|\A\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe)\s+)*"
    r"(?:fn|struct|enum|impl|trait|mod)\b")
"""What starts a Rust statement that ends with its block (no ``;``): ``for``/``if``/``match``...
and nested items (``fn helper() {...}``)."""


_GO_HEADER = re.compile(r"(?:for|if|switch|select)\b")


@dataclass(frozen=True)
class Statement:
    """One top-level statement of a block body: its text and where it is."""

    text: str
    """The statement, with the comment lines just above it, dedented."""
    start: int
    end: int
    masked: str
    """The statement's masked text (comments and literals blanked)."""


def block_end(masked: str, open_at: int) -> int:
    """The offset just past the bracket that closes the one at ``open_at`` (or the end)."""
    depth = 0
    for k in range(open_at, len(masked)):
        c = masked[k]
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth == 0:
                return k + 1
    return len(masked)


def _next_significant(masked: str, k: int) -> tuple[str, int]:
    while k < len(masked) and masked[k].isspace():
        k += 1
    return (masked[k] if k < len(masked) else ""), k


def statements(body: str, dialect: Dialect) -> list[Statement]:
    """The top-level statements of a block's body (the text between its braces)."""
    masked = mask(body, dialect)
    spans: list[tuple[int, int]] = []
    depth = 0
    start: int | None = None
    in_header = False  # Go: between `for`/`if`/`switch` and its block
    k = 0
    n = len(masked)
    while k < n:
        c = masked[k]
        if start is None:
            if c.isspace() or c == ";":
                k += 1
                continue
            start = k
            in_header = dialect.header_semicolons and _GO_HEADER.match(masked, k) is not None
        if c == "{" and depth == 0:
            in_header = False
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth == 0 and c == "}" and not dialect.newline_ends and _BLOCK_KEYWORDS.match(masked[start:k]):
                nxt, at = _next_significant(masked, k + 1)
                if not (masked.startswith("else", at) or nxt in ".;?" or nxt in _STARTS_CONTINUATION):
                    spans.append((start, k + 1))
                    start = None
        elif c == ";" and depth == 0 and not in_header:
            spans.append((start, k + 1))
            start = None
        elif c == "\n" and depth == 0 and dialect.newline_ends:
            so_far = masked[start:k].rstrip()
            last = so_far[-1:] if so_far else ""
            complete = bool(last) and (last not in _CONTINUES_LINE or so_far.endswith(("++", "--")))
            nxt, at = _next_significant(masked, k + 1)
            if complete and nxt not in _STARTS_CONTINUATION and not masked.startswith("else", at):
                spans.append((start, k))
                start = None
        k += 1
    if start is not None and masked[start:].strip():
        spans.append((start, n))
    out: list[Statement] = []
    previous_end = 0
    for begin, end in spans:
        lead = body.rfind("\n", 0, begin) + 1
        if lead < previous_end:  # another statement ends on this line: start at this one
            lead = begin
        else:  # comment lines right above the statement belong to it
            while lead > previous_end:
                above = body.rfind("\n", 0, lead - 1) + 1
                if above < previous_end or not body[above:lead].strip().startswith(("//", "/*", "*")):
                    break
                lead = above
        column = begin - (body.rfind("\n", 0, begin) + 1)
        text = _dedent(body[lead:end] if lead < begin else " " * column + body[begin:end])
        out.append(Statement(text=text, start=begin, end=end, masked=masked[begin:end]))
        previous_end = end
    return out


def _dedent(text: str) -> str:
    """The text without the indentation its lines share (the first line counts from its column)."""
    lines = text.split("\n")
    widths = [len(line) - len(line.lstrip(" \t")) for line in lines if line.strip()]
    cut = min(widths) if widths else 0
    return "\n".join(line[cut:] if len(line) >= cut else line.lstrip(" \t") for line in lines).strip("\n")


def identifiers(masked: str) -> set[str]:
    """Names in masked code, not counting member names (``x.len`` gives ``x``)."""
    found: set[str] = set()
    for m in _NAME.finditer(masked):
        before = masked[:m.start()].rstrip()
        if before.endswith(".") and not before.endswith(".."):
            continue
        found.add(m.group())
    return found


def slice_for(check: int, stmts: Sequence[Statement], declared: Callable[[Statement], set[str]],
              checks: Sequence[int] = ()) -> list[int]:
    """The indexes of the statements before ``check`` that it needs, in order: those that bind or
    change a local it uses, and, in turn, what those use. ``declared`` names a statement's
    bindings; only the statements' own locals count (not functions of the solution). The other
    ``checks`` are never taken (each is a test case of its own)."""
    locals_: set[str] = set()
    for s in stmts[:check]:
        locals_ |= declared(s)
    needed = identifiers(stmts[check].masked) & locals_
    chosen: list[int] = []
    others = set(checks)
    for k in range(check - 1, -1, -1):
        if k in others:
            continue
        names = identifiers(stmts[k].masked)
        if names & needed:
            chosen.append(k)
            needed |= names & locals_
    return sorted(chosen)


def check_cases(body: str, dialect: Dialect, check: re.Pattern[str],
                declared: Callable[[Statement], set[str]], *, whole: str, prefix: str = "",
                lead: Sequence[str] = ()) -> list[TestCase]:
    """The test cases of a test function's ``body``: one per check (a statement whose masked text
    ``check`` finds, such as an assert or a loop holding one), ``{prefix}assert-N``, of the
    ``lead`` lines, the earlier statements the check needs (:func:`slice_for`, with ``declared``)
    and the check. A body without a check is one case, ``whole``; an empty body none."""
    stmts = statements(body, dialect)
    checks = [i for i, s in enumerate(stmts) if check.search(s.masked)]
    if not checks:
        code = "\n".join([*lead, *(s.text for s in stmts)])
        return [TestCase(name=whole, code=code)] if stmts else []
    cases: list[TestCase] = []
    for k, i in enumerate(checks, start=1):
        needed = [stmts[j].text for j in slice_for(i, stmts, declared, checks)]
        cases.append(TestCase(name=f"{prefix}assert-{k}", code="\n".join([*lead, *needed, stmts[i].text])))
    return cases


def tested_function(declared: str, defined: Sequence[str], tests: Sequence[str], dialect: Dialect) -> str:
    """The entry point: the ``declared`` function, unless the ``tests`` never call it but call
    another of the ``defined`` ones (HumanEval's task 10 declares the helper ``is_palindrome``;
    its tests call ``make_palindrome``)."""
    called: set[str] = set()
    for code in tests:
        called |= identifiers(mask(code, dialect))
    if declared in called or not called:
        return declared
    return next((name for name in defined if name in called), declared)
