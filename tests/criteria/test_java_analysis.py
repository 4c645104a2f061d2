"""``java-checkstyle``, ``java-pmd`` and ``java-jacoco`` with the real tools in the real sandbox:
a clean solution scores above one that breaks naming rules, swallows an exception and leaves
fields unused, with every finding at its line; coverage names the lines and branches the tests
never reach, and a failing or timed-out test does not stop the others; code that does not
compile scores 0 and syntax the tool does not know is ``n/a``; a whole ``benchwright run`` of
a Java task writes the three criteria with their units; a missing PMD is ``n/a`` with the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from benchwright.config.model import Limits
from benchwright.criteria.base import Measurement, SampleContext
from benchwright.criteria.java_analysis import JavaCheckstyle, JavaPmd
from benchwright.criteria.java_coverage import JavaJacoco, line_ranges
from benchwright.lang.base import TestSpec
from benchwright.lang.java import JavaLanguage
from benchwright.registry import registry
from benchwright.results.record import Generation
from benchwright.sandbox.select import best_sandbox
from benchwright.task.model import Task
from benchwright.task.render import RenderedTask
from tests.conftest import Runner, read_jsonl

GOOD = """\
public class Solution {
    private static final int LIMIT = 100;

    public static int clamp(int value) {
        if (value > LIMIT) {
            return LIMIT;
        }
        return value;
    }
}
"""

BAD = """\
public class my_solution {
    private static final int max_value = 100;
    private int unused;
    public static int Do_Thing(int value) {
        int spare = 2;
        try {
            if (value > max_value) return max_value;
        } catch (RuntimeException e) {
        }
        return value;
    }
}
"""

CLASSIFY = """\
public class Solution {
    public static String classify(int n) {
        if (n < 0) {
            return "negative";
        }
        if (n == 0) {
            return "zero";
        }
        return "positive";
    }

    public static long spin(long n) {
        while (n != 0) {
            n = n - 2;
        }
        return n;
    }
}
"""

NOT_JAVA = """\
public class Solution {
    public static int twice(int x) {
        return x *;
    }
}
"""

SEALED = """\
public sealed interface Shape permits Shape.Square {
    final class Square implements Shape {
    }

