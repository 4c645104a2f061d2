"""What only C++ has, through the rlimit sandbox (the shared C/C++ behaviour is tested for both
languages in ``tests/lang/test_c.py``). The fixture is ``cpp`` (not ``lang``) so that
``tests/sandbox/test_lang_c_isolated.py`` can collect both files' tests side by side."""

from __future__ import annotations

import pytest

from benchwright.lang.base import ExecutionResult, TestSpec
from benchwright.lang.c import CppLanguage
from benchwright.sandbox.base import Sandbox, SandboxLimits
from tests.lang.support import line_text

SOLUTION = """\
#include <stdexcept>
#include <string>
#include <vector>
using namespace std;

struct BadInput : std::exception {
    const char *what() const noexcept override { return "bad input"; }
};

string twice(const string &s) {
    if (s.empty()) {
        throw invalid_argument("empty input");
    }
    if (s == "?") {
        throw BadInput();
    }
    return s + s;
}

vector<int> evens(int n) {
    vector<int> out;
    for (int i = 0; i < n; i += 2) {
        out.push_back(i);
    }
    return out;
}
"""
SOLUTION_LINES = SOLUTION.count("\n")
LIMITS = SandboxLimits(memory_mb=512)


@pytest.fixture(scope="module")
def cpp() -> CppLanguage:
    return CppLanguage()



def run(cpp: CppLanguage, sandbox: Sandbox, tests: list[TestSpec], solution: str = SOLUTION,
        prelude: str | None = None, timeout: float = 10.0) -> ExecutionResult:
    return cpp.run_tests(sandbox, solution, tests, prelude=prelude, limits=LIMITS,
                         test_timeout_s=timeout)



def test_strings_vectors_and_helpers(cpp, sandbox):
    tests = [
        TestSpec("eq", 'assert(twice("ab") == "abab");'),
        TestSpec("vector", "assert(evens(5) == vector<int>{0, 2, 4});"),
        TestSpec("str-helper", 'assert_str_eq(twice("x"), "xx");'),
        TestSpec("wrong", 'string got = twice("ab");\nassert_str_eq(got, "aba");'),
        TestSpec("wrong-vector", "assert(evens(3) == std::vector<int>{0, 2, 4});"),
    ]
    result = run(cpp, sandbox, tests)
    assert [t.status for t in result.tests] == ["pass", "pass", "pass", "fail", "fail"]
    wrong = result.tests[3]
    assert wrong.message == 'assertion failed: assert_str_eq(got, "aba"): expected "aba", got "abab"'
    assert wrong.line == SOLUTION_LINES + 2 and line_text(wrong) == 'assert_str_eq(got, "aba");'
    vec = result.tests[4]
    assert vec.message == "assertion failed: evens(3) == std::vector<int>{0, 2, 4}"
    assert line_text(vec) == "assert(evens(3) == std::vector<int>{0, 2, 4});"


def test_uncaught_exceptions_are_errors_with_type_and_what(cpp, sandbox):
    tests = [
        TestSpec("std", 'twice("");'),
        TestSpec("own", 'twice("?");'),
        TestSpec("int", "throw 42;"),
        TestSpec("out-of-range", "vector<int> v;\nv.at(3);"),
        TestSpec("caught", 'try {\n    twice("");\n    assert(false);\n} catch (const invalid_argument &e) {\n'
                           '    assert(string(e.what()) == "empty input");\n}'),
    ]
    out = {t.name: t for t in run(cpp, sandbox, tests).tests}
    assert out["std"].status == "error"
    assert out["std"].message == "uncaught exception std::invalid_argument: empty input"
    assert out["own"].status == "error"
    assert out["own"].message == "uncaught exception BadInput: bad input"
    assert out["int"].status == "error" and out["int"].message == "uncaught exception int"
    assert out["out-of-range"].status == "error"
    assert out["out-of-range"].message is not None
    assert out["out-of-range"].message.startswith("uncaught exception std::out_of_range: ")
    assert out["caught"].status == "pass"


