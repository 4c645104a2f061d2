"""Checkstyle and PMD in a warm JVM against their command lines: the same score, findings, line
and output a user reads on HumanEval-X's Java solutions and on code written to trip them (in one
sequence through one server, so that nothing of a sample reaches the next), and a server that
fails or lies sends its sample to the command line."""

from __future__ import annotations

import base64
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from benchwright.criteria.java_analysis import JavaCheckstyle, JavaFindings, JavaPmd
from benchwright.criteria.javatoolserver import JavaToolServer
from benchwright.sandbox.select import best_sandbox
from benchwright.task.load import load_task_source
from tests.criteria.test_java_analysis import BAD, CLASSIFY, GOOD, NOT_JAVA, SEALED, _context

EXAMPLE = Path(__file__).parents[2] / "src/benchwright/workspace/example/tasks/humaneval-x-java.yaml"

TRIPS = {
    "suppressed": "public class Solution {\n    @SuppressWarnings(\"PMD\")\n    private int unused; // NOPMD\n"
                  "    public static int f(int x) { if (x > 0) return 1; return 0; }\n}\n",
}


def samples(golden_count: int = 5) -> dict[str, str]:
    golden = {t.name: t.golden_solution["java"] for t in load_task_source(EXAMPLE).source.tasks}
    assert len(golden) >= 5
    golden = dict(list(golden.items())[:golden_count])
    # the broken ones between clean ones: what a sample makes a server find must not stay
    return {"bad": BAD, **golden, "not java": NOT_JAVA, "good": GOOD, "sealed": SEALED,
            "suppressed": TRIPS["suppressed"], "bad again": BAD}


@pytest.mark.parametrize("kind", [JavaCheckstyle, JavaPmd], ids=["checkstyle", "pmd"])
def test_a_warm_jvm_measures_what_the_command_line_measures(kind: type[JavaFindings]) -> None:
    sandbox = best_sandbox()
    warm, cold = kind(), kind(warm=False)
    warm._servers.cold_uses = 0  # every sample through the server (a run leaves it the first two)
    try:
        # PMD's command line takes seconds a sample: one golden solution (Checkstyle: all five),
        # and the command line's answer for a code it has seen is its earlier one
        answers: dict[str, Any] = {}
        for name, code in samples(1 if kind is JavaPmd else 5).items():
            [a] = warm.evaluate(replace(_context(code, []), sandbox=sandbox))
            if code not in answers:
                [answers[code]] = cold.evaluate(replace(_context(code, []), sandbox=sandbox))
            b = answers[code]
            assert (a.score, a.verdict, a.details, a.line, a.output, a.error) == \
                (b.score, b.verdict, b.details, b.line, b.output, b.error), name
        server = warm._servers.get(sandbox)
        assert server is not None and server.started == 1  # every sample went through it
    finally:
        warm.close()


def test_a_java_tool_server_that_dies_or_lies_sends_the_sample_to_the_command_line() -> None:
    """(Checkstyle's server: PMD's is the same class with other arguments.)"""
    kind = JavaCheckstyle
    sandbox = best_sandbox()
    criterion, cold = kind(), kind(warm=False)
    real = criterion._server(sandbox)
    [want] = cold.evaluate(replace(_context(BAD, []), sandbox=sandbox))
    try:
        criterion._servers = type(criterion._servers)(lambda _sandbox: real)
        [first] = criterion.evaluate(replace(_context(BAD, []), sandbox=sandbox))
        assert real.session is not None
        real.session.close()  # killed between samples
        [again] = criterion.evaluate(replace(_context(BAD, []), sandbox=sandbox))
        assert real.started == 2
        # a server whose answers are not the tool's (a program that echoes nothing useful)
        liar = JavaToolServer(sandbox, "/bin/sh", [], "", "x", [], {}, 10.0, "liar")
        liar.argv = ["/bin/sh", "-c", "echo 'BWT ready'; while read n rest; do echo \"BWT $n 0 bm8= -\"; done"]
        criterion._servers = type(criterion._servers)(lambda _sandbox: liar)
        [lied] = criterion.evaluate(replace(_context(BAD, []), sandbox=sandbox))
        assert liar.started == 1 and liar.session is None  # closed after its answer
    finally:
        real.close()
    for m in (first, again, lied):
        assert (m.score, m.details, m.output) == (want.score, want.details, want.output)


NESTED = """\
public class Solution {
    static class Box {
        final int side;

        Box(int side) {
            this.side = side;
        }

        int area() {
            return side > 0 ? side * side : 0;
        }
    }

    public static int area(int side) {
        return new Box(side).area();
    }
}

class Helper {
    static int twice(int x) {
        return x < 0 ? -2 * -x : 2 * x;
    }
}
"""
EVERY = ['assert Solution.classify(-3).equals("negative");', 'assert Solution.classify(0).equals("zero");',
         'assert Solution.classify(8).equals("positive");', "assert Solution.spin(4) == 0;"]
