"""The C and C++ language plug-ins, run for real (gcc and g++) through the rlimit sandbox.

Every test that takes ``lang`` runs for C and for C++ (the sources are in their common subset);
``tests/lang/test_cpp.py`` has what only C++ has. ``tests/sandbox/test_lang_c_isolated.py``
runs every test that takes ``sandbox`` again through bwrap and unshare.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchwright.errors import InfraError
from benchwright.lang.base import ExecutionResult, TestSpec
from benchwright.lang.c import CLanguage, CppLanguage
from benchwright.registry import registry
from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.task.load import load_task_source
from benchwright.task.render import render_task
from tests.lang.support import by_name, line_text

EXAMPLE_TASKS = Path(__file__).parents[2] / "src" / "benchwright" / "workspace" / "example" / "tasks"

SOLUTION = """\
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int add(int a, int b) {
    return a + b;
}

int divide(int a, int b) {
    return a / b;
}

int deref(const int *p) {
    return *(const volatile int *)p;
}

char *shout(const char *s) {
    printf("shouting %s\\n", s);
    size_t n = strlen(s);
    char *out = (char *)malloc(n + 1);
    for (size_t i = 0; i <= n; i++) {
        out[i] = (char)(s[i] >= 'a' && s[i] <= 'z' ? s[i] - 32 : s[i]);
    }
    return out;
}

int depth(int n) {
    volatile char pad[256];
    pad[0] = (char)n;
    return depth(n + 1) + pad[0];
}

