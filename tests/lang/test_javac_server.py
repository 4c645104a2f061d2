"""The warm javac server: the same outcomes as a fresh javac per sample, a cache for repeats,
and a harness that trusts nothing the server answers.

The suites of ``test_java.py`` (here and through bwrap and unshare) run on the server path, the
language's default; this module holds the same samples to both paths side by side."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from benchwright.lang.base import ExecutionResult, TestSpec
from benchwright.lang.java import JavaLanguage
from benchwright.lang.javacserver import Compiled, JavacServer, _parse
from benchwright.sandbox.base import SandboxLimits
from benchwright.sandbox.rlimit import RlimitSandbox
from tests.lang.test_java import GCD, GCD_TESTS, WRONG_GCD

needs_jdk = pytest.mark.jdk

SAMPLES: list[tuple[str, str, list[TestSpec], str | None]] = [
    ("passes", GCD, GCD_TESTS, None),
    ("fails", WRONG_GCD, GCD_TESTS, None),
    ("solution does not compile", "public class Solution { int f() { return 1 + ; } }\n", GCD_TESTS, None),
    ("a test does not compile", GCD, [TestSpec("ok", "assert Solution.gcd(4, 6) == 2;"),
                                      TestSpec("missing", "assert Solution.lcm(4, 6) == 12;")], None),
    ("throws", "public class Solution { static int f(String s) { return s.length(); } }\n",
     [TestSpec("npe", "Solution.f(null);"), TestSpec("ok", 'assert Solution.f("ab") == 2;')], None),
    ("exits", "public class Solution { static void f() { System.out.print(\"bye\"); System.exit(4); } }\n",
     [TestSpec("first", "assert true;"), TestSpec("exits", "Solution.f();"), TestSpec("after", "assert true;")],
     None),
    ("static initialiser fails", "public class Solution { static int X = 1 / 0; static int x() { return X; } }\n",
     [TestSpec("init", "Solution.x();"), TestSpec("again", "Solution.x();")], None),
    ("spins", "public class Solution { static void f() { while (true) { } } }\n",
     [TestSpec("ok", "assert true;"), TestSpec("spins", "Solution.f();", timeout_s=1.0),
      TestSpec("later", "assert true;")], None),
    ("prelude", GCD, [TestSpec("uses", "assert twice(Solution.gcd(4, 6)) == 4 : \"twice\";")],
     "import java.util.function.*;\nstatic int twice(int x) { IntUnaryOperator f = y -> 2 * y; return f.applyAsInt(x); }"),
    ("takes the runner's simple names", "public class Runner { static int one() { return 1; } }\n"
     "class bwrunner { }\n", [TestSpec("one", "assert Runner.one() == 1;")], None),
]


def outcomes(result: ExecutionResult) -> list[tuple[object, ...]]:
    """What a user reads of a result: per test its status, message, line, code and output."""
    return [(t.name, t.status, t.message, t.line, t.code, t.output) for t in result.tests]


def run(lang: JavaLanguage, sandbox: RlimitSandbox, code: str, tests: list[TestSpec],
        prelude: str | None) -> ExecutionResult:
    return lang.run_tests(sandbox, code, tests, prelude=prelude, limits=SandboxLimits(wall_s=20),
                          test_timeout_s=10.0)


@needs_jdk
def test_the_server_path_reports_what_a_fresh_javac_reports(tmp_path: Path) -> None:
    sandbox = RlimitSandbox(tmp_root=str(tmp_path))
    warm, cold = JavaLanguage(), JavaLanguage(compile_server=False)
    try:
        for name, code, tests, prelude in SAMPLES:
            fresh = run(cold, sandbox, code, tests, prelude)
            served = run(warm, sandbox, code, tests, prelude)
            assert fresh.extra["compiler"] == "per-sample javac", name
            assert served.extra["compiler"] == "javac server", name
            assert outcomes(served) == outcomes(fresh), name
            assert served.build_error == fresh.build_error, name
            assert served.infra_error is None and fresh.infra_error is None, name
            assert len(served.tests) == len(tests), name
        # the figures a user relies on come from the test JVM on both paths
        cpu = run(warm, sandbox, GCD, GCD_TESTS, None).extra
        assert isinstance(cpu.get("cpu_ms"), float) and isinstance(cpu.get("max_rss_bytes"), int)
    finally:
        warm.close()


@needs_jdk
def test_a_repeated_sample_skips_javac_and_a_changed_one_does_not(tmp_path: Path) -> None:
    sandbox = RlimitSandbox(tmp_root=str(tmp_path))
    lang = JavaLanguage()
    try:
        first = run(lang, sandbox, GCD, GCD_TESTS, None)
        again = run(lang, sandbox, GCD, GCD_TESTS, None)
        other_tests = run(lang, sandbox, GCD, GCD_TESTS[:1], None)
        changed = run(lang, sandbox, WRONG_GCD, GCD_TESTS, None)
        assert [r.extra["compiler"] for r in (first, again, other_tests, changed)] == [
            "javac server", "cached", "javac server", "javac server"]
        assert outcomes(again) == outcomes(first)
        assert [t.status for t in changed.tests] == ["fail"] * 3
        broken = "public class Solution { int f() { return ; } }\n"
        assert run(lang, sandbox, broken, GCD_TESTS, None).build_error == \
            run(lang, sandbox, broken, GCD_TESTS, None).build_error is not None
    finally:
        lang.close()


@needs_jdk
def test_a_server_that_dies_costs_one_sample_the_old_path_and_the_next_gets_a_new_one(
        tmp_path: Path) -> None:
    sandbox = RlimitSandbox(tmp_root=str(tmp_path))
    lang = JavaLanguage()
    try:
        assert run(lang, sandbox, GCD, GCD_TESTS, None).extra["compiler"] == "javac server"
        server = lang._javacs.get(sandbox)
        assert server is not None and server.session is not None and server.started == 1
        server.session.close()  # killed between samples (by the OOM killer, a stray signal...)
        assert run(lang, sandbox, WRONG_GCD, GCD_TESTS, None).extra["compiler"] == "javac server"
        assert server.started == 2
        # one that stops answering mid-sample: this sample compiles the old way, correctly
        assert server.session is not None
        server.session.send(b"not a request\n")  # the server fails on it and exits
        result = run(lang, sandbox, GCD.replace("gcd(b, a % b)", "gcd(b, (a % b))"), GCD_TESTS, None)
        assert result.extra["compiler"] in ("javac server", "per-sample javac")
        assert [t.status for t in result.tests] == ["pass"] * 3
    finally:
        lang.close()


def _answer(nonce: str, code: int, messages: str, files: dict[str, bytes]) -> bytes:
    parts = [b"BWC", nonce.encode(), str(code).encode(), base64.b64encode(messages.encode())]
    parts += [base64.b64encode(n.encode()) + b":" + base64.b64encode(d) for n, d in files.items()]
    return b" ".join(parts)


def test_an_answer_is_taken_only_when_it_is_well_formed_for_this_request() -> None:
    cls = b"\xca\xfe\xba\xbe"
    ok = _parse(_answer("n1", 0, "", {"Solution.class": cls, "BwTests.class": cls}), "n1", 1.0, False)
    assert isinstance(ok, Compiled) and set(ok.classes) == {"Solution.class", "BwTests.class"}
    failed = _parse(_answer("n1", 1, "Solution.java:1: error: x", {}), "n1", 1.0, False)
    assert failed is not None and failed.exit_code == 1 and failed.classes == {}
    refused = {
        "another request's nonce": _answer("n0", 0, "", {"Solution.class": cls}),
        "a folder (a package) in a sample's answer": _answer("n1", 0, "", {"bwrunner/Runner.class": cls}),
        "a way out of the folder": _answer("n1", 0, "", {"../x.class": cls}),
        "an absolute path": _answer("n1", 0, "", {"/etc/x.class": cls}),
        "a hidden file": _answer("n1", 0, "", {".x.class": cls}),
        "not a class file": _answer("n1", 0, "", {"run.sh": cls}),
        "a control character": _answer("n1", 0, "", {"a\nb.class": cls}),
        "compiled, with nothing": _answer("n1", 0, "", {}),
        "not base64": b"BWC n1 0 !!! x:y",
        "not a number": b"BWC n1 zero AAAA",
        "not an answer": b"Picked up JAVA_TOOL_OPTIONS",
    }
    for why, line in refused.items():
        assert _parse(line, "n1", 1.0, False) is None, why
    # the harness's own runner, in its package folder, and nothing above it
    assert _parse(_answer("n1", 0, "", {"bwrunner/Runner.class": cls}), "n1", 1.0, True) is not None
    assert _parse(_answer("n1", 0, "", {"../bwrunner/Runner.class": cls}), "n1", 1.0, True) is None
    assert _parse(_answer("n1", 0, "", {"a b/R.class": cls}), "n1", 1.0, True) is None
    many = {f"C{i}.class": cls for i in range(5000)}
    assert _parse(_answer("n1", 0, "", many), "n1", 1.0, False) is None


@needs_jdk
def test_a_sample_that_declares_the_runners_package_never_replaces_the_runner(tmp_path: Path) -> None:
    """A unicode escape hides a package line from the harness, but not from javac: the sample's
    classes then land in a folder the harness refuses, and the sample compiles the old way,
    where its runner is a duplicate class: a build error, never a forged pass."""
    forged = ("\\u0070ackage bwrunner;\npublic class Runner {\n"
              "    public static void main(String[] a) { System.out.println(\"pass\"); }\n}\n")
    sandbox = RlimitSandbox(tmp_root=str(tmp_path))
    lang = JavaLanguage()
    try:
        result = run(lang, sandbox, forged, [TestSpec("t", "assert false;")], None)
        assert not any(t.status == "pass" for t in result.tests)
        assert result.extra["compiler"] == "per-sample javac"
    finally:
        lang.close()


@needs_jdk
def test_the_server_runs_in_its_own_sandbox_and_leaves_no_job_behind(tmp_path: Path) -> None:
    sandbox = RlimitSandbox(tmp_root=str(tmp_path))
    server = JavacServer(sandbox, "java", ["-proc:none", "-encoding", "UTF-8"], [])
    try:
        for i in range(3):
            compiled = server.compile({"A.java": f"class A {{ int x = {i}; }}\n".encode()})
            assert compiled is not None and list(compiled.classes) == ["A.class"]
        left = [p.name for p in tmp_path.rglob("bwjob*")]
        assert left == [], left
    finally:
        server.close()


@needs_jdk
def test_a_solution_that_rewrites_the_runners_statics_passes_no_test(tmp_path: Path) -> None:
    """Reflection reaches every static field of the runner: pointing any of them at the
    solution's own things (a no-op in place of the test method, another class's name, a fake
    worker thread) must not turn one failing test into a pass."""
    hijack = """public class Solution {
    public static void __bwRun(int i) { }
    public static int add(int a, int b) {
        try {
            for (java.lang.reflect.Field f : Class.forName("bwrunner.Runner").getDeclaredFields()) {
                if (!java.lang.reflect.Modifier.isStatic(f.getModifiers())) continue;
                f.setAccessible(true);
                Class<?> t = f.getType();
                if (t == java.lang.reflect.Method.class) f.set(null, Solution.class.getMethod("__bwRun", int.class));
                else if (t == String.class) f.set(null, "Solution");
                else if (t == Thread.class) f.set(null, new Thread());
                else if (t == long.class) f.setLong(null, 1L);
            }
        } catch (Throwable e) { }
        return 0;
    }
}
"""
    tests = [TestSpec(f"t{i}", f"assert Solution.add({i}, 1) == {i + 1};") for i in range(5)]
    sandbox = RlimitSandbox(tmp_root=str(tmp_path))
    for lang in (JavaLanguage(), JavaLanguage(compile_server=False)):
        try:
            result = run(lang, sandbox, hijack, tests, None)
            assert [t.status for t in result.tests] == ["fail"] * 5, result.extra["compiler"]
        finally:
            lang.close()
