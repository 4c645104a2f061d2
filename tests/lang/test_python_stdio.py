"""Stdin/stdout test cases in Python: the solution runs as a program on each case's input, for
real, through the fork server (bwrap) and a fresh interpreter per sample (rlimit)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

from benchwright.lang.base import ExecutionResult, TestSpec
from benchwright.lang.pyrunner import compare_output
from benchwright.lang.python import PythonLanguage
from benchwright.registry import registry
from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.sandbox.select import availability
from tests.lang.support import by_name, line_text

LIMITS = SandboxLimits(memory_mb=512)
SUM = "n = int(input())\nxs = list(map(int, input().split()))\nprint(sum(xs[:n]))\n"


def case(name: str, stdin: str, stdout: str, timeout_s: float | None = None) -> TestSpec:
    return TestSpec(name, "", stdin=stdin, expected_stdout=stdout, timeout_s=timeout_s)


@pytest.fixture(scope="module", params=["bwrap-fork-server", "rlimit-one-shot"])
def setup(request: pytest.FixtureRequest) -> Iterator[tuple[PythonLanguage, Sandbox]]:
    kind = str(request.param).split("-")[0]
    why = availability(kind)
    if why is not None:
        pytest.fail(f"sandbox {kind!r} is not available here: {why}")
    root = tempfile.mkdtemp(prefix="bw-stdio-")
    os.chmod(root, 0o755)
    language = PythonLanguage(fork_server=request.param.endswith("fork-server"))
    yield language, registry.create("sandbox", kind, tmp_root=root)
    language.close()
    shutil.rmtree(root, ignore_errors=True)


def run(setup: tuple[PythonLanguage, Sandbox], solution: str, tests: list[TestSpec],
        prelude: str | None = None, timeout: float = 3.0) -> ExecutionResult:
    lang, sandbox = setup
    return lang.run_tests(sandbox, solution, tests, prelude=prelude, limits=LIMITS,
                          test_timeout_s=timeout)


def test_each_case_runs_the_program_on_its_input(setup) -> None:
    result = run(setup, SUM, [case("three", "3\n1 2 3\n", "6\n"),
                              case("two", "2\n10 20 30\n", "30"),  # no final newline: same
                              case("wrong", "1\n5 5\n", "10\n")])
    tests = by_name(result)
    assert [t.status for t in result.tests] == ["pass", "pass", "fail"]
    assert result.build_error is None
    wrong = tests["wrong"].message or ""
    assert wrong.startswith("wrong output at line 1: '5' where '10' expected")
    assert "\ninput:\n1\n5 5\n" in wrong
    assert "\nexpected output:\n10\n" in wrong
    assert wrong.endswith("\nactual output:\n5\n")
    for t in result.tests:  # the code shown is what ran: the program, once per case
        assert t.code == SUM
        assert t.judged == "harness"


def test_a_crash_is_an_error_at_its_line_with_the_input(setup) -> None:
    program = "a, b = map(int, input().split())\nprint('partial')\nprint(a // b)\n"
    result = run(setup, program, [case("zero", "1 0\n", "x\n"), case("fine", "4 2\n", "partial\n2\n")])
    crash, fine = result.tests
    assert crash.status == "error"
    assert (crash.message or "").startswith("ZeroDivisionError: integer division or modulo by zero")
    assert "input:\n1 0\n" in (crash.message or "")
    assert "actual output:\npartial\n" in (crash.message or "")
    assert line_text(crash) == "print(a // b)"
    assert fine.status == "pass"


def test_a_program_that_loops_times_out_and_the_next_case_still_runs(setup) -> None:
    program = "n = int(input())\nwhile n == 0:\n    pass\nprint(n)\n"
    result = run(setup, program, [case("loops", "0\n", "0\n", timeout_s=0.5),
                                  case("ends", "7\n", "7\n")])
    loops, ends = result.tests
    assert loops.status == "timeout"
    assert "took more than 0.5 s" in (loops.message or "")
    assert ends.status == "pass"


def test_reading_past_the_input_ends_it_and_reading_less_is_fine(setup) -> None:
    result = run(setup, SUM, [case("too-little", "1\n", "1\n"),
                              case("too-much", "1\n4 5 6\nleft over\n", "4\n")])
    short, extra = result.tests
    assert short.status == "error"
    assert (short.message or "").startswith("EOFError: EOF when reading a line")
    assert extra.status == "pass"


def test_the_program_reads_its_own_input_only_however_it_reads(setup) -> None:
    programs = {
        "sys.stdin": "import sys\ndata = sys.stdin.read()\nprint(len(data), data.split()[-1])\n",
        "buffer": "import sys\ndata = sys.stdin.buffer.read()\nprint(len(data), data.split()[-1].decode())\n",
        "open(0)": "data = open(0).read()\nprint(len(data), data.split()[-1])\n",
        "os.read": "import os\ndata = b''\nwhile chunk := os.read(0, 7):\n    data += chunk\n"
                   "print(len(data), data.split()[-1].decode())\n",
    }
    for how, program in programs.items():
        result = run(setup, program, [case("first", "a b c\n", "6 c\n"),
                                      case("second", "x" * 100_000 + " end\n", "100005 end\n")])
        assert [t.status for t in result.tests] == ["pass", "pass"], (how, result.tests)


def test_each_case_starts_with_fresh_globals_and_streams(setup) -> None:
    """Globals, sys.stdin and sys.stdout are the case's own; modules it imported stay imported
    (as in LiveCodeBench's harness, which runs every case in one process)."""
    program = ("import sys\ncount = globals().get('count', 0) + 1\nprint(count, sys.stdin.read())\n"
               "sys.stdin = None\nsys.stdout = None\n")
    result = run(setup, program, [case("one", "a", "1 a\n"), case("two", "b", "1 b\n")])
    assert [t.status for t in result.tests] == ["pass", "pass"]


def test_huge_output_is_stopped_by_the_file_size_limit(setup) -> None:
    flood = "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n"
    result = run(setup, flood, [case("flood", "", "x\n")])
    assert result.tests[0].status == "error"
    assert "printed more than the sandbox's file size limit" in (result.tests[0].message or "")
    big = "print('\\n'.join(str(i) for i in range(200000)))\n"  # 1.3 MB: compared in full
    expected = "\n".join(str(i) for i in range(200000)) + "\n"
    result = run(setup, big, [case("big", "", expected), case("off", "", expected + "1\n")])
    assert [t.status for t in result.tests] == ["pass", "fail"]
    assert (result.tests[1].message or "").startswith("wrong output: 200000 line(s) where 200001")


def test_exit_main_guard_and_the_prelude_run_as_a_program_would(setup) -> None:
    program = ("def main():\n    print(int(input()) * 2)\n    exit()\n    print('never')\n\n"
               "if __name__ == '__main__':\n    main()\n")
    result = run(setup, program, [case("doubles", "21\n", "42\n")])
    assert result.tests[0].status == "pass", result.tests[0].message
    quits = "import sys\nprint('bye')\nsys.exit(3)\n"  # any exit ends the program (LiveCodeBench)
    result = run(setup, quits, [case("exits", "", "bye\n")])
    assert result.tests[0].status == "pass"
    assert "exit status 3" in result.tests[0].output


def test_numbers_compare_as_decimals_and_lines_are_stripped(setup) -> None:
    program = "print('  2.50  ')\nprint('1e3 7')\nprint()\n"
    result = run(setup, program, [case("same", "", "2.5\n1000 7.0\n\n\n"),
                                  case("close-is-not-equal", "", "2.5000001\n1000 7\n")])
    assert [t.status for t in result.tests] == ["pass", "fail"]


def test_a_syntax_error_is_a_build_error_for_every_case(setup) -> None:
    result = run(setup, "print(\n", [case("a", "", ""), case("b", "", "")])
    assert result.build_error is not None and "SyntaxError" in result.build_error
    assert [t.status for t in result.tests] == ["error", "error"]


def test_code_cases_and_stdin_cases_of_one_task_both_run(setup) -> None:
    solution = "def twice(x):\n    return 2 * x\n\nimport sys\nif not sys.stdin.isatty():\n" \
               "    data = sys.stdin.read()\n    if data:\n        print(twice(int(data)))\n"
    result = run(setup, solution, [TestSpec("call", "assert twice(4) == 8"), case("io", "5\n", "10\n"),
                                   TestSpec("call-wrong", "assert twice(1) == 3")])
    assert [(t.name, t.status) for t in result.tests] == [
        ("call", "pass"), ("io", "pass"), ("call-wrong", "fail")]


def test_the_program_never_holds_the_expected_output(setup) -> None:
    """The judge keeps the expected output: a program searching its own memory and the files
    it can open for it finds nothing (it can only print what it computes)."""
    secret = "benchwright-secret-" + "42" * 8
    program = ("import gc, os, sys\nsys.stdin.read()\nfound = any(isinstance(o, str) and "
               f"{secret[:-1]!r} + '2' in o for o in gc.get_objects())\n"
               "print('found' if found else 'not found')\n")
    result = run(setup, program, [case("peek", "", secret + "\n")])
    assert "actual output:\nnot found" in (result.tests[0].message or "")


@pytest.mark.parametrize(("got", "expected", "why"), [
    ("3\n", "3", None),
    ("  a b \n\n", "a b", None),
    ("1.0 2\n", "1 2.00", None),
    ("1e3", "1000", None),
    ("0.30000000000000004", "0.3", "wrong output at line 1"),
    ("1\n2\n", "1\n", "wrong output: 2 line(s) where 1 expected"),
    ("a  b", "a b", "wrong output at line 1"),
    ("nan", "nan", None),  # the same text
    ("nan", "NaN", "wrong output at line 1"),  # as numbers, a NaN equals nothing
    ("", "", None),
])
def test_compare_output_follows_livecodebench(got: str, expected: str, why: str | None) -> None:
    found = compare_output(got, expected)
    assert (found is None) if why is None else (found or "").startswith(why)
