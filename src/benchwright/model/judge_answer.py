"""Reading a judge model's answer: the one parser of every judge in benchwright (the code
criteria's 0-10 scores, the agent judge's rubric verdict).

A judge is asked for a YAML (or JSON) object; what comes back is often that object in a fence,
in prose, with Markdown around its keys, or not quite valid YAML. :func:`answer_mappings` yields
every mapping the answer may hold, most explicit first; the caller takes the first one that has
what it asked for, and never guesses a value that is not there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from ruamel.yaml import YAML

__all__ = ["FENCE", "answer_mappings", "key_of", "load"]

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[^\n]*\n(.*?)```", re.S)
"""A Markdown fence: group 1 its language, group 2 its text."""
LINE = re.compile(r"^[\s>*#`-]*\**([A-Za-z][A-Za-z0-9 _-]*?)\**\s*[:=]\s*(.*?)\s*$")
"""A ``key: value`` line (``key = value``), Markdown emphasis, quoting and bullets around the key
allowed: group 1 the key, group 2 the value."""
_BLOCK_STARTS = ("", ">", ">-", "|", "|-")
_yaml = YAML(typ="safe", pure=True)


def key_of(name: Any) -> str:
    """``Code Quality`` / ``code-quality`` / ``**Verdict**`` -> ``code_quality`` / ``verdict``."""
    return re.sub(r"[\s-]+", "_", re.sub(r"[*`#>]+", " ", str(name)).strip().lower())


def load(text: str) -> Any:
    """``text`` as JSON, else as YAML; ``None`` when it is neither."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return _yaml.load(text)
    except Exception:  # ruamel raises many kinds for arbitrary prose; unusable either way
        return None


def _loose(text: str) -> dict[str, Any]:
    """``key: value`` lines anywhere (Markdown around them allowed), for answers that are not
    valid YAML (an unquoted ``reasoning: a: b``, ``**Code quality**: 7/10``). An indented block
    or a list after ``key:`` goes with it: a list (or a block that is YAML) is loaded, other
    text is joined into one line. The first line of a key wins; values keep their text
    (emphasis and quotes stripped)."""
    out: dict[str, Any] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = LINE.match(lines[i])
        i += 1
        if not m or lines[i - 1][:1].isspace():
            continue
        key, value = key_of(m.group(1)), m.group(2)
        block: list[str] = []
        if value in _BLOCK_STARTS:  # a block follows: indented lines, or a list
            while i < len(lines) and (not lines[i].strip() or lines[i][:1].isspace()
                                      or lines[i].startswith("- ")):
                block.append(lines[i])
                i += 1
        if key in out:
            continue
        if (block and block[0].lstrip().startswith("- ")) or value.startswith(("[", "{")):
            out[key] = load("\n".join(block) if block else value)
        elif block:
            out[key] = " ".join(b.strip() for b in block if b.strip())
        else:
            out[key] = value.strip().strip("*`").strip("\"'")
    return out


def _embedded(text: str, anchor: Callable[[str, str], bool]) -> str | None:
    """The lines from the first ``key: value`` line that ``anchor(key, value)`` accepts to the
    last line that looks like YAML (a ``key: value`` line, an indented line, a list item)."""
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines)
                  if (m := LINE.match(line)) and anchor(key_of(m.group(1)), m.group(2))), None)
    if first is None:
        return None
    last = first
    for i in range(first, len(lines)):
        line = lines[i]
        if LINE.match(line) or line[:1].isspace() or line.lstrip().startswith("- "):
            last = i
    return "\n".join(lines[first:last + 1])


def answer_mappings(text: str, anchor: Callable[[str, str], bool]
                    ) -> Iterator[tuple[str, dict[Any, Any]]]:
    """Every mapping a judge's ``text`` may hold, with where it was found, most explicit first:

    * ``fenced``: each fenced block as JSON or YAML, then its ``key: value`` lines;
    * ``yaml``: the whole answer as JSON or YAML;
    * ``braces``: the outermost ``{...}`` (JSON in prose);
    * ``embedded``: the lines from the first ``key: value`` line that ``anchor(key, value)``
      accepts (a key of the rubric, a number...) on, as YAML (YAML in prose);
    * ``pairs``: ``key: value`` lines anywhere.

    Keys are as the judge wrote them, except in ``pairs`` and a fence's lines (normalised by
    :func:`key_of`): the caller normalises."""
    for m in FENCE.finditer(text):
        for data in (load(m.group(2)), _loose(m.group(2))):
            if isinstance(data, dict) and data:
                yield "fenced", data
    data = load(text)
    if isinstance(data, dict):
        yield "yaml", data
    start, end = text.find("{"), text.rfind("}")
    if 0 <= start < end:
        data = load(text[start:end + 1])
        if isinstance(data, dict):
            yield "braces", data
    embedded = _embedded(text, anchor)
    if embedded is not None:
        data = load(embedded)
        if isinstance(data, dict):
            yield "embedded", data
    data = _loose(text)
    if data:
        yield "pairs", data
