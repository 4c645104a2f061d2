"""An agent run as result records and files in the run folder.

Records (one JSON object each in ``records.jsonl``): one per scorer (``criterion`` = the
scorer's name, else its type), then the three gates: ``objective`` (the workspace verdict and
the mean score of the applicable scorers), ``judge`` and ``run-badge``. The diff, the
trajectory and the agent's responses are files under ``agents/<execution_id>/`` in the run
folder, named in each record's ``details.files``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from benchwright.agents.attempt import AgentRunResult, ScorerOutcome
from benchwright.results.record import Outcome, Record, Verdict

LANGUAGE = "agent"
"""The ``language`` of an agent run's records (they have no programming language)."""


def verdict_of(value: str | None) -> Verdict | None:
    return {"PASS": "pass", "FAIL": "fail", "N/A": "n/a"}.get(value or "")  # type: ignore[return-value]


def agent_files(execution_id: str, result: AgentRunResult) -> dict[str, str]:
    """The run's diff, trajectory, responses and judge verdicts: each file's text by its path
    relative to the run folder (``agents/<execution_id>/...``). Made wherever the agent ran;
    written by the run's driver (:func:`write_agent_files`)."""
    own = f"agents/{execution_id}"
    files: dict[str, str] = {}
    if result.change is not None:
        files[f"{own}/diff.patch"] = result.change.patch
    files[f"{own}/trajectory.jsonl"] = "".join(json.dumps(step, default=str) + "\n"
                                               for step in result.outcome.trajectory)
    files[f"{own}/responses.json"] = json.dumps(result.outcome.responses, indent=1)
    if result.outcome.home is not None:
        files[f"{own}/home.json"] = json.dumps(result.outcome.home, indent=1)
    if result.judge is not None:
        files[f"{own}/judge.json"] = json.dumps(result.judge, indent=1, default=str)
    return files


def file_names(files: dict[str, str]) -> dict[str, str]:
    """What records name: ``diff``, ``trajectory``, ... -> the file's path in the run folder."""
    return {Path(path).name.split(".")[0]: path for path in files}


def write_agent_files(folder: Path, files: dict[str, str]) -> None:
    """Write an agent run's files (from :func:`agent_files`) into the run folder."""
    for path, text in files.items():
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


def outcome_of(result: AgentRunResult) -> Outcome:
    """The sample outcome: infra_error (the harness), error (the agent did not complete),
    fail (a required scorer failed), else pass."""
    if result.infra_error is not None:
        return "infra_error"
    gates = result.gates
    if gates is None or gates.run_badge == "FAIL":
        return "error"
    return "fail" if gates.objective == "FAIL" else "pass"


def infra_records(base: dict[str, Any], error: str) -> list[Record]:
    """An agent run the harness could not carry out: one ``run-badge`` record saying why."""
    return [Record(**base, language=LANGUAGE, sample=0, outcome="infra_error", criterion="run-badge",
                   executor="AgentRunner", error=f"infra_error: {error}")]


