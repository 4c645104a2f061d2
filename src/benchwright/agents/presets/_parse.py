"""Defensive readers shared by the preset converters: they never raise on what a CLI printed."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from benchwright.agents.preset import Converted, step

TEXT_CAP = 20_000
"""A step's text or result is kept up to this many characters."""
LINE_CAP = 4 * 1024 * 1024
"""A longer output line is not parsed as JSON (kept as clipped text)."""
MAX_STEPS = 10_000


def clip(value: object, cap: int = TEXT_CAP) -> str:
    """``value`` as text of at most ``cap`` characters (non-strings are JSON-dumped)."""
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError, RecursionError):
            text = repr(type(value))
    return text if len(text) <= cap else text[:cap] + "…"


def parse_json(text: str | bytes) -> Any:
    """The JSON value, or None when it is not JSON (or too deep, or too large)."""
    if len(text) > LINE_CAP:
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError, TypeError):
        return None


def json_lines(data: bytes) -> list[dict[str, Any] | str]:
    """Each non-empty line of ``data``: its JSON object, or the line's text when it is not one."""
    out: list[dict[str, Any] | str] = []
    for raw in data.splitlines():
        line = raw.strip()
        if not line:
            continue
        value = parse_json(line)
        out.append(value if isinstance(value, dict) else clip(line.decode(errors="replace")))
    return out


def json_events(stdout: bytes, out: Converted) -> Iterator[dict[str, Any]]:
    """The JSON objects a CLI printed one a line; a line that is not one is kept in ``out``, in
    its place, as a message step of role ``output``."""
    for item in json_lines(stdout):
        if isinstance(item, str):
            out.steps.append(step("message", text=item, role="output"))
        else:
            yield item


def get(obj: object, *path: str | int) -> Any:
    """``obj[p0][p1]…`` or None when a step is missing or of the wrong type."""
    for key in path:
        if isinstance(key, int):
            if not isinstance(obj, list) or not -len(obj) <= key < len(obj):
                return None
            obj = obj[key]
        else:
            if not isinstance(obj, dict):
                return None
            obj = obj.get(key)
    return obj


def label(value: object, cap: int = 200) -> str | None:
    """A short string field (an id, a name, a status) clipped to ``cap`` characters; None when it
    is not a string."""
    return clip(value, cap) if isinstance(value, str) else None


def text_of(value: object) -> str | None:
    """A text field that may be a string, a list of ``{"text": …}`` blocks, or absent."""
    if isinstance(value, str):
        return clip(value)
    if isinstance(value, list):
        parts = [b if isinstance(b, str) else get(b, "text") for b in value]
        joined = "\n".join(p for p in parts if isinstance(p, str))
        return clip(joined) if joined else None
    return None


def arguments(value: object) -> Any:
    """Tool arguments: a JSON string decoded when it is one, otherwise kept (clipped if huge)."""
    if isinstance(value, str):
        decoded = parse_json(value)
        return decoded if isinstance(decoded, (dict, list)) else clip(value)
    if isinstance(value, (dict, list)):
        return value if len(clip(value, TEXT_CAP + 1)) <= TEXT_CAP else clip(value)
    return None if value is None else clip(value)


def guarded(convert: Callable[[], Converted], stdout: bytes) -> Converted:
    """Run a converter; on any failure keep the output's tail as one text step."""
    try:
        got = convert()
        got.steps = got.steps[:MAX_STEPS]
        return got
    except Exception as e:
        tail = stdout[-TEXT_CAP:].decode(errors="replace")
        return Converted(steps=[step("message", text=tail, error=f"unreadable output: {type(e).__name__}")])
