"""Prompt and test templates: sandboxed Jinja2 with ``${name}`` variables; undefined is an error."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import jinja2
from jinja2.sandbox import ImmutableSandboxedEnvironment


class Parameters(dict[str, bool]):
    """Parameter values by name; a parameter nobody set is ``False``."""

    def __missing__(self, key: str) -> bool:
        return False


@lru_cache(maxsize=1)
def environment() -> ImmutableSandboxedEnvironment:
    return ImmutableSandboxedEnvironment(
        variable_start_string="${",
        variable_end_string="}",
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


@dataclass(frozen=True)
class TemplateFailure(Exception):
    """A template could not be compiled or rendered."""

    message: str
    line: int | None
    """1-based line inside the template text."""

    def __str__(self) -> str:
        return self.message


@lru_cache(maxsize=4096)
def _compile(text: str) -> jinja2.Template:
    return environment().from_string(text)


def render(text: str, context: Mapping[str, Any]) -> str:
    """Render ``text`` with ``context``; raise :class:`TemplateFailure` naming the line."""
    if "${" not in text and "{%" not in text and "{#" not in text:
        return text
    try:
        template = _compile(text)
    except jinja2.TemplateSyntaxError as e:
        raise TemplateFailure(f"template syntax error: {e.message}", e.lineno) from None
    try:
        return template.render(**context)
    except jinja2.UndefinedError as e:
        raise TemplateFailure(f"undefined template variable: {e.message}", _line_of(e)) from None
    except jinja2.exceptions.SecurityError as e:
        raise TemplateFailure(f"template does something unsafe: {e}", _line_of(e)) from None
    except jinja2.TemplateError as e:
        raise TemplateFailure(f"template error: {e}", _line_of(e)) from None
    except (TypeError, ValueError, KeyError, AttributeError, ZeroDivisionError) as e:
        raise TemplateFailure(f"template error: {type(e).__name__}: {e}", _line_of(e)) from None


def _line_of(exc: BaseException) -> int | None:
    tb = exc.__traceback__
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return line
