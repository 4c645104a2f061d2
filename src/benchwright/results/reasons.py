"""Why samples did not end in a verdict on the model's code (``infra_error``) or ended in
``error``: each sample's first reason, sorted into kinds (a provider's message, a replay gap, a
missing toolchain, a sandbox failure, a time limit, code that did not build...), each saying
whether ``benchwright run --resume RUN --retry-errors`` can fix it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel, Field

from benchwright.results.record import Record, failed_test_text

MESSAGE_CHARS = 200


@dataclass(frozen=True)
class Kind:
    """A kind of reason: its name, whether a retry can fix it, and the pattern that finds it."""

    name: str
    retryable: bool
    pattern: re.Pattern[str]
    outcomes: tuple[str, ...] = ("infra_error",)
    criteria: tuple[str, ...] = ()
    """Only records of these criteria (empty: any)."""


def _p(text: str) -> re.Pattern[str]:
    return re.compile(text, re.IGNORECASE)


KINDS: tuple[Kind, ...] = (
    Kind("unsupported by the sandbox", False, _p(r"^unsupported: ")),
    Kind("replay gap", False, _p(r"replay: no recorded answer|replay: .* answered by several models")),
    Kind("missing toolchain", False, _p(r"not installed|toolchain|command not found|no such file or directory.*"
                                        r"(javac|java|rustc|go|gcc|g\+\+|node|tsc|bash)\b")),
    Kind("sandbox failure", True, _p(r"sandbox|bwrap|unshare|namespace|results cannot be trusted")),
    Kind("provider", True, _p(r"."), criteria=("generation",)),
    Kind("time limit", False, _p(r"\btimeout\b|timed out|time limit"), outcomes=("error",)),
    Kind("did not build", False, _p(r"."), outcomes=("error",), criteria=("build",)),
    Kind("test error", False, _p(r"."), outcomes=("error",)),
    Kind("harness failure", True, _p(r".")),
)
"""Tried in order; the first whose outcome, criterion and pattern match is the sample's kind."""


class FailureGroup(BaseModel):
    """Samples of one model that ended alike, for the same kind of reason."""

    outcome: str = Field(description="infra_error or error.")
    kind: str = Field(description="The kind of reason, e.g. 'provider', 'replay gap', 'time limit'.")
    retryable: bool = Field(description="Whether 'benchwright run --resume RUN --retry-errors' can fix it.")
    samples: int = Field(description="How many samples.")
    example: str = Field(description="One of them: task_source/task [language] sample N.")
    message: str = Field(description=f"Its reason, the first line, at most {MESSAGE_CHARS} characters.")


def _reason(r: Record) -> tuple[str, str] | None:
    """The criterion-ish source and the message of a record that says why its sample failed."""
    if r.outcome == "infra_error" and r.details and r.details.get("unsupported"):
        return r.criterion, f"unsupported: {r.details['unsupported']}"  # the task needs it, not the code
    if r.outcome == "infra_error" and r.error:
        return r.criterion, r.error.removeprefix("infra_error: ")
    if r.outcome == "error":
        if r.test_case is not None and r.status in ("error", "timeout", "not_run"):
            return ("test", failed_test_text(r))
        if r.criterion == "unit-test" and r.error and r.test_case is None:
            return ("build", r.error)
    return None


def classify(outcome: str, source: str, message: str) -> Kind:
    """The kind of a sample's reason."""
    for kind in KINDS:
        if outcome in kind.outcomes and (not kind.criteria or source in kind.criteria) \
                and kind.pattern.search(message):
            return kind
    return KINDS[-1]


class Reasons:
    """Collects each failed sample's first reason, record by record."""

    def __init__(self) -> None:
        self._first: dict[str, tuple[Record, str, str]] = {}

    def add(self, r: Record) -> None:
        if r.outcome not in ("error", "infra_error"):
            return
        found = _reason(r)
        if found is None:
            return
        held = self._first.get(r.execution_id)
        # code that did not build explains its tests' errors; what the sandbox lacks explains all
        if held is None or (held[1] == "test" and found[0] == "build") or (
                found[1].startswith("unsupported: ") and not held[2].startswith("unsupported: ")):
            self._first[r.execution_id] = (r, *found)

    def groups(self) -> dict[str, list[FailureGroup]]:
        """By model, the groups, largest first."""
        out: dict[str, dict[tuple[str, str], FailureGroup]] = {}
        for r, source, message in self._first.values():
            kind = classify(r.outcome or "", source, message)
            key = (r.outcome or "", kind.name)
            per = out.setdefault(r.model, {})
            if key not in per:
                first = message.strip().splitlines()[0] if message.strip() else ""
                per[key] = FailureGroup(outcome=key[0], kind=kind.name, retryable=kind.retryable, samples=0,
                                        example=f"{r.task_source}/{r.task} [{r.language}] sample {r.sample}",
                                        message=first[:MESSAGE_CHARS])
            per[key].samples += 1
        return {m: sorted(g.values(), key=lambda x: (-x.samples, x.outcome, x.kind)) for m, g in out.items()}


def notes(groups_by_model: dict[str, list[dict[str, object]]]) -> list[str]:
    """One line per group (from a summary's ``failures``), then what a retry can do."""
    lines: list[str] = []
    retryable = fixed = 0
    for model, groups in groups_by_model.items():
        for g in groups:
            group = FailureGroup.model_validate(g)
            retry = "a retry may fix it" if group.retryable else "a retry will not help"
            lines.append(f"{model}: {group.samples} {group.outcome} sample(s), {group.kind} ({retry}): "
                         f"{group.message} (e.g. {group.example})")
            if group.outcome == "infra_error":
                retryable += group.samples if group.retryable else 0
                fixed += 0 if group.retryable else group.samples
    if retryable:
        lines.append(f"{retryable} infra_error sample(s) may succeed again: "
                     "`benchwright run --resume RUN --retry-errors`")
    if fixed:
        lines.append(f"{fixed} infra_error sample(s) will fail the same way on a retry: fix the cause first")
    return lines
