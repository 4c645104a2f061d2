"""One agent on one scenario task, as the document says: copy the workspace, set it up, commit
the baseline, hide the hidden files, run the agent, save what it said and did, put the hidden
files back, capture the diff, run the scorers in the still-live workspace, then the judge; and
the three gates: ``objective``, ``judge`` and ``run-badge``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwright.agents.change import Change
from benchwright.agents.evidence import Evidence, ScorerRow
from benchwright.agents.outcome import AgentOutcome
from benchwright.agents.scenario import AgentTask, CommandScorer, LlmJudgeNote, Scenario, ScorerBase
from benchwright.agents.scorer import OUTPUT_TAIL, CommandResult, ScorerContext, ScorerResult
from benchwright.agents.workspace import AgentWorkspace
from benchwright.config.model import AgentSpec
from benchwright.errors import BenchwrightError
from benchwright.registry import registry
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits

AGENT_DIR = ".benchwright-agent"
"""Where a command agent finds its prompt and leaves its response and trajectory (inside the
workspace while it runs; removed before the diff is taken)."""
INSIDE = "/work"


def tail(data: bytes | str, size: int = OUTPUT_TAIL) -> str:
    text = data.decode(errors="replace") if isinstance(data, bytes) else data
    return text if len(text) <= size else "…" + text[-size:]


@dataclass
class ScorerOutcome:
    spec: ScorerBase
    result: ScorerResult | None
    error: str | None = None
    ms: float = 0.0

    @property
    def verdict(self) -> str:
        return self.result.verdict if self.result is not None else "N/A"


@dataclass
class Gates:
    objective: str | None
    """PASS, FAIL, or None for a ledger task (no workspace, no scorers)."""
    objective_score: float | None
    run_badge: str
    judge: str | None
    """PASS, FAIL, or None (no judge, or an unparseable verdict)."""

    def disagree(self) -> bool:
        """The objective checks and the judge reached different verdicts (the document's "when
        the gates disagree"): a plausible answer that broke a hard constraint, or checks that
        passed on work the judge found unconvincing."""
        return self.objective is not None and self.judge is not None and self.objective != self.judge


@dataclass
class AgentRunResult:
    outcome: AgentOutcome
    change: Change | None
    scorers: list[ScorerOutcome] = field(default_factory=list)
    judge: dict[str, Any] | None = None
    gates: Gates | None = None
    infra_error: str | None = None
    files: dict[str, str] = field(default_factory=dict)


CommandAgentRunner = Callable[[AgentSpec, Path, list[str], Sandbox], AgentOutcome]


def run_command_agent(spec: AgentSpec, workspace: Path, turns: list[str], sandbox: Sandbox,
                      environ: dict[str, str] | None = None,
                      files: tuple[tuple[str, bytes], ...] = ()) -> AgentOutcome:
    """Run an external agent command once per turn in the workspace's sandbox.

    Its environment: ``BENCHWRIGHT_PROMPT``, ``BENCHWRIGHT_PROMPT_FILE``,
    ``BENCHWRIGHT_RESPONSE_FILE``, ``BENCHWRIGHT_TRAJECTORY_FILE``, ``BENCHWRIGHT_TURN``,
    ``BENCHWRIGHT_AGENT_DIR`` (where ``files`` are, its own scripts) and the variables the
    spec's ``pass_env`` names (from ``environ``; nothing else of the harness's).
    """
    import os

    environ = dict(os.environ) if environ is None else environ
    assert spec.command is not None
    out = AgentOutcome()
    own = workspace / AGENT_DIR
    deadline = time.monotonic() + spec.timeout_s
    for i, prompt in enumerate(turns):
        own.mkdir(exist_ok=True)
        for name, data in files:
            (own / name).write_bytes(data)
        (own / "prompt.txt").write_text(prompt)
        for name in ("response.txt", "trajectory.jsonl"):
            (own / name).unlink(missing_ok=True)
        env = {k: environ[k] for k in spec.pass_env if k in environ}
        env.update({
            "BENCHWRIGHT_PROMPT": prompt, "BENCHWRIGHT_TURN": str(i + 1),
            "BENCHWRIGHT_PROMPT_FILE": f"{INSIDE}/{AGENT_DIR}/prompt.txt",
            "BENCHWRIGHT_RESPONSE_FILE": f"{INSIDE}/{AGENT_DIR}/response.txt",
            "BENCHWRIGHT_TRAJECTORY_FILE": f"{INSIDE}/{AGENT_DIR}/trajectory.jsonl",
            "BENCHWRIGHT_AGENT_DIR": f"{INSIDE}/{AGENT_DIR}",
            "PYTHONDONTWRITEBYTECODE": "1",  # no __pycache__ in the agent's change
        })
        left = max(deadline - time.monotonic(), 1.0)
        proc: ProcessResult = sandbox.run_in(
            workspace, ["/bin/sh", "-c", spec.command], env=env, network=spec.network,
            limits=SandboxLimits(wall_s=left, memory_mb=0, output_bytes=1024 * 1024,
                                 file_size_mb=256, processes=512))
        out.wall_ms += proc.wall_ms
        out.cpu_ms = (out.cpu_ms or 0.0) + proc.cpu_ms
        out.exit_code, out.timed_out = proc.exit_code, proc.timed_out
        out.stdout_tail, out.stderr_tail = tail(proc.stdout), tail(proc.stderr)
        response = own / "response.txt"
        out.responses.append(response.read_text(errors="replace")[:200_000] if response.is_file()
                             else out.stdout_tail)
        out.trajectory += _trajectory(own / "trajectory.jsonl", i + 1)
        out.steps = len(out.trajectory)
        if proc.timed_out:
            out.stopped = "timeout"
            break
        if proc.exit_code != 0:
            out.stopped = f"exit status {proc.exit_code}" if proc.exit_code is not None else \
                f"killed by signal {proc.signal}"
            break
    return out


def _trajectory(path: Path, turn: int) -> list[dict[str, Any]]:
    """The steps an agent wrote (JSON lines); a line that is not a JSON object is kept as text."""
    if not path.is_file():
        return []
    steps: list[dict[str, Any]] = []
    for line in path.read_text(errors="replace").splitlines()[:10_000]:
        if not line.strip():
            continue
        try:
            step = json.loads(line)
        except ValueError:
            step = {"text": line[:2000]}
        steps.append({"turn": turn, **step} if isinstance(step, dict) else {"turn": turn, "value": step})
    return steps


def scorer_context(ws: AgentWorkspace, change: Change, sandbox: Sandbox) -> ScorerContext:
    """Scorers see the live tree and run commands in its sandbox (no network)."""

    def run(command: str, timeout_s: int) -> CommandResult:
        proc = sandbox.run_in(ws.work, ["/bin/sh", "-c", command],
                              limits=SandboxLimits(wall_s=timeout_s, memory_mb=0, output_bytes=1024 * 1024,
                                                   file_size_mb=256, processes=512))
        output = tail(proc.stdout + (b"\n" if proc.stdout and proc.stderr else b"") + proc.stderr)
        return CommandResult(proc.exit_code, proc.timed_out, output, proc.wall_ms)

    return ScorerContext(workspace=ws.work, change=change, run=run, baseline=ws.baseline_text)


def run_scorers(specs: list[ScorerBase], ctx: ScorerContext) -> list[ScorerOutcome]:
    out = []
    for spec in specs:
        start = time.perf_counter()
        try:
            result = registry.create("scorer", str(getattr(spec, "type", "?"))).score(spec, ctx)
            out.append(ScorerOutcome(spec, result, ms=(time.perf_counter() - start) * 1000))
        except BenchwrightError as e:
            out.append(ScorerOutcome(spec, None, error=str(e), ms=(time.perf_counter() - start) * 1000))
    return out


def objective(scorers: list[ScorerOutcome]) -> tuple[str, float | None]:
    """FAIL if any required applicable mechanical scorer failed (a scorer that could not run
    counts as failed when required); the mean score of the applicable ones."""
    mechanical = [s for s in scorers if not isinstance(s.spec, LlmJudgeNote)]
    failed = any(s.spec.is_required() and (s.error is not None or s.verdict == "FAIL") for s in mechanical)
    scores = [s.result.score for s in mechanical if s.result is not None and s.result.verdict != "N/A"]
    return ("FAIL" if failed else "PASS"), (sum(scores) / len(scores) if scores else None)


def run_badge(outcome: AgentOutcome) -> str:
    """The run completed: the agent stopped on its own, in time, with a zero status."""
    return "PASS" if outcome.stopped is None and not outcome.timed_out and outcome.exit_code == 0 else "FAIL"


def evidence(scenario: Scenario, task: AgentTask, outcome: AgentOutcome, change: Change | None,
             scorers: list[ScorerOutcome], agent: str = "") -> Evidence:
    rows = tuple(ScorerRow(s.spec.label, str(getattr(s.spec, "type", "?")), s.verdict,  # type: ignore[arg-type]
                           s.result.score if s.result else 0.0, s.spec.is_required(),
                           s.result.output if s.result else (s.error or ""))
                 for s in scorers if not isinstance(s.spec, LlmJudgeNote))
    notes = tuple(("(required) " if s.required else "") + s.rubric
                  for s in scenario.scorers if isinstance(s, LlmJudgeNote))
    primary = next((s for s in scorers if isinstance(s.spec, CommandScorer)), None)
    return Evidence(
        scenario=scenario.name, task=task.name, turns=tuple(task.messages()), agent=agent,
        expected_outcome=task.expected_outcome, responses=tuple(outcome.responses),
        trajectory=tuple(outcome.trajectory), diff=change.patch if change is not None else None,
        primary_command=primary.spec.command if primary and isinstance(primary.spec, CommandScorer) else None,
        primary_result=(f"{primary.verdict}: {primary.result.output}" if primary and primary.result
                        else (primary.error if primary else None)),
        scorers=rows, rubric_notes=notes, judge_notes=task.judge_notes, exit_code=outcome.exit_code,
        timed_out=outcome.timed_out, stdout_tail=outcome.stdout_tail, stderr_tail=outcome.stderr_tail)


def run_agent_task(scenario: Scenario, scenario_dir: Path, task: AgentTask, agent: AgentSpec,
                   sandbox: Sandbox, scratch: Path,
                   run_agent: Callable[[Path, list[str]], AgentOutcome]) -> AgentRunResult:
    """Everything up to the judge, for one agent on one task. Never raises for the agent's
    doing; a failure of the harness (set-up, git, the sandbox) is ``infra_error``."""
    turns = task.messages()
    if scenario.workspace is None:  # a ledger task: the agent answers, the judge alone grades
        folder = scratch / f"ledger-{time.monotonic_ns()}"
        folder.mkdir(parents=True)
        folder.chmod(0o755)
        try:
            outcome = run_agent(folder, turns)
        finally:
            import shutil
            shutil.rmtree(folder, ignore_errors=True)
        return AgentRunResult(outcome, None, gates=Gates(None, None, run_badge(outcome), None))
    recipe = scenario.workspace
    ws = AgentWorkspace.create(recipe, scenario_dir, scratch)
    try:
        for command in recipe.setup:
            proc = sandbox.run_in(ws.work, ["/bin/sh", "-c", command], network=True,
                                  limits=SandboxLimits(wall_s=recipe.setup_timeout_s, memory_mb=0,
                                                       output_bytes=1024 * 1024, file_size_mb=256,
                                                       processes=512))
            if not proc.ok:
                return AgentRunResult(AgentOutcome(), None, infra_error=(
                    f"workspace set-up `{command}` failed (exit {proc.exit_code}"
                    f"{', timed out' if proc.timed_out else ''}): {tail(proc.stderr or proc.stdout, 800)}"))
        ws.commit_baseline()
        ws.hide(recipe.hidden)
        outcome = run_agent(ws.work, turns)
        import shutil
        shutil.rmtree(ws.work / AGENT_DIR, ignore_errors=True)
        ws.restore()
        change = ws.change()
        scorers = run_scorers(list(scenario.scorers), scorer_context(ws, change, sandbox))
        verdict, score = objective(scorers)
        return AgentRunResult(outcome, change, scorers,
                              gates=Gates(verdict, score, run_badge(outcome), None))
    except BenchwrightError as e:  # set-up, git, the sandbox: not the agent's doing
        return AgentRunResult(AgentOutcome(), None, infra_error=str(e))
    finally:
        ws.remove()