    static int sides() {
        return 4;
    }
}
"""


def _context(code: str, tests: list[str], test_timeout_s: float = 10) -> SampleContext:
    task = Task(name="t", languages=["java"])
    gen = Generation(run_id="r", execution_id="e", task_source="s", task="t", language="java",
                     model="m", provider="p", sample=0, code=code)
    rendered = RenderedTask("prompt", None, [TestSpec(f"case{i}", t) for i, t in enumerate(tests)],
                            None, {})
    return SampleContext(task=task, language="java", rendered=rendered, generation=gen, code=code,
                         lang=JavaLanguage(), sandbox=best_sandbox(),
                         limits=Limits(test_timeout_s=test_timeout_s))


def _one(measurements: list[Measurement]) -> Measurement:
    [m] = measurements
    return m


def _rules(m: Measurement) -> set[tuple[int | None, str, str]]:
    assert m.details is not None
    return {(f["line"], f["rule"], f["severity"]) for f in m.details["findings"]}


def test_the_criteria_are_registered_with_unit_direction_languages_and_tool() -> None:
    for name, cls, unit, tool in (("java-checkstyle", JavaCheckstyle, "score", "checkstyle 8.36.1"),
                                  ("java-pmd", JavaPmd, "score", "pmd 7.28.0"),
                                  ("java-jacoco", JavaJacoco, "ratio", "jacoco 0.8.6")):
        criterion = registry.create("criterion", name)
        assert isinstance(criterion, cls)
        assert (criterion.unit, criterion.higher_is_better, criterion.languages, criterion.tool) == \
            (unit, True, ("java",), tool)
        assert criterion.missing() is None
    rendered = RenderedTask("p", None, [], None, {})
    assert not JavaJacoco().applies(Task(name="t", languages=["java"]), "java", rendered)
    assert not JavaPmd().applies(Task(name="t", languages=["python"]), "python", rendered)
    assert line_ranges([9, 3, 4, 5, 12, 11]) == "3-5, 9, 11-12"


@pytest.mark.slow
def test_checkstyle_names_the_broken_conventions_at_their_lines() -> None:
    good = _one(JavaCheckstyle().evaluate(_context(GOOD, [])))
    assert (good.score, good.output, good.unit) == (1.0, "no findings", "score")
    bad = _one(JavaCheckstyle().evaluate(_context(BAD, [])))
    assert bad.score is not None and bad.score < good.score
    assert {
        (1, "TypeName", "warning"),        # class my_solution
        (2, "ConstantName", "warning"),    # max_value
        (4, "MethodName", "warning"),      # Do_Thing
        (7, "NeedBraces", "warning"),      # if without braces
        (8, "EmptyCatchBlock", "error"),   # a swallowed exception
    } <= _rules(bad)
    assert bad.line == 1 and bad.details is not None
    assert "line 8: EmptyCatchBlock [error]" in (bad.output or "")
    findings = bad.details["findings"]
    assert {(f["severity"], f["weight"]) for f in findings} <= {
        ("error", 1.0), ("warning", 0.5), ("info", 0.1)}
    assert bad.details["penalty"] == pytest.approx(sum(f["weight"] for f in findings))
    assert bad.score == pytest.approx(1 / (1 + bad.details["penalty"]))


@pytest.mark.slow
def test_pmd_names_the_smells_at_their_lines_and_a_suppression_does_not_hide_one() -> None:
    good = _one(JavaPmd().evaluate(_context(GOOD, [])))
    assert (good.score, good.output) == (1.0, "no findings")
    bad = _one(JavaPmd().evaluate(_context(BAD, [])))
    assert bad.score is not None and bad.score < good.score
    assert {
        (1, "ClassNamingConventions", "high"),
        (2, "FieldNamingConventions", "high"),
        (3, "UnusedPrivateField", "medium"),
        (4, "MethodNamingConventions", "high"),
        (5, "UnusedLocalVariable", "medium"),
        (8, "EmptyCatchBlock", "medium"),
    } <= _rules(bad)
    # `// NOPMD` and @SuppressWarnings("PMD") are reported anyway
    hushed = BAD.replace("int spare = 2;", "int spare = 2; // NOPMD").replace(
        "    public static int Do_Thing", '    @SuppressWarnings("PMD")\n    public static int Do_Thing')
    quiet = _one(JavaPmd().evaluate(_context(hushed, [])))
    assert quiet.details is not None
    spare = [f for f in quiet.details["findings"] if f["rule"] == "UnusedLocalVariable"]
    assert [f["line"] for f in spare] == [6] and "suppressed in the code" in spare[0]["message"]
    assert quiet.score == pytest.approx(bad.score)


@pytest.mark.slow
def test_jacoco_names_the_lines_and_branches_the_tests_miss() -> None:
    every = ['assert Solution.classify(-3).equals("negative");',
             'assert Solution.classify(0).equals("zero");',
             'assert Solution.classify(8).equals("positive");',
             "assert Solution.spin(4) == 0;"]
    full = _one(JavaJacoco().evaluate(_context(CLASSIFY, every)))
    assert (full.score, full.unit, full.line) == (1.0, "ratio", None)
    assert full.details is not None and full.details["missed_lines"] == []
    assert full.details["implicit_constructor_lines"] == [1]  # `public class Solution` is never built

    part = _one(JavaJacoco().evaluate(_context(CLASSIFY, [every[2], every[3]])))
    assert part.score is not None and part.score < 1.0 and part.details is not None
    d = part.details
    assert d["missed_lines"] == [4, 7]
    assert d["partial_branch_lines"] == {"3": {"missed": 1, "total": 2}, "6": {"missed": 1, "total": 2}}
    assert d["lines"] == {"covered": 6, "total": 8} and d["branches"] == {"covered": 4, "total": 6}
    assert d["line_ratio"] == pytest.approx(6 / 8) and d["branch_ratio"] == pytest.approx(4 / 6)
    assert part.score == pytest.approx((6 + 4) / (8 + 6))
    assert part.line == 3
    assert "lines not covered: 4, 7" in (part.output or "")
    assert "branches not taken: line 3 (1 of 2), line 6 (1 of 2)" in (part.output or "")


@pytest.mark.slow
def test_jacoco_counts_what_failing_and_timed_out_tests_ran_and_goes_on() -> None:
    tests = ['assert Solution.classify(-3).equals("wrong") : "a failing test";',
             "Solution.spin(1);",  # odd: never reaches 0, stopped after the 1 s limit
             'assert Solution.classify(0).equals("zero");']
    m = _one(JavaJacoco().evaluate(_context(CLASSIFY, tests, test_timeout_s=1)))
    assert m.details is not None
    assert m.details["tests"] == {"fail": 1, "timeout": 1, "pass": 1}
    assert m.details["missed_lines"] == [9, 16]  # "positive", and spin's return
    assert "1 fail, 1 timeout" in (m.output or "")


@pytest.mark.slow
def test_code_that_does_not_compile_scores_0_and_syntax_a_tool_does_not_know_is_na() -> None:
    for criterion in (JavaCheckstyle(), JavaPmd(), JavaJacoco()):
        m = _one(criterion.evaluate(_context(NOT_JAVA, ["assert Solution.twice(2) == 4;"])))
        assert (m.score, m.line) == (0.0, 3), criterion.name
        assert "Solution.java:3: error" in (m.error or ""), criterion.name
    # Checkstyle 8.36 predates `sealed`, JaCoCo 0.8.6 cannot read PermittedSubclasses; PMD can
    for criterion in (JavaCheckstyle(), JavaJacoco()):
        m = _one(criterion.evaluate(_context(SEALED, ["assert Shape.sides() == 4;"])))
        assert (m.score, m.verdict) == (None, "n/a"), criterion.name
        assert "sealed" in (m.output or ""), criterion.name
    assert _one(JavaPmd().evaluate(_context(SEALED, []))).score == 1.0


TASKS = """\
version: 1
name: java-criteria
tasks:
  - name: classify
    type: implementation from zero
    difficulty: easy
    area: math
    languages: [java]
    task:
      common_prompt: Write classify.
      languages_specific:
        java:
          description: ${common_prompt}
          public_tests:
            - code: assert Solution.classify(-3).equals("negative");
            - code: assert Solution.classify(8).equals("positive");
    golden_solution:
      java: |
