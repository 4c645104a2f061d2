"""The warm test JVM against a JVM of each sample's own: the same outcome for every test case
(status, message, line, code, output) on samples of every kind, in one sequence through one
server, so that whatever a sample leaves is there for the next; the gate that keeps out every
sample that could reach beyond its classes; and a server that fails or lies costs one sample its
own JVM, never a verdict."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from benchwright.lang.base import ExecutionResult, TestSpec
from benchwright.lang.java import JavaLanguage
from benchwright.lang.javagate import refusal
from benchwright.lang.javasource import build_test_class, free_class_name, solution_file_name
from benchwright.lang.javatestserver import JavaTestServer
from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.sandbox.select import best_sandbox

HEAP_MB = 256
LIMITS = SandboxLimits(wall_s=20, memory_mb=HEAP_MB)


def cases(*codes: str) -> list[TestSpec]:
    return [TestSpec(f"t{i}", code) for i, code in enumerate(codes)]


TWICE = "public class Solution {\n    static int twice(int x) { return 2 * x; }\n}\n"
COUNTER = ("public class Solution {\n    static int calls = 0;\n"
           "    static int next() { return ++calls; }\n}\n",
           cases("assert Solution.next() == 1;", "assert Solution.next() == 2;"), 10)
"""A static counter: every sample starts from its own class, never from the one before."""

SAMPLES: dict[str, tuple[str, list[TestSpec], float]] = {  # name: (solution, tests, test limit)
    "passes": (TWICE,
               cases("assert Solution.twice(2) == 4;", "assert Solution.twice(-1) == -2;"), 10),
    "fails with a message": ("public class Solution {\n    static int twice(int x) { return x + 2; }\n}\n",
                             cases('assert Solution.twice(3) == 6 : "twice(3) is " + Solution.twice(3);',
                               "assert Solution.twice(2) == 4;"), 10),
    "throws at a line": ("public class Solution {\n    static int at(int[] a, int i) {\n"
                         "        return a[i];\n    }\n}\n",
                         cases("Solution.at(new int[2], 5);", "assert Solution.at(new int[] {7}, 0) == 7;"), 10),
    "keeps a static": COUNTER,
    "keeps a static again": COUNTER,
    "overflows its stack": ("public class Solution {\n    static int down(int n) { return down(n + 1) + 1; }\n"
                            "    static int depth(int n) { return n == 0 ? 0 : 1 + depth(n - 1); }\n}\n",
                            cases("Solution.down(0);", "assert Solution.depth(50000) == 50000;"), 10),
    "prints": ("public class Solution {\n    static int loud(int x) {\n"
               '        System.out.println("loud " + x);\n        System.err.print("err");\n'
               "        return x;\n    }\n}\n",
               cases("assert Solution.loud(1) == 1;", 'System.out.println("x".repeat(10000));',
                 "assert Solution.loud(2) == 3;"), 10),
    # half a character left in the encoder of System.out: the next sample's output is its own
    "leaves half a character": ("public class Solution {\n    static void half() { System.out.print('\\uD83D'); }\n}\n",
                                cases("Solution.half();"), 10),
    "prints after it": ("public class Solution {\n    static int loud(int x) {\n"
                        '        System.out.println("after " + x);\n        return x;\n    }\n}\n',
                        cases("assert Solution.loud(1) == 1;"), 10),
    "initialiser throws": ("public class Solution {\n    static final int N = Integer.parseInt(\"x\");\n"
                           "    static int n() { return N; }\n}\n",
                           cases("assert Solution.n() == 1;", "assert Solution.n() == 1;"), 10),
    "everything javac makes": (
        "import java.util.*;\nimport java.util.stream.*;\nimport java.math.BigInteger;\n\n"
        "public class Solution {\n    enum Color { RED, GREEN }\n    record Point(int x, int y) { }\n\n"
        "    static String all(List<Integer> xs) {\n"
        "        Map<Boolean, List<Integer>> parts = xs.stream().collect(Collectors.partitioningBy(x -> x % 2 == 0));\n"
        "        String name;\n        switch (Color.valueOf(\"GREEN\")) { case RED: name = \"r\"; break; default: name = \"g\"; }\n"
        "        switch (name) { case \"g\": name += \"!\"; break; default: break; }\n"
        "        Object o = new Point(1, 2);\n        if (o instanceof Point p) { name += p.y(); }\n"
        "        return parts + \" \" + name + \" \" + BigInteger.TWO.pow(70) + \" \" + o\n"
        "            + String.format(\" %05d\", 42) + xs.stream().map(String::valueOf).collect(Collectors.joining(\",\"));\n"
        "    }\n}\n",
        cases('assert Solution.all(List.of(1, 2, 3)).equals('
          '"{false=[1, 3], true=[2]} g!2 1180591620717411303424 Point[x=1, y=2] 000421,2,3");',
          'assert Solution.all(List.of()).startsWith("{false=[], true=[]}") : Solution.all(List.of());'), 10),
    "loops forever": ("public class Solution {\n    static void spin() { while (true) { } }\n}\n",
                      cases("assert true;", "Solution.spin();", "assert true;"), 1),
    "after a timeout": (TWICE,
                        cases("assert Solution.twice(2) == 4;", "assert Solution.twice(2) == 5;"), 10),
    "runs out of memory": ("public class Solution {\n    static long[][] keep = new long[64][];\n"
                           "    static void grow() { for (int i = 0; ; i++) keep[i % 64] = new long[8 << 20]; }\n}\n",
                           cases("Solution.grow();", "assert true;"), 10),
    "after running out": (TWICE,
                          cases("assert Solution.twice(2) == 4;"), 10),
    "holds much memory": ("public class Solution {\n    static long[] big = new long[12 << 20];\n"
                          "    static int touch() { java.util.Arrays.fill(big, 7); return (int) big[5]; }\n}\n",
                          cases("assert Solution.touch() == 7;"), 10),
    "after holding": (TWICE,
                      cases("assert Solution.twice(2) == 4;"), 10),
}


def shown(result: ExecutionResult) -> list[tuple[Any, ...]]:
    """What a user reads of each test case (its time aside)."""
    return [(t.name, t.status, t.message, t.line, t.code, t.output) for t in result.tests]


def run(lang: JavaLanguage, sandbox: Sandbox, solution: str, tests: list[TestSpec], limit: float) -> ExecutionResult:
    return lang.run_tests(sandbox, solution, tests, prelude=None, limits=LIMITS, test_timeout_s=limit)


def servers(lang: JavaLanguage) -> list[JavaTestServer]:
    return list(lang._testers[HEAP_MB]._servers.values())


@pytest.mark.jdk
def test_the_warm_jvm_reports_what_a_jvm_of_its_own_reports_sample_after_sample() -> None:
    warm, own = JavaLanguage(), JavaLanguage(test_server=False)
    sandbox = best_sandbox()
    started: dict[str, int] = {}
    rss: dict[str, int] = {}
    try:
        for name, (solution, tests, limit) in SAMPLES.items():
            a = run(warm, sandbox, solution, tests, limit)
            b = run(own, sandbox, solution, tests, limit)
            assert shown(a) == shown(b), name
            assert (a.build_error, a.infra_error) == (b.build_error, b.infra_error), name
            # a stack overflow or an OutOfMemoryError ends the warm JVM at once: that sample runs in
            # a JVM of its own
            where = "own" if name in ("overflows its stack", "runs out of memory") else "warm"
            assert (a.extra["test_jvm"], b.extra["test_jvm"]) == (where, "own"), name
            assert isinstance(a.extra.get("cpu_ms"), float), name
            [server] = servers(warm)
            started[name], rss[name] = server.started, int(a.extra["max_rss_bytes"])  # type: ignore[call-overload]
    finally:
        warm.close()
        own.close()
    # one JVM until a test outlives its limit, a stack overflows, the heap runs out or a sample
    # leaves it much larger: each ends it, and the next sample starts another
    expected = {"passes": 1, "keeps a static again": 1, "overflows its stack": 1, "prints": 2,
                "loops forever": 2, "after a timeout": 3, "runs out of memory": 3,
                "after running out": 4, "holds much memory": 4, "after holding": 5}
    assert {name: started[name] for name in expected} == expected
    # memory is the JVM's peak during the sample: what the sample held, and not what one before it did
    assert rss["holds much memory"] > rss["passes"] + 90 * 2**20
    assert rss["after holding"] < rss["passes"] + 16 * 2**20


COMPILER = JavaLanguage()
"""One warm javac for the gate's tests (a test process's)."""


def gate(solution: str, tests: list[str] | None = None) -> str | None:
    """Why the gate keeps this sample from the warm JVM (its classes compiled as a run compiles
    them), or None."""
    class_name = free_class_name(solution)
    layout = build_test_class(class_name, cases(*(tests or ["assert true;"])), None)
    compiled = COMPILER.compile_warm(best_sandbox(), {solution_file_name(solution): solution.encode(),
                                                      f"{class_name}.java": layout.source.encode()})
    assert compiled is not None and compiled.exit_code == 0, compiled and compiled.messages
    return refusal(compiled.classes)


def body(statements: str, members: str = "") -> str:
    return (f"public class Solution {{\n{members}    static int f() throws Exception {{\n"
            f"        {statements}\n        return 1;\n    }}\n}}\n")


REFUSED = {  # what a sample may not do in a JVM that runs other samples after it
    "a thread": body("new Thread(() -> { }).start();"),
    "sleep": body("Thread.sleep(1);"),
    "System.exit": body("System.exit(3);"),
    "System.setOut": body("System.setOut(System.err);"),
    "closing System.out": body("System.out.close();"),
    "System.in": body("new java.util.Scanner(System.in).nextLine();"),
    "a property": body('System.setProperty("user.dir", "/");'),
    "the environment": body('System.getenv("PATH");'),
    "reflection": body("Solution.class.getDeclaredFields();"),
    "Class.forName": body('Class.forName("bwrunner.Runner");'),
    "method handles": body("java.lang.invoke.MethodHandles.lookup();"),
    "Runtime": body("Runtime.getRuntime().halt(0);"),
    "a file": body('new java.io.File("x").delete();'),
    "the result stream": body("new java.io.FileOutputStream(java.io.FileDescriptor.out).write(65);"),
    "nio files": body('java.nio.file.Files.readString(java.nio.file.Path.of("/proc/self/mem"));'),
    "the default locale": body("java.util.Locale.setDefault(java.util.Locale.FRANCE);"),
    "a parallel stream": body("java.util.List.of(1, 2).parallelStream().count();"),
    "a parallel sort": body("java.util.Arrays.parallelSort(new int[] {2, 1});"),
    "a parallel stream by another name": body("java.util.stream.IntStream.range(0, 9).parallel().sum();"),
    "a concurrent map": body("new java.util.concurrent.ConcurrentHashMap<String, Integer>();"),
    "a timer": body("new java.util.Timer();"),
    "a thread local": body("new ThreadLocal<Integer>();"),
    "a finalizer": body("new Solution();", "    protected void finalize() { }\n"),
    "a subclass of Thread": body("new T();", "    static class T extends Thread { }\n"),
    "a native method": body("", "    static native int n();\n"),
    "Unsafe": body("Object u = sun.misc.Unsafe.class;"),
    "closing System.out by another type": body("AutoCloseable c = System.out;\n        c.close();"),
    "the JVM's random numbers": body("double d = Math.random();"),
    "a shuffle with the JVM's random numbers": body("java.util.Collections.shuffle(new java.util.ArrayList<Integer>());"),
}


@pytest.mark.jdk
@pytest.mark.parametrize("why", list(REFUSED))
def test_the_gate_keeps_out_what_reaches_beyond_the_sample(why: str) -> None:
    assert gate(REFUSED[why]) is not None


@pytest.mark.jdk
def test_the_gate_reads_the_tests_too_and_lets_plain_code_through() -> None:
    plain = "public class Solution {\n    static int f() { return 1; }\n}\n"
    assert gate(plain) is None
    assert gate(plain, ['System.setProperty("line.separator", "x");']) is not None  # dataset text
    assert gate(SAMPLES["everything javac makes"][0]) is None
    assert gate(body("int[] a = {1, 2};\n        int[] b = a.clone();\n"
                     "        java.util.Random r = new java.util.Random(7);\n"
                     "        java.util.Collections.sort(new java.util.ArrayList<Integer>());")) is None


# A stack overflow in a JDK class's static initialiser leaves that class unusable for the rest of
# the JVM's life: every later use throws NoClassDefFoundError (found by an attack on this JVM).
POISON = """public class Solution {
    static boolean done;
    static void dig(int d) {
        try { dig(d + 1); } catch (StackOverflowError e) { }
        if (!done) {
            try { Object a = java.math.BigInteger.TEN; done = true; }
            catch (Throwable t) { if (!(t instanceof StackOverflowError)) done = true; }
        }
    }
    static int poison() { Class<?> c = java.math.BigInteger.class; dig(0); return 1; }
}
"""
VICTIM = ("import java.math.BigInteger;\n\npublic class Solution {\n"
          "    static BigInteger square(long x) { return BigInteger.valueOf(x).multiply(BigInteger.valueOf(x)); }\n}\n")
VICTIM_TESTS = cases("assert Solution.square(3).intValue() == 9;")


@pytest.mark.jdk
def test_a_sample_that_breaks_a_jdk_class_in_the_warm_jvm_breaks_no_later_sample() -> None:
    """The attack, as the first sample of a warm JVM: its overflow ends that JVM, the sample runs
    in a JVM of its own, and the sample after it passes in a new warm one."""
    warm, sandbox = JavaLanguage(), best_sandbox()
    try:
        attack = run(warm, sandbox, POISON, cases("assert Solution.poison() == 1;"), 10)
        after = run(warm, sandbox, VICTIM, VICTIM_TESTS, 10)
        again = run(warm, sandbox, VICTIM, VICTIM_TESTS, 10)
    finally:
        warm.close()
    assert attack.extra["test_jvm"] == "own"
    assert [(r.extra["test_jvm"], [t.status for t in r.tests]) for r in (after, again)] == [
        ("warm", ["pass"]), ("warm", ["pass"])]


@pytest.mark.jdk
def test_a_large_first_sample_inflates_no_later_memory_figure() -> None:
    fat = ("public class Solution {\n    static long[][] keep = new long[6][];\n"
           "    static int fill() { for (int i = 0; i < 6; i++) { keep[i] = new long[4 << 20];"
           " java.util.Arrays.fill(keep[i], 1); } return 1; }\n}\n")
    warm, own, sandbox = JavaLanguage(), JavaLanguage(test_server=False), best_sandbox()
    try:
        big = run(warm, sandbox, fat, cases("assert Solution.fill() == 1;"), 10)
        after = run(warm, sandbox, VICTIM, VICTIM_TESTS, 10)
        fresh = run(own, sandbox, VICTIM, VICTIM_TESTS, 10)
    finally:
        warm.close()
        own.close()
    assert big.extra["test_jvm"] == after.extra["test_jvm"] == "warm"
    assert int(big.extra["max_rss_bytes"]) > 190 * 2**20  # type: ignore[call-overload]
    assert int(after.extra["max_rss_bytes"]) < int(fresh.extra["max_rss_bytes"]) + 16 * 2**20  # type: ignore[call-overload]


@pytest.mark.jdk
def test_a_refused_sample_runs_in_its_own_jvm_and_the_next_still_goes_warm() -> None:
    lang, sandbox = JavaLanguage(), best_sandbox()
    try:
        hostile = body("System.setProperty(\"user.dir\", \"/\");\n        Locale.setDefault(Locale.FRANCE);")
        hostile = "import java.util.*;\n" + hostile
        a = run(lang, sandbox, hostile, cases("assert Solution.f() == 1;"), 10)
        b = run(lang, sandbox, SAMPLES["passes"][0], SAMPLES["passes"][1], 10)
    finally:
        lang.close()
    assert a.extra["test_jvm"] == "own" and [t.status for t in a.tests] == ["pass"]
    assert b.extra["test_jvm"] == "warm" and [t.status for t in b.tests] == ["pass", "pass"]


@pytest.mark.jdk
def test_a_warm_jvm_that_dies_or_lies_costs_the_sample_its_own_jvm(monkeypatch: pytest.MonkeyPatch) -> None:
    lang, sandbox = JavaLanguage(), best_sandbox()
    solution, tests, limit = SAMPLES["fails with a message"]
    want = shown(run(JavaLanguage(test_server=False), sandbox, solution, tests, limit))
    try:
        first = run(lang, sandbox, solution, tests, limit)
        [server] = servers(lang)
        assert server.session is not None
        server.session.close()  # killed between samples
        again = run(lang, sandbox, solution, tests, limit)
        assert server.started == 2 and again.extra["test_jvm"] == "warm"
        # an answer to another request, or lines that are not base64: the sample's own JVM
        real_ask = JavaTestServer.ask
        for lie in (b"BWJ 0123 QldS", b"BWJ {nonce} !!!", b"BWX {nonce} QldS"):
            def lying(self: JavaTestServer, request: bytes, wait_s: float, lie: bytes = lie) -> bytes | None:
                real_ask(self, request, wait_s)
                return lie.replace(b"{nonce}", request.split(b" ")[0])
            monkeypatch.setattr(JavaTestServer, "ask", lying)
            lied = run(lang, sandbox, solution, tests, limit)
            assert lied.extra["test_jvm"] == "own" and shown(lied) == want, lie
        monkeypatch.undo()
    finally:
        lang.close()
    assert shown(first) == shown(again) == want


@pytest.mark.jdk
def test_each_thread_has_its_own_warm_jvm() -> None:
    lang, sandbox = JavaLanguage(), best_sandbox()
    solution, tests, limit = SAMPLES["passes"]
    results: list[ExecutionResult] = []

    def work() -> None:
        for _ in range(2):
            results.append(run(lang, sandbox, solution, tests, limit))

    try:
        threads = [threading.Thread(target=work) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(servers(lang)) == 2
    finally:
        lang.close()
    assert [r.extra["test_jvm"] for r in results] == ["warm"] * 4
    assert all([t.status for t in r.tests] == ["pass", "pass"] for r in results)
