"""JavaLanguage against a real JDK (javac + java) through the rlimit sandbox."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest

from benchwright.criteria.usage import CpuUsage, RamUsage
from benchwright.errors import InfraError
from benchwright.lang.base import ExecutionResult, TestSpec
from benchwright.lang.java import (
    JavaLanguage,
    solution_file_name,
    split_prelude,
    timeouts_of,
    top_level_types,
    wall_limit_s,
)
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits
from benchwright.sandbox.rlimit import RlimitSandbox

needs_jdk = pytest.mark.jdk  # ./scripts/setup installs the JDK: no skip, a missing one fails

GCD = """import java.util.*;

public class Solution {
    public static int gcd(int a, int b) {
        return b == 0 ? a : gcd(b, a % b);
    }
}
"""

WRONG_GCD = """public class Solution {
    public static int gcd(int a, int b) {
        return a * b;
    }
}
"""

GCD_TESTS = [
    TestSpec("small", "assert Solution.gcd(4, 6) == 2;"),
    TestSpec("coprime", 'assert Solution.gcd(7, 9) == 1 : "gcd(7, 9) should be 1";'),
    TestSpec("zero", 'int g = Solution.gcd(5, 0);\nassert g == 5 : "expected 5, got " + g;'),
]

LANG = JavaLanguage()


def run(
    solution: str,
    tests: list[TestSpec],
    *,
    prelude: str | None = None,
    timeout: float = 10.0,
    sandbox: Sandbox | None = None,
) -> ExecutionResult:
    return LANG.run_tests(
        sandbox or RlimitSandbox(),
        solution,
        tests,
        prelude=prelude,
        limits=SandboxLimits(wall_s=timeout),
        test_timeout_s=timeout,
    )


def line_of(code: str, line: int | None) -> str:
    assert line is not None
    return code.splitlines()[line - 1].strip()


@needs_jdk
def test_passing_solution() -> None:
    result = run(GCD, GCD_TESTS)
    assert result.build_error is None and result.infra_error is None
    assert [t.status for t in result.tests] == ["pass", "pass", "pass"]
    for test, spec in zip(result.tests, GCD_TESTS, strict=True):
        assert test.name == spec.name
        assert test.time_ms is not None and test.time_ms >= 0
        assert test.line is None and test.message is None
        # the reported code is the solution followed by this test's method
        assert test.code.startswith(GCD)
        assert spec.code.splitlines()[-1] in test.code
        others = [s.code for s in GCD_TESTS if s is not spec]
        assert not any(o.splitlines()[-1] in test.code for o in others)
    assert result.process is not None and result.process.exit_code == 0


@needs_jdk
def test_wrong_solution_reports_assertion_message_and_line() -> None:
    result = run(WRONG_GCD, GCD_TESTS)
    assert [t.status for t in result.tests] == ["fail", "fail", "fail"]
    small, coprime, zero = result.tests
    # no message: the failing source line stands in
    assert small.message == "assertion failed: assert Solution.gcd(4, 6) == 2;"
    assert line_of(small.code, small.line) == "assert Solution.gcd(4, 6) == 2;"
    assert coprime.message == "gcd(7, 9) should be 1"
    assert line_of(coprime.code, coprime.line).startswith("assert Solution.gcd(7, 9) == 1")
    assert zero.message == "expected 5, got 0"
    # the second line of a two-line test case
    assert line_of(zero.code, zero.line) == 'assert g == 5 : "expected 5, got " + g;'
    assert zero.time_ms is not None


@needs_jdk
def test_runtime_exception_is_an_error_with_class_name_and_line() -> None:
    solution = """public class Solution {
    public static int div(int a, int b) {
        return a / b;
    }
}
"""
    tests = [
        TestSpec("ok", "assert Solution.div(6, 3) == 2;"),
        TestSpec("boom", "int x = 1;\nassert Solution.div(x, 0) == 0;"),
        TestSpec("npe", "String s = null;\ns.length();"),
    ]
    result = run(solution, tests)
    ok, boom, npe = result.tests
    assert ok.status == "pass"
    assert boom.status == "error"
    assert boom.message is not None and boom.message.startswith("java.lang.ArithmeticException")
    assert "/ by zero" in boom.message
    assert line_of(boom.code, boom.line) == "assert Solution.div(x, 0) == 0;"
    assert npe.status == "error"
    assert npe.message is not None and "java.lang.NullPointerException" in npe.message
    assert line_of(npe.code, npe.line) == "s.length();"


@needs_jdk
def test_infinite_loop_times_out_and_later_tests_are_not_run() -> None:
    solution = """public class Solution {
    public static int spin(int n) {
        while (n > 0) { n = n + 0; }
        return n;
    }
}
"""
    tests = [
        TestSpec("first", "assert Solution.spin(0) == 0;"),
        TestSpec("loops", "Solution.spin(1);"),
        TestSpec("after", "assert Solution.spin(0) == 0;"),
        TestSpec("last", "assert true;"),
    ]
    start = time.perf_counter()
    result = run(solution, tests, timeout=1.0)
    elapsed = time.perf_counter() - start
    assert [t.status for t in result.tests] == ["pass", "timeout", "not_run", "not_run"]
    loops = result.tests[1]
    assert loops.message is not None and "timed out after 1 s" in loops.message
    assert loops.time_ms is not None and loops.time_ms >= 1000
    # where it was stuck, as seen from the test method
    assert line_of(loops.code, loops.line) == "Solution.spin(1);"
    assert result.tests[2].message is not None and "'loops' timed out" in result.tests[2].message
    # ended by the 1 s test limit, not the sandbox's wall limit (over 35 s here); javac on a
    # busy CI machine can take a few seconds, hence the margin
    assert elapsed < 20, elapsed


@needs_jdk
def test_compile_error_in_solution_is_a_build_error() -> None:
    broken = """public class Solution {
    public static int gcd(int a, int b) {
        return a +;
    }
}
"""
    result = run(broken, GCD_TESTS)
    assert result.build_error is not None
    assert "Solution.java:3: error" in result.build_error
    assert result.infra_error is None
    for test in result.tests:
        assert test.status == "error"
        assert test.message == result.build_error
        assert line_of(test.code, test.line) == "return a +;"


@needs_jdk
def test_compile_error_caused_by_a_test_is_a_build_error() -> None:
    tests = [
        TestSpec("fine", "assert Solution.gcd(4, 6) == 2;"),
        TestSpec("missing", "assert Solution.lcm(4, 6) == 12;"),
    ]
    result = run(GCD, tests)
    assert result.build_error is not None and "cannot find symbol" in result.build_error
    assert [t.status for t in result.tests] == ["error", "error"]
    fine, missing = result.tests
    assert fine.line is None  # the error is not in this test's code
    assert line_of(missing.code, missing.line) == "assert Solution.lcm(4, 6) == 12;"


@needs_jdk
def test_solution_stdout_does_not_break_results() -> None:
    solution = """public class Solution {
    public static int twice(int x) {
        System.out.println("{\\"i\\":0,\\"status\\":\\"pass\\"}");
        System.out.print("no newline \\u00e9 " + x);
        System.err.println("to stderr");
        return 2 * x;
    }
}
"""
    tests = [
        TestSpec("right", "assert Solution.twice(2) == 4;"),
        TestSpec("wrong", 'assert Solution.twice(2) == 5 : "bad";'),
    ]
    result = run(solution, tests)
    assert [t.status for t in result.tests] == ["pass", "fail"]
    right = result.tests[0]
    assert '{"i":0,"status":"pass"}' in right.output
    assert "no newline \u00e9 2" in right.output
    assert "to stderr" in right.output
    assert result.process is not None
    assert b"no newline" in result.process.stdout
    assert result.tests[1].message == "bad"


@needs_jdk
def test_solution_class_with_another_name_and_helpers() -> None:
    solution = """package com.example;

