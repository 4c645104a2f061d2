"""One attempt: one agent on one scenario task (docs/agents.md, "One agent run"): copy the
workspace, set it up, commit the baseline, hide the hidden files, run the agent, save what it said and did, put the hidden
files back, capture the diff, run the scorers in the still-live workspace, then the judge; and
the three gates: ``objective``, ``judge`` and ``run-badge``.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchwright.agents.change import Change
from benchwright.agents.evidence import Evidence, ScorerRow
from benchwright.agents.home import reader as home_reader
from benchwright.agents.invocation import Invocation
from benchwright.agents.outcome import AgentOutcome
from benchwright.agents.preset import AgentPreset
from benchwright.agents.scenario import AgentTask, CommandScorer, LlmJudgeNote, Scenario, ScorerBase
from benchwright.agents.scorer import OUTPUT_TAIL, CommandResult, ScorerContext, ScorerResult
from benchwright.agents.workspace import AgentWorkspace
from benchwright.config.model import AgentSpec
from benchwright.errors import BenchwrightError, InfraError, UnsafeFile
from benchwright.registry import registry
from benchwright.safefs import Tree, remove_tree
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits

AGENT_DIR = ".benchwright-agent"
"""Where a command agent finds its prompt and leaves its response and trajectory (inside the
workspace while it runs; removed before the diff is taken). The harness writes and reads there
through :class:`benchwright.safefs.Tree`: what the agent put in place of the folder or of its
files (a symbolic link, a FIFO...) is removed or refused, never followed, and is a violation."""
INSIDE = "/work"
RESPONSE = "response.txt"
TRAJECTORY = "trajectory.jsonl"
RESPONSE_CAP = 256 * 1024
"""The response file is read up to this many bytes; a larger one fails the run badge (its
start is kept)."""
TRAJECTORY_CAP = 16 * 1024 * 1024
"""The trajectory file is read up to this many bytes; a larger one fails the run badge (its
first lines are kept)."""
TRAJECTORY_STEPS = 10_000
"""At most this many lines of a trajectory file are kept, each step of text at most
:data:`STEP_TEXT` characters when it is not a JSON object."""
STEP_TEXT = 2000


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


def run_command_agent(spec: AgentSpec, workspace: Path, turns: list[str], sandbox: Sandbox,
                      environ: dict[str, str] | None = None,
                      files: tuple[tuple[str, bytes], ...] = (),
                      invocation: Invocation | None = None) -> AgentOutcome:
    """Run an external agent command (or a preset's) once per turn in the workspace's sandbox.

    Its environment: ``BENCHWRIGHT_PROMPT``, ``BENCHWRIGHT_PROMPT_FILE``,
    ``BENCHWRIGHT_RESPONSE_FILE``, ``BENCHWRIGHT_TRAJECTORY_FILE``, ``BENCHWRIGHT_TURN``,
    ``BENCHWRIGHT_AGENT_DIR`` (where ``files`` are, its own scripts), the variables the agent's
    ``pass_env`` names (from ``environ``; nothing else of the harness's), and with an
    ``invocation`` its private HOME and model endpoint (:mod:`benchwright.agents.invocation`).
    A preset's command line, environment and home files come from the preset, and its
    converter turns what the CLI printed and saved into the trajectory and the response.
    """
    import os

    environ = dict(os.environ) if environ is None else environ
    out = AgentOutcome()
    tree = Tree(workspace)
    preset = invocation.preset if invocation is not None else None
    deadline = time.monotonic() + spec.timeout_s
    for i, prompt in enumerate(turns):
        try:
            _prepare_turn(tree, prompt, files, i + 1, out.violations)
        except UnsafeFile as e:
            out.violations.append(f"turn {i + 1} could not be prepared: {e}")
            out.stopped = "the harness could not prepare the turn"
            break
        env = {k: environ[k] for k in spec.pass_env if k in environ}
        prompt_file = f"{INSIDE}/{AGENT_DIR}/prompt.txt"
        env.update({
            "BENCHWRIGHT_PROMPT": prompt, "BENCHWRIGHT_TURN": str(i + 1),
            "BENCHWRIGHT_PROMPT_FILE": prompt_file,
            "BENCHWRIGHT_RESPONSE_FILE": f"{INSIDE}/{AGENT_DIR}/{RESPONSE}",
            "BENCHWRIGHT_TRAJECTORY_FILE": f"{INSIDE}/{AGENT_DIR}/{TRAJECTORY}",
            "BENCHWRIGHT_AGENT_DIR": f"{INSIDE}/{AGENT_DIR}",
            "PYTHONDONTWRITEBYTECODE": "1",  # no __pycache__ in the agent's change
        })
        command = spec.command
        if invocation is not None:
            env.update(invocation.env())
        if preset is not None and invocation is not None:
            ctx = invocation.context(i + 1, prompt_file, INSIDE)
            if i == 0:
                _write_home(invocation.home, preset.home_files(ctx), out.violations)
            command = preset.command(ctx)
            env.update(preset.environment(ctx))
        assert command is not None
        left = max(deadline - time.monotonic(), 1.0)
        cap = invocation.stdout_cap if invocation is not None else 1024 * 1024
        proc: ProcessResult = sandbox.run_in(
            workspace, ["/bin/sh", "-c", command], env=env, network=spec.grants_network,
            limits=SandboxLimits(wall_s=left, memory_mb=0, output_bytes=cap,
                                 file_size_mb=256, processes=512),
            mounts=invocation.mounts if invocation is not None else (),
            bridge=invocation.bridge if invocation is not None and not spec.grants_network else None)
        out.wall_ms += proc.wall_ms
        out.cpu_ms = (out.cpu_ms or 0.0) + proc.cpu_ms
        out.exit_code, out.timed_out = proc.exit_code, proc.timed_out
        out.stdout_tail, out.stderr_tail = tail(proc.stdout), tail(proc.stderr)
        if preset is not None and invocation is not None:
            steps, response = _converted(preset, proc.stdout, invocation, i + 1, prompt_file)
            out.responses.append(response if response is not None else out.stdout_tail)
            out.trajectory += steps
        else:
            response_bytes = _read(tree, f"{AGENT_DIR}/{RESPONSE}", RESPONSE_CAP, out.violations)
            out.responses.append(response_bytes.decode(errors="replace") if response_bytes is not None
                                 else out.stdout_tail)
            got = _read(tree, f"{AGENT_DIR}/{TRAJECTORY}", TRAJECTORY_CAP, out.violations)
            out.trajectory += _trajectory(got, i + 1) if got is not None else []
        out.steps = len(out.trajectory)
        if proc.timed_out:
            out.stopped = "timeout"
            break
        if proc.exit_code != 0:
            out.stopped = f"exit status {proc.exit_code}" if proc.exit_code is not None else \
                f"killed by signal {proc.signal}"
            if proc.exit_code == 127:
                out.stopped += " (the shell did not find the agent's program: see the stderr tail)"
            break
    return out


def _write_home(home: Path, files: dict[str, bytes], violations: list[str]) -> None:
    """A preset's configuration files, into the agent's home (before its first turn)."""
    tree = Tree(home)
    for rel, data in files.items():
        try:
            found = tree.write(rel, data, mode=0o644)
        except UnsafeFile as e:
            violations.append(f"the preset's file {rel} could not be written: {e}")
            continue
        violations += [f"home: {o.describe()} (removed, not followed)" for o in found if o.suspicious]


def _converted(preset: AgentPreset, stdout: bytes, invocation: Invocation, turn: int,
               prompt_file: str) -> tuple[list[dict[str, Any]], str | None]:
    """The preset's conversion of a turn; a converter that fails keeps the output as text."""
    try:
        got = preset.convert(stdout, home_reader(invocation.home), invocation.context(turn, prompt_file, INSIDE))
        steps = [{"turn": turn, **s} for s in got.steps[:TRAJECTORY_STEPS] if isinstance(s, dict)]
        return steps, got.response
    except Exception as e:  # a preset's bug must not lose the run
        text = stdout.decode(errors="replace")
        return [{"turn": turn, "kind": "message", "text": text[-STEP_TEXT:],
                 "note": f"the {preset.name} converter failed: {type(e).__name__}: {e}"}], None


def _prepare_turn(tree: Tree, prompt: str, files: tuple[tuple[str, bytes], ...], turn: int,
                  violations: list[str]) -> None:
    """The agent's folder, its own files and the prompt, written anew; the response and
    trajectory of the turn before removed. A link or a special file the agent left there is a
    violation (removed, never followed)."""
    found = tree.make_folder(AGENT_DIR)
    for name, data in files:
        found += tree.write(f"{AGENT_DIR}/{name}", data)
    found += tree.write(f"{AGENT_DIR}/prompt.txt", prompt.encode())
    for name in (RESPONSE, TRAJECTORY):
        gone = tree.remove(f"{AGENT_DIR}/{name}")
        if gone is not None:
            found.append(gone)
    violations += [f"before turn {turn}: {o.describe()} (removed, not followed)"
                   for o in found if o.suspicious]


def _read(tree: Tree, rel: str, cap: int, violations: list[str]) -> bytes | None:
    """At most ``cap`` bytes of the agent's file ``rel``; None when it is missing or refused
    (a violation), like one larger than ``cap``."""
    try:
        got = tree.read(rel, cap)
    except UnsafeFile as e:
        violations.append(f"{e} (not read)")
        return None
    if got is not None and got.cut:
        violations.append(f"{rel} is {got.size:,} bytes, more than the {cap:,} the harness reads "
                          "(only its start was kept)")
    return got.data if got is not None else None


def _trajectory(data: bytes, turn: int) -> list[dict[str, Any]]:
    """The steps an agent wrote (JSON lines); a line that is not a JSON object is kept as text."""
    steps: list[dict[str, Any]] = []
    for line in data.decode(errors="replace").splitlines()[:TRAJECTORY_STEPS]:
        if not line.strip():
            continue
        try:
            step = json.loads(line)
        except (ValueError, RecursionError):  # a JSON nested deeper than the parser goes
            step = {"text": line[:STEP_TEXT]}
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
    """The run completed: the agent stopped on its own, in time, with a zero status, and left
    nothing the harness had to refuse (:attr:`AgentOutcome.violations`)."""
    done = outcome.stopped is None and not outcome.timed_out and outcome.exit_code == 0
    return "PASS" if done and not outcome.violations else "FAIL"


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
        timed_out=outcome.timed_out, stdout_tail=outcome.stdout_tail, stderr_tail=outcome.stderr_tail,
        violations=tuple(outcome.violations))


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
        except BenchwrightError as e:  # the sandbox, the harness: not the agent's doing
            return AgentRunResult(AgentOutcome(), None, infra_error=str(e))
        finally:
            with contextlib.suppress(InfraError):
                remove_tree(folder)
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
        gone = ws.tree.remove(AGENT_DIR)
        if gone is not None and gone.suspicious:
            outcome.violations.append(f"after the run: {gone.describe()} (removed, not followed)")
        outcome.violations += ws.restore()
        change = ws.change()
        outcome.violations += change.violations
        scorers = run_scorers(list(scenario.scorers), scorer_context(ws, change, sandbox))
        verdict, score = objective(scorers)
        return AgentRunResult(outcome, change, scorers,
                              gates=Gates(verdict, score, run_badge(outcome), None))
    except BenchwrightError as e:  # set-up, git, the sandbox: not the agent's doing
        return AgentRunResult(AgentOutcome(), None, infra_error=str(e))
    finally:
        ws.remove()
