"""Precompiled headers for C++ samples: the standard headers a solution opens with, parsed once.

Most of a small C++ sample's compile time is spent parsing the standard headers it includes
(``<vector>``, ``<string>``, ``<algorithm>``: about half a second of g++; ``<bits/stdc++.h>``
several seconds). Samples of one task open with the same ``#include`` lines (they come from the
task's prompt), so those lines are compiled once into a GCC precompiled header and every later
sample with the same lines loads it instead.

What the compiler sees stays what it would see without it: the test program starts with
``#include "bw_pre.hpp"``, a header holding exactly the solution's leading ``#include <...>``
lines in their order, before the solution itself (which includes them again: a no-op, every
standard header is guarded). GCC uses ``bw_pre.hpp.gch`` only when it was made with the same
compiler, flags and macros, and otherwise reads ``bw_pre.hpp`` as text, so a stale or unusable
precompiled header costs time, never a different program.

Only names of the shape of a standard header (letters, digits, ``_``, ``+``, ``.``, ``/``; no
``..``, no leading ``/``) are taken, and only from the solution's first lines (comments, blank
lines and such includes). The header is compiled in the sandbox, like the samples, and only for
a set of lines seen a second time, so a set seen once (or a stream of made-up ones) costs
nothing extra. Made headers are kept in memory up to :data:`CACHE_BYTES`, least recently used
first out.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence

from benchwright.lang.artifact import made_in_sandbox
from benchwright.sandbox.base import Sandbox

__all__ = ["HEADER", "PRECOMPILED", "HeaderCache", "leading_includes"]

HEADER = "bw_pre.hpp"
"""The header the test program includes first."""
PRECOMPILED = HEADER + ".gch"
"""Its precompiled form, beside it in the work folder (where GCC looks for it)."""
CACHE_BYTES = 384 * 1024 * 1024
"""Precompiled headers kept in memory at most (``<bits/stdc++.h>`` makes about 100 MB)."""
MAX_BYTES = 256 * 1024 * 1024
"""A larger precompiled header is not kept (it would cost more to copy than to parse)."""
MAX_INCLUDES = 64
SEEN_CAP = 10_000
"""Distinct sets of lines counted before the count starts again."""

_INCLUDE = re.compile(r"#[ \t]*include[ \t]*<(?P<name>[A-Za-z0-9_][A-Za-z0-9_+./-]*)>[ \t]*")
_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)


def leading_includes(solution: str) -> tuple[str, ...]:
    """The standard headers the solution's first lines include, in order (empty when its first
    line of code is anything else)."""
    text = _BLOCK_COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), solution)
    names: list[str] = []
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        m = _INCLUDE.fullmatch(line)
        if m is None:
            break
        name = m.group("name")
        if ".." in name or "//" in name or name.endswith("/"):
            break
        if name not in names:
            names.append(name)
        if len(names) > MAX_INCLUDES:
            return ()
    return tuple(names)


def header_text(includes: Sequence[str]) -> str:
    return "".join(f"#include <{name}>\n" for name in includes)


class HeaderCache:
    """Precompiled headers by (compiler, flags, include lines); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._building: dict[tuple[str, ...], threading.Lock] = {}
        self._made: OrderedDict[tuple[str, ...], bytes | None] = OrderedDict()
        self._seen: dict[tuple[str, ...], int] = {}
        self._bytes = 0

    def get(self, sandbox: Sandbox, compiler: str, flags: Sequence[str], includes: Sequence[str]
            ) -> bytes | None:
        """The precompiled header for these lines, made now when they are seen the second
        time; None when there is none (yet, or it could not be made)."""
        if not includes:
            return None
        key = (compiler, *flags, "\0", *includes)
        with self._lock:
            if key in self._made:
                self._made.move_to_end(key)
                return self._made[key]
            seen = self._seen.get(key, 0) + 1
            if len(self._seen) >= SEEN_CAP:
                self._seen.clear()
            self._seen[key] = seen
            if seen < 2:
                return None
            building = self._building.setdefault(key, threading.Lock())
        with building:
            with self._lock:
                if key in self._made:
                    return self._made[key]
            data = _build(sandbox, compiler, flags, includes)
            with self._lock:
                self._building.pop(key, None)
                self._made[key] = data
                self._bytes += len(data or b"")
                while self._bytes > CACHE_BYTES and len(self._made) > 1:
                    _, old = self._made.popitem(last=False)
                    self._bytes -= len(old or b"")
            return data


def _build(sandbox: Sandbox, compiler: str, flags: Sequence[str], includes: Sequence[str]
           ) -> bytes | None:
    """Compile the header in the sandbox; None when it does not compile (an unknown header:
    the samples then compile without it and report the error themselves)."""
    return made_in_sandbox(sandbox, [compiler, *flags, "-x", "c++-header", "-o", PRECOMPILED, HEADER],
                           {HEADER: header_text(includes).encode()}, PRECOMPILED,
                           max_bytes=MAX_BYTES, env={"LC_ALL": "C", "TMPDIR": "."})