import java.util.*;

class Helper {
    static int two() { return 2; }
}

public class Gcd {
    public static int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }
}
"""
    prelude = "import java.math.BigInteger;\nstatic boolean same(int a, int b) { return a == b; }\n"
    tests = [
        TestSpec("helper", "assert Gcd.gcd(4, 6) == Helper.two();"),
        TestSpec("prelude", "assert same(Gcd.gcd(9, 6), BigInteger.valueOf(3).intValue());"),
        TestSpec("fails", "List<Integer> xs = new ArrayList<>();\nassert same(Gcd.gcd(9, 6), 4);"),
    ]
    result = run(solution, tests, prelude=prelude)
    assert result.build_error is None
    assert [t.status for t in result.tests] == ["pass", "pass", "fail"]
    assert result.extra["solution_file"] == "Gcd.java"
    fails = result.tests[2]
    assert line_of(fails.code, fails.line) == "assert same(Gcd.gcd(9, 6), 4);"
    assert "import java.math.BigInteger;" in fails.code
    assert "static boolean same(int a, int b)" in fails.code


@needs_jdk
def test_non_public_solution_class() -> None:
    result = run(
        "class Solution { static int one() { return 1; } }",
        [TestSpec("one", "assert Solution.one() == 1;")],
    )
    assert result.tests[0].status == "pass"
    assert result.extra["solution_file"] == "Solution.java"


@needs_jdk
def test_system_exit_is_never_a_pass() -> None:
    solution = """public class Solution {
    public static int quit(int x) {
        System.out.print("bye");
        System.exit(0);
        return x;
    }
}
"""
    tests = [
        TestSpec("before", "assert true;"),
        TestSpec("exits", "assert Solution.quit(1) == 1;"),
        TestSpec("after", "assert true;"),
    ]
    result = run(solution, tests)
    assert result.process is not None and result.process.exit_code == 0
    before, exits, after = result.tests
    assert before.status == "pass"
    assert exits.status == "error"
    assert exits.message is not None and "exited with code 0" in exits.message
    assert exits.output == "bye"
    assert after.status == "not_run"
    assert not any(t.status == "pass" for t in result.tests[1:])


@needs_jdk
def test_halt_and_static_initializer_failure() -> None:
    halting = "public class Solution { static void stop() { Runtime.getRuntime().halt(3); } }"
    result = run(halting, [TestSpec("stops", "Solution.stop();"), TestSpec("next", "assert true;")])
    assert [t.status for t in result.tests] == ["error", "not_run"]
    assert result.tests[0].message is not None and "code 3" in result.tests[0].message

    failing_init = "public class Solution { static int X = 1 / 0; static int x() { return X; } }"
    result = run(failing_init, [TestSpec("init", "Solution.x();")])
    assert result.tests[0].status == "error"
    message = result.tests[0].message or ""
    assert "ExceptionInInitializerError" in message and "ArithmeticException" in message


@needs_jdk
def test_deep_recursion_and_stack_overflow() -> None:
    solution = """public class Solution {
    static int depth(int n) { return n == 0 ? 0 : 1 + depth(n - 1); }
    static int forever(int n) { return forever(n + 1) + 1; }
}
"""
    tests = [
        TestSpec("deep", "assert Solution.depth(100000) == 100000;"),
        TestSpec("overflow", "Solution.forever(0);"),
        TestSpec("still_runs", "assert Solution.depth(3) == 3;"),
    ]
    result = run(solution, tests)
    assert [t.status for t in result.tests] == ["pass", "error", "pass"]
    assert result.tests[1].message == "java.lang.StackOverflowError"


class ShortWallSandbox(Sandbox):
    """The real rlimit sandbox with a much shorter wall limit (to hit the whole-run timeout)."""

    def __init__(self, wall_s: float) -> None:
        self.inner = RlimitSandbox()
        self.wall_s = wall_s

    def run(
        self,
        argv: list[str],
        *,
        files: dict[str, bytes],
        limits: SandboxLimits,
        stdin: bytes | None = None,
        collect: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> ProcessResult:
        limits = replace(limits, wall_s=self.wall_s, cpu_s=self.wall_s * 2)
        return self.inner.run(
            argv, files=files, limits=limits, stdin=stdin, collect=collect, env=env
        )


@needs_jdk
def test_whole_run_timeout_marks_tests_without_result_timeout() -> None:
    solution = "public class Solution { static void spin() { while (true) { } } }"
    tests = [TestSpec("spins", "Solution.spin();"), TestSpec("never", "assert true;")]
    result = run(solution, tests, timeout=30.0, sandbox=ShortWallSandbox(3.0))
    assert result.process is not None and result.process.timed_out
    assert [t.status for t in result.tests] == ["timeout", "timeout"]
    assert "wall limit" in (result.tests[0].message or "")


@needs_jdk
def test_no_tests() -> None:
    result = run(GCD, [])
    assert result.tests == [] and result.build_error is None


def test_missing_jdk_is_an_infra_error(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(InfraError, match="default-jdk-headless"):
        run(GCD, GCD_TESTS)
    with pytest.raises(InfraError, match="JDK"):
        LANG.toolchain()


@needs_jdk
def test_toolchain_reports_javac_version() -> None:
    tools = LANG.toolchain()
    assert set(tools) == {"javac"}
    assert tools["javac"].startswith("javac ")
    assert LANG.toolchain() == tools


def test_infer_entry_point() -> None:
    infer = LANG.infer_entry_point
    assert infer(GCD) == "gcd"
    assert (
        infer(
            """// public static int commented(int x)
