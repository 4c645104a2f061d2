"""The Rust language plug-in, run for real (Debian's rustc) through the rlimit sandbox.

``tests/sandbox/test_lang_rust_isolated.py`` runs every test that takes ``sandbox`` again
through bwrap and unshare.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchwright.errors import InfraError
from benchwright.lang.base import ExecutionResult, TestSpec
from benchwright.lang.rust import RustLanguage, entry_point, generate, rename_main
from benchwright.registry import registry
from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.task.load import load_task_source
from benchwright.task.render import render_task
from tests.lang.support import by_name, line_text

EXAMPLE_TASKS = (Path(__file__).parents[2] / "src" / "benchwright" / "workspace" / "example"
                 / "tasks" / "rust.yaml")

SOLUTION = """\
use std::collections::HashMap;

pub fn add(a: i64, b: i64) -> i64 {
    a + b
}

pub fn divide(a: i32, b: i32) -> i32 {
    if b == 0 {
        panic!("division by zero");
    }
    a / b
}

fn counts(text: &str) -> HashMap<char, usize> {
    let mut m = HashMap::new();
    for c in text.chars() {
        *m.entry(c).or_insert(0) += 1;
    }
    m
}

pub fn most_common(text: &str) -> char {
    let m = counts(text);
    *m.iter().max_by_key(|(c, n)| (**n, std::cmp::Reverse(**c))).unwrap().0
}
"""
SOLUTION_LINES = SOLUTION.count("\n")

LIMITS = SandboxLimits(memory_mb=512)


@pytest.fixture(scope="module")
def lang() -> RustLanguage:
    return RustLanguage()



def run(lang: RustLanguage, sandbox: Sandbox, tests: list[TestSpec], solution: str = SOLUTION,
        prelude: str | None = None, timeout: float = 10.0,
        limits: SandboxLimits = LIMITS) -> ExecutionResult:
    return lang.run_tests(sandbox, solution, tests, prelude=prelude, limits=limits,
                          test_timeout_s=timeout)




# -- passing, failing, errors -------------------------------------------------------------------

def test_passing_tests_pass_with_usage(lang, sandbox):
    tests = [
        TestSpec("add", "assert_eq!(add(1, 2), 3);"),
        TestSpec("private", "let m = counts(\"aab\");\nassert_eq!(m[&'a'], 2);"),
        TestSpec("common", "assert_eq!(most_common(\"abcbc\"), 'b');"),
    ]
    result = run(lang, sandbox, tests)
    assert result.build_error is None and result.infra_error is None
    assert [t.status for t in result.tests] == ["pass", "pass", "pass"]
    for spec, outcome in zip(tests, result.tests, strict=True):
        assert outcome.name == spec.name
        assert outcome.message is None and outcome.line is None
        assert outcome.code.startswith(SOLUTION)  # the solution as compiled, then the test
        assert spec.code.split("\n")[-1] in outcome.code
        assert outcome.time_ms is not None and outcome.time_ms >= 0
    assert isinstance(result.extra.get("cpu_ms"), float)
    rss = result.extra.get("max_rss_bytes")
    assert isinstance(rss, int) and rss > 0
    assert isinstance(result.extra.get("build_ms"), float)


def test_wrong_answer_fails_with_message_and_line(lang, sandbox):
    tests = [
        TestSpec("good", "assert_eq!(add(2, 2), 4);"),
        TestSpec("bad", "let x = add(1, 2);\nlet y = x * 2;\nassert_eq!(y, 7, \"expected 7, got {}\", y);\nlet _z = 1;"),
        TestSpec("bare", "assert!(add(1, 1) == 3);"),
        TestSpec("ne", "assert_ne!(add(1, 1), 2);"),
    ]
    out = by_name(run(lang, sandbox, tests))
    assert out["good"].status == "pass"
    bad = out["bad"]
    assert bad.status == "fail"
    assert bad.message is not None
    assert "expected 7, got 6" in bad.message and "left: `6`" in bad.message
    assert line_text(bad) == 'assert_eq!(y, 7, "expected 7, got {}", y);'
    bare = out["bare"]
    assert bare.status == "fail" and bare.message == "assertion failed: add(1, 1) == 3"
    assert line_text(bare) == "assert!(add(1, 1) == 3);"
    assert out["ne"].status == "fail" and line_text(out["ne"]) == "assert_ne!(add(1, 1), 2);"


def test_panic_in_solution_is_error_at_the_solution_line(lang, sandbox):
    tests = [
        TestSpec("zero", "assert_eq!(divide(1, 0), 0);"),
        TestSpec("fine", "assert_eq!(divide(6, 3), 2);"),
        TestSpec("unwrap", "let v: Option<i32> = None;\nv.unwrap();"),
        TestSpec("overflow", "let big = add(i64::MAX, 0);\nassert_eq!(add(big, 1), 0);"),
    ]
    out = by_name(run(lang, sandbox, tests))
    zero = out["zero"]
    assert zero.status == "error"
    assert zero.message == "division by zero"
    assert zero.line is not None and zero.line <= SOLUTION_LINES
    assert line_text(zero) == 'panic!("division by zero");'
    assert out["fine"].status == "pass"
    unwrap = out["unwrap"]
    assert unwrap.status == "error" and unwrap.message is not None and "None" in unwrap.message
    assert line_text(unwrap) == "v.unwrap();"
    overflow = out["overflow"]  # integer overflow panics, as under cargo test
    assert overflow.status == "error" and overflow.message is not None
    assert "overflow" in overflow.message
    assert line_text(overflow) == "a + b"


def test_panic_written_in_a_test_is_a_failure(lang, sandbox):
    tests = [TestSpec("explicit", "if add(1, 1) != 3 {\n    panic!(\"1 + 1 is not 3\");\n}")]
    (t,) = run(lang, sandbox, tests).tests
    assert t.status == "fail" and t.message == "1 + 1 is not 3"
    assert line_text(t) == 'panic!("1 + 1 is not 3");'


def test_crashes_are_errors_and_the_other_tests_run(lang, sandbox):
    tests = [
        TestSpec("before", "assert_eq!(add(1, 1), 2);"),
        TestSpec("stack", "fn r(n: u64) -> u64 { if n == 0 { 0 } else { 1 + r(n - 1) } }\n"
                          "assert_eq!(r(1 << 40), 0);"),
        TestSpec("abort", "std::process::abort();"),
        TestSpec("segv", "unsafe { let p: *const i32 = 16 as *const i32; println!(\"{}\", *p); }"),
        TestSpec("hog", "let v = vec![1u8; 4 << 30];\nassert_eq!(v.len(), 0);"),
        TestSpec("after", "assert_eq!(add(2, 2), 4);"),
    ]
    out = by_name(run(lang, sandbox, tests))
    assert out["before"].status == "pass"
    assert out["after"].status == "pass"
    for name in ("stack", "abort", "segv", "hog"):
        assert out[name].status == "error", out[name]
    assert "overflowed its stack" in (out["stack"].message or "")
    assert "SIGABRT" in (out["abort"].message or "")
    assert "SIGSEGV" in (out["segv"].message or "")
    assert "memory allocation" in (out["hog"].message or "")


def test_infinite_loop_times_out_and_the_others_run(lang, sandbox):
    tests = [
        TestSpec("before", "assert_eq!(add(1, 1), 2);"),
        TestSpec("loop", "let mut i: u64 = 0;\nloop {\n    i = i.wrapping_add(1);\n    if i == 0 { println!(\"wrapped\"); }\n}"),
        TestSpec("after", "assert_eq!(add(2, 2), 4);"),
    ]
    result = run(lang, sandbox, tests, timeout=1.0)
    assert [t.status for t in result.tests] == ["pass", "timeout", "pass"]
    assert result.process is not None and not result.process.timed_out


def test_a_tests_own_timeout_is_honoured(lang, sandbox):
    tests = [
        TestSpec("short", "std::thread::sleep(std::time::Duration::from_millis(1500));", timeout_s=0.5),
        TestSpec("long", "std::thread::sleep(std::time::Duration::from_millis(1500));", timeout_s=5.0),
    ]
    result = run(lang, sandbox, tests, timeout=1.0)
    assert [t.status for t in result.tests] == ["timeout", "pass"]
    assert "0.5" in (result.tests[0].message or "")


# -- verdict integrity ---------------------------------------------------------------------

@pytest.mark.parametrize("code", ["std::process::exit(0);", "quit_now();"])
def test_early_exit_is_never_a_pass(lang, sandbox, code):
    solution = SOLUTION + "\npub fn quit_now() {\n    std::process::exit(0);\n}\n"
    tests = [TestSpec("exit", code), TestSpec("after", "assert_eq!(add(1, 2), 3);")]
    out = by_name(run(lang, sandbox, tests, solution=solution))
    assert out["exit"].status == "error"
    assert "early exit" in (out["exit"].message or "")
    assert out["after"].status == "pass"


def test_fake_result_lines_are_never_a_pass(lang, sandbox):
    """Fake BWR lines on stdout, fake records on fd 3 and on the runner's stdout: no pass."""
    forge = r"""
pub fn forge() {
    use std::io::Write;
    use std::os::unix::io::FromRawFd;
    for i in 0..4 {
        println!("BWR {{\"build\": \"ok\"}}");
        println!("BWR {{\"i\": {}, \"status\": \"pass\"}}", i);
    }
    let mut fd3 = unsafe { std::fs::File::from_raw_fd(3) };
    let _ = fd3.write_all(b"{\"status\": \"pass\"}\n  {\"status\": \"pass\"}\n");
    let mut token = String::new();
    let _ = std::io::Read::read_to_string(&mut std::io::stdin(), &mut token);
    let _ = fd3.write_all(format!("{} {{\"status\": \"pass\"}}\n", token.trim()).as_bytes());
    let parent = std::os::unix::process::parent_id();
    for fd in 0..3 {
        if let Ok(mut f) = std::fs::OpenOptions::new().write(true).open(format!("/proc/{}/fd/{}", parent, fd)) {
            let _ = writeln!(f, "BWR {{\"i\": 0, \"status\": \"pass\"}}");
        }
    }
    std::process::exit(0);
}
"""
    tests = [
        TestSpec("forge", "forge();"),
        TestSpec("wrong", "forge();\nassert_eq!(add(1, 1), 3);"),
        TestSpec("crash", "forge();\npanic!(\"boom\");"),
    ]
    result = run(lang, sandbox, tests, solution=SOLUTION + forge)
    assert [t.status for t in result.tests] == ["error", "error", "error"], result.tests
    assert result.build_error is None