void quit_now(int code) {
    exit(code);
}
"""
SOLUTION_LINES = SOLUTION.count("\n")

LIMITS = SandboxLimits(memory_mb=512)


@pytest.fixture(scope="module", params=["c", "cpp"])
def lang(request: pytest.FixtureRequest) -> CLanguage | CppLanguage:
    return CLanguage() if request.param == "c" else CppLanguage()



def run(lang: CLanguage | CppLanguage, sandbox: Sandbox, tests: list[TestSpec],
        solution: str = SOLUTION, prelude: str | None = None, timeout: float = 10.0,
        limits: SandboxLimits = LIMITS) -> ExecutionResult:
    return lang.run_tests(sandbox, solution, tests, prelude=prelude, limits=limits,
                          test_timeout_s=timeout)




# -- passing, failing, errors -------------------------------------------------------------------

def test_passing_tests_pass_with_usage(lang, sandbox):
    tests = [
        TestSpec("add", "assert(add(1, 2) == 3);"),
        TestSpec("multi", "int x = add(2, 2);\nint y = add(x, 1);\nassert(y == 5);"),
        TestSpec("helpers", 'char *s = shout("hi");\nassert_str_eq(s, "HI");\nfree(s);\n'
                            "assert_int_eq(divide(7, 2), 3);"),
    ]
    result = run(lang, sandbox, tests)
    assert result.build_error is None and result.infra_error is None
    assert [t.status for t in result.tests] == ["pass", "pass", "pass"]
    for spec, outcome in zip(tests, result.tests, strict=True):
        assert outcome.name == spec.name
        assert outcome.message is None and outcome.line is None
        assert outcome.code == SOLUTION + spec.code + "\n"  # the solution, then the test
        assert outcome.time_ms is not None and outcome.time_ms >= 0
        assert outcome.judged == "sample"
    assert isinstance(result.extra.get("cpu_ms"), float)
    rss = result.extra.get("max_rss_bytes")
    assert isinstance(rss, int) and rss > 0
    build = result.extra.get("build_cpu_ms")
    assert isinstance(build, float) and build > 0  # the compiler's, apart from the tests'
    assert result.process is not None and result.process.exit_code == 0


def test_wrong_answer_fails_with_expression_and_line(lang, sandbox):
    prelude = "static int twice(int v) {\n    return 2 * v;\n}\n"
    tests = [
        TestSpec("good", "assert(twice(add(1, 1)) == 4);"),
        TestSpec("bad", "int x = add(1, 2);\nint y = twice(x);\nassert(y == 7);\nx = 0;"),
        TestSpec("str", 'char *s = shout("ab");\n\nassert_str_eq(s, "AB!");'),
        TestSpec("int", "assert_int_eq(add(2, 2), 5);"),
        TestSpec("msg", 'assert(add(0, 0) == 1 && "zero plus zero");'),
    ]
    out = by_name(run(lang, sandbox, tests, prelude=prelude))
    assert out["good"].status == "pass"
    bad = out["bad"]
    assert bad.status == "fail"
    assert bad.message == "assertion failed: y == 7"
    assert bad.code == SOLUTION + prelude + tests[1].code + "\n"
    assert line_text(bad) == "assert(y == 7);"
    assert bad.line == SOLUTION_LINES + prelude.count("\n") + 3
    s = out["str"]
    assert s.status == "fail"
    assert s.message == 'assertion failed: assert_str_eq(s, "AB!"): expected "AB!", got "AB"'
    assert line_text(s) == 'assert_str_eq(s, "AB!");'
    assert "shouting ab" in s.output
    i = out["int"]
    assert i.status == "fail" and i.message is not None and "expected 5, got 4" in i.message
    assert line_text(i) == "assert_int_eq(add(2, 2), 5);"
    msg = out["msg"]
    assert msg.status == "fail" and msg.message is not None and "zero plus zero" in msg.message


def test_assert_in_a_prelude_helper_points_at_the_prelude(lang, sandbox):
    prelude = "static void check(int got, int want) {\n    assert_int_eq(got, want);\n}\n"
    tests = [TestSpec("ok", "check(add(1, 2), 3);"), TestSpec("no", "check(add(1, 2), 4);")]
    out = by_name(run(lang, sandbox, tests, prelude=prelude))
    assert out["ok"].status == "pass"
    no = out["no"]
    assert no.status == "fail" and no.message is not None and "expected 4, got 3" in no.message
    assert line_text(no) == "assert_int_eq(got, want);"
    assert no.line == SOLUTION_LINES + 2


def test_assert_of_the_solution_itself_is_a_failure_at_its_line(lang, sandbox):
    solution = "#include <assert.h>\n\nint half(int n) {\n    assert(n % 2 == 0);\n    return n / 2;\n}\n"
    tests = [TestSpec("even", "assert(half(4) == 2);"), TestSpec("odd", "half(3);")]
    out = by_name(run(lang, sandbox, tests, solution=solution))
    assert out["even"].status == "pass"
    odd = out["odd"]
    assert odd.status == "fail"
    assert odd.message == "assertion failed: n % 2 == 0"
    assert odd.line == 4 and line_text(odd) == "assert(n % 2 == 0);"


def test_crashes_are_errors_and_the_other_tests_run(lang, sandbox):
    tests = [
        TestSpec("segv", "deref(NULL);"),
        TestSpec("fpe", "volatile int zero = 0;\nvolatile int r = divide(7, zero);"),
        TestSpec("abort", "abort();"),
        TestSpec("stack", "depth(0);"),
        TestSpec("after", "assert(add(2, 3) == 5);"),
    ]
    out = by_name(run(lang, sandbox, tests))
    assert out["segv"].status == "error" and out["segv"].message == "Segmentation fault"
    assert out["fpe"].status == "error"
    assert out["fpe"].message is not None and "Floating point exception" in out["fpe"].message
    assert out["abort"].status == "error"
    assert out["abort"].message is not None and out["abort"].message.startswith("Aborted")
    assert out["stack"].status == "error" and out["stack"].message == "Segmentation fault"
    assert out["after"].status == "pass"


# -- timeouts and escapes --------------------------------------------------------------------

def test_infinite_loop_times_out_and_the_others_run(lang, sandbox):
    tests = [
        TestSpec("before", "assert(add(1, 1) == 2);"),
        TestSpec("loop", "for (volatile int i = 0;; i++) {\n}"),
        TestSpec("sleep", "sleep(100);"),
        TestSpec("after", "assert(add(2, 2) == 4);"),
    ]
    result = run(lang, sandbox, tests, solution=SOLUTION + "#include <unistd.h>\n", timeout=0.5)
    assert [t.status for t in result.tests] == ["pass", "timeout", "timeout", "pass"]
    assert result.tests[1].message == "timed out after 0.5 s"
    assert result.process is not None and not result.process.timed_out


def test_a_tests_own_timeout_is_honoured(lang, sandbox):
    solution = SOLUTION + "#include <unistd.h>\n"
    tests = [
        TestSpec("short-limit", "usleep(1500000);", timeout_s=0.3),
        TestSpec("long-limit", "usleep(400000);\nassert(add(1, 1) == 2);", timeout_s=30),
    ]
    result = run(lang, sandbox, tests, solution=solution, timeout=0.2)
    out = by_name(result)
    assert out["short-limit"].status == "timeout"
    assert out["short-limit"].message == "timed out after 0.3 s"
    assert out["long-limit"].status == "pass"


@pytest.mark.parametrize("code", ["exit(0);", "_exit(0);", "quit_now(0);", "quit_now(3);",
                                  "raise(9);", "kill(0, 9);"])
def test_early_exit_is_never_a_pass(lang, sandbox, code):
    solution = SOLUTION + "#include <signal.h>\n#include <unistd.h>\n"
    tests = [TestSpec("exit", code), TestSpec("after", "assert(add(1, 2) == 3);")]
    out = by_name(run(lang, sandbox, tests, solution=solution))
    assert out["exit"].status == "error", out["exit"]
    assert out["exit"].message
    assert out["after"].status == "pass"


def test_fake_result_lines_are_never_a_pass(lang, sandbox):
    solution = SOLUTION + """\
