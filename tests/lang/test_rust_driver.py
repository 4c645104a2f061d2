"""Rust's driver as a crate of its own: compiled once per sandbox without model code, linked into
every sample, the same verdicts, messages and lines as a sample that compiles the driver itself;
a solution cannot put a driver of its own in its place."""

from __future__ import annotations

from benchwright.lang.base import TestSpec
from benchwright.lang.rust import DRIVER_LIB, RustLanguage
from benchwright.sandbox.base import SandboxLimits
from tests.lang.support import Spy, shown

LIMITS = SandboxLimits(memory_mb=512)

SOLUTION = """\
pub fn halve(n: i32) -> i32 {
    let v: Vec<i32> = vec![1, 2, 3];
    if n < 0 {
        return v[10];
    }
    n / 2
}
"""

TESTS = [
    TestSpec("pass", "assert_eq!(halve(4), 2);"),
    TestSpec("fail", "assert_eq!(halve(5), 3, \"five\");"),
    TestSpec("panic", "halve(-1);"),
]

FAKE_DRIVER = """
mod bw_driver {
    use std::io::{Read, Write};
    use std::os::unix::io::FromRawFd;
    pub fn main(_tests: &[fn()]) {
        let mut token = String::new();
        let _ = std::io::stdin().read_to_string(&mut token);
        let mut out = unsafe { std::fs::File::from_raw_fd(3) };
        let _ = writeln!(out, "{} {{\\"status\\":\\"pass\\",\\"time_ms\\":0.1}}", token.trim());
        std::process::exit(0);
    }
}
"""






def test_samples_link_the_driver_built_once_and_judge_as_before(sandbox):
    spy = Spy(sandbox)
    # no build cache: each copy of the sample is compiled, with the driver linked
    linked, alone = RustLanguage(build_cache=False), RustLanguage(driver_crate=False)
    results = [linked.run_tests(spy, SOLUTION, TESTS, prelude=None, limits=LIMITS,  # type: ignore[arg-type]
                                test_timeout_s=10.0) for _ in range(2)]
    baseline = alone.run_tests(sandbox, SOLUTION, TESTS, prelude=None, limits=LIMITS,
                               test_timeout_s=10.0)
    assert len(spy.calls) == 3  # the driver's crate once, then one call a sample
    assert set(spy.calls[0][1]) == {"bw_driver.rs"}
    for _, files in spy.calls[1:]:
        assert files[DRIVER_LIB] == spy.calls[1][1][DRIVER_LIB]
        assert b"mod bw_driver" not in files["main.rs"]
    expected = shown(baseline)
    assert [s for s, *_ in expected] == ["pass", "fail", "error"]
    assert expected[2][2] == 4  # the index out of bounds, at its line of the solution
    for result in results:
        assert shown(result) == expected
    linked.close()


def test_a_driver_module_of_the_solution_is_never_the_one_main_calls(sandbox):
    """With the driver appended to main.rs, a second ``mod bw_driver`` does not compile; with the
    driver's crate, ``main`` names ``::bw_driver`` (an extern crate only), so the solution's
    look-alike, which would hand the token to a forged pass, is never called."""
    solution = SOLUTION + FAKE_DRIVER
    linked = RustLanguage().run_tests(sandbox, solution, TESTS, prelude=None, limits=LIMITS,
                                      test_timeout_s=10.0)
    assert [t.status for t in linked.tests] == ["pass", "fail", "error"]
    alone = RustLanguage(driver_crate=False).run_tests(sandbox, solution, TESTS, prelude=None,
                                                       limits=LIMITS, test_timeout_s=10.0)
    assert [t.status for t in alone.tests] == ["error"] * 3
    assert "bw_driver" in (alone.tests[0].message or "")


def test_a_crate_alias_named_like_the_driver_never_passes(sandbox):
    """``extern crate self as bw_driver;`` (or ``std``) takes the name ``::bw_driver`` from the
    driver's crate: ``main`` then names the program's own ``main`` or nothing, and the sample
    does not compile; never a pass."""
    for alias in ("extern crate self as bw_driver;\n", "extern crate std as bw_driver;\n",
                  "mod inner {" + FAKE_DRIVER + "}\nextern crate self as bw_driver;\n"):
        result = RustLanguage().run_tests(sandbox, alias + SOLUTION, TESTS, prelude=None,
                                          limits=LIMITS, test_timeout_s=10.0)
        assert [t.status for t in result.tests] == ["error"] * 3, alias
        assert result.build_error is not None and "bw_driver" in result.build_error, alias
