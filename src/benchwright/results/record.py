"""The result record and the generation record, one JSON object a line."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

Outcome = Literal["pass", "fail", "error", "untested", "infra_error"]
Verdict = Literal["pass", "fail", "n/a"]


RECORD_FORMAT = 1
"""The layout version of a line of ``records.jsonl`` and ``generations.jsonl`` that this
benchwright writes (the ``format`` key). Lines written before versions have no ``format`` and
the same layout: they read as format 1. A line of a newer format is refused with a message
saying to upgrade (the run's other lines still read)."""


def _known_format(value: int) -> int:
    if value > RECORD_FORMAT:
        raise ValueError(f"written in record format {value} by a newer benchwright (this one "
                         f"reads formats up to {RECORD_FORMAT}): upgrade benchwright to read it")
    return value


class Record(BaseModel):
    """One result of one criterion for one sample: a line of ``records.jsonl``. The standard keys
    are never renamed; keys a plug-in adds are kept as they are."""

    model_config = ConfigDict(extra="allow")

    run_id: str = Field(description="The run (its folder's name under the workspace's results/).")
    execution_id: str = Field(description="The sample: one id per task x language x model x sample, "
                              "shared by its records and its line of generations.jsonl.")
    task_source: str = Field(description="The task source file the task comes from (as the "
                             "execution config names it); for an agent run, the scenario.")
    task: str = Field(description="The task's name in its source.")
    language: str = Field(description="The language the sample was asked in (``agent`` for an "
                          "agent run).")
    model: str = Field(description="The model as the execution config names it "
                       "(``provider/model``, or a preset's name; for an agent run, the agent).")
    sample: int = Field(description="Which sample of the task for this model and language (0, 1...).")
    criterion: str = Field(description="The criterion (or agent scorer) this record measures.")
    executor: str = Field(description="The plug-in that produced the record.")
    score: float | None = Field(default=None, description="The measured value in ``unit`` "
                                "(None: not measured; ``error`` says why).")
    unit: str | None = Field(default=None, description="What ``score`` counts: ``ratio``, ``ms``, "
                             "``bytes``, ``tokens``, ``USD``, ``score``...")
    verdict: Verdict | None = Field(default=None, description="pass or fail against the criterion's "
                                    "threshold or check; n/a when it does not apply.")
    required: bool | None = Field(default=None, description="Whether the verdict gates the sample "
                                  "(a required check that fails fails the sample).")
    output: str | None = Field(default=None, description="What the criterion saw or said: a test's "
                               "captured output, a tool's report, a judge's answer (capped).")
    error: str | None = Field(default=None, description="Why the criterion failed or could not "
                              "measure (a failed assertion's message, a tool's error).")
    time_ms: float | None = Field(default=None, description="Wall time of what was measured (a test "
                                  "case, the criterion), in milliseconds.")
    test_case: str | None = Field(default=None, description="For unit tests: the test case's name.")
    code: str | None = Field(default=None, description="For unit tests: the exact code executed.")
    # additions
    outcome: Outcome | None = Field(default=None, description=(
        "The sample's outcome: pass (every test case passed), fail (a test failed), error (the code "
        "crashed, timed out, or did not compile or import), untested (no test case applies to the "
        "task in this language and the code compiled or loaded: never a pass, never in pass@k) or "
        "infra_error (the harness, sandbox, toolchain or provider failed: never counted)."))
    status: str | None = Field(default=None, description="Test case status: pass/fail/error/timeout/not_run.")
    line: int | None = Field(default=None, description="Line in `code` where a test failed.")
    hidden: bool | None = Field(default=None, description="For unit tests: whether the test case is "
                                "hidden from the model's prompt.")
    difficulty: str | None = Field(default=None, description="The task's difficulty, as its source "
                                   "gives it.")
    area: str | None = Field(default=None, description="The task's area, as its source gives it.")
    details: dict[str, Any] | None = Field(default=None, description="What the criterion adds "
                                           "(per criterion: docs/criteria.md), e.g. a judge's scores "
                                           "and cost, a linter's findings, the build's figures.")
    record_index: int = Field(default=0, description="Position of this record among its sample's.")
    record_count: int = Field(default=1, description="Records written for this sample (for resume).")
    format: int = Field(default=RECORD_FORMAT, description="The version of this line's layout "
                        "(a line without it was written before versions and reads as 1).")

    _check_format = field_validator("format")(_known_format)


class Generation(BaseModel):
    """One model answer for one sample: a line of ``generations.jsonl``."""

    model_config = ConfigDict(extra="allow")

    run_id: str = Field(description="The run (its folder's name under the workspace's results/).")
    execution_id: str = Field(description="The sample (the same id as its records).")
    task_source: str = Field(description="The task source file the task comes from.")
    task: str = Field(description="The task's name in its source.")
    language: str = Field(description="The language the model was asked in.")
    model: str = Field(description="The model as the execution config names it.")
    provider: str = Field(description="The provider plug-in that asked it.")
    sample: int = Field(description="Which sample of the task for this model and language.")
    mode: Literal["instruct", "complete"] = Field(default="instruct", description="instruct: a chat "
                                                  "request; complete: the prompt continued.")
    messages: list[dict[str, str]] = Field(default_factory=list, description="The chat messages "
                                           "sent (instruct mode), role and content each.")
    prompt: str = Field(default="", description="The text continued (complete mode).")
    raw: str | None = Field(default=None, description="The model's answer as it came.")
    code: str | None = Field(default=None, description="The code extracted from the answer (what ran).")
    tokens_in: int | None = Field(default=None, description="Prompt tokens (the service's count, or "
                                  "an estimate: ``tokens_estimated``).")
    tokens_out: int | None = Field(default=None, description="Answer tokens.")
    tokens_estimated: bool = Field(default=False, description="Whether the token counts are "
                                   "estimated (the service reported none).")
    latency_ms: float | None = Field(default=None, description="Time to the whole answer.")
    finish_reason: str | None = Field(default=None, description="Why the model stopped, as the "
                                      "service says (``stop``, ``length``...).")
    cost_usd: float | None = Field(default=None, description="What the answer cost, from the price "
                                   "table (None: no price known).")
    cached: bool = Field(default=False, description="Whether the answer came from the generation "
                         "cache (nothing was paid for it this time).")
    replay_ms: float | None = Field(default=None, description="For a cached answer: the cache's time.")
    attempts: int = Field(default=1, description="Attempts made (0 for a cached answer).")
    token_estimator: str | None = Field(default=None, description="How tokens were estimated, if they were.")
    answered_by: str | None = Field(default=None, description="The model name the service reported.")
    error: str | None = Field(default=None, description="Why no answer was obtained (infra_error).")
    format: int = Field(default=RECORD_FORMAT, description="The version of this line's layout "
                        "(a line without it was written before versions and reads as 1).")

    _check_format = field_validator("format")(_known_format)


def failed_test_text(r: Record) -> str:
    """A test case's record that did not pass, as ``name: status: message``."""
    return f"{r.test_case}: {r.status}: {r.error or ''}".rstrip(": ")