JACOCO_SAMPLES = {  # (code, tests, test time limit)
    "all covered": (CLASSIFY, EVERY, 10.0),
    "part covered": (CLASSIFY, EVERY[2:], 10.0),
    "failing and timed out": (CLASSIFY, ['assert Solution.classify(-3).equals("wrong") : "fails";',
                                         "Solution.spin(1);", EVERY[1]], 1.0),
    "does not compile": (NOT_JAVA, ["assert Solution.twice(2) == 4;"], 10.0),
    "sealed": (SEALED, ["assert Shape.sides() == 4;"], 10.0),
    "all covered again": (CLASSIFY, EVERY, 10.0),
    # JaCoCo's runtime must be up before the first test even where no test reaches the solution
    "never called": (CLASSIFY, ["assert 1 + 1 == 2;"], 10.0),
    "exits in a test": (CLASSIFY, [EVERY[0], "System.exit(3);", EVERY[1]], 10.0),
    "nested and second classes": (NESTED, ["assert Solution.area(2) == 4;", "assert Helper.twice(2) == 4;"], 10.0),
    "static initializer throws": (CLASSIFY.replace("public class Solution {", "public class Solution {\n"
                                                   "    static final int BAD = Integer.parseInt(\"x\");"),
                                  EVERY[:2], 10.0),
}


def test_jacoco_compiled_by_the_warm_javac_measures_what_its_own_javac_measures() -> None:
    """The solution and test class compiled by the Java language's warm javac (the helper
    programs once) against javac in the sample's own sandbox call: the same measurement."""
    from benchwright.criteria.java_coverage import JavaJacoco

    warm, cold = JavaJacoco(), JavaJacoco(warm=False)
    warm._servers.cold_uses = 0  # the analysis in the warm JVM from the first sample on
    lang, sandbox = None, best_sandbox()  # one of each, as a run keeps them
    for name, (code, tests, limit) in JACOCO_SAMPLES.items():
        ctx = _context(code, tests, test_timeout_s=limit)
        lang = lang or ctx.lang
        [a] = warm.evaluate(replace(ctx, lang=lang, sandbox=sandbox))
        [b] = cold.evaluate(_context(code, tests, test_timeout_s=limit))
        assert (a.score, a.verdict, a.details, a.line, a.output) == \
            (b.score, b.verdict, b.details, b.line, b.output), name
        assert (a.error is None) == (b.error is None), name
    assert warm._helpers is not None  # the warm path was taken
    # every sample that compiles, but the sealed one, ran its tests on classes the warm JVM
    # instrumented (JaCoCo cannot instrument a sealed type: it ran under the agent, as on the
    # command line)
    assert warm.offline_runs == len(JACOCO_SAMPLES) - 2
    started = [server.started for server in warm._servers._servers.values()]
    # JaCoCo cannot analyse the sealed sample's classes: that answer closes the server (the
    # sample's analysis runs in a sandbox call, which says why), and the next sample starts another
    assert started == [2]
    warm.close()
    assert lang is not None
    lang.close()


def test_instrumented_classes_are_taken_only_as_the_classes_sent() -> None:
    """The warm JVM's instrumented classes replace a sample's own class files in its test run:
    only an answer of exactly the classes sent, each a class file, is taken."""
    from benchwright.criteria.java_coverage import CLASS_CAP, _instrumented

    def report(*rows: tuple[str, bytes]) -> bytes:
        return b"".join(base64.b64encode(n.encode()) + b" " + base64.b64encode(d) + b"\n" for n, d in rows) + b"end\n"

    klass = b"\xca\xfe\xba\xbe" + b"\x00" * 16
    sent = {"Solution.class", "Solution$Box.class"}
    good = report(("Solution.class", klass), ("Solution$Box.class", klass))
    assert _instrumented(good, sent) == {"Solution.class": klass, "Solution$Box.class": klass}
    refused = {
        "cut short": good.removesuffix(b"end\n"),
        "a class missing": report(("Solution.class", klass)),
        "a class not sent": report(("Solution.class", klass), ("Solution$Box.class", klass), ("BwTests.class", klass)),
        "a path elsewhere": report(("Solution.class", klass), ("../Solution$Box.class", klass)),
        "twice": report(("Solution.class", klass), ("Solution.class", klass), ("Solution$Box.class", klass)),
        "not a class file": report(("Solution.class", b"#!/bin/sh\n"), ("Solution$Box.class", klass)),
        "too large": report(("Solution.class", klass + b"\x00" * CLASS_CAP), ("Solution$Box.class", klass)),
        "not base64": good.replace(b" ", b" !", 1),
        "an extra field": good.replace(b"\n", b" x\n", 1),
    }
    for why, answer in refused.items():
        assert _instrumented(answer, sent) is None, why


def test_a_sample_whose_instrumentation_is_refused_runs_under_the_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    """A warm JVM that cannot instrument a sample, or answers something else, leaves the sample
    to JaCoCo's agent: the same measurement."""
    from benchwright.criteria.java_coverage import JavaJacoco

    code, tests, limit = JACOCO_SAMPLES["part covered"]
    cold = JavaJacoco(warm=False)
    [want] = cold.evaluate(_context(code, tests, test_timeout_s=limit))
    warm = JavaJacoco()
    warm._servers.cold_uses = 0
    ctx = _context(code, tests, test_timeout_s=limit)
    real_run = JavaToolServer.run

    def lying(self: JavaToolServer, files: dict[str, bytes], argument: str = "-") -> Any:
        answer = real_run(self, files, argument)
        if argument == "--instrument" and answer is not None and answer.report is not None:
            return replace(answer, report=answer.report.replace(b"end\n", b""))  # cut short
        return answer

    monkeypatch.setattr(JavaToolServer, "run", lying)
    try:
        [got] = warm.evaluate(ctx)
    finally:
        warm.close()
        ctx.lang.close()
    assert warm.offline_runs == 0
    assert (got.score, got.details, got.output) == (want.score, want.details, want.output)
    assert got.score is not None and 0 < got.score < 1