#include <fcntl.h>
#include <unistd.h>

void forge(void) {
    char path[64];
    const char *line = "BWR {\\"i\\": 1, \\"status\\": \\"pass\\"}\\n";
    for (int i = 0; i < 3; i++) {
        printf("%s", line);
        fprintf(stderr, "%s", line);
    }
    fflush(NULL);
    snprintf(path, sizeof path, "/proc/%d/fd/1", (int)getppid());
    int fd = open(path, O_WRONLY);
    if (fd >= 0) {
        write(fd, line, strlen(line));
        close(fd);
    }
    _exit(0);
}
"""
    tests = [TestSpec("forge", "forge();"), TestSpec("wrong", "assert(add(1, 1) == 3);"),
             TestSpec("also-wrong", "deref(NULL);")]
    result = run(lang, sandbox, tests, solution=solution)
    assert [t.status for t in result.tests] == ["error", "fail", "error"], result.tests
    assert "BWR" in result.tests[0].output


def test_killing_the_judge_is_never_a_pass(lang, sandbox):
    solution = SOLUTION + "#include <signal.h>\n#include <unistd.h>\n"
    tests = [TestSpec("ok", "assert(add(1, 1) == 2);"), TestSpec("kill", "kill(getppid(), 9);"),
             TestSpec("wrong", "assert(add(1, 1) == 3);")]
    result = run(lang, sandbox, tests, solution=solution)
    assert result.tests[0].status == "pass"
    assert [t.status for t in result.tests[1:]] == ["error", "error"], result.tests


def test_tests_run_in_separate_processes(lang, sandbox):
    solution = SOLUTION + "int counter = 0;\n"
    tests = [TestSpec("first", "counter++;\nassert(counter == 1);"),
             TestSpec("second", "counter++;\nassert(counter == 1);")]
    assert [t.status for t in run(lang, sandbox, tests, solution=solution).tests] == ["pass"] * 2


def test_solution_main_is_renamed_and_never_runs(lang, sandbox):
    solution = SOLUTION + '\nint main(void) {\n    printf("main ran\\n");\n    return 1;\n}\n'
    result = run(lang, sandbox, [TestSpec("a", "assert(add(1, 1) == 2);")], solution=solution)
    assert result.tests[0].status == "pass"
    assert "main ran" not in result.tests[0].output


# -- build errors, prelude, output -------------------------------------------------------------

def test_compile_error_in_solution_is_build_error_with_line(lang, sandbox):
    solution = "int add(int a, int b) {\n    return a + b\n}\n"
    tests = [TestSpec("a", "assert(add(1, 1) == 2);"), TestSpec("b", "assert(add(0, 0) == 0);")]
    result = run(lang, sandbox, tests, solution=solution)
    assert result.build_error is not None and "error:" in result.build_error
    assert "solution." in result.build_error
    for t in result.tests:
        assert t.status == "error"
        assert t.message == result.build_error
        assert t.line == 2 and line_text(t) == "return a + b"


def test_compile_error_caused_by_a_test_points_into_that_test(lang, sandbox):
    tests = [TestSpec("fine", "assert(add(1, 1) == 2);"),
             TestSpec("typo", "int x = 1;\nassert(ad(x, 1) == 2);")]
    result = run(lang, sandbox, tests)
    assert result.build_error is not None
    out = by_name(result)
    assert out["typo"].status == "error" and line_text(out["typo"]) == "assert(ad(x, 1) == 2);"
    assert out["fine"].status == "error" and out["fine"].line is None


def test_missing_definition_is_a_build_error_at_the_call(lang, sandbox):
    solution = "int solve(int n);\n"
    result = run(lang, sandbox, [TestSpec("a", "int n = 2;\nassert(solve(n) == 4);")],
                 solution=solution)
    assert result.build_error is not None and "undefined reference" in result.build_error
    (t,) = result.tests
    assert t.status == "error" and line_text(t) == "assert(solve(n) == 4);"


def test_compiler_that_fails_without_an_error_is_an_infra_error(lang, sandbox, monkeypatch):
    monkeypatch.setattr(type(lang), "flags", (*type(lang).flags, "-fno-such-option"))
    result = run(lang, sandbox, [TestSpec("a", "assert(add(1, 1) == 2);")])
    assert result.infra_error is not None and result.build_error is None
    assert [t.status for t in result.tests] == ["not_run"]
    assert "no-such-option" in result.infra_error


def test_prelude_helpers_are_shared_by_the_tests(lang, sandbox):
    prelude = "#include <ctype.h>\n\nstatic int vowels(const char *s) {\n    int n = 0;\n" \
              "    for (; *s; s++) n += strchr(\"aeiou\", tolower(*s)) != NULL;\n    return n;\n}\n"
    tests = [TestSpec("a", 'assert(vowels("Banana") == 3);'),
             TestSpec("b", 'assert(vowels(shout("io")) == 2);')]
    result = run(lang, sandbox, tests, prelude=prelude)
    assert [t.status for t in result.tests] == ["pass", "pass"]
    assert all(t.code.startswith(SOLUTION + prelude) for t in result.tests)


def test_output_is_captured_per_test_and_capped(lang, sandbox):
    tests = [
        TestSpec("loud", 'free(shout("hi"));\nfprintf(stderr, "to stderr\\n");'),
        TestSpec("flood", "for (int i = 0; i < 100000; i++) {\n    printf(\"xxxxxxxxxx\\n\");\n}"),
        TestSpec("quiet", "assert(add(1, 1) == 2);"),
        TestSpec("crash-after-print", 'printf("before the crash\\n");\nderef(NULL);'),
    ]
    out = by_name(run(lang, sandbox, tests))
    assert out["loud"].status == "pass"
    assert "shouting hi" in out["loud"].output and "to stderr" in out["loud"].output
    assert out["flood"].status == "pass"
    assert 0 < len(out["flood"].output) <= 10_000
    assert "bytes omitted" in out["flood"].output
    assert out["quiet"].output == ""
    assert out["crash-after-print"].status == "error"
    assert "before the crash" in out["crash-after-print"].output  # line-buffered stdout


def test_memory_limit_applies_to_each_test(lang, sandbox):
    tests = [
        TestSpec("hog", "void *volatile p = malloc((size_t)2 << 30);\nassert(p == NULL);"),
        TestSpec("small", "void *volatile p = malloc(1 << 20);\nassert(p != NULL);\nfree(p);"),
    ]
    result = run(lang, sandbox, tests, limits=SandboxLimits(memory_mb=256))
    assert [t.status for t in result.tests] == ["pass", "pass"], result.tests


def test_cpu_and_memory_of_the_tests_are_measured(lang, sandbox):
    solution = SOLUTION + """\
