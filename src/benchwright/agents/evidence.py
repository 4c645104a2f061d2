"""What the judge of an agent run reads: the task, the transcript and trajectory, the diff, the primary test command and its
result, the scorer table, the llm_judge rubric notes, and the agent's output tails and exit code."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class ScorerRow:
    """One scorer's result, as the judge sees it in the scorer table."""

    name: str
    type: str
    verdict: Literal["PASS", "FAIL", "N/A"]
    score: float
    required: bool
    output: str = ""


@dataclass(frozen=True)
class Evidence:
    """Everything about one agent run that the judge is given."""

    scenario: str
    task: str
    turns: tuple[str, ...]
    agent: str = ""
    """The agent's name: part of the judge request's task (``scenario/task/agent``), so each
    agent's run is its own question (for the cache and for recorded verdicts)."""
    """What the agent was asked: one prompt, or every turn of a session."""
    expected_outcome: Literal["completion", "refusal"] = "completion"
    responses: tuple[str, ...] = ()
    """The agent's final response after each turn (its response file, else its output tail)."""
    trajectory: tuple[dict[str, Any], ...] = ()
    """The steps the agent reported (tool calls, commands...), when it reported any."""
    diff: str | None = None
    """The cumulative diff against the baseline; None for a ledger task (no workspace)."""
    primary_command: str | None = None
    """The first ``command`` scorer's command (the objective test), and its result below."""
    primary_result: str | None = None
    scorers: tuple[ScorerRow, ...] = ()
    rubric_notes: tuple[str, ...] = ()
    """The ``llm_judge`` scorers' rubrics (a required one is marked so in its text)."""
    judge_notes: str | None = None
    """The task's own notes for the judge."""
    exit_code: int | None = None
    timed_out: bool = False
    stdout_tail: str = ""
    stderr_tail: str = ""
    violations: tuple[str, ...] = ()
    """What the harness refused of what the agent left in its workspace (the run badge fails)."""
    extra: dict[str, Any] = field(default_factory=dict)