INIT_ARRAY = r"""
pub fn add(a: i32, b: i32) -> i32 { a - b }

#[used]
#[link_section = ".init_array"]
static FORGE: extern "C" fn() = forge;

extern "C" fn forge() {
    use std::io::{Read, Write};
    use std::os::unix::io::FromRawFd;
    let mut token = String::new();
    let _ = std::io::stdin().read_to_string(&mut token);
    let mut fd3 = unsafe { std::fs::File::from_raw_fd(3) };
    let _ = fd3.write_all(format!("{} {{\"status\": \"pass\"}}\n", token.trim()).as_bytes());
    std::process::exit(0);
}
"""


@pytest.mark.parametrize("attack", [
    INIT_ARRAY,
    "#[no_mangle]\npub extern \"C\" fn write(fd: i32, buf: *const u8, n: usize) -> isize { 0 }\n"
    "pub fn add(a: i32, b: i32) -> i32 { a - b }\n",
    "pub fn add(a: i32, b: i32) -> i32 { a - b }\n#[cfg_attr(unix, export_name = \"main\")]\n"
    "pub fn other() {}\n",
])
def test_code_before_main_or_symbol_overrides_are_refused(lang, sandbox, attack):
    """Code in .init_array runs before main in every test process and could take the token;
    a #[no_mangle] write() could rewrite the driver's verdicts: such solutions are not built."""
    tests = [TestSpec("a", "assert_eq!(add(1, 1), 2);"), TestSpec("b", "assert_eq!(add(2, 2), 4);")]
    result = run(lang, sandbox, tests, solution=attack)
    assert [t.status for t in result.tests] == ["error", "error"]
    assert result.build_error is not None and "is not allowed" in result.build_error
    assert result.tests[0].line is not None
    assert any(w in line_text(result.tests[0]) for w in ("link_section", "no_mangle", "export_name"))