def test_exception_escaping_a_destructor_is_an_error(cpp, sandbox):
    solution = SOLUTION + "struct Boom {\n    ~Boom() noexcept(false) { throw runtime_error(\"late\"); }\n};\n"
    tests = [TestSpec("noexcept", "[]() noexcept { throw runtime_error(\"inside noexcept\"); }();"),
             TestSpec("after", 'assert(twice("a") == "aa");')]
    result = run(cpp, sandbox, tests, solution=solution)
    first = result.tests[0]
    assert first.status == "error"
    assert first.message is not None and first.message.startswith("Aborted")
    assert "inside noexcept" in first.message
    assert result.tests[1].status == "pass"


def test_competitive_programming_macros_do_not_break_the_driver(cpp, sandbox):
    solution = (
        "#include <bits/stdc++.h>\nusing namespace std;\n#define int long long\n"
        "#define endl '\\n'\n\nint sum_to(int n) {\n    return n * (n + 1) / 2;\n}\n\n"
        "signed main() {\n    ios::sync_with_stdio(false);\n    cout << sum_to(10) << endl;\n}\n"
    )
    tests = [TestSpec("big", "assert(sum_to(3000000000LL) == 4500000001500000000LL);"),
             TestSpec("print", 'cout << "printed" << endl;\nassert(sum_to(2) == 3);')]
    result = run(cpp, sandbox, tests, solution=solution)
    assert [t.status for t in result.tests] == ["pass", "pass"], result.tests
    assert "printed" in result.tests[1].output  # flushed at the normal exit


def test_template_error_is_a_build_error_in_the_solution(cpp, sandbox):
    solution = "#include <vector>\n\nint first(const std::vector<int> &v) {\n    return v.front().size();\n}\n"
    result = run(cpp, sandbox, [TestSpec("a", "assert(first({1}) == 1);")], solution=solution)
    assert result.build_error is not None
    (t,) = result.tests
    assert t.status == "error" and t.line == 4


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (SOLUTION, "evens"),
        ("class Solution {\npublic:\n    int maxArea(vector<int>& h) {\n        return 0;\n    }\n};\n",
         "maxArea"),
        ("template <typename T>\nT biggest(const std::vector<T> &v) { return v[0]; }\n", "biggest"),
        ("auto area(double r) -> double {\n    return r * r;\n}\n", "area"),
        ("namespace util {\nint helper() { return 1; }\n}\nstd::string solve(const std::string &s) {\n"
         "    return s;\n}\n", "solve"),
    ],
)
def test_infer_entry_point(cpp, code, expected):
    assert cpp.infer_entry_point(code) == expected


def test_openssl_is_linked_and_boost_headers_are_there(cpp, sandbox):
    """HumanEval-X's C++ tasks include <openssl/md5.h> (CodeGeeX links -lssl -lcrypto for it)
    and <boost/any.hpp>: a program including an OpenSSL header is linked with OpenSSL."""
    solution = """\
#include <string>
#include <openssl/md5.h>
#include <boost/any.hpp>
using namespace std;
string md5(string text) {
    unsigned char md[MD5_DIGEST_LENGTH];
    MD5((const unsigned char *)text.c_str(), text.size(), md);
    char out[33];
    for (int i = 0; i < 16; i++) sprintf(out + 2 * i, "%02x", md[i]);
    return string(out, 32);
}
int unbox(boost::any value) { return boost::any_cast<int>(value); }
"""
    result = run(cpp, sandbox, [
        TestSpec("md5", 'assert(md5("password") == "5f4dcc3b5aa765d61d8327deb882cf99");'),
        TestSpec("any", "assert(unbox(boost::any(7)) == 7);"),
    ], solution=solution)
    assert result.build_error is None, result.build_error
    assert [t.status for t in result.tests] == ["pass", "pass"]
