"""Time limits per test case derived from the golden solution's measured time
(``limits.golden_factor``), kept in the run folder for ``--resume``, and reported."""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from benchwright.config.load import parse_config
from benchwright.config.model import Limits
from benchwright.criteria.base import SampleContext, WallCap, wall_capped
from benchwright.criteria.unit_test import UnitTest
from benchwright.lang.base import TestSpec
from benchwright.lang.java import JavaLanguage
from benchwright.results.folder import LIMITS_FILE, RECORDS_FILE, SUMMARY_FILE
from benchwright.results.record import Generation
from benchwright.run import engine, timelimits
from benchwright.run.timelimits import derive
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits, Session
from benchwright.sandbox.select import best_sandbox
from benchwright.task.model import Task
from benchwright.task.render import RenderedTask
from benchwright.workspace import Workspace
from tests.conftest import Runner, read_jsonl

TASKS = """\
version: 1
name: lim
tasks:
  - name: nap
    languages: [python]
    task:
      common_prompt: Write nap().
      languages_specific:
        python:
          hidden_tests:
            - name: naps
              code: assert nap() == 1
    golden_solution:
      python: |
        import time
        def nap():
            time.sleep(0.05)
            return 1
  - name: nogold
    languages: [python]
    task:
      common_prompt: Write one().
      languages_specific:
        python:
          hidden_tests:
            - name: one
              code: assert one() == 1
"""
# the model under test: 2 s where the golden solution takes 50 ms
ANSWERS = {
    "nap": "```python\nimport time\ndef nap():\n    time.sleep(2)\n    return 1\n```\n",
    "nogold": "```python\ndef one():\n    return 1\n```\n",
}
CONFIG = """\
version: 1
task_sources: [tasks/t.yaml]
criteria: [unit-test]
llms: [slow/cand]
"""
GOLDEN_LIMITS = "limits:\n  golden_factor: 4\n  golden_floor_s: 0.2\n"

yaml = YAML(typ="safe")


def make_workspace(root: Path) -> Path:
    ws = root / "ws"
    (ws / "tasks").mkdir(parents=True)
    (ws / "configs").mkdir()
    answers = ws / "answers.jsonl"
    answers.write_text("".join(
        json.dumps({"task_source": "lim", "task": task, "language": "python", "model": "cand",
                    "sample": 0, "raw": raw}) + "\n"
        for task, raw in ANSWERS.items()))
    (ws / "benchwright.yaml").write_text(
        f"version: 1\nproviders:\n  slow:\n    type: replay\n    path: {answers}\n")
    (ws / "tasks" / "t.yaml").write_text(TASKS)
    (ws / "configs" / "golden.yaml").write_text(CONFIG + GOLDEN_LIMITS)
    (ws / "configs" / "plain.yaml").write_text(CONFIG)
    return ws


def case_records(run: Path) -> dict[str, dict[str, Any]]:
    """The test-case records of a run, by task."""
    return {r["task"]: r for r in read_jsonl(run / RECORDS_FILE) if r["test_case"]}


def test_derive_is_a_multiple_with_a_floor_under_the_ceiling() -> None:
    assert derive(0.05, 4, 0.2, 10) == pytest.approx(0.2)
    assert derive(0.0512345, 4, 0.2, 10) == 0.205  # to the millisecond
    assert derive(0.001, 4, 1.0, 10) == 1.0  # the floor
    assert derive(1.0, 4, 1.0, 10) == 4.0
    assert derive(5.0, 4, 1.0, 10) == 10  # the ceiling


