"""Reading and writing YAML documents with ruamel.yaml.

Documents are read round-trip so an edit keeps comments, and every node's line is remembered so a
problem found later (by pydantic, by a template) can name the line it comes from.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.scalarstring import FoldedScalarString, LiteralScalarString

from benchwright.errors import InputError, Problem

MAX_BYTES = 50 * 1024 * 1024
MAX_EXPANDED_NODES = 2_000_000
"""A document whose aliases expand past this many nodes is refused (an alias bomb)."""
FAST_DEPTH = 256
"""A document that may nest deeper than this (brackets, or columns of indentation) is read by
the pure-Python parser, which stops at Python's recursion limit: the C parser recurses on the C
stack and a few tens of thousands of ``[`` crash the process."""
_BRACKETS = re.compile(r"[\[\]{}]")
_LINE_PREFIX = re.compile(r"^[ \t?:-]*", re.M)

DocPath = tuple[str | int, ...]


def format_path(path: DocPath) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


@dataclass
class Document:
    """A loaded YAML file: plain data, and on demand the round-trip tree and every node's line.

    Data is read with the fast C loader; the slower round-trip parse (comments, lines) only
    happens when a line is asked for (to report a problem) or the file is edited.
    """

    file: str
    data: Any
    text: str | None = None
    _raw: Any = field(default=None, repr=False)
    _lines: dict[DocPath, int] | None = field(default=None, repr=False)

    def _round_trip(self) -> None:
        if self._raw is not None or self.text is None:
            return
        try:
            self._raw = _yaml().load(io.StringIO(self.text))
        except (YAMLError, ValueError, RecursionError):  # pragma: no cover - parsed before
            return

    @property
    def raw(self) -> Any:
        """The round-trip tree (CommentedMap/Seq): edit it and dump it to keep comments."""
        self._round_trip()
        return self._raw if self._raw is not None else self.data

    @property
    def lines(self) -> dict[DocPath, int]:
        """The line of every key and item, from the C parser's nodes (a few times faster than
        the round-trip parse, which only editing needs)."""
        if self._lines is None:
            self._lines = {(): 1}
            if self.text is not None:
                try:
                    if _deep(self.text):
                        self._round_trip()
                        _plain(self._raw, (), self._lines)
                    else:
                        _node_lines(YAML(typ="safe", pure=False).compose(self.text), (), self._lines)
                except (YAMLError, ValueError, RecursionError):  # pragma: no cover - parsed before
                    pass
        return self._lines

    def line_of(self, path: DocPath) -> int | None:
        """The line of ``path``, or of its nearest ancestor that has one."""
        p = tuple(path)
        while p:
            if p in self.lines:
                return self.lines[p]
            p = p[:-1]
        return self.lines.get((), None)

    def value_line(self, path: DocPath, inner: int | None) -> int | None:
        """The file line of line ``inner`` (1-based) inside the string value at ``path``."""
        base = self.line_of(path)
        if base is None or inner is None:
            return base
        node = self.raw
        try:
            for part in path:
                node = node[part]
        except (KeyError, IndexError, TypeError):
            return base
        block = isinstance(node, (LiteralScalarString, FoldedScalarString))
        return base + inner if block else base + inner - 1

    def problem(self, path: DocPath, message: str, hint: str = "", severity: str = "error") -> Problem:
        return Problem(
            file=self.file,
            message=message,
            path=format_path(path),
            line=self.line_of(path),
            hint=hint,
            severity=severity,
        )


def _yaml() -> YAML:
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 100
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def _expanded_size(value: Any, memo: dict[int, int], limit: int) -> int:
    """How many nodes ``value`` has once every alias (a shared object) is written out."""
    if not isinstance(value, (dict, list)):
        return 1
    key = id(value)
    if key in memo:
        return memo[key]
    memo[key] = limit + 1  # a recursive alias counts as too big
    size = 1
    children = value.values() if isinstance(value, dict) else value
    for v in children:
        size += _expanded_size(v, memo, limit)
        if size > limit:
            break
    memo[key] = size
    return size


def _deep(text: str) -> bool:
    """Whether ``text`` may nest deeper than :data:`FAST_DEPTH` (an over-estimate: brackets in
    strings count too, so a document it flags is only parsed more slowly)."""
    depth = 0
    for m in _BRACKETS.finditer(text):
        depth = depth + 1 if m.group() in "[{" else max(0, depth - 1)
        if depth > FAST_DEPTH:
            return True
    return any(len(m.group()) > 2 * FAST_DEPTH for m in _LINE_PREFIX.finditer(text))


def _node_lines(node: Node | None, path: DocPath, lines: dict[DocPath, int]) -> None:
    """The line of every key and item under ``node`` (as :func:`_plain` finds them)."""
    if isinstance(node, MappingNode):
        for key, value in node.value:
            part = str(key.value) if isinstance(key, ScalarNode) else str(key)
            lines.setdefault((*path, part), key.start_mark.line + 1)
            _node_lines(value, (*path, part), lines)
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            lines.setdefault((*path, i), item.start_mark.line + 1)
            _node_lines(item, (*path, i), lines)


def _plain(value: Any, path: DocPath, lines: dict[DocPath, int]) -> Any:
    if isinstance(value, CommentedMap):
        out: dict[Any, Any] = {}
        for k in value:
            try:
                line = value.lc.key(k)[0] + 1
            except (KeyError, TypeError, AttributeError):
                line = None
            key = k if isinstance(k, (str, int, float, bool)) or k is None else str(k)
            if line is not None:
                lines[(*path, str(key))] = line
            out[key] = _plain(value[k], (*path, str(key)), lines)
        return out
    if isinstance(value, CommentedSeq):
        items = []
        for i, v in enumerate(value):
            with contextlib.suppress(KeyError, TypeError, AttributeError):
                lines[(*path, i)] = value.lc.item(i)[0] + 1
            items.append(_plain(v, (*path, i), lines))
        return items
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    return value


def parse_text(text: str, file: str) -> Document:
    """Parse YAML text; raise :class:`InputError` with the line on any problem."""
    if "\x00" in text:
        raise InputError([Problem(file, "this is a binary file, not YAML", line=None,
                                  hint="point at the .yaml file itself")])
    if not text.strip():
        raise InputError([Problem(file, "the file is empty", line=1,
                                  hint="write the document, e.g. start with 'version: 1'")])
    try:
        data = YAML(typ="safe", pure=_deep(text)).load(text)
    except MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else None
        msg = " ".join(str(x) for x in (e.context, e.problem) if x) or str(e)
        raise InputError([Problem(file, f"invalid YAML: {msg}", line=line,
                                  hint="check indentation, colons and quoting on that line")]) from None
    except RecursionError:
        raise InputError([Problem(file, "the YAML nests too deeply to read", line=None,
                                  hint="write the data flatter")]) from None
    except (YAMLError, ValueError) as e:
        raise InputError([Problem(file, f"invalid YAML: {e}", hint="check the YAML syntax")]) from None
    try:
        if _expanded_size(data, {}, MAX_EXPANDED_NODES) > MAX_EXPANDED_NODES:
            raise InputError([Problem(file, "YAML aliases expand to more than "
                                      f"{MAX_EXPANDED_NODES} nodes (an alias bomb?)", line=1,
                                      hint="write the data out instead of nesting aliases")])
        return Document(file=file, data=_normalise(data), text=text)
    except RecursionError:
        raise InputError([Problem(file, "the YAML nests too deeply to read", line=None,
                                  hint="write the data flatter")]) from None


def _normalise(value: Any) -> Any:
    """Keys of mappings as plain scalars (a YAML key may be a date or a list)."""
    if isinstance(value, dict):
        return {(k if isinstance(k, (str, int, float, bool)) or k is None else str(k)): _normalise(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_normalise(v) for v in value]
    return value


def read_text(path: Path) -> str:
    """Read a UTF-8 text file, refusing directories, huge and binary files with a clear message."""
    file = str(path)
    if not path.exists():
        raise InputError([Problem(file, "file not found", hint="check the path")])
    if path.is_dir():
        raise InputError([Problem(file, "this is a folder, not a file", hint="name a .yaml file")])
    size = path.stat().st_size
    if size > MAX_BYTES:
        raise InputError([Problem(file, f"file is {size} bytes, more than {MAX_BYTES}",
                                  hint="split it into several task sources")])
    data = path.read_bytes()
    if b"\x00" in data:
        raise InputError([Problem(file, "this is a binary file, not YAML",
                                  hint="point at the .yaml file itself")])
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError([Problem(file, f"not UTF-8 text (byte {e.start})",
                                  hint="save the file as UTF-8")]) from None


def load(path: Path) -> Document:
    return parse_text(read_text(path), str(path))


def dump_text(data: Any) -> str:
    buf = io.StringIO()
    _yaml().dump(data, buf)
    return buf.getvalue()


def umask() -> int:
    """The process's umask, read without changing it (``/proc/self/status`` on Linux; else set
    and restored at once, as Python offers no other way)."""
    with contextlib.suppress(OSError, ValueError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    old = os.umask(0o022)
    os.umask(old)
    return old


def atomic_write(path: Path, text: str, *, mode: int | None = None) -> None:
    """Write ``text`` to ``path`` so that readers see the old or the new file, never half.

    The file gets ``mode`` when given (0o600 for a private file), else keeps the mode it had; a
    new file gets the mode any tool of the user would give it (0666 less the umask: 0644 under
    umask 022), not the 0600 of a temporary file.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except FileNotFoundError:
            mode = 0o666 & ~umask()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dump(data: Any, path: Path) -> None:
    atomic_write(path, dump_text(data))


def edit(path: Path, change: Callable[[Any], None]) -> None:
    """Load ``path`` round-trip, apply ``change`` to the document in place, write it back.

    Comments, key order and quoting survive the edit.
    """
    doc = load(path)
    change(doc.raw)
    dump(doc.raw, path)