def test_mentions_in_comments_and_strings_are_not_refused(lang, sandbox):
    solution = SOLUTION + '// no_mangle, link_section: not needed here\npub fn note() -> &\'static str {\n    "#[export_name]"\n}\n'
    result = run(lang, sandbox, [TestSpec("note", 'assert_eq!(note(), "#[export_name]");')],
                 solution=solution)
    assert result.tests[0].status == "pass", result.tests


def test_a_pass_of_a_solution_reading_proc_self_is_flagged(lang, sandbox):
    solution = SOLUTION + '\npub fn peek() -> usize {\n    std::fs::read("/proc/self/status").map(|d| d.len()).unwrap_or(0)\n}\n'
    tests = [TestSpec("peek", "assert!(peek() > 0);"), TestSpec("wrong", "assert_eq!(add(1, 1), 3);")]
    out = by_name(run(lang, sandbox, tests, solution=solution))
    assert out["peek"].status == "pass" and "/proc/self" in (out["peek"].suspicious or "")
    assert out["wrong"].status == "fail" and out["wrong"].suspicious is None
    clean = run(lang, sandbox, tests[:1], solution=SOLUTION + "\npub fn peek() -> usize { 1 }\n")
    assert clean.tests[0].suspicious is None


def test_solution_main_is_renamed_and_never_runs(lang, sandbox):
    solution = SOLUTION + "\nfn main() {\n    std::process::exit(3);\n}\n"
    result = run(lang, sandbox, [TestSpec("add", "assert_eq!(add(1, 2), 3);")], solution=solution)
    assert result.tests[0].status == "pass"
    assert "fn bw_solution_main() {" in result.tests[0].code


