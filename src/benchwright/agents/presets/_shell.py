"""Helpers for building a preset's shell command and files."""

from __future__ import annotations

import json
import shlex
from typing import Any

from benchwright.agents.preset import AgentContext

QUIET = {"NO_COLOR": "1", "FORCE_COLOR": "0", "TERM": "dumb", "CI": "1"}
"""Set for every preset: no colours, no terminal tricks."""

KEY_VARIABLE = "BENCHWRIGHT_MODEL_KEY"
"""The variable a model provider that a preset writes into the CLI's configuration reads its key
from (the key itself is never written into a file)."""


def q(value: str) -> str:
    return shlex.quote(value)


def prompt_arg(ctx: AgentContext) -> str:
    """The prompt as one shell word: ``"$(cat FILE)"``."""
    return f'"$(cat {q(ctx.prompt_file)})"'


def continuing(ctx: AgentContext, words: list[str]) -> str:
    """The command line of ``words``, with ``--continue`` (the CLI resumes its last session in
    the workspace) after the first turn, reading the prompt from stdin."""
    more = ["--continue"] if ctx.turn > 1 else []
    return " ".join([*words, *more]) + f" < {q(ctx.prompt_file)}"


def model_option(ctx: AgentContext, key: str, default: str) -> str:
    """A string option of the agent's ``options:`` (``default`` when absent or not a string)."""
    value = ctx.options.get(key)
    return value if isinstance(value, str) and value else default


def json_file(value: dict[str, Any]) -> bytes:
    return (json.dumps(value, indent=2) + "\n").encode()


def in_home(ctx: AgentContext, relative: str) -> str:
    return ctx.home.rstrip("/") + "/" + relative
