"""Agent presets: the coding-agent CLIs people use, ready to grade with one line of config.

An execution config names a preset instead of a command::

    agents:
      - {preset: qwen-code, model: openrouter/qwen/qwen3-coder}

The preset supplies what a user would otherwise have to find out for each CLI: the package
that installs it (:class:`Package`, installed by ``benchwright agents install NAME`` into the
tools folder the sandbox shows read-only), the command line and flags of a non-interactive run
(:meth:`AgentPreset.command`), the environment and configuration files that point it at its
model (:meth:`AgentPreset.environment`, :meth:`AgentPreset.home_files`), and a converter from
what the CLI prints or saves into benchwright's trajectory (:meth:`AgentPreset.convert`).

The model is always reached through benchwright's loopback model endpoint (:class:`ModelRoute`):
an OpenAI-, Anthropic- (and Responses- and Gemini-) compatible server that benchwright runs
for the run and forwards through the configured provider, so that every agent run records
tokens, cost, latency and requests, and no real key ever enters the sandbox.

Presets are registry plug-ins of kind ``agent-preset``: a third-party package adds one with
``registry.add("agent-preset", "my-agent", MyPreset)`` from its ``benchwright.plugins`` entry
point, exactly as the built-ins in :mod:`benchwright.agents.presets` do.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

Wire = Literal["openai", "anthropic", "responses", "gemini"]
"""The wire format a CLI speaks to its model: OpenAI chat completions, Anthropic messages,
OpenAI Responses, Gemini generateContent."""


@dataclass(frozen=True)
class ModelRoute:
    """Where and how an agent run reaches its model: benchwright's loopback endpoint."""

    base_url: str
    """``http://127.0.0.1:PORT`` (no path), the same inside the sandbox."""
    key: str
    """The run's key for the endpoint: it identifies (and meters) this agent run; it is not a
    key of any real service and is useless outside the run."""
    model: str
    """The model name to give the CLI (the endpoint answers with the configured model whatever
    name the CLI sends)."""

    @property
    def openai_base(self) -> str:
        """For OpenAI clients (``OPENAI_BASE_URL``): ``…/v1``."""
        return self.base_url + "/v1"

    @property
    def anthropic_base(self) -> str:
        """For Anthropic clients (``ANTHROPIC_BASE_URL``): the SDK adds ``/v1/messages``."""
        return self.base_url

    @property
    def gemini_base(self) -> str:
        """For Google GenAI clients (``GOOGLE_GEMINI_BASE_URL``)."""
        return self.base_url


@dataclass(frozen=True)
class Package:
    """What ``benchwright agents install`` installs for a preset."""

    ecosystem: Literal["pip", "npm"]
    """``pip``: into a virtual environment of the sandbox's Python; ``npm``: with the system
    node, into a folder of its own."""
    name: str
    """The package's name in its registry (``mini-swe-agent``, ``@qwen-code/qwen-code``)."""
    version: str
    """The pinned version installed by default (``--version`` overrides it)."""
    program: str
    """The executable the package puts in its ``bin`` folder (``mini``, ``qwen``)."""
    note: str = ""
    """Why this version is pinned, when it is not the newest (shown by ``list agents``)."""


@dataclass(frozen=True)
class AgentContext:
    """What a preset knows when it builds one turn of one agent run."""

    route: ModelRoute
    home: str
    """The agent's private writable HOME inside the sandbox (outside the graded workspace)."""
    workdir: str
    """The graded workspace inside the sandbox (``/work``), the working directory."""
    program: str
    """The absolute path of the preset's program inside the sandbox."""
    prompt_file: str
    """A file holding this turn's prompt (also in ``$BENCHWRIGHT_PROMPT``)."""
    turn: int
    """1 for the first message; later turns of a session continue the conversation where the
    CLI can."""
    options: Mapping[str, Any] = field(default_factory=dict)
    """The agent's ``options:`` from the config (preset-specific, documented per preset)."""


@dataclass
class Converted:
    """A CLI's own output turned into benchwright's trajectory."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    """One object per step: ``{"kind": "message" | "tool_call" | "tool_result", "tool",
    "arguments", "result", "text", ...}`` (see :func:`step`)."""
    response: str | None = None
    """The final response of the turn (None: the CLI's stdout tail stands for it)."""


HomeReader = Callable[[str], bytes | None]
"""Reads a file of the agent's private home by its path relative to HOME: at most a capped
number of bytes, a regular file only, never through a symbolic link; None when it is missing
or refused."""


def step(kind: Literal["message", "tool_call", "tool_result"], *, text: str | None = None,
         tool: str | None = None, arguments: Any = None, result: str | None = None,
         **extra: Any) -> dict[str, Any]:
    """One trajectory step in benchwright's shape (empty fields left out)."""
    out: dict[str, Any] = {"kind": kind}
    for key, value in (("text", text), ("tool", tool), ("arguments", arguments), ("result", result)):
        if value is not None:
            out[key] = value
    out.update({k: v for k, v in extra.items() if v is not None})
    return out


class AgentPreset(abc.ABC):
    """One coding-agent CLI. Subclasses set the class attributes and the four methods."""

    name: ClassVar[str]
    """The preset's name in configs (``preset: qwen-code``)."""
    title: ClassVar[str]
    """The CLI's name for people (``Qwen Code``)."""
    homepage: ClassVar[str]
    package: ClassVar[Package]
    wire: ClassVar[Wire]
    """The wire format the CLI is configured to speak to the endpoint."""

    @abc.abstractmethod
    def command(self, ctx: AgentContext) -> str:
        """The shell command line of one non-interactive turn (run with ``/bin/sh -c`` in the
        workspace); the prompt is in ``ctx.prompt_file`` and ``$BENCHWRIGHT_PROMPT``."""

    def environment(self, ctx: AgentContext) -> dict[str, str]:
        """Variables the CLI needs to reach its model and run unattended."""
        return {}

    def home_files(self, ctx: AgentContext) -> dict[str, bytes]:
        """Configuration files written into the private HOME before the first turn, by path
        relative to HOME."""
        return {}

    def convert(self, stdout: bytes, home: HomeReader, ctx: AgentContext) -> Converted:
        """The turn's steps and final response from what the CLI printed (``stdout``, up to a
        cap) and saved in its home. Must not raise on any input: output it cannot read is kept
        as a text step."""
        return Converted()