def test_golden_derived_limit_times_out_the_slow_candidate(tmp_path: Path, bw: Runner) -> None:
    ws = make_workspace(tmp_path)
    proc = bw("run", "configs/golden.yaml", "--run-id", "g", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    run = ws / "results" / "g"

    # the limits, measured once, are in the run folder
    limits = yaml.load((run / LIMITS_FILE).read_text())
    assert limits["golden_factor"] == 4 and limits["golden_floor_s"] == 0.2
    by_task = {t["task"]: t for t in limits["tasks"]}
    nap = by_task["nap"]
    assert nap["ceiling_s"] == 10 and nap["runs"] == 3  # 4 x 50 ms is not far below the floor
    (test,) = nap["tests"]
    assert test["name"] == "naps" and len(test["golden_ms"]) == 3
    assert all(t >= 50 for t in test["golden_ms"])  # it sleeps 50 ms
    median_s = statistics.median(test["golden_ms"]) / 1000
    assert test["limit_s"] == pytest.approx(min(10, max(0.2, 4 * median_s)), abs=0.0006)  # to the ms
    assert 0.2 <= test["limit_s"] < 2
    assert "no golden solution" in by_task["nogold"]["kept_ceiling"]
    assert "nogold" in proc.stderr and "keeps the ceiling" in proc.stderr

    # the candidate sleeps 2 s: a timeout, with the limit that applied
    records = case_records(run)
    assert records["nap"]["status"] == "timeout"
    assert records["nap"]["details"]["limit"] == "test"
    assert records["nap"]["details"]["limit_s"] == pytest.approx(test["limit_s"])
    assert records["nogold"]["status"] == "pass"  # the ceiling (10 s) is plenty

    # summary.yaml lists the sample; the run's report and `benchwright report` print it
    summary = yaml.load((run / SUMMARY_FILE).read_text())
    cand = summary["by_model"]["slow/cand"]
    assert cand["timed_out"] == 1
    assert cand["timed_out_samples"] == [{
        "task_source": "lim", "task": "nap", "language": "python", "sample": 0,
        "tests": [{"test_case": "naps", "limit_s": pytest.approx(test["limit_s"]), "limit": "test"}]}]
    assert summary["time_limits"]["measured"] == 1
    assert [k["task"] for k in summary["time_limits"]["kept_ceiling"]] == ["nogold"]
    line = f"lim/nap [python] sample 0: naps (limit {test['limit_s']:g} s)"
    assert line in proc.stdout
    report = bw("report", "g", cwd=ws)
    assert report.returncode == 0, report.stderr
    assert "1 sample(s) hit a time limit" in report.stdout and line in report.stdout
    assert "ceiling kept for lim/nogold [python]: no golden solution" in report.stdout
    assert "4 x the golden solution's time" in report.stdout


def test_without_golden_factor_the_slow_candidate_passes(tmp_path: Path, bw: Runner) -> None:
    ws = make_workspace(tmp_path)
    proc = bw("run", "configs/plain.yaml", "--run-id", "p", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    run = ws / "results" / "p"
    assert not (run / LIMITS_FILE).exists()
    assert {t: r["status"] for t, r in case_records(run).items()} == {"nap": "pass", "nogold": "pass"}
    summary = yaml.load((run / SUMMARY_FILE).read_text())
    assert summary["by_model"]["slow/cand"]["timed_out"] == 0
    assert summary["by_model"]["slow/cand"]["timed_out_samples"] == []
    assert "time_limits" not in summary
    assert "hit a time limit:" not in proc.stdout


def test_resume_reuses_the_stored_limits_and_measures_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws_path = make_workspace(tmp_path)
    ws = Workspace.open(ws_path)
    measured: list[int] = []
    measure = timelimits.measure

    def counting(*args: Any, **kwargs: Any) -> timelimits.TimeLimits:
        measured.append(1)
        return measure(*args, **kwargs)

    monkeypatch.setattr(timelimits, "measure", counting)
    warnings: list[str] = []
    progress: list[tuple[int, int]] = []
    first = engine.start(ws, ws_path / "configs" / "golden.yaml", run_id="r", warn=warnings.append,
                         measuring=lambda done, total, what: progress.append((done, total)))
    assert measured == [1]
    assert progress[-1] == (2, 2)  # nap measured, nogold without a golden solution
    assert len(warnings) == 1 and "lim/nogold [python]" in warnings[0]
    run = first.folder.path
    stored = (run / LIMITS_FILE).read_bytes()
    before = case_records(run)
    assert before["nap"]["status"] == "timeout"

    # the run "stopped" before any sample was recorded; the golden solution cannot be measured now
    (run / RECORDS_FILE).write_text("")
    (run / SUMMARY_FILE).unlink()

    def refuse(*args: Any, **kwargs: Any) -> timelimits.TimeLimits:
        raise AssertionError("the golden solutions were measured again")

    monkeypatch.setattr(timelimits, "measure", refuse)
    again = engine.resume(ws, "r", warn=warnings.append)
    assert again.new_samples == 2
    assert (run / LIMITS_FILE).read_bytes() == stored
    after = case_records(run)
    assert after["nap"]["status"] == "timeout"
    assert after["nap"]["details"]["limit_s"] == before["nap"]["details"]["limit_s"]
    assert again.summary["by_model"]["slow/cand"]["timed_out"] == 1
    assert again.summary["time_limits"] == first.summary["time_limits"]


def test_a_failing_golden_keeps_the_ceiling(tmp_path: Path) -> None:
    ws_path = make_workspace(tmp_path)
    (ws_path / "tasks" / "t.yaml").write_text(TASKS.replace("return 1\n", "return 2\n", 1))
    ws = Workspace.open(ws_path)
    warnings: list[str] = []
    result = engine.start(ws, ws_path / "configs" / "golden.yaml", run_id="f", warn=warnings.append)
    limits = yaml.load((result.folder.path / LIMITS_FILE).read_text())
    nap = next(t for t in limits["tasks"] if t["task"] == "nap")
    assert "fails test 'naps'" in nap["kept_ceiling"] and "tests" not in nap
    assert any("lim/nap [python] keeps the ceiling of 10 s" in w for w in warnings)
    records = case_records(result.folder.path)
    assert records["nap"]["status"] == "pass"  # 2 s under the 10 s ceiling


@pytest.mark.parametrize(("text", "key", "words"), [
    ("golden_factor: 0.5", "golden_factor", "greater than or equal to 1"),
    ("golden_factor: -4", "golden_factor", "greater than or equal to 1"),
    ("golden_factor: fast", "golden_factor", "valid number"),
    ("golden_floor_s: 0", "golden_floor_s", "greater than 0"),
    ("golden_floor_s: -1", "golden_floor_s", "greater than 0"),
    ("sample_timeout_s: 0", "sample_timeout_s", "greater than 0"),
    ("sample_timeout_s: 1e9", "sample_timeout_s", "less than or equal to 86400"),
    ("golden_factr: 4", "golden_factr", "did you mean 'golden_factor'"),
])
def test_bad_limits_are_located_config_errors(tmp_path: Path, text: str, key: str, words: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CONFIG + "limits:\n  test_timeout_s: 5\n  " + text + "\n")
    _, config, problems = parse_config(path)
    assert config is None
    (problem,) = problems
    assert problem.line == 7 and problem.path == f"limits.{key}"
    assert words in problem.render()


def test_good_limits_parse_and_default() -> None:
    assert Limits().golden_factor is None and Limits().golden_floor_s == 1.0
    assert Limits().sample_timeout_s is None
    lim = Limits.model_validate({"golden_factor": 4, "golden_floor_s": 0.2, "sample_timeout_s": 30})
    assert (lim.golden_factor, lim.golden_floor_s, lim.sample_timeout_s) == (4, 0.2, 30)


def test_bad_limits_stop_the_run(tmp_path: Path, bw: Runner) -> None:
    ws = make_workspace(tmp_path)
    (ws / "configs" / "bad.yaml").write_text(CONFIG + "limits:\n  golden_factor: 0\n")
    proc = bw("run", "configs/bad.yaml", cwd=ws)
    assert proc.returncode == 2
    assert "bad.yaml:6" in proc.stderr and "golden_factor" in proc.stderr
    assert "Traceback" not in proc.stderr and not (ws / "results").exists()


def test_a_golden_far_below_the_floor_is_run_once_and_apply_sets_every_tests_limit(tmp_path: Path) -> None:
    ws_path = make_workspace(tmp_path)
    prep = engine.prepare(Workspace.open(ws_path), ws_path / "configs" / "golden.yaml")
    limits = Limits(golden_factor=4, golden_floor_s=1.0)  # 4 x 50 ms is at most half the floor
    seen: list[tuple[int, int, str | None]] = []
    measured = timelimits.measure(prep.plan.units, prep.sandbox, limits,
                                  progress=lambda d, t, what: seen.append((d, t, what)))
    nap = measured.tasks[("lim", "nap", "python")]
    assert nap.runs == 1 and [t.limit_s for t in nap.tests] == [1.0]
    assert nap.kept_ceiling is None and measured.tasks[("lim", "nogold", "python")].kept_ceiling
    assert seen[0] == (1, 2, None) and seen[-1] == (2, 2, "lim/nap [python]")
    # stored and read back: the same limits
    again = timelimits.TimeLimits.from_data(yaml.load(json.dumps(measured.to_data())))
    assert again.to_data() == measured.to_data()
    units = again.apply(prep.plan.units)
    timeouts = {u.task.name: [t.timeout_s for t in u.rendered.tests] for u in units}
    assert timeouts == {"nap": [1.0], "nogold": [None]}  # None: the ceiling
    assert [u.execution_id for u in units] == [u.execution_id for u in prep.plan.units]


# -- limits.sample_timeout_s ---------------------------------------------------------------------


class Recording(Sandbox):
    """Records the limits each command got; runs nothing."""

    name = "recording"
    isolation = "none"

    def __init__(self) -> None:
        self.walls: list[float] = []

    def run(self, argv: list[str], *, files: dict[str, bytes], limits: SandboxLimits,
            stdin: bytes | None = None, collect: tuple[str, ...] = (),
            env: dict[str, str] | None = None) -> ProcessResult:
        self.walls.append(limits.wall_s)
        return ProcessResult(0, None, b"", b"", False, 1.0, 1.0, 0)


class RecordingSessions(Recording):
    def start(self, argv: list[str], *, files: dict[str, bytes], limits: SandboxLimits,
              env: dict[str, str] | None = None) -> Session:
        raise RuntimeError("started")


def test_wall_cap_caps_every_command_of_the_run() -> None:
    inner = Recording()
    assert wall_capped(inner, None) is inner
    capped = wall_capped(inner, 5.0)
    assert isinstance(capped, WallCap) and wall_capped(capped, 5.0) is capped
    assert (capped.name, capped.isolation) == ("recording", "none")
    capped.run(["x"], files={}, limits=SandboxLimits(wall_s=100))
    assert capped.last_wall_s() == 5.0
    capped.run(["x"], files={}, limits=SandboxLimits(wall_s=2))
    assert inner.walls == [5.0, 2] and capped.last_wall_s() == 2
    # a sandbox without sessions stays one; one with sessions passes them through
    assert type(capped).start is Sandbox.start
    with pytest.raises(RuntimeError, match="started"):
        wall_capped(RecordingSessions(), 5.0).start(["x"], files={}, limits=SandboxLimits())


JAVA_NAPS = """\
public class Solution {
    public static int nap(int ms) throws InterruptedException {
        Thread.sleep(ms);
        return ms;
    }
}
"""


def test_sample_timeout_caps_the_whole_execution_and_says_so() -> None:
    task = Task(name="naps", languages=["java"])
    tests = [TestSpec(f"nap{i}", "assert Solution.nap(3000) == 3000;") for i in range(3)]
    rendered = RenderedTask("prompt", "nap", tests, None, {})
    gen = Generation(run_id="r", execution_id="e", task_source="s", task="naps", language="java",
                     model="m", provider="p", sample=0)
    limits = Limits(test_timeout_s=10, sample_timeout_s=5)
    ctx = SampleContext(task=task, language="java", rendered=rendered, generation=gen, code=JAVA_NAPS,
                        lang=JavaLanguage(), sandbox=best_sandbox(), limits=limits)
    measurements = UnitTest().evaluate(ctx)
    result = ctx.executed
    assert result is not None and result.process is not None and result.process.timed_out
    # 3 x 3 s of tests under 10 s each, but not within the sample's 5 s
    by_status: dict[str, list[dict[str, Any] | None]] = {}
    for m in measurements:
        if m.test_case is not None:
            by_status.setdefault(m.status or "", []).append(m.details)
    assert by_status["timeout"] and set(by_status) <= {"pass", "timeout"}
    assert all(d == {"limit": "sample", "limit_s": 5.0} for d in by_status["timeout"])
