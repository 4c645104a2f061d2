"""The result record and the generation record, one JSON object a line."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Outcome = Literal["pass", "fail", "error", "untested", "infra_error"]
Verdict = Literal["pass", "fail", "n/a"]


class Record(BaseModel):
    """One result of one criterion for one sample. The standard keys are never renamed."""

    model_config = ConfigDict(extra="allow")

    run_id: str
    execution_id: str = Field(description="One per sample.")
    task_source: str
    task: str
    language: str
    model: str
    sample: int
    criterion: str
    executor: str = Field(description="The plug-in that produced the record.")
    score: float | None = None
    unit: str | None = None
    verdict: Verdict | None = None
    required: bool | None = None
    output: str | None = None
    error: str | None = None
    time_ms: float | None = None
    test_case: str | None = None
    code: str | None = Field(default=None, description="For unit tests: the exact code executed.")
    # additions
    outcome: Outcome | None = Field(default=None, description=(
        "The sample's outcome: pass (every test case passed), fail (a test failed), error (the code "
        "crashed, timed out, or did not compile or import), untested (no test case applies to the "
        "task in this language and the code compiled or loaded: never a pass, never in pass@k) or "
        "infra_error (the harness, sandbox, toolchain or provider failed: never counted)."))
    status: str | None = Field(default=None, description="Test case status: pass/fail/error/timeout/not_run.")
    line: int | None = Field(default=None, description="Line in `code` where a test failed.")
    hidden: bool | None = None
    difficulty: str | None = None
    area: str | None = None
    details: dict[str, Any] | None = None
    record_index: int = Field(default=0, description="Position of this record among its sample's.")
    record_count: int = Field(default=1, description="Records written for this sample (for resume).")


class Generation(BaseModel):
    """One model answer for one sample (``generations.jsonl``)."""

    model_config = ConfigDict(extra="allow")

    run_id: str
    execution_id: str
    task_source: str
    task: str
    language: str
    model: str
    provider: str
    sample: int
    mode: Literal["instruct", "complete"] = "instruct"
    messages: list[dict[str, str]] = Field(default_factory=list)
    prompt: str = ""
    raw: str | None = None
    code: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_estimated: bool = False
    latency_ms: float | None = None
    finish_reason: str | None = None
    cost_usd: float | None = None
    cached: bool = False
    replay_ms: float | None = Field(default=None, description="For a cached answer: the cache's time.")
    attempts: int = Field(default=1, description="Attempts made (0 for a cached answer).")
    token_estimator: str | None = Field(default=None, description="How tokens were estimated, if they were.")
    answered_by: str | None = Field(default=None, description="The model name the service reported.")
    error: str | None = Field(default=None, description="Why no answer was obtained (infra_error).")


def failed_test_text(r: Record) -> str:
    """A test case's record that did not pass, as ``name: status: message``."""
    return f"{r.test_case}: {r.status}: {r.error or ''}".rstrip(": ")