# -- build errors -------------------------------------------------------------------------

def test_compile_error_in_solution_is_build_error_with_line(lang, sandbox):
    solution = "pub fn add(a: i64, b: i64) -> i64 {\n    let s: String = a + b;\n    s\n}\n"
    tests = [TestSpec("a", "assert_eq!(add(1, 2), 3);"), TestSpec("b", "assert!(true);")]
    result = run(lang, sandbox, tests, solution=solution)
    assert result.build_error is not None and "mismatched types" in result.build_error
    assert "main.rs:2:" in result.build_error  # paths relative to the work folder
    for t in result.tests:
        assert t.status == "error"
        assert line_text(t) == "let s: String = a + b;"


def test_compile_error_caused_by_a_test_points_into_that_test(lang, sandbox):
    tests = [
        TestSpec("fine", "assert_eq!(add(1, 2), 3);"),
        TestSpec("missing", "let x = 1;\nassert_eq!(subtract(3, x), 2);"),
    ]
    result = run(lang, sandbox, tests)
    assert result.build_error is not None and "subtract" in result.build_error
    out = by_name(result)
    assert line_text(out["missing"]) == "assert_eq!(subtract(3, x), 2);"
    assert all(t.status == "error" for t in result.tests)


def test_lints_never_break_the_build(lang, sandbox):
    solution = "#![deny(warnings)]\npub fn f() -> i32 {\n    let unused = 1;\n    2\n}\n"
    tests = [TestSpec("f", "assert_eq!(f(), 2);"),
             TestSpec("const-panic", "let v = [1, 2, 3];\nlet _ = v[5];")]
    out = by_name(run(lang, sandbox, tests, solution=solution))
    assert out["f"].status == "pass"
    assert out["const-panic"].status == "error"  # at run time, not a build error


# -- prelude, output, environment ------------------------------------------------------------

