"""How one command or preset agent run is launched: its private home, what it sees besides the
workspace, and how it reaches its model.

* **Home**: a private writable HOME (and XDG folders) outside the graded workspace
  (:mod:`benchwright.agents.home`), kept in the run folder afterwards, never in the diff.
* **Mounts**: the preset's installed CLI (its folder in the tools folder) and the agent's
  ``mounts:``, read-only, at the same paths as on the host.
* **Model**: an agent with ``model:`` (every preset) reaches it through benchwright's loopback
  model endpoint (:class:`benchwright.agents.proxy.ModelProxy`) with a key of its own that
  meters the run; without the network, the sandbox's ``127.0.0.1:PORT`` is bridged to the
  endpoint's Unix socket and nothing else is reachable. The environment names the endpoint in
  the variables common clients read (``OPENAI_BASE_URL``, ``OPENAI_API_BASE``,
  ``ANTHROPIC_BASE_URL``... and ``BENCHWRIGHT_MODEL_BASE_URL``); a preset adds its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwright.agents.home import home_env
from benchwright.agents.preset import AgentContext, AgentPreset, ModelRoute
from benchwright.sandbox.base import Bridge, Mount

STDOUT_CAP = 16 * 1024 * 1024
"""A preset's stdout is captured up to this many bytes (its converter reads it)."""
COMMAND_STDOUT_CAP = 1024 * 1024
"""A bare command's stdout is captured up to this many bytes (its tail is kept)."""


def tool_mounts(folder: Path) -> tuple[Mount, ...]:
    """The read-only mount of a preset's installed CLI: none when the folder is under a
    system folder every sandbox already shows (``/usr``: the tools folder of a root install)."""
    from benchwright.sandbox.isolated import system_view

    real = str(folder.resolve())
    if any(real == root or real.startswith(root.rstrip("/") + "/") for root in system_view().roots):
        return ()
    return (Mount(folder),)


def route_env(route: ModelRoute) -> dict[str, str]:
    """The endpoint in the variables common model clients read."""
    return {
        "BENCHWRIGHT_MODEL_BASE_URL": route.base_url, "BENCHWRIGHT_MODEL_KEY": route.key,
        "BENCHWRIGHT_MODEL": route.model,
        "OPENAI_BASE_URL": route.openai_base, "OPENAI_API_BASE": route.openai_base,
        "OPENAI_API_KEY": route.key, "ANTHROPIC_BASE_URL": route.anthropic_base,
        "ANTHROPIC_API_KEY": route.key,
    }


@dataclass
class Invocation:
    """Everything about one agent run's launch besides its workspace and prompt."""

    home: Path
    """The private home (host path; shown at the same path inside)."""
    mounts: tuple[Mount, ...] = ()
    """The home (writable), the preset's tools and the agent's ``mounts:`` (read-only)."""
    route: ModelRoute | None = None
    bridge: Bridge | None = None
    preset: AgentPreset | None = None
    program: str | None = None
    """The preset's program (absolute path, the same inside)."""
    version: str | None = None
    """The installed version of the preset's CLI."""
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def stdout_cap(self) -> int:
        return STDOUT_CAP if self.preset is not None else COMMAND_STDOUT_CAP

    def env(self) -> dict[str, str]:
        """HOME, XDG and the endpoint (when the agent has a model)."""
        out = home_env(str(self.home))
        if self.route is not None:
            out.update(route_env(self.route))
        return out

    def context(self, turn: int, prompt_file: str, workdir: str) -> AgentContext:
        assert self.program is not None and self.route is not None
        return AgentContext(route=self.route, home=str(self.home), workdir=workdir, program=self.program,
                            prompt_file=prompt_file, turn=turn, options=self.options)