""" + "".join(f"        {line}\n" for line in CLASSIFY.splitlines())

CONFIG = """\
version: 1
task_sources: [tasks/java.yaml]
languages: [java]
criteria: [{}]
llms: [reference]
"""


def _by(records: list[dict[str, Any]], criterion: str) -> dict[str, Any]:
    [rec] = [r for r in records if r["criterion"] == criterion and r["test_case"] is None]
    return rec


@pytest.mark.slow
def test_a_run_of_a_java_task_records_the_three_criteria(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    (ws / "tasks").mkdir(parents=True)
    (ws / "configs").mkdir()
    (ws / "benchwright.yaml").write_text("version: 1\n")
    (ws / "tasks" / "java.yaml").write_text(TASKS)
    (ws / "configs" / "java.yaml").write_text(
        CONFIG.format("unit-test, java-checkstyle, java-pmd, java-jacoco"))
    proc = bw("run", "configs/java.yaml", "--run-id", "java", cwd=ws)
    assert proc.returncode == 0, proc.stderr + proc.stdout

    records = read_jsonl(ws / "results" / "java" / "records.jsonl")
    assert _by(records, "unit-test")["verdict"] == "pass"
    style = _by(records, "java-checkstyle")
    assert (style["unit"], style["executor"], style["score"]) == ("score", "JavaCheckstyle", 1.0)
    pmd = _by(records, "java-pmd")
    assert pmd["unit"] == "score" and pmd["score"] == 1.0 and pmd["error"] is None
    cov = _by(records, "java-jacoco")
    assert cov["unit"] == "ratio" and cov["outcome"] == "pass"
    assert cov["details"]["missed_lines"] == [7, 13, 14, 16]  # zero and spin: untested
    assert cov["line"] == 6 and "lines not covered: 7, 13-14, 16" in cov["output"]

    summary = YAML(typ="safe").load(ws / "results" / "java" / "summary.yaml")
    assert summary["units"]["java-checkstyle"] == "score"
    assert summary["units"]["java-pmd"] == "score"
    assert summary["units"]["java-jacoco"] == "ratio"
    report = bw("report", "java", cwd=ws)
    assert report.returncode == 0, report.stderr
    rows = {line.split("│")[1].strip(): line for line in report.stdout.splitlines()
            if line.startswith("│ java-")}
    assert set(rows) == {"java-checkstyle", "java-pmd", "java-jacoco"}
    assert "│ ratio " in rows["java-jacoco"] and "│ score " in rows["java-pmd"]


@pytest.mark.slow
def test_without_pmd_the_record_is_na_with_how_to_install_it(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    (ws / "tasks").mkdir(parents=True)
    (ws / "configs").mkdir()
    (ws / "benchwright.yaml").write_text("version: 1\n")
    (ws / "tasks" / "java.yaml").write_text(TASKS)
    (ws / "configs" / "java.yaml").write_text(CONFIG.format("java-pmd"))
    proc = bw("run", "configs/java.yaml", "--run-id", "nopmd", cwd=ws,
              env={"BENCHWRIGHT_TOOLS": "/usr/lib/benchwright-no-such-tools"})
    assert proc.returncode == 0, proc.stderr + proc.stdout
    rec = _by(read_jsonl(ws / "results" / "nopmd" / "records.jsonl"), "java-pmd")
    assert (rec["verdict"], rec["score"], rec["error"]) == ("n/a", None, None)
    assert "PMD is not installed" in rec["output"] and "./scripts/setup" in rec["output"]
    assert "/usr/lib/benchwright-no-such-tools/pmd" in rec["output"]
