"""C++ samples' precompiled standard headers: taken only from a solution's leading standard
includes, made in the sandbox once a set of lines is seen twice, really used by g++, and never
a different program (the same verdicts and messages as without)."""

from __future__ import annotations

import pytest

from benchwright.lang import pch
from benchwright.lang.base import TestSpec
from benchwright.lang.c import CppLanguage
from benchwright.lang.toolchain import need_tool
from benchwright.sandbox.base import SandboxLimits
from tests.lang.support import Spy

LIMITS = SandboxLimits(memory_mb=512)

HUMANEVAL_X = """\
/*
Check if in given vector of numbers, are any two numbers closer to each other than
given threshold.
*/
#include<stdio.h>
#include<vector>
#include<math.h>
using namespace std;
bool has_close_elements(vector<float> numbers, float threshold){
    for (int i=0;i<numbers.size();i++)
    for (int j=i+1;j<numbers.size();j++)
    if (abs(numbers[i]-numbers[j])<threshold)
    return true;
    return false;
}
"""


def test_the_leading_standard_includes_are_taken_and_nothing_else():
    assert pch.leading_includes(HUMANEVAL_X) == ("stdio.h", "vector", "math.h")
    assert pch.leading_includes("// a\n#include <bits/stdc++.h>\n#include <vector> // x\nint x;\n"
                                "#include <map>\n") == ("bits/stdc++.h", "vector")
    # a definition first could change what the headers mean: no precompiled header
    assert pch.leading_includes("#define _GLIBCXX_DEBUG 1\n#include <vector>\n") == ()
    assert pch.leading_includes('#include "mine.h"\n#include <vector>\n') == ()
    # names that leave the include path are never compiled (nor anything after them)
    for name in ("/etc/passwd", "../../../etc/shadow", "bits/../../../etc/shadow", "a//b"):
        assert pch.leading_includes(f"#include <{name}>\n#include <vector>\n") == (), name
    assert pch.leading_includes("#include <vector>\n#include </etc/passwd>\n") == ("vector",)




def test_a_set_of_includes_seen_twice_is_compiled_once_and_changes_no_verdict(sandbox):
    tests = [
        TestSpec("close", "assert(has_close_elements({1.0, 2.8, 3.0, 4.0, 5.0, 2.0}, 0.3));"),
        TestSpec("wrong", "assert(!has_close_elements({1.0, 2.0, 3.9, 4.0, 5.0, 2.2}, 0.3));"),
        TestSpec("crash", "std::vector<int> v; v.at(3);"),
    ]
    spy = Spy(sandbox)
    # no build cache: each copy of the sample is compiled (a cached program needs no header)
    headers = CppLanguage(build_cache=False)
    plain = CppLanguage(precompiled_headers=False, build_cache=False)
    results = [headers.run_tests(spy, HUMANEVAL_X, tests, prelude=None, limits=LIMITS,  # type: ignore[arg-type]
                                 test_timeout_s=10.0) for _ in range(3)]
    baseline = plain.run_tests(sandbox, HUMANEVAL_X, tests, prelude=None, limits=LIMITS,
                               test_timeout_s=10.0)
    carried = [pch.PRECOMPILED in files for _, files in spy.calls]
    # sample 1: plain; sample 2: the header is made (its own sandbox call), then used; sample 3
    assert carried == [False, False, True, True], carried
    assert spy.calls[1][1].keys() == {pch.HEADER}
    for result in results:
        assert [(t.status, t.message, t.line, t.code) for t in result.tests] == \
            [(t.status, t.message, t.line, t.code) for t in baseline.tests]
    assert [t.status for t in baseline.tests] == ["pass", "fail", "error"]
    headers.close()


def test_g_plus_plus_really_uses_the_header_with_the_samples_flags(sandbox):
    """A header made with other flags or macros would be skipped silently (correct, but no
    faster): ``-H`` marks a used one with ``!``."""
    gxx = need_tool("g++", language="cpp", hint="apt-get install g++")
    flags = CppLanguage.flags
    cache = pch.HeaderCache()
    includes = pch.leading_includes(HUMANEVAL_X)
    assert cache.get(sandbox, gxx, (*flags, "-Dmain=bw_solution_main"), includes) is None
    made = cache.get(sandbox, gxx, (*flags, "-Dmain=bw_solution_main"), includes)
    assert made is not None and len(made) > 1_000_000
    source = ('#define main bw_solution_main\n#include "bw_pre.hpp"\n#line 1 "solution.cpp"\n'
              + HUMANEVAL_X)
    proc = sandbox.run([gxx, *flags, "-H", "-Winvalid-pch", "-c", "-o", "x.o", "x.cpp"],
                       files={"x.cpp": source.encode(), pch.HEADER: pch.header_text(includes).encode(),
                              pch.PRECOMPILED: made},
                       limits=SandboxLimits(wall_s=60, memory_mb=0))
    log = proc.stderr.decode()
    assert proc.exit_code == 0, log
    assert f"! {pch.PRECOMPILED}" in log.splitlines()[0], log[:500]
    assert "Winvalid-pch" not in log


@pytest.mark.parametrize("header", [b"", b"\x7fELF not a header at all" * 100])
def test_an_unusable_header_costs_time_never_the_verdict(sandbox, monkeypatch, header):
    """A precompiled header g++ cannot use (damaged, or from another compiler) is read as the
    text header instead: the sample compiles and passes as without."""
    monkeypatch.setattr(pch.HeaderCache, "get", lambda *a, **k: header or b"garbage")
    result = CppLanguage().run_tests(sandbox, HUMANEVAL_X,
                                     [TestSpec("close", "assert(has_close_elements({1.0, 1.1}, 0.3));")],
                                     prelude=None, limits=LIMITS, test_timeout_s=10.0)
    assert [t.status for t in result.tests] == ["pass"], result.tests[0].message


def test_a_header_that_does_not_compile_is_not_retried_and_the_sample_says_why(sandbox):
    solution = "#include <no_such_header_here>\n#include <vector>\nint f() { return 1; }\n"
    spy = Spy(sandbox)
    cpp = CppLanguage()
    results = [cpp.run_tests(spy, solution, [TestSpec("one", "assert(f() == 1);")],  # type: ignore[arg-type]
                             prelude=None, limits=LIMITS, test_timeout_s=10.0) for _ in range(3)]
    # one attempt at the header (the second sample), none after it failed
    assert sum(files.keys() == {pch.HEADER} for _, files in spy.calls) == 1
    assert not any(pch.PRECOMPILED in files for _, files in spy.calls)
    for result in results:
        assert result.tests[0].status == "error"
        assert "no_such_header_here" in (result.tests[0].message or "")