public class Solution {
    public static void main(String[] args) { }
    private static int helper(int x) { return x; }
    static public <T extends Comparable<T>> List<T> sortAll(List<T> xs) { return xs; }
}
"""
        )
        == "sortAll"
    )
    assert (
        infer(
            """class Solution {
    String s = "public static int fake(";
    static int[] twice(int[] xs) { return xs; }
    static int other() { return 0; }
}
"""
        )
        == "twice"
    )
    assert (
        infer(
            "class Solution {\n public static final int LIMIT = compute(3);\n public int run(int x) { return x; }\n}"
        )
        is None
    )
    assert infer("public class Main { public static void main(String[] a) {} }") is None
    assert (
        infer(
            "public class S { public static java.util.Map<String, Integer> count(String s) { return null; } }"
        )
        == "count"
    )


def test_file_name_and_top_level_types() -> None:
    assert solution_file_name(GCD) == "Solution.java"
    assert (
        solution_file_name("class A {}\npublic final class B { public class C {} }\n") == "B.java"
    )
    assert solution_file_name("class A { public class Inner {} }") == "Solution.java"
    assert (
        solution_file_name("/* public class Nope {} */ public record Point(int x, int y) {}")
        == "Point.java"
    )
    assert [
        t.name for t in top_level_types("interface I {}\nenum E { A; }\nclass X { class Y {} }")
    ] == [
        "I",
        "E",
        "X",
    ]


def test_split_prelude() -> None:
    imports, members = split_prelude(
        "import java.math.*;\n\nstatic int helper() { return 1; }\nimport static java.lang.Math.max;\n"
    )
    assert imports == ["import java.math.*;", "import static java.lang.Math.max;"]
    assert members == ["static int helper() { return 1; }"]
    assert split_prelude(None) == ([], [])


def test_wall_limit_formula() -> None:
    limits = SandboxLimits(wall_s=10)
    assert wall_limit_s(limits, 2.0, 5) == 30 + 5 + 10
    assert wall_limit_s(SandboxLimits(wall_s=500), 2.0, 5) == 500
    # every test's own limit counts
    assert wall_limit_s(limits, [0.5, 2.0, 7.5]) == 30 + 5 + 10
    assert wall_limit_s(limits, []) == 35


def test_each_test_gets_its_own_limit_or_the_calls() -> None:
    tests = [TestSpec("a", "x"), TestSpec("b", "x", timeout_s=0.25), TestSpec("c", "x", timeout_s=30)]
    assert timeouts_of(tests, 2.0) == [2.0, 0.25, 30]


SLEEPER = """public class Solution {
    public static int nap(int ms) throws InterruptedException {
        Thread.sleep(ms);
        return ms;
    }
}
"""


@needs_jdk
def test_per_test_timeouts_are_honoured() -> None:
    tests = [
        TestSpec("default", "assert Solution.nap(1) == 1;"),  # the call's limit (2 s)
        TestSpec("longer", "assert Solution.nap(2500) == 2500;", timeout_s=30),  # over the call's 2 s
        TestSpec("shorter", "assert Solution.nap(60000) == 60000;", timeout_s=0.3),
    ]
    result = run(SLEEPER, tests, timeout=2.0)
    assert [t.status for t in result.tests] == ["pass", "pass", "timeout"]
    shorter = result.tests[2]
    assert shorter.message == "timed out after 0.3 s"
    assert line_of(shorter.code, shorter.line) == "assert Solution.nap(60000) == 60000;"
    # the sandbox's backstop counts every test's own limit
    assert result.extra["wall_limit_s"] == wall_limit_s(SandboxLimits(wall_s=2.0), [2.0, 30, 0.3])


@needs_jdk
def test_a_short_own_limit_before_others_leaves_them_not_run() -> None:
    tests = [
        TestSpec("first", "assert Solution.nap(1) == 1;", timeout_s=5),
        TestSpec("stuck", "Solution.nap(60000);", timeout_s=0.2),
        TestSpec("after", "assert Solution.nap(1) == 1;", timeout_s=5),
    ]
    result = run(SLEEPER, tests, timeout=10.0)
    assert [t.status for t in result.tests] == ["pass", "timeout", "not_run"]
    assert result.tests[1].message == "timed out after 0.2 s"
    assert "'stuck' timed out" in (result.tests[2].message or "")


BURN = """public class Solution {
    // spins until this thread has used `ms` of CPU time (not wall time: the machine may be busy)
    public static long burn(long ms) {
        java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
        long end = mx.getCurrentThreadCpuTime() + ms * 1000000L;
        long x = 0;
        while (mx.getCurrentThreadCpuTime() < end) {
            for (int i = 0; i < 1000; i++) {
                x = x * 31 + 7;
            }
        }
        return x;
    }
    public static void quit() { System.exit(0); }
}
"""


@needs_jdk
def test_cpu_time_of_the_tests_is_reported() -> None:
    result = run(BURN, [TestSpec("burns", "Solution.burn(200);"), TestSpec("idle", "assert true;")])
    assert [t.status for t in result.tests] == ["pass", "pass"]
    cpu = result.extra.get("cpu_ms")
    assert isinstance(cpu, float)
    assert 100 <= cpu <= 2000, cpu
    # the sandbox's figure also covers javac and the JVM's own threads
    assert result.process is not None and cpu < result.process.cpu_ms


@needs_jdk
def test_peak_rss_of_the_test_jvm_is_reported() -> None:
    result = run(GCD, GCD_TESTS)
    rss = result.extra.get("max_rss_bytes")
    assert isinstance(rss, int) and not isinstance(rss, bool)
    assert 10 * 2**20 < rss < 2 * 2**30, rss
    # ru_maxrss covers javac too, and the JVM is one of the processes it covers
    assert result.process is not None and rss <= result.process.max_rss_bytes


@needs_jdk
def test_usage_is_reported_after_system_exit_and_timeout_but_not_for_build_errors() -> None:
    exits = run(
        BURN, [TestSpec("burns", "Solution.burn(50);"), TestSpec("quits", "Solution.quit();")]
    )
    assert [t.status for t in exits.tests] == ["pass", "error"]
    exit_cpu = exits.extra.get("cpu_ms")
    assert isinstance(exit_cpu, float) and 50 <= exit_cpu <= 2000, exit_cpu
    assert isinstance(exits.extra.get("max_rss_bytes"), int)

    spins = run(BURN, [TestSpec("spins", "Solution.burn(60000);")], timeout=1.0)
    assert [t.status for t in spins.tests] == ["timeout"]
    cpu = spins.extra.get("cpu_ms")
    assert isinstance(cpu, float) and 0 < cpu <= 5000, cpu

    broken = run("public class Solution { int x = ; }", GCD_TESTS)
    assert broken.build_error is not None
    assert "cpu_ms" not in broken.extra and "max_rss_bytes" not in broken.extra


class FixedExecution:
    """Stands in for a SampleContext whose execution already happened."""

    def __init__(self, result: ExecutionResult) -> None:
        self.result = result

    def execution(self) -> ExecutionResult:
        return self.result


@needs_jdk
def test_usage_criteria_prefer_the_test_jvm_figures() -> None:
    result = run(GCD, GCD_TESTS)
    assert result.process is not None
    ctx: Any = FixedExecution(result)
    rss = result.extra["max_rss_bytes"]
    assert isinstance(rss, int)
    [ram] = RamUsage().evaluate(ctx)
    assert ram.score == float(rss)
    assert ram.details == {
        "tests_max_rss_bytes": rss,
        "process_max_rss_bytes": result.process.max_rss_bytes,
    }
    [cpu] = CpuUsage().evaluate(ctx)
    assert cpu.score == result.extra["cpu_ms"]
    assert cpu.details is not None and cpu.details["process_cpu_ms"] == result.process.cpu_ms

    # without the runner's figure (a build error, Runtime.halt): the sandbox's
    bare: Any = FixedExecution(replace(result, extra={}))
    [ram] = RamUsage().evaluate(bare)
    assert ram.score == float(result.process.max_rss_bytes)
    assert ram.details == {
        "tests_max_rss_bytes": None,
        "process_max_rss_bytes": result.process.max_rss_bytes,
    }


@needs_jdk
def test_javac_starts_from_the_archive_setup_made_and_the_jdk_accepts_it() -> None:
    """./scripts/setup dumps a class-data sharing archive of javac's classes; every compile
    starts from it, and this JDK maps it (``-Xshare:on`` fails when it cannot)."""
    import subprocess

    from benchwright.lang.java import javac_flags
    from benchwright.toolbox import javac_archive

    archive = javac_archive()
    assert archive is not None, "no javac archive: run ./scripts/setup"
    assert javac_flags()[0] == f"-J-XX:SharedArchiveFile={archive}"
    checked = subprocess.run(["javac", "-J-Xshare:on", f"-J-XX:SharedArchiveFile={archive}", "-version"],
                             capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    result = run(GCD, GCD_TESTS)
    assert [t.status for t in result.tests] == ["pass"] * 3 and result.build_error is None


@needs_jdk
def test_a_damaged_archive_is_ignored_and_the_sample_still_compiles(tmp_path: Any,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from benchwright import toolbox
    from benchwright.lang.java import javac_flags

    (tmp_path / "java").mkdir()
    (tmp_path / "java" / "javac.jsa").write_bytes(b"\x00not an archive" * 100)
    monkeypatch.setattr(toolbox, "TOOLS_ROOT", tmp_path)
    assert javac_flags()[0] == f"-J-XX:SharedArchiveFile={tmp_path / 'java' / 'javac.jsa'}"
    result = run(GCD, GCD_TESTS)  # the rlimit sandbox sees tmp_path, as the real ones see /usr
    assert [t.status for t in result.tests] == ["pass"] * 3 and result.build_error is None
    wrong = run(WRONG_GCD, GCD_TESTS)
    assert [t.status for t in wrong.tests] == ["fail"] * 3  # and the verdicts are still read
    monkeypatch.setattr(toolbox, "TOOLS_ROOT", tmp_path / "none")
    assert not any("SharedArchiveFile" in f for f in javac_flags())