def agent_records(base: dict[str, Any], result: AgentRunResult, files: dict[str, str]) -> list[Record]:
    """Every record of one agent run; ``base`` has run_id, execution_id, task_source, task and
    model (the agent's name)."""
    outcome = outcome_of(result)
    common: dict[str, Any] = {**base, "language": LANGUAGE, "sample": 0, "outcome": outcome}
    out: list[Record] = []
    if result.infra_error is not None:
        return infra_records(base, result.infra_error)
    for s in result.scorers:
        out.append(_scorer_record(common, s, files))
    gates = result.gates
    assert gates is not None
    agent = result.outcome
    run_details: dict[str, Any] = {
        "files": files, "exit_code": agent.exit_code, "timed_out": agent.timed_out,
        "stopped": agent.stopped, "steps": agent.steps, "wall_ms": agent.wall_ms, "cpu_ms": agent.cpu_ms,
        "tokens_in": agent.tokens_in, "tokens_out": agent.tokens_out, "cost_usd": agent.cost_usd,
        "stdout_tail": agent.stdout_tail, "stderr_tail": agent.stderr_tail,
        "violations": agent.violations, "model": agent.model, "agent_version": agent.version,
    }
    if result.change is not None:
        run_details["change"] = {**result.change.stat, "paths": result.change.paths()}
    disagree = gates.disagree()
    if gates.objective is not None:
        failed = [s.spec.label for s in result.scorers
                  if s.spec.is_required() and (s.verdict == "FAIL" or s.error is not None)]
        out.append(Record(**common, criterion="objective", executor="AgentRunner", unit="score",
                          score=gates.objective_score, verdict=verdict_of(gates.objective), required=True,
                          output=(f"{gates.objective}: required scorers failed: {', '.join(failed)}"
                                  if failed else f"{gates.objective}: every required scorer passed"),
                          details={"gate": "objective", "disagree": disagree, "files": files}))
    judge = result.judge or {}
    out.append(Record(**common, criterion="judge", executor="AgentJudge", unit="verdict",
                      score=None if gates.judge is None else float(gates.judge == "PASS"),
                      verdict=verdict_of(gates.judge) or "n/a", required=False,
                      output=_judge_text(judge),
                      details={"gate": "judge", "disagree": disagree, "files": files, **judge}))
    out.append(Record(**common, criterion="run-badge", executor="AgentRunner", unit="success",
                      score=float(gates.run_badge == "PASS"), verdict=verdict_of(gates.run_badge),
                      required=True, time_ms=agent.wall_ms,
                      output=_badge_text(result), details={"gate": "run-badge", "disagree": disagree,
                                                           **run_details}))
    return out


def _judge_text(judge: dict[str, Any]) -> str:
    if not judge:
        return "no judge: add `llm-judge: provider/model` to the config"
    if judge.get("verdict") is None:
        return f"unparseable: {judge.get('error') or 'the judge gave no usable verdict'} (fails nothing)"
    mode = f" ({judge['failure_mode']})" if judge.get("failure_mode") else ""
    return f"{judge['verdict']}{mode}: {judge.get('reasoning') or ''}".strip()


BADGE_TAIL = 400
"""How much of the end of the agent's stderr a failed run badge quotes."""


def _badge_text(result: AgentRunResult) -> str:
    """PASS, or FAIL with why: the time limit, the exit status (127: the program was not found),
    a signal, what the harness refused; and the end of the agent's stderr."""
    agent = result.outcome
    why = []
    if agent.timed_out:
        why.append("the agent was stopped at its time limit")
    elif agent.stopped is not None:
        why.append(f"the agent stopped: {agent.stopped}")
    if agent.violations:
        why.append("the harness refused what the agent left in its workspace: "
                   + "; ".join(agent.violations))
    if agent.model is not None and agent.model.get("failed"):
        why.append(f"{agent.model['failed']} of its {agent.model.get('requests', 0)} model requests failed")
    if why:
        said = (agent.stderr_tail or "").strip()
        if (said and not agent.violations) or (said and agent.stopped is not None):
            why.append(f"stderr ends: {said[-BADGE_TAIL:]}")
        return "FAIL: " + "; ".join(why)
    return f"PASS: the agent finished (exit status {agent.exit_code})"


def _scorer_record(common: dict[str, Any], s: ScorerOutcome, files: dict[str, str]) -> Record:
    kind: Literal["scorer"] = "scorer"
    stype = str(getattr(s.spec, "type", "?"))
    details: dict[str, Any] = {"kind": kind, "type": stype, "advisory": not s.spec.is_required(),
                               "ms": s.ms, "files": files}
    if s.result is None:
        return Record(**common, criterion=s.spec.label, executor=stype, unit="score", required=s.spec.is_required(),
                      error=f"the scorer could not run: {s.error}", details=details)
    details.update(s.result.details)
    return Record(**common, criterion=s.spec.label, executor=stype, unit="score",
                  score=s.result.score if s.result.verdict != "N/A" else None,
                  verdict=verdict_of(s.result.verdict), required=s.spec.is_required(),
                  output=s.result.output, time_ms=s.ms, details=details)