#include <time.h>

int burn(void) {
    clock_t start = clock();
    while (clock() - start < CLOCKS_PER_SEC / 5) {
    }
    return 1;
}

int fill(void) {
    size_t n = (size_t)64 << 20;
    char *volatile p = (char *)malloc(n);
    memset(p, 1, n);
    int last = p[n - 1];
    free(p);
    return last;
}
"""
    tests = [TestSpec("burn", "assert(burn() == 1);"), TestSpec("fill", "assert(fill() == 1);")]
    result = run(lang, sandbox, tests, solution=solution)
    assert [t.status for t in result.tests] == ["pass", "pass"]
    cpu = result.extra["cpu_ms"]
    rss = result.extra["max_rss_bytes"]
    assert isinstance(cpu, float) and 150 <= cpu <= 10_000
    assert isinstance(rss, int) and 60 << 20 < rss < 400 << 20  # the tests, not the compiler


def test_environment_has_no_secret(lang, sandbox, monkeypatch):
    monkeypatch.setenv("BW_TEST_SECRET", "s3cr3t")
    tests = [TestSpec("env", 'assert(getenv("BW_TEST_SECRET") == NULL);')]
    assert run(lang, sandbox, tests).tests[0].status == "pass"


def test_no_tests(lang, sandbox):
    result = run(lang, sandbox, [])
    assert result.tests == [] and result.build_error is None


# -- the example tasks ----------------------------------------------------------------------

BROKEN = {
    "c": {
        "collapse-runs": "#include <stdlib.h>\n#include <string.h>\n\n"
                         "char *collapse_runs(const char *text) {\n"
                         "    char *out = malloc(strlen(text) + 1);\n    size_t n = 0;\n"
                         "    for (size_t i = 0; text[i]; i++) {\n"
                         "        if (n == 0 || out[n - 1] != text[i]) {\n"
                         "            out[n++] = text[i];\n        }\n    }\n"
                         "    out[n] = '\\0';\n    return out;\n}\n",
        "additive-persistence": "int additive_persistence(unsigned long long n) {\n"
                                "    return n < 10 ? 0 : 1;\n}\n",
        "bracket-depth": "int bracket_depth(const char *text) {\n    int n = 0;\n"
                         "    for (; *text; text++) {\n"
                         "        n += *text == '(' || *text == '[' || *text == '{';\n"
                         "    }\n    return n;\n}\n",
    },
    "cpp": {
        "collapse-runs": "#include <string>\n\nstd::string collapse_runs(const std::string& text) {\n"
                         "    std::string out;\n    for (char c : text) {\n"
                         "        if (out.empty() || out.back() != c) {\n"
                         "            out += c;\n        }\n    }\n    return out;\n}\n",
        "additive-persistence": "int additive_persistence(unsigned long long n) {\n"
                                "    return n < 10 ? 0 : 1;\n}\n",
        "bracket-depth": "#include <string>\n\nint bracket_depth(const std::string& text) {\n"
                         "    int n = 0;\n    for (char c : text) {\n"
                         "        n += c == '(' || c == '[' || c == '{';\n    }\n    return n;\n}\n",
    },
}


def test_example_tasks_pass_with_golden_and_fail_with_broken_solutions(lang, sandbox):
    source = load_task_source(EXAMPLE_TASKS / f"{lang.name}.yaml").source
    assert source.name == f"benchwright-{lang.name}"
    broken_solutions = BROKEN[lang.name]
    assert {t.name for t in source.tasks} == set(broken_solutions)
    for task in source.tasks:
        rendered = render_task(task, lang.name, {})
        assert rendered.entry_point == task.name.replace("-", "_")
        golden = lang.run_tests(sandbox, task.golden_solution[lang.name], rendered.tests,
                                prelude=rendered.prelude, limits=LIMITS, test_timeout_s=10)
        assert [t.status for t in golden.tests] == ["pass"] * len(rendered.tests), golden.tests
        assert {t.hidden for t in rendered.tests} == {True, False}
        broken = lang.run_tests(sandbox, broken_solutions[task.name], rendered.tests,
                                prelude=rendered.prelude, limits=LIMITS, test_timeout_s=10)
        failing = [t for t in broken.tests if t.status == "fail"]
        assert failing, (task.name, broken.tests)
        assert all(t.status in ("pass", "fail") for t in broken.tests), broken.tests
        for t in failing:
            assert t.message and t.message.startswith("assertion failed: ")
            assert "assert" in line_text(t), (task.name, t.name, line_text(t))


# -- no toolchain, entry points, fences --------------------------------------------------------

def test_missing_toolchain_is_an_infra_error(lang, sandbox, monkeypatch):
    real = shutil.which
    monkeypatch.setattr(shutil, "which",
                        lambda name, *a, **k: None if name == lang.compiler else real(name, *a, **k))
    with pytest.raises(InfraError, match=f"apt-get install {lang.compiler}"):
        run(lang, sandbox, [TestSpec("a", "assert(1);")])
    assert f"apt-get install {lang.compiler}" in (lang.missing() or "")
    with pytest.raises(InfraError):
        lang.toolchain()


def test_toolchain_and_missing(lang):
    assert lang.missing() is None
    tools = lang.toolchain()
    assert set(tools) == {lang.compiler} and lang.compiler in tools[lang.compiler]
    assert lang.toolchain() == tools


def test_registered():
    assert isinstance(registry.create("language", "c"), CLanguage)
    assert isinstance(registry.create("language", "cpp"), CppLanguage)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (SOLUTION, "quit_now"),
        ("static int helper(int x) {\n    return x;\n}\n\nint solve(int x) {\n    return helper(x);\n}\n",
         "solve"),
        ("int solve(int x) { return x; }\nint main(void) { return solve(1); }\n", "solve"),
        ("static int only(void)\n{\n    return 1;\n}\n", "only"),
        ("unsigned long long\nfib(unsigned n)\n{\n    return n;\n}\n", "fib"),
        ("/* int commented(void) { return 0; } */\nchar *name(const char *s) { return 0; }\n",
         "name"),
        ("int x = 1;\n", None),
        ("", None),
    ],
)
def test_infer_entry_point(code, expected):
    assert CLanguage().infer_entry_point(code) == expected


def test_extract_code_prefers_c_blocks():
    answer = "```bash\ngcc -O2 main.c && ./a.out && echo a much longer shell line here\n```\n" \
             "```c\nint f(void) { return 1; }\n```\n"
    assert CLanguage().extract_code(answer) == "int f(void) { return 1; }\n"
    answer = "```c\nint f(void);\n```\n```cpp\nint f() { return 1; }\n```\n"
    assert CppLanguage().extract_code(answer) == "int f() { return 1; }\n"
    answer = "```c++\nint g() { return 2; }\n```\n"
    assert CppLanguage().extract_code(answer) == "int g() { return 2; }\n"