def test_prelude_items_and_imports_are_shared_by_the_tests(lang, sandbox):
    prelude = ("use std::collections::HashMap;\n\n"
               "fn expect_add(a: i64, b: i64, sum: i64) {\n    assert_eq!(add(a, b), sum, \"{} + {}\", a, b);\n}\n")
    tests = [
        TestSpec("helper", "expect_add(2, 3, 5);"),
        TestSpec("helper-fails", "expect_add(2, 3, 6);"),
        TestSpec("import", "let m: HashMap<i32, i32> = HashMap::new();\nassert!(m.is_empty());"),
    ]
    out = by_name(run(lang, sandbox, tests, prelude=prelude))
    assert out["helper"].status == "pass"
    assert out["import"].status == "pass"
    fails = out["helper-fails"]
    assert fails.status == "fail" and "2 + 3" in (fails.message or "")
    assert line_text(fails) == 'assert_eq!(add(a, b), sum, "{} + {}", a, b);'  # in the prelude
    assert all(prelude.split("\n")[2] in t.code for t in out.values())


def test_output_is_captured_per_test_and_capped(lang, sandbox):
    tests = [
        TestSpec("loud", "println!(\"hello from test\");\neprintln!(\"and stderr\");"),
        TestSpec("flood", "for _ in 0..100000 { println!(\"xxxxxxxxxxxxxxxxxxxx\"); }"),
        TestSpec("quiet", "assert_eq!(add(1, 1), 2);"),
    ]
    out = by_name(run(lang, sandbox, tests))
    assert [t.status for t in out.values()] == ["pass", "pass", "pass"]
    assert "hello from test" in out["loud"].output and "and stderr" in out["loud"].output
    assert 0 < len(out["flood"].output) <= 10_000
    assert out["quiet"].output == ""


def test_environment_has_no_secret(lang, sandbox, monkeypatch):
    monkeypatch.setenv("BW_TEST_SECRET", "s3cr3t")
    tests = [TestSpec("env", "assert!(std::env::vars().all(|(_, v)| v != \"s3cr3t\"));")]
    assert run(lang, sandbox, tests).tests[0].status == "pass"


def test_no_tests(lang, sandbox):
    result = run(lang, sandbox, [])
    assert result.tests == [] and result.build_error is None


# -- the example tasks ----------------------------------------------------------------------

BROKEN = {
    "collapse-runs": "pub fn collapse_runs(text: &str) -> String {\n    let mut out = String::new();\n"
                     "    for c in text.chars() {\n        if !out.ends_with(c) {\n"
                     "            out.push(c);\n        }\n    }\n    out\n}\n",
    "additive-persistence": "pub fn additive_persistence(n: u64) -> u32 {\n"
                            "    if n < 10 { 0 } else { 1 }\n}\n",
    "bracket-depth": "pub fn bracket_depth(text: &str) -> i32 {\n"
                     "    text.chars().filter(|c| \"([{\".contains(*c)).count() as i32\n}\n",
}


def test_example_tasks_pass_with_golden_and_fail_with_broken_solutions(lang, sandbox):
    source = load_task_source(EXAMPLE_TASKS).source
    assert source.name == "benchwright-rust"
    assert {t.name for t in source.tasks} == set(BROKEN)
    for task in source.tasks:
        rendered = render_task(task, "rust", {})
        assert rendered.entry_point is not None
        golden = lang.run_tests(sandbox, task.golden_solution["rust"], rendered.tests,
                                prelude=rendered.prelude, limits=LIMITS, test_timeout_s=10)
        assert [t.status for t in golden.tests] == ["pass"] * len(rendered.tests), golden.tests
        assert {t.hidden for t in rendered.tests} == {True, False}
        broken = lang.run_tests(sandbox, BROKEN[task.name], rendered.tests,
                                prelude=rendered.prelude, limits=LIMITS, test_timeout_s=10)
        failing = [t for t in broken.tests if t.status == "fail"]
        assert failing, (task.name, broken.tests)
        assert all(t.status in ("pass", "fail") for t in broken.tests)
        for t in failing:
            assert t.message
            text = line_text(t)
            assert "assert" in text, (task.name, t.name, text)


