"""Make arbitrary text safe to store where benchwright renders it as a template.

Task prompts and test code are Jinja2 templates with ``${...}`` variables, ``{% ... %}`` blocks
and ``{# ... #}`` comments. Imported text is data, not a template, so any text
that a template engine would interpret is wrapped in ``{% raw %}`` blocks. Text without such
sequences is returned unchanged, so most imported tasks stay readable.
"""

from __future__ import annotations

import re

__all__ = ["escape_template", "needs_escaping"]

_DELIMITERS = ("${", "{%", "{#")

# What must not appear inside a raw block: the start of anything Jinja would take for its end
# (``{%``, optional ``-``/``+``, ``endraw``), and carriage returns, which Jinja's lexer turns
# into newlines even inside raw blocks. Each is emitted as a string expression instead.
_HAZARD = re.compile(r"\r|\{%(?=[-+]?\s*endraw)")

# ``{%+`` keeps trailing whitespace of the raw text even when ``lstrip_blocks`` is enabled.
_RAW_BEGIN = "{% raw %}"
_RAW_END = "{%+ endraw %}"


def needs_escaping(text: str) -> bool:
    """Whether rendering ``text`` as a template could change it."""
    return "\r" in text or any(d in text for d in _DELIMITERS)


def _literal(piece: str) -> str:
    return "${'\\r'}" if piece == "\r" else "${'{%'}"


def escape_template(text: str) -> str:
    """Return a template that renders to exactly ``text`` (no variables needed).

    >>> escape_template("plain text")
    'plain text'
    >>> escape_template("a ${b}")
    '{% raw %}a ${b}{%+ endraw %}'
    """
    if not needs_escaping(text):
        return text
    out: list[str] = []
    start = 0
    for match in _HAZARD.finditer(text):
        if match.start() > start:
            out.append(_RAW_BEGIN + text[start : match.start()] + _RAW_END)
        out.append(_literal(match.group()))
        start = match.end()
    if start < len(text):
        out.append(_RAW_BEGIN + text[start:] + _RAW_END)
    return "".join(out)
