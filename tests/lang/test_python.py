"""The Python language plug-in, run for real through the rlimit sandbox (fresh interpreters)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from benchwright.lang.base import ExecutionResult, TestSpec
from benchwright.lang.python import PythonLanguage
from benchwright.sandbox.base import SandboxLimits
from benchwright.sandbox.rlimit import RlimitSandbox
from tests.lang.support import by_name, line_text

SOLUTION = """\
import math


def area(r):
    if r < 0:
        raise ValueError("negative radius")
    return math.pi * r * r


def add(a, b):
    return a + b
"""

LIMITS = SandboxLimits(memory_mb=512)


@pytest.fixture(scope="module")
def lang() -> Iterator[PythonLanguage]:
    language = PythonLanguage()
    yield language
    language.close()



def run(
    lang: PythonLanguage,
    sandbox: RlimitSandbox,
    tests: list[TestSpec],
    solution: str = SOLUTION,
    prelude: str | None = None,
    timeout: float = 5.0,
    limits: SandboxLimits = LIMITS,
) -> ExecutionResult:
    return lang.run_tests(sandbox, solution, tests, prelude=prelude, limits=limits,
                          test_timeout_s=timeout)




# -- passing and failing ---------------------------------------------------------------------

def test_passing_tests_pass(lang, sandbox):
    tests = [
        TestSpec("one", "assert add(1, 2) == 3"),
        TestSpec("two", "assert abs(area(1) - 3.14159) < 1e-4"),
        TestSpec("multi", "x = add(2, 2)\ny = add(x, 1)\nassert y == 5"),
    ]
    result = run(lang, sandbox, tests)
    assert result.build_error is None
    assert result.infra_error is None
    assert [t.name for t in result.tests] == ["one", "two", "multi"]
    assert [t.status for t in result.tests] == ["pass", "pass", "pass"]
    for spec, outcome in zip(tests, result.tests, strict=True):
        assert outcome.message is None
        assert outcome.line is None
        # the exact code executed: solution, then the test
        assert outcome.code.startswith(SOLUTION)
        assert outcome.code.endswith(spec.code + "\n")
        assert outcome.time_ms is not None and outcome.time_ms >= 0
    assert result.process is not None and result.process.exit_code == 0
    assert isinstance(result.extra.get("cpu_ms"), (int, float))


def test_assertion_failure_reports_message_and_line(lang, sandbox):
    prelude = "def helper():\n    return 42\n"
    tests = [
        TestSpec("good", "assert add(1, 1) == 2"),
        TestSpec("bad", "x = add(1, 2)\ny = x * 2\nassert y == 7, f'expected 7, got {y}'\nz = 1"),
        TestSpec("bare", "assert add(1, 1) == 3"),
    ]
    result = run(lang, sandbox, tests, prelude=prelude)
    out = by_name(result)
    assert out["good"].status == "pass"
    bad = out["bad"]
    assert bad.status == "fail"
    assert bad.message == "expected 7, got 6"
    # code = solution + prelude + test, and the line points at the assert inside it
    assert bad.code == SOLUTION + prelude + tests[1].code + "\n"
    assert line_text(bad) == "assert y == 7, f'expected 7, got {y}'"
    assert bad.line == SOLUTION.count("\n") + prelude.count("\n") + 3
    bare = out["bare"]
    assert bare.status == "fail"
    assert bare.message  # an assertion without a message still says something
    assert line_text(bare) == "assert add(1, 1) == 3"


def test_exception_inside_solution_is_error_with_type_and_solution_line(lang, sandbox):
    tests = [TestSpec("neg", "area(-1)"), TestSpec("fine", "assert add(2, 3) == 5")]
    result = run(lang, sandbox, tests)
    out = by_name(result)
    neg = out["neg"]
    assert neg.status == "error"
    assert neg.message is not None
    assert "ValueError" in neg.message and "negative radius" in neg.message
    assert neg.line is not None and neg.line <= SOLUTION.count("\n")  # inside the solution
    assert line_text(neg).strip() == 'raise ValueError("negative radius")'
    assert out["fine"].status == "pass"


def test_exception_in_test_body_is_error(lang, sandbox):
    result = run(lang, sandbox, [TestSpec("key", "d = {}\nd['missing']")])
    (t,) = result.tests
    assert t.status == "error"
    assert t.message is not None and t.message.startswith("KeyError")
    assert line_text(t) == "d['missing']"


# -- timeouts and escapes --------------------------------------------------------------------

def test_per_test_timeout_and_following_tests_still_run(lang, sandbox):
    tests = [
        TestSpec("before", "assert add(1, 1) == 2"),
        TestSpec("loop", "while True: pass"),
        TestSpec("after", "assert add(2, 2) == 4"),
        TestSpec("after2", "assert area(0) == 0"),
    ]
    result = run(lang, sandbox, tests, timeout=1.0)
    out = by_name(result)
    assert out["before"].status == "pass"
    assert out["loop"].status == "timeout"
    assert out["after"].status == "pass"
    assert out["after2"].status == "pass"
    assert result.process is not None and not result.process.timed_out


def test_timeout_cannot_be_swallowed_by_except(lang, sandbox):
    code = "try:\n    while True: pass\nexcept Exception:\n    pass\n"
    tests = [TestSpec("swallow", code), TestSpec("after", "assert add(1, 2) == 3")]
    result = run(lang, sandbox, tests, timeout=1.0)
    out = by_name(result)
    assert out["swallow"].status == "timeout"
    assert out["after"].status == "pass"


def test_test_that_disables_the_alarm_still_times_out(lang, sandbox):
    """The per-test alarm can be ignored; the judge process kills the sample process."""
    code = "import signal\nsignal.signal(signal.SIGALRM, signal.SIG_IGN)\nwhile True: pass"
    tests = [TestSpec("ignore-alarm", code), TestSpec("never-reached", "assert True")]
    result = run(lang, sandbox, tests, timeout=0.5)
    assert [t.status for t in result.tests] == ["timeout", "not_run"]
    assert result.process is not None and result.process.wall_ms < 10_000


@pytest.mark.parametrize(
    "code", ["import sys\nsys.exit(0)", "import sys\nsys.exit()", "raise SystemExit(0)", "quit_now(0)"]
)
def test_system_exit_in_test_is_error_never_pass(lang, sandbox, code):
    solution = SOLUTION + "\n\ndef quit_now(code):\n    import sys\n    sys.exit(code)\n"
    tests = [TestSpec("exit", code), TestSpec("after", "assert add(1, 2) == 3")]
    result = run(lang, sandbox, tests, solution=solution)
    out = by_name(result)
    assert out["exit"].status == "error"
    assert out["exit"].message is not None and "SystemExit" in out["exit"].message
    assert out["after"].status == "pass"


def test_os_exit_in_solution_makes_every_test_error(lang, sandbox):
    solution = "import os\n\ndef f(x):\n    os._exit(0)\n"
    tests = [
        TestSpec("a", "assert f(1) == 1"),
        TestSpec("b", "assert True"),
        TestSpec("c", "pass"),
    ]
    result = run(lang, sandbox, tests, solution=solution)
    assert len(result.tests) == 3
    assert [t.status for t in result.tests] == ["error", "not_run", "not_run"], result.tests
    assert not any(t.status == "pass" for t in result.tests)


def test_os_exit_at_load_time_makes_every_test_error(lang, sandbox):
    solution = "import os\nos._exit(0)\n"
    result = run(lang, sandbox, [TestSpec("a", "assert True"), TestSpec("b", "pass")],
                 solution=solution)
    assert [t.status for t in result.tests] == ["error", "error"]
    assert result.build_error is not None


def test_solution_cannot_forge_results_file(lang, sandbox):
    """Writing a fake 'pass' for every test into results.jsonl, then dying, is no pass."""
    solution = (
        "import json, os\n"
        "def f():\n"
        "    with open('results.jsonl', 'a') as fh:\n"
        "        for i in range(5):\n"
        "            fh.write(json.dumps({'i': i, 'status': 'pass'}) + '\\n')\n"
        "    os._exit(0)\n"
    )
    tests = [TestSpec("a", "f()"), TestSpec("b", "assert False")]
    result = run(lang, sandbox, tests, solution=solution)
    assert not any(t.status == "pass" for t in result.tests), result.tests


def test_solution_cannot_forge_results_by_patching_the_runner(lang, sandbox):
    """The runner shares the interpreter with the solution: patching json.dumps is no pass."""
    solution = (
        "import json\n"
        "_orig = json.dumps\n"
        "def _forge(rec, *a, **k):\n"
        "    if isinstance(rec, dict) and 'status' in rec:\n"
        "        rec = dict(rec, status='pass', message=None, line=None)\n"
        "    return _orig(rec, *a, **k)\n"
        "json.dumps = _forge\n"
        "def f():\n"
        "    return 1\n"
    )
    tests = [TestSpec("wrong", "assert f() == 2"), TestSpec("crash", "raise RuntimeError('x')")]
    result = run(lang, sandbox, tests, solution=solution)
    statuses = {t.name: t.status for t in result.tests}
    assert statuses["wrong"] != "pass", result.tests
    assert statuses["crash"] != "pass", result.tests


# -- build errors, syntax errors, prelude, output ----------------------------------------------

def test_syntax_error_in_solution_is_build_error(lang, sandbox):
    solution = "def f(x:\n    return x\n"
    tests = [TestSpec("a", "assert f(1) == 1"), TestSpec("b", "assert True")]
    result = run(lang, sandbox, tests, solution=solution)
    assert result.build_error is not None
    assert "SyntaxError" in result.build_error
    assert [t.status for t in result.tests] == ["error", "error"]
    for t in result.tests:
        assert t.message is not None and "SyntaxError" in t.message


def test_exception_while_loading_solution_is_build_error(lang, sandbox):
    solution = "x = 1\nraise RuntimeError('boom at import')\n"
    result = run(lang, sandbox, [TestSpec("a", "assert True")], solution=solution)
    assert result.build_error is not None and "boom at import" in result.build_error
    (t,) = result.tests
    assert t.status == "error"
    assert t.line == 2


def test_syntax_error_in_one_test_only_errors_that_test(lang, sandbox):
    tests = [
        TestSpec("first", "assert add(1, 2) == 3"),
        TestSpec("broken", "x = 1\nassert add(1, 2 == 3"),
        TestSpec("last", "assert add(0, 0) == 0"),
    ]
    result = run(lang, sandbox, tests)
    out = by_name(result)
    assert result.build_error is None
    assert out["first"].status == "pass"
    assert out["broken"].status == "error"
    assert out["broken"].message is not None and "SyntaxError" in out["broken"].message
    assert out["broken"].line is not None
    assert out["broken"].line > SOLUTION.count("\n")  # in the test, not the solution
    assert out["last"].status == "pass"


def test_prelude_is_executed_and_usable_by_tests(lang, sandbox):
    prelude = "import math\n\ndef close(a, b):\n    return math.isclose(a, b, rel_tol=1e-9)\n"
    tests = [
        TestSpec("uses-helper", "assert close(area(2), 4 * math.pi)"),
        TestSpec("helper-false", "assert not close(1.0, 2.0)"),
    ]
    result = run(lang, sandbox, tests, prelude=prelude)
    assert [t.status for t in result.tests] == ["pass", "pass"]
    assert all(prelude in t.code for t in result.tests)
    # without the prelude the same test cannot find the helper
    without = run(lang, sandbox, tests[:1])
    assert without.tests[0].status == "error"
    assert without.tests[0].message is not None and "NameError" in without.tests[0].message


def test_tests_do_not_leak_state_into_each_other(lang, sandbox):
    tests = [
        TestSpec("define", "leaked = 1\nassert leaked == 1"),
        TestSpec("use", "assert 'leaked' not in globals()"),
    ]
    result = run(lang, sandbox, tests)
    assert [t.status for t in result.tests] == ["pass", "pass"]


def test_solution_printing_goes_to_output(lang, sandbox):
    solution = "def shout(x):\n    print('shouting', x)\n    return x.upper()\n"
    tests = [
        TestSpec("loud", "assert shout('hi') == 'HI'"),
        TestSpec("also", "print('from test')\nassert shout('a') == 'A'"),
        TestSpec("quiet", "assert 1 + 1 == 2"),
    ]
    result = run(lang, sandbox, tests, solution=solution)
    out = by_name(result)
    assert [t.status for t in result.tests] == ["pass", "pass", "pass"]
    assert "shouting hi" in out["loud"].output
    assert "from test" in out["also"].output and "shouting a" in out["also"].output
    assert out["quiet"].output == ""


def test_output_is_capped_per_test(lang, sandbox):
    tests = [TestSpec("flood", "print('x' * 1_000_000)"), TestSpec("after", "assert add(1, 1) == 2")]
    result = run(lang, sandbox, tests)
    out = by_name(result)
    assert out["flood"].status == "pass"
    assert 0 < len(out["flood"].output) <= 10_000
    assert out["after"].status == "pass"


def test_memory_hog_gets_memory_error(lang, sandbox):
    tests = [
        TestSpec("hog", "data = bytearray(4 << 30)"),
        TestSpec("after", "assert add(1, 2) == 3"),
    ]
    result = run(lang, sandbox, tests, limits=SandboxLimits(memory_mb=512))
    out = by_name(result)
    assert out["hog"].status == "error"
    assert out["hog"].message is not None and "MemoryError" in out["hog"].message
    assert out["after"].status == "pass"


def test_child_environment_has_no_secret(lang, sandbox, monkeypatch):
    monkeypatch.setenv("BW_TEST_SECRET", "s3cr3t")
    assert os.environ["BW_TEST_SECRET"] == "s3cr3t"
    tests = [
        TestSpec("no-secret", "import os\nassert os.environ.get('BW_TEST_SECRET') is None, "
                              "os.environ.get('BW_TEST_SECRET')"),
        TestSpec("nowhere", "import os\nassert 's3cr3t' not in repr(dict(os.environ))"),
    ]
    result = run(lang, sandbox, tests)
    assert [t.status for t in result.tests] == ["pass", "pass"], result.tests


def test_empty_test_list(lang, sandbox):
    result = run(lang, sandbox, [])
    assert result.tests == []
    assert result.build_error is None


# -- entry point inference ---------------------------------------------------------------------

@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("def similar_elements(a, b):\n    return a\n", "similar_elements"),
        ("def _helper(x):\n    return x\n\ndef main_fn(x):\n    return _helper(x)\n", "main_fn"),
        ("def _only_private():\n    pass\n", "_only_private"),
        ("import os\nX = 1\nasync def fetch():\n    pass\n", "fetch"),
        ("class Solution:\n    def solve(self):\n        pass\n", None),
        ("x = 1\n", None),
        ("", None),
        ("def first():\n    pass\n\ndef second():\n    pass\n", "first"),
        ("def broken(:\n    pass\n", "broken"),  # a syntax error falls back to a regex
        ("def outer():\n    def inner():\n        pass\n    return inner\n", "outer"),
    ],
)
def test_infer_entry_point(lang, code, expected):
    assert lang.infer_entry_point(code) == expected


# -- code extraction -------------------------------------------------------------------------

def test_extract_code_prefers_python_block(lang):
    answer = (
        "Install it first:\n"
        "```bash\npip install something-with-a-long-name && echo done && echo more words here\n```\n"
        "Then the code:\n"
        "```python\ndef f(x):\n    return x\n```\n"
        "And an example in JS:\n"
        "```javascript\nfunction f(x) { return x; } // a rather longer block than the python one\n```\n"
    )
    assert lang.extract_code(answer) == "def f(x):\n    return x\n"


def test_extract_code_picks_longest_python_block(lang):
    answer = (
        "```py\nx = 1\n```\n"
        "```python3\ndef g():\n    return 2\n```\n"
    )
    assert lang.extract_code(answer) == "def g():\n    return 2\n"


def test_extract_code_falls_back_to_untagged_block(lang):
    answer = (
        "```java\npublic class A { public static int f() { return 1; } }\n```\n"
        "```\ndef f():\n    return 1\n```\n"
    )
    assert lang.extract_code(answer) == "def f():\n    return 1\n"


def test_extract_code_falls_back_to_any_block(lang):
    answer = "Here:\n```rust\nfn main() {}\n```\n"
    assert lang.extract_code(answer) == "fn main() {}\n"


def test_extract_code_falls_back_to_whole_answer(lang):
    answer = "\ndef f(x):\n    return x + 1\n\n"
    assert lang.extract_code(answer) == "def f(x):\n    return x + 1\n"


def test_extract_code_unclosed_fence(lang):
    answer = "Sure:\n```python\ndef f():\n    return 3\n"
    assert lang.extract_code(answer) == "def f():\n    return 3\n"


def test_cpu_and_memory_of_the_sample_are_measured(lang, sandbox):
    solution = ("import time\n"
                "def burn():\n"
                "    t = time.process_time()\n"
                "    while time.process_time() - t < 0.2:\n"
                "        pass\n"
                "    return 1\n")
    result = run(lang, sandbox, [TestSpec("burn", "assert burn() == 1")], solution=solution)
    assert result.tests[0].status == "pass"
    cpu = result.extra["cpu_ms"]
    rss = result.extra["max_rss_bytes"]
    assert isinstance(cpu, float) and 150 <= cpu <= 5000
    assert isinstance(rss, int) and 1e6 < rss < 200e6