# -- no toolchain, entry points, fences, generation ----------------------------------------

def test_missing_toolchain_is_an_infra_error(lang, sandbox, monkeypatch):
    real = shutil.which
    monkeypatch.setattr(shutil, "which",
                        lambda name, *a, **k: None if name == "rustc" else real(name, *a, **k))
    with pytest.raises(InfraError, match="apt-get install rustc"):
        run(lang, sandbox, [TestSpec("a", "assert!(true);")])
    assert "apt-get install rustc" in (lang.missing() or "")
    with pytest.raises(InfraError):
        lang.toolchain()


def test_toolchain_and_missing(lang):
    assert lang.missing() is None
    tools = lang.toolchain()
    assert set(tools) == {"rustc"} and tools["rustc"].startswith("1.")
    assert lang.toolchain() == tools


def test_registered():
    assert isinstance(registry.create("language", "rust"), RustLanguage)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (SOLUTION, "add"),
        ("fn helper() {}\npub fn solve(x: i32) -> i32 { x }\n", "solve"),
        ("fn main() {}\nfn only(x: i32) -> i32 { x }\n", "only"),
        ("pub struct Solution;\nimpl Solution {\n    pub fn two_sum(v: Vec<i32>) -> i32 { 0 }\n}\n",
         "two_sum"),
        ("pub(crate) async fn fetch() {}\n", "fetch"),
        ("const X: i32 = 1;\n", None),
        ("", None),
    ],
)
def test_infer_entry_point(lang, code, expected):
    assert lang.infer_entry_point(code) == expected
    assert entry_point(code) == expected


def test_extract_code_prefers_rust_blocks(lang):
    answer = ("Here:\n```rust\npub fn f() -> i32 {\n    1\n}\n```\nOr:\n```rs\nfn g() {}\n```\n"
              "```python\ndef f():\n    return 1  # a longer block in another language\n```\n")
    assert lang.extract_code(answer) == "pub fn f() -> i32 {\n    1\n}\n"
    assert lang.fence_names == ("rust", "rs") and lang.name == "rust"


def test_generated_source_keeps_the_solution_lines():
    text, smap = generate("fn main() {\n}\npub fn f() {}", [TestSpec("a", "f();")], "fn h() {}")
    assert text.startswith("fn bw_solution_main() {\n}\npub fn f() {}\nmod bw_tests {\n")
    assert rename_main("    fn main() {}\n") == "    fn main() {}\n"  # a method keeps its name
    code = smap.code(0)
    assert code.splitlines()[smap.line(0, "main.rs", text.splitlines().index("    f();") + 1)
                             - 1] == "    f();"


# -- crates the sandbox does not have ----------------------------------------------------------

def test_a_missing_crate_is_unsupported_but_other_build_errors_are_the_codes(lang, sandbox):
    md5 = "fn digest(text: &str) -> String {\n    format!(\"{:x}\", md5::compute(text.as_bytes()))\n}\n"
    result = run(lang, sandbox, [TestSpec("d", 'assert_eq!(digest("a"), "x");')], solution=md5)
    assert result.build_error is not None and "md5" in result.build_error
    assert result.unsupported is not None and "the crate 'md5'" in result.unsupported
    used = run(lang, sandbox, [TestSpec("r", "assert!(rand::random::<u8>() < 255 || true);")])
    assert used.unsupported is not None and "'rand'" in used.unsupported
    # a std module without `std::`, or a crate next to another error: the code's own mistake
    typo = run(lang, sandbox, [TestSpec("t", "assert_eq!(add(1, 1), 2);")],
               solution=SOLUTION + "fn f() -> usize { collections::HashMap::<u8, u8>::new().len() }\n")
    assert typo.build_error is not None and typo.unsupported is None
    both = run(lang, sandbox, [TestSpec("t", "assert_eq!(add(1, 1), 2);")],
               solution=SOLUTION + "fn g() -> u8 { let x: u8 = \"s\"; rand::random::<u8>() + x }\n")
    assert both.build_error is not None and both.unsupported is None
