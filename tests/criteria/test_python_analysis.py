"""``python-ruff``, ``python-pyright`` and ``python-bandit``: the real tools in the real sandbox,
on solutions written to trip them (and on clean ones); then through ``benchwright run`` with
the reference model, and with the tools missing (every sample's record is ``n/a`` with the fix)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from benchwright.config.model import Limits
from benchwright.criteria.base import Measurement, SampleContext
from benchwright.criteria.findings import FindingsCriterion
from benchwright.criteria.python_analysis import PythonBandit, PythonPyright, PythonRuff, ruff_class
from benchwright.results.record import Generation
from benchwright.sandbox.select import best_sandbox
from benchwright.task.model import Task
from benchwright.task.render import render_task
from tests.conftest import Runner, only_run, read_jsonl

GOOD = '''\
def clamp(value: int, low: int, high: int) -> int:
    """Value, at least low and at most high."""
    if value < low:
        return low
    return min(value, high)
'''

LINT = '''\
import os


def parse(text):
    try:
        return int(text)
    except:
        return None
'''

TYPES = '''\
def count(items: list[str]) -> int:
    return "many"


def shout(word: str) -> str:
    return word.shout()
'''

SECURITY = '''\
import subprocess

PASSWORD = "hunter2"


def run(command: str, retries: int) -> object:
    assert retries > 0
    subprocess.call(command, shell=True)
    return eval(input())
'''

SYNTAX = "def broken(:\n    return [1, 2\n"


def _ctx(code: str, prompt: str | None = None) -> SampleContext:
    """A sample of a real task: an instruct task, or a completion task whose code starts with
    ``prompt``."""
    python: dict[str, Any] = {"description": prompt or "Write it.",
                              "hidden_tests": [{"code": "assert True"}]}
    task = Task(name="t", languages=["python"], mode="complete" if prompt else "instruct",
                task={"languages_specific": {"python": python}}, golden_solution={"python": code})
    gen = Generation(run_id="r", execution_id="e", task_source="s", task="t", language="python",
                     model="m", provider="p", sample=0, code=code)
    return SampleContext(task=task, language="python", rendered=render_task(task, "python", {}),
                         generation=gen, code=code, lang=None, sandbox=best_sandbox(), limits=Limits())


def _measure(criterion: FindingsCriterion, code: str, prompt: str | None = None) -> Measurement:
    [m] = criterion.evaluate(_ctx(code, prompt))
    assert m.unit == "score"
    return m


def _found(m: Measurement) -> list[tuple[int | None, str, str]]:
    assert m.details is not None
    return [(f["line"], f["rule"], f["severity"]) for f in m.details["findings"]]


def test_ruff_names_the_unused_import_and_the_bare_except() -> None:
    ruff = PythonRuff()
    assert ruff.missing() is None
    good = _measure(ruff, GOOD)
    assert (good.score, good.output) == (1.0, "no findings")
    bad = _measure(ruff, LINT)
    assert _found(bad) == [(1, "F401", "warning"), (7, "E722", "error")]
    assert bad.score == pytest.approx(1 / (1 + 0.5 + 1.0))
    assert bad.line == 1
    assert bad.output is not None
    assert bad.output.splitlines()[0].startswith("line 1: F401 [warning]")
    assert bad.output.splitlines()[1].startswith("line 7: E722 [error]")


def test_ruff_is_hermetic_and_classes_rules() -> None:
    # no import sorting (I001 is in ruff's own default set), suppression comments do not count
    code = "import sys\nimport os  # noqa\n\n\nprint(os.sep, sys.argv)\nx = 1 # noqa: E261\n"
    m = _measure(PythonRuff(), code)
    assert _found(m) == [], m.output
    m = _measure(PythonRuff(), "import os  # noqa: F401\n")
    assert _found(m) == [(1, "F401", "warning")]
    assert [ruff_class(c) for c in ("F821", "F401", "E722", "E711", "E701", "W291", "B006", "B007",
                                    "invalid-syntax", "XYZ1")] == \
        ["error", "warning", "error", "warning", "info", "info", "error", "warning", "error", "warning"]


def test_a_syntax_error_is_the_models_finding_counted_once() -> None:
    for criterion in (PythonRuff(), PythonPyright()):
        m = _measure(criterion, SYNTAX)
        [(line, rule, severity)] = _found(m)
        assert (line, severity) == (1, "error") and rule in ("invalid-syntax", "syntax")
        assert m.score == 0.5
        assert m.details is not None
        assert all(f["why"] == "a further syntax error" for f in m.details.get("not_counted", []))
    m = _measure(PythonBandit(), SYNTAX)
    assert _found(m) == [(None, "syntax", "error")] and m.score == 0.5


def test_findings_on_the_prompt_are_listed_not_counted() -> None:
    prompt = "import os\nfrom typing import List\n\n\ndef total(xs: List[int]) -> int:\n"
    completion = "    return sum(xs)  \n"
    m = _measure(PythonRuff(), prompt + completion, prompt=prompt)
    assert _found(m) == [(6, "W291", "info")]
    assert m.details is not None
    assert [(f["line"], f["rule"], f["why"]) for f in m.details["not_counted"]] == \
        [(1, "F401", "on the task's prompt")]
    assert m.output is not None and "not counted:\nline 1: F401" in m.output
    assert m.score == pytest.approx(1 / 1.1)


@pytest.mark.slow
def test_pyright_names_the_type_errors_and_accepts_unannotated_code() -> None:
    pyright = PythonPyright()
    assert pyright.missing() is None
    good = _measure(pyright, GOOD)
    assert (good.score, good.output) == (1.0, "no findings")
    plain = _measure(pyright, "def add(a, b):\n    return a + b\n\n\nprint(add(1, 2))\n")
    assert plain.score == 1.0, plain.output  # standard mode: no annotations is no finding
    bad = _measure(pyright, TYPES)
    assert _found(bad) == [(2, "reportReturnType", "error"), (6, "reportAttributeAccessIssue", "error")]
    assert bad.score == pytest.approx(1 / 3)
    ignored = _measure(pyright, "def f() -> int:\n    return 'x'  # type: ignore\n")
    assert _found(ignored) == [(2, "reportReturnType", "error")]


def test_bandit_weighs_by_severity_and_names_the_lines() -> None:
    bandit = PythonBandit()
    assert bandit.missing() is None
    good = _measure(bandit, GOOD)
    assert (good.score, good.output) == (1.0, "no findings")
    bad = _measure(bandit, SECURITY)
    assert _found(bad) == [(1, "B404", "low"), (3, "B105", "low"), (7, "B101", "low"),
                           (8, "B602", "high"), (9, "B307", "medium")]
    assert bad.score == pytest.approx(1 / (1 + 3 * 0.1 + 1.0 + 0.5))
    assert bad.output is not None and "line 8: B602 [high] subprocess call with shell=True" in bad.output
    nosec = _measure(bandit, "x = eval(input())  # nosec\n")
    assert _found(nosec) == [(1, "B307", "medium")]


SLOPPY = LINT + "\n\n" + TYPES + "\n\n" + SECURITY
"""LINT at lines 1-8, TYPES at 11-16, SECURITY at 19-27."""


def _task(name: str, test: str, golden: str) -> str:
    block = "".join(f"        {line}\n" if line else "\n" for line in golden.splitlines())
    return (f"  - name: {name}\n    languages: [python]\n    task:\n      languages_specific:\n"
            f"        python:\n          description: Write {name} code.\n          hidden_tests:\n"
            f"            - code: {test}\n    golden_solution:\n      python: |\n{block}")


TASKS = ("version: 1\ntasks:\n" + _task("clean", "assert clamp(5, 1, 3) == 3", GOOD)
         + _task("sloppy", "assert parse('4') == 4", SLOPPY))

CRITERIA = ["python-ruff", "python-pyright", "python-bandit"]


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "configs").mkdir(parents=True)
    (ws / "tasks").mkdir()
    (ws / "benchwright.yaml").write_text("version: 1\n")
    (ws / "tasks" / "lint.yaml").write_text(TASKS)
    (ws / "configs" / "lint.yaml").write_text(
        f"version: 1\ntask_sources: [tasks/lint.yaml]\ncriteria: [unit-test, {', '.join(CRITERIA)}]\n"
        "llms: [reference]\n")
    return ws


@pytest.mark.slow
def test_a_run_records_the_three_criteria(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path)
    proc = bw("run", "configs/lint.yaml", "--run-id", "lint", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(ws / "results" / "lint" / "records.jsonl")
    got = {(r["task"], r["criterion"]): r for r in records if r["criterion"] in CRITERIA}
    assert len(got) == 6
    for name in CRITERIA:
        clean, sloppy = got["clean", name], got["sloppy", name]
        assert clean["unit"] == sloppy["unit"] == "score"
        assert clean["score"] == 1.0 and clean["output"] == "no findings"
        assert 0 < sloppy["score"] < 0.5, sloppy
        assert sloppy["executor"] == {"python-ruff": "PythonRuff", "python-pyright": "PythonPyright",
                                      "python-bandit": "PythonBandit"}[name]
    assert "line 1: F401" in got["sloppy", "python-ruff"]["output"]
    assert "line 7: E722" in got["sloppy", "python-ruff"]["output"]
    assert got["sloppy", "python-ruff"]["line"] == 1
    assert "line 12: reportReturnType" in got["sloppy", "python-pyright"]["output"]
    assert "line 16: reportAttributeAccessIssue" in got["sloppy", "python-pyright"]["output"]
    assert "line 26: B602 [high]" in got["sloppy", "python-bandit"]["output"]
    assert "line 27: B307 [medium]" in got["sloppy", "python-bandit"]["output"]

    summary = YAML(typ="safe").load(ws / "results" / "lint" / "summary.yaml")
    assert all(summary["units"][name] == "score" for name in CRITERIA)
    report = bw("report", "lint", cwd=ws)
    assert report.returncode == 0, report.stderr
    for name in CRITERIA:
        assert any(line.startswith(f"│ {name} ") and "│ score " in line
                   for line in report.stdout.splitlines()), report.stdout


def test_a_missing_tool_is_na_with_the_fix(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path)
    nowhere = "/usr/local/lib/benchwright-tools-not-installed"
    proc = bw("run", "configs/lint.yaml", cwd=ws, env={"BENCHWRIGHT_TOOLS": nowhere})
    assert proc.returncode == 0, proc.stderr
    records = [r for r in read_jsonl(only_run(ws) / "records.jsonl") if r["criterion"] in CRITERIA]
    assert len(records) == 6
    for r in records:
        assert r["verdict"] == "n/a" and r["score"] is None and r["error"] is None, r
        assert r["unit"] == "score"
        program = {"python-ruff": "ruff", "python-pyright": "basedpyright",
                   "python-bandit": "bandit"}[r["criterion"]]
        assert r["output"] == (f"{program} is not installed ({nowhere}/python/bin/{program} not found): "
                               f"run ./scripts/setup, which installs it under {nowhere}")
    assert {r["outcome"] for r in records} == {"pass"}
