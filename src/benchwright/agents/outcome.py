"""What one agent run produced, whatever the agent (an external command or the built-in loop)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class AgentOutcome:
    """The agent's side of a run: what it said, what it did, how it ended."""

    responses: list[str] = field(default_factory=list)
    """Its final response after each turn."""
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    """Its steps (one JSON object each: a tool call and its result, a command...)."""
    exit_code: int | None = None
    """The command's exit status (the built-in loop: 0 when it called ``finish``)."""
    timed_out: bool = False
    stdout_tail: str = ""
    stderr_tail: str = ""
    wall_ms: float = 0.0
    cpu_ms: float | None = None
    steps: int = 0
    tokens_in: int | None = None
    tokens_out: int | None = None
    cost_usd: float | None = None
    stopped: str | None = None
    """Why it stopped when it was not on its own: ``timeout``, ``max_steps``, ``max_tokens``,
    or a provider's error."""
    error: str | None = None
    """The harness failed (not the agent): the run is an infra_error."""
    model: dict[str, Any] | None = None
    """The agent's model traffic through benchwright's endpoint (requests, tokens, cost,
    latency, failures: :meth:`benchwright.agents.proxy.Meter.to_dict`); None when it has no
    ``model:``."""
    version: str | None = None
    """The installed version of a preset's CLI."""
    home: dict[str, Any] | None = None
    """What its private home held after the run (``files`` by path, ``skipped``)."""
    violations: list[str] = field(default_factory=list)
    """What the harness refused of what the agent left in its workspace (a symbolic link where
    a file of the harness goes, a FIFO, a file larger than the harness reads...), each with the
    reason: nothing of it was followed or read, and each fails the run badge."""
