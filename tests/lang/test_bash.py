"""The Bash language plug-in, run for real through the rlimit sandbox.

``tests/sandbox/test_lang_bash_isolated.py`` runs every test that takes ``sandbox`` again
through bwrap and unshare.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchwright.errors import InfraError
from benchwright.lang.base import ExecutionResult, TestSpec
from benchwright.lang.bash import BashLanguage
from benchwright.registry import registry
from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.task.load import load_task_source
from benchwright.task.render import render_task
from tests.lang.support import by_name, line_text

EXAMPLE_TASKS = (Path(__file__).parents[2] / "src" / "benchwright" / "workspace" / "example"
                 / "tasks" / "bash.yaml")

SOLUTION = """\
# helpers and the functions under test
add() {
    echo $(($1 + $2))
}

shout() {
    echo "shouting $1" >&2
    local s=$1
    echo "${s^^}"
}

count_a() {
    local s=$1 n=0 i
    for ((i = 0; i < ${#s}; i++)); do
        [[ ${s:i:1} == a ]] && ((n++))
    done
    echo "$n"
}

quit_now() {
    exit "$1"
}
"""
SOLUTION_LINES = SOLUTION.count("\n")

LIMITS = SandboxLimits(memory_mb=512)


@pytest.fixture(scope="module")
def lang() -> BashLanguage:
    return BashLanguage()



def run(lang: BashLanguage, sandbox: Sandbox, tests: list[TestSpec], solution: str = SOLUTION,
        prelude: str | None = None, timeout: float = 10.0,
        limits: SandboxLimits = LIMITS) -> ExecutionResult:
    return lang.run_tests(sandbox, solution, tests, prelude=prelude, limits=limits,
                          test_timeout_s=timeout)




# -- passing, failing, errors -------------------------------------------------------------------

def test_passing_tests_pass_with_usage(lang, sandbox):
    tests = [
        TestSpec("add", '[ "$(add 1 2)" = 3 ]'),
        TestSpec("multi", "x=$(add 2 2)\ny=$(add \"$x\" 1)\nassert_eq \"$y\" 5"),
        TestSpec("internal-failures", "assert_eq \"$(count_a banana)\" 3"),  # ((n++)) from 0 is 1
        TestSpec("last-command", "true\n[[ $(shout hi 2>/dev/null) == HI ]]"),
    ]
    result = run(lang, sandbox, tests)
    assert result.build_error is None and result.infra_error is None
    assert [t.status for t in result.tests] == ["pass"] * 4, result.tests
    for spec, outcome in zip(tests, result.tests, strict=True):
        assert outcome.name == spec.name
        assert outcome.message is None and outcome.line is None
        assert outcome.code == SOLUTION + spec.code + "\n"
        assert outcome.time_ms is not None and outcome.time_ms >= 0
        assert outcome.judged == "sample"
    assert isinstance(result.extra.get("cpu_ms"), int | float)
    rss = result.extra.get("max_rss_bytes")
    assert isinstance(rss, int) and rss > 0


def test_first_failing_command_fails_the_test_with_its_line(lang, sandbox):
    prelude = "twice() {\n    echo $(($1 * 2))\n}\n"
    tests = [
        TestSpec("good", '[ "$(twice 2)" -eq 4 ]'),
        TestSpec("bad", 'x=$(add 1 2)\ny=$(twice "$x")\necho "y is $y"\n[ "$y" -eq 7 ]\necho not reached'),
        TestSpec("eq", 'assert_eq "$(add 2 2)" 5 "two plus two"'),
        TestSpec("eq-plain", 'got=$(add 1 1)\nassert_eq "$got" 3'),
        TestSpec("ne", "assert_ne \"$(add 1 1)\" 2"),
        TestSpec("false", "false"),
        TestSpec("ignored", "false || true\nif false; then echo no; fi\n[ 1 = 2 ] && echo no\n"
                            "! true\n[ 1 = 1 ]"),
    ]
    out = by_name(run(lang, sandbox, tests, prelude=prelude))
    assert out["good"].status == "pass"
    bad = out["bad"]
    assert bad.status == "fail"
    assert bad.code == SOLUTION + prelude + tests[1].code + "\n"
    assert line_text(bad) == '[ "$y" -eq 7 ]'
    assert bad.line == SOLUTION_LINES + prelude.count("\n") + 4
    assert bad.message == 'test command failed (exit status 1): [ "$y" -eq 7 ]'
    assert "y is 6" in bad.output and "not reached" not in bad.output
    eq = out["eq"]
    assert eq.status == "fail" and eq.message == "two plus two: expected '5', got '4'"
    assert line_text(eq) == 'assert_eq "$(add 2 2)" 5 "two plus two"'
    assert out["eq-plain"].message == "expected '3', got '2'"
    assert line_text(out["eq-plain"]) == 'assert_eq "$got" 3'
    assert out["ne"].status == "fail" and out["ne"].message == "expected anything but '2'"
    assert out["false"].status == "fail" and line_text(out["false"]) == "false"
    assert out["ignored"].status == "pass"


def test_missing_command_and_bad_syntax_in_a_test_are_errors(lang, sandbox):
    tests = [
        TestSpec("missing", "x=1\nnot_a_function 1 2"),
        TestSpec("syntax", "echo start\nif [ 1 = 1 ]; then\n  echo inside\n"),
        TestSpec("after", '[ "$(add 0 0)" = 0 ]'),
    ]
    out = by_name(run(lang, sandbox, tests))
    missing = out["missing"]
    assert missing.status == "error" and missing.message is not None
    assert missing.message.startswith("command not found") and line_text(missing) == "not_a_function 1 2"
    assert "not_a_function: command not found" in missing.output
    assert f"line {SOLUTION_LINES + 2}:" in missing.output  # bash's own message, in shown lines
    syntax = out["syntax"]
    assert syntax.status == "error" and syntax.message is not None
    assert "syntax error" in syntax.message
    assert syntax.line is not None and syntax.line > SOLUTION_LINES
    assert out["after"].status == "pass"


def test_signals_are_errors(lang, sandbox):
    tests = [TestSpec("segv", "kill -SEGV $BASHPID"), TestSpec("term", "kill -TERM $BASHPID"),
             TestSpec("after", '[ "$(add 1 1)" = 2 ]')]
    out = by_name(run(lang, sandbox, tests))
    assert out["segv"].status == "error"
    assert out["segv"].message == "the test process was killed: Segmentation fault"
    assert out["term"].status == "error" and out["term"].message is not None
    assert "Terminated" in out["term"].message
    assert out["after"].status == "pass"


# -- timeouts and escapes --------------------------------------------------------------------

def test_infinite_loop_times_out_and_the_others_run(lang, sandbox):
    tests = [
        TestSpec("before", '[ "$(add 1 1)" = 2 ]'),
        TestSpec("loop", "while :; do :; done"),
        TestSpec("sleep", "sleep 100"),
        TestSpec("background", "sleep 100 &\n[ \"$(add 1 1)\" = 2 ]"),
        TestSpec("after", '[ "$(add 2 2)" = 4 ]'),
    ]
    result = run(lang, sandbox, tests, timeout=0.5)
    assert [t.status for t in result.tests] == ["pass", "timeout", "timeout", "pass", "pass"]
    assert result.tests[1].message == "timed out after 0.5 s"
    assert result.process is not None and not result.process.timed_out


def test_a_tests_own_timeout_is_honoured(lang, sandbox):
    tests = [
        TestSpec("short-limit", "sleep 2", timeout_s=0.3),
        TestSpec("long-limit", "sleep 0.4\n[ \"$(add 1 1)\" = 2 ]", timeout_s=30),
    ]
    out = by_name(run(lang, sandbox, tests, timeout=0.2))
    assert out["short-limit"].status == "timeout"
    assert out["short-limit"].message == "timed out after 0.3 s"
    assert out["long-limit"].status == "pass"


@pytest.mark.parametrize("code", ["exit 0", "quit_now 0", "quit_now 3", "return 0\nfalse",
                                  "kill -KILL $BASHPID", "kill -KILL 0", "exec true",
                                  "trap - ERR\nfalse\nexit 0"])
def test_early_exit_is_never_a_pass(lang, sandbox, code):
    tests = [TestSpec("exit", code), TestSpec("after", '[ "$(add 1 2)" = 3 ]')]
    out = by_name(run(lang, sandbox, tests))
    if code == "return 0\nfalse":
        assert out["exit"].status == "pass"  # `return` at the top of a test ends it normally
    else:
        assert out["exit"].status == "error", out["exit"]
        assert out["exit"].message
    assert out["after"].status == "pass"


def test_exit_while_loading_the_solution_fails_every_test(lang, sandbox):
    solution = SOLUTION + "exit 0\n"
    tests = [TestSpec("a", '[ "$(add 1 1)" = 2 ]'), TestSpec("b", "true")]
    result = run(lang, sandbox, tests, solution=solution)
    assert [t.status for t in result.tests] == ["error", "error"]


def test_fake_result_lines_are_never_a_pass(lang, sandbox):
    solution = SOLUTION + """\
forge() {
    local line='BWR {"i": 1, "status": "pass"}'
    echo "$line"
    echo "$line" >&2
    local judge
    read -r _ _ _ judge _ </proc/$BASHPID/stat
    echo "$line" >"/proc/$judge/fd/1" 2>/dev/null
    printf 'ok 1.0 2.0 1\\n' >"bw_t/1.rep" 2>/dev/null
    exit 0
}
"""
    tests = [TestSpec("forge", "forge"), TestSpec("wrong", '[ "$(add 1 1)" = 3 ]'),
             TestSpec("crash", "kill -SEGV $BASHPID")]
    result = run(lang, sandbox, tests, solution=solution)
    assert [t.status for t in result.tests] == ["error", "fail", "error"], result.tests
    assert "BWR" in result.tests[0].output


def test_solution_redefining_builtins_does_not_fool_the_driver(lang, sandbox):
    solution = SOLUTION + (
        "printf() { :; }\ntrap() { :; }\nexit() { builtin exit 0; }\nsource() { :; }\n"
        "set -e\nset -o errtrace\nassert_eq() { return 0; }\n"
    )
    tests = [TestSpec("wrong", '[ "$(add 1 1)" = 3 ]'), TestSpec("eq", 'assert_eq "$(add 1 1)" 3'),
             TestSpec("right", '[ "$(add 1 1)" = 2 ]')]
    result = run(lang, sandbox, tests, solution=solution)
    assert [t.status for t in result.tests] == ["fail", "fail", "pass"], result.tests


def test_killing_the_judge_is_never_a_pass(lang, sandbox):
    # $PPID is the judge's parent (under rlimit: the harness); the judge is the test's parent
    judge = "read -r _ _ _ judge _ </proc/$BASHPID/stat\nkill -KILL $judge"
    tests = [TestSpec("ok", "true"), TestSpec("kill", judge),
             TestSpec("wrong", "false")]
    result = run(lang, sandbox, tests)
    assert result.tests[0].status == "pass"
    assert [t.status for t in result.tests[1:]] == ["error", "error"], result.tests


def test_tests_do_not_leak_state_into_each_other(lang, sandbox):
    tests = [TestSpec("define", "leaked=1\nadd() { echo 0; }\n[ \"$leaked\" = 1 ]"),
             TestSpec("use", '[ -z "$leaked" ]\n[ "$(add 1 1)" = 2 ]')]
    assert [t.status for t in run(lang, sandbox, tests).tests] == ["pass", "pass"]


# -- build errors, prelude, output -------------------------------------------------------------

def test_syntax_error_in_solution_is_a_build_error_with_line(lang, sandbox):
    solution = "add() {\n    echo $(($1 + $2))\n}\n\nbroken() {\n    if true; then\n}\n"
    tests = [TestSpec("a", '[ "$(add 1 1)" = 2 ]'), TestSpec("b", "true")]
    result = run(lang, sandbox, tests, solution=solution)
    assert result.build_error is not None and "syntax error" in result.build_error
    assert result.build_error.startswith("solution.sh: line 7:")
    for t in result.tests:
        assert t.status == "error" and t.line == 7 and t.message == result.build_error


def test_prelude_is_sourced_for_every_test(lang, sandbox):
    prelude = "double() {\n    add \"$1\" \"$1\"\n}\nGREETING=hello\n"
    tests = [TestSpec("a", '[ "$(double 4)" = 8 ]'), TestSpec("b", '[ "$GREETING" = hello ]')]
    result = run(lang, sandbox, tests, prelude=prelude)
    assert [t.status for t in result.tests] == ["pass", "pass"]
    assert all(t.code.startswith(SOLUTION + prelude) for t in result.tests)
    without = run(lang, sandbox, tests[:1])
    assert without.tests[0].status == "fail"


def test_output_is_captured_per_test_and_capped(lang, sandbox):
    tests = [
        TestSpec("loud", '[ "$(shout hi)" = HI ]\necho "to stdout"'),
        TestSpec("flood", "for ((i = 0; i < 100000; i++)); do echo xxxxxxxxxx; done"),
        TestSpec("quiet", "true"),
    ]
    out = by_name(run(lang, sandbox, tests))
    assert out["loud"].status == "pass"
    assert "shouting hi" in out["loud"].output and "to stdout" in out["loud"].output
    assert out["flood"].status == "pass"
    assert 0 < len(out["flood"].output) <= 10_000
    assert out["quiet"].output == ""


def test_cpu_and_memory_of_the_tests_are_measured(lang, sandbox):
    tests = [TestSpec("burn", "for ((i = 0; i < 200000; i++)); do :; done"),
             TestSpec("fill", "big=$(printf '%050000000d' 0)\n[ ${#big} -eq 50000000 ]")]
    result = run(lang, sandbox, tests, limits=SandboxLimits(memory_mb=1024))
    assert [t.status for t in result.tests] == ["pass", "pass"], result.tests
    cpu = result.extra["cpu_ms"]
    rss = result.extra["max_rss_bytes"]
    assert isinstance(cpu, int | float) and cpu >= 100
    assert isinstance(rss, int) and 50 << 20 < rss < 1 << 30


def test_environment_has_no_secret(lang, sandbox, monkeypatch):
    monkeypatch.setenv("BW_TEST_SECRET", "s3cr3t")
    tests = [TestSpec("env", '[ -z "$BW_TEST_SECRET" ]\n! env | grep -q s3cr3t')]
    assert run(lang, sandbox, tests).tests[0].status == "pass"


def test_no_tests(lang, sandbox):
    result = run(lang, sandbox, [])
    assert result.tests == [] and result.build_error is None


# -- the example tasks ----------------------------------------------------------------------

BROKEN = {
    "collapse-runs": "collapse_runs() {\n    echo \"$1\"\n}\n",
    "additive-persistence": "additive_persistence() {\n    if (($1 < 10)); then echo 0; else echo 1; fi\n}\n",
    "bracket-depth": "bracket_depth() {\n    local s=${1//[^(\\[{]/}\n    echo ${#s}\n}\n",
}


def broken_lines(task: str) -> int:
    return BROKEN[task].count("\n")


def test_example_tasks_pass_with_golden_and_fail_with_broken_solutions(lang, sandbox):
    source = load_task_source(EXAMPLE_TASKS).source
    assert source.name == "benchwright-bash"
    assert {t.name for t in source.tasks} == set(BROKEN)
    for task in source.tasks:
        rendered = render_task(task, "bash", {})
        assert rendered.entry_point == task.name.replace("-", "_")
        golden = lang.run_tests(sandbox, task.golden_solution["bash"], rendered.tests,
                                prelude=rendered.prelude, limits=LIMITS, test_timeout_s=10)
        assert [t.status for t in golden.tests] == ["pass"] * len(rendered.tests), golden.tests
        assert {t.hidden for t in rendered.tests} == {True, False}
        broken = lang.run_tests(sandbox, BROKEN[task.name], rendered.tests,
                                prelude=rendered.prelude, limits=LIMITS, test_timeout_s=10)
        failing = [t for t in broken.tests if t.status == "fail"]
        assert failing, (task.name, broken.tests)
        assert all(t.status in ("pass", "fail") for t in broken.tests), broken.tests
        for t in failing:
            assert t.message
            text = line_text(t)
            assert text.startswith(("assert_eq", "[", "check")), (task.name, t.name, text)
            assert t.line is not None and t.line > broken_lines(task.name)


# -- no toolchain, entry points, fences --------------------------------------------------------

def test_missing_bash_is_an_infra_error(lang, sandbox, monkeypatch):
    real = shutil.which
    monkeypatch.setattr(shutil, "which",
                        lambda name, *a, **k: None if str(name).endswith("bash") else real(name, *a, **k))
    with pytest.raises(InfraError, match="apt-get install bash"):
        run(lang, sandbox, [TestSpec("a", "true")])
    assert "apt-get install bash" in (lang.missing() or "")
    with pytest.raises(InfraError):
        lang.toolchain()


def test_toolchain_and_missing(lang):
    assert lang.missing() is None
    tools = lang.toolchain()
    assert set(tools) == {"bash"} and tools["bash"].startswith("5.")
    assert lang.toolchain() == tools


def test_registered():
    assert isinstance(registry.create("language", "bash"), BashLanguage)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (SOLUTION, "quit_now"),
        ("_helper() { :; }\ncollapse_runs() {\n  :\n}\n", "collapse_runs"),
        ("function solve {\n  echo 1\n}\n", "solve"),
        ("function solve() {\n  echo 1\n}\nmain() { solve; }\nmain \"$@\"\n", "solve"),
        ("greet ()\n{\n  echo hi\n}\n", "greet"),
        ("_only() { :; }\n", "_only"),
        ("echo hello\n", None),
        ("", None),
    ],
)
def test_infer_entry_point(lang, code, expected):
    assert lang.infer_entry_point(code) == expected


def test_extract_code_prefers_shell_blocks(lang):
    answer = "```python\nprint('a rather long python block that is not the answer at all')\n```\n" \
             "```bash\nf() { echo 1; }\n```\n"
    assert lang.extract_code(answer) == "f() { echo 1; }\n"
    assert lang.extract_code("```sh\ng() { :; }\n```\n") == "g() { :; }\n"
    assert lang.extract_code("```shell\nh() { :; }\n```\n") == "h() { :; }\n"
