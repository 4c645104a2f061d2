"""The Go language plug-in, run for real (Debian's go) through the rlimit sandbox.

``tests/sandbox/test_lang_go_isolated.py`` runs every test that takes ``sandbox`` again
through bwrap and unshare.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchwright.errors import InfraError
from benchwright.lang.base import ExecutionResult, TestSpec
from benchwright.lang.golang import (
    GoLanguage,
    entry_point,
    generate,
    imports_for_tests,
    prepare_solution,
    split_prelude,
)
from benchwright.registry import registry
from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.task.load import load_task_source
from benchwright.task.render import render_task
from tests.lang.support import by_name, line_text

EXAMPLE_TASKS = (Path(__file__).parents[2] / "src" / "benchwright" / "workspace" / "example"
                 / "tasks" / "go.yaml")

SOLUTION = """\
package main

import (
	"errors"
	"sort"
)

func Add(a, b int) int {
	return a + b
}

func Divide(a, b int) (int, error) {
	if b == 0 {
		return 0, errors.New("division by zero")
	}
	return a / b, nil
}

func MustDivide(a, b int) int {
	q, err := Divide(a, b)
	if err != nil {
		panic(err)
	}
	return q
}

func Sorted(xs []int) []int {
	out := append([]int(nil), xs...)
	sort.Ints(out)
	return out
}

var counter int

func init() {
	counter = 41
}
"""
SOLUTION_LINES = SOLUTION.count("\n")

LIMITS = SandboxLimits(memory_mb=512)


@pytest.fixture(scope="module")
def lang() -> GoLanguage:
    return GoLanguage()



def run(lang: GoLanguage, sandbox: Sandbox, tests: list[TestSpec], solution: str = SOLUTION,
        prelude: str | None = None, timeout: float = 10.0,
        limits: SandboxLimits = LIMITS) -> ExecutionResult:
    return lang.run_tests(sandbox, solution, tests, prelude=prelude, limits=limits,
                          test_timeout_s=timeout)




# -- passing, failing, errors -------------------------------------------------------------------

def test_passing_tests_pass_with_usage(lang, sandbox):
    tests = [
        TestSpec("equal", "t.Equal(Add(1, 2), 3)"),
        TestSpec("idiom", "if got := Add(2, 2); got != 4 {\n\tt.Errorf(\"Add(2, 2) = %d\", got)\n}"),
        TestSpec("slice", "t.Equal(Sorted([]int{3, 1, 2}), []int{1, 2, 3})"),
        TestSpec("init-ran", "t.Equal(counter, 41)"),
        TestSpec("numbers", "t.Equal(int64(Add(1, 1)), 2)\nt.Equal(uint8(2), 2.0)"),
        TestSpec("nil-empty", "t.Equal(Sorted(nil), []int{})"),
    ]
    result = run(lang, sandbox, tests)
    assert result.build_error is None and result.infra_error is None
    assert [t.status for t in result.tests] == ["pass"] * len(tests), result.tests
    for spec, outcome in zip(tests, result.tests, strict=True):
        assert outcome.message is None and outcome.line is None
        assert outcome.code.startswith(SOLUTION)  # the solution as compiled, then the test
        assert spec.code.split("\n")[-1] in outcome.code
        assert outcome.time_ms is not None and outcome.time_ms >= 0
    assert isinstance(result.extra.get("cpu_ms"), float)
    rss = result.extra.get("max_rss_bytes")
    assert isinstance(rss, int) and rss > 0


def test_wrong_answer_fails_with_message_and_line(lang, sandbox):
    tests = [
        TestSpec("good", "t.Equal(Add(2, 2), 4)"),
        TestSpec("equal", "x := Add(1, 2)\ny := x * 2\nt.Equal(y, 7, \"doubled\")\n_ = x"),
        TestSpec("errorf", "if got := Add(1, 1); got != 3 {\n\tt.Errorf(\"Add(1, 1) = %d, want 3\", got)\n}"),
        TestSpec("fatal", "t.Fatalf(\"stop %d\", 1)\nt.Errorf(\"never reached\")"),
        TestSpec("types", "t.Equal(Add(1, 1), \"2\")"),
        TestSpec("two", "t.Error(\"first\")\nt.Error(\"second\")"),
    ]
    out = by_name(run(lang, sandbox, tests))
    assert out["good"].status == "pass"
    eq = out["equal"]
    assert eq.status == "fail" and eq.message == "doubled: got 6, want 7"
    assert line_text(eq) == 't.Equal(y, 7, "doubled")'
    errorf = out["errorf"]
    assert errorf.status == "fail" and errorf.message == "Add(1, 1) = 2, want 3"
    assert line_text(errorf) == 't.Errorf("Add(1, 1) = %d, want 3", got)'
    fatal = out["fatal"]
    assert fatal.status == "fail" and fatal.message == "stop 1"
    assert line_text(fatal) == 't.Fatalf("stop %d", 1)'
    assert out["types"].message == 'got 2 (int), want "2" (string)'
    two = out["two"]
    assert two.message == "first\nsecond" and line_text(two) == 't.Error("first")'


def test_panic_in_solution_is_error_at_the_solution_line(lang, sandbox):
    tests = [
        TestSpec("zero", "t.Equal(MustDivide(1, 0), 0)"),
        TestSpec("fine", "t.Equal(MustDivide(6, 3), 2)"),
        TestSpec("index", "xs := []int{1}\n_ = xs[Add(1, 1)]"),
        TestSpec("nil-map", "var m map[string]int\nm[\"a\"] = 1"),
    ]
    out = by_name(run(lang, sandbox, tests))
    zero = out["zero"]
    assert zero.status == "error" and zero.message == "panic: division by zero"
    assert zero.line is not None and zero.line <= SOLUTION_LINES
    assert line_text(zero) == "panic(err)"
    assert out["fine"].status == "pass"
    index = out["index"]
    assert index.status == "error"
    assert index.message == "panic: runtime error: index out of range [2] with length 1"
    assert line_text(index) == "_ = xs[Add(1, 1)]"
    assert out["nil-map"].status == "error" and line_text(out["nil-map"]) == 'm["a"] = 1'


def test_crashes_are_errors_and_the_other_tests_run(lang, sandbox):
    tests = [
        TestSpec("before", "t.Equal(Add(1, 1), 2)"),
        TestSpec("goroutine", "done := make(chan bool)\ngo func() {\n\tpanic(\"in a goroutine\")\n}()\n<-done"),
        TestSpec("deadlock", "ch := make(chan int)\n<-ch"),
        TestSpec("hog", "v := make([]byte, 4<<30)\nt.Equal(len(v), 0)"),
        TestSpec("goexit", "runtime.Goexit()"),
        TestSpec("after", "t.Equal(Add(2, 2), 4)"),
    ]
    out = by_name(run(lang, sandbox, tests))
    assert out["before"].status == "pass"
    assert out["after"].status == "pass"
    for name in ("goroutine", "deadlock", "hog", "goexit"):
        assert out[name].status == "error", out[name]
    goroutine = out["goroutine"]
    assert "panic: in a goroutine" in (goroutine.message or "")
    assert line_text(goroutine) == 'panic("in a goroutine")'
    assert "deadlock" in (out["deadlock"].message or "")
    assert "out of memory" in (out["hog"].message or "")
    assert "Goexit" in (out["goexit"].message or "")


def test_infinite_loop_times_out_and_the_others_run(lang, sandbox):
    tests = [
        TestSpec("before", "t.Equal(Add(1, 1), 2)"),
        TestSpec("loop", "for {\n}"),
        TestSpec("after", "t.Equal(Add(2, 2), 4)"),
    ]
    result = run(lang, sandbox, tests, timeout=1.0)
    assert [t.status for t in result.tests] == ["pass", "timeout", "pass"]
    assert result.process is not None and not result.process.timed_out


def test_a_tests_own_timeout_is_honoured(lang, sandbox):
    tests = [
        TestSpec("short", "time.Sleep(1500 * time.Millisecond)", timeout_s=0.5),
        TestSpec("long", "time.Sleep(1500 * time.Millisecond)", timeout_s=5.0),
    ]
    result = run(lang, sandbox, tests, timeout=1.0)
    assert [t.status for t in result.tests] == ["timeout", "pass"]
    assert "0.5" in (result.tests[0].message or "")


# -- verdict integrity ---------------------------------------------------------------------

@pytest.mark.parametrize("code", ["os.Exit(0)", "QuitNow()"])
def test_early_exit_is_never_a_pass(lang, sandbox, code):
    solution = SOLUTION + "\nfunc QuitNow() {\n\tos.Exit(0)\n}\n"
    solution = solution.replace('"errors"', '"errors"\n\t"os"')
    tests = [TestSpec("exit", code), TestSpec("after", "t.Equal(Add(1, 2), 3)")]
    out = by_name(run(lang, sandbox, tests, solution=solution))
    assert out["exit"].status == "error"
    assert "early exit" in (out["exit"].message or "")
    assert out["after"].status == "pass"


FORGE = """\
package main

import (
	"fmt"
	"io"
	"os"
)

// runs before main: steals what it can from stdin and forges results everywhere
func init() {
	token, _ := io.ReadAll(os.Stdin)
	fd3 := os.NewFile(3, "results")
	for i := 0; i < 4; i++ {
		fmt.Printf("BWR {\\"build\\": \\"ok\\"}\\nBWR {\\"i\\": %d, \\"status\\": \\"pass\\"}\\n", i)
		fmt.Fprintf(fd3, "%s {\\"status\\": \\"pass\\"}\\n", string(token))
		fmt.Fprintf(fd3, "{\\"status\\": \\"pass\\"}\\n")
	}
	for fd := 0; fd < 3; fd++ {
		if f, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/%d", os.Getppid(), fd), os.O_WRONLY, 0); err == nil {
			fmt.Fprintf(f, "BWR {\\"i\\": 0, \\"status\\": \\"pass\\"}\\n")
		}
	}
	if os.Getenv("BW_FORGE_NO_EXIT") == "" {
		os.Exit(0)
	}
}

func Add(a, b int) int {
	return a + b
}
"""


def test_fake_results_from_an_init_function_are_never_a_pass(lang, sandbox):
    """An init function runs before main in every test process: fake BWR lines on stdout, fake
    records on fd 3 (with whatever it read from stdin), writes to the runner's stdout, exit 0."""
    tests = [TestSpec("a", "t.Equal(Add(1, 1), 2)"), TestSpec("b", "t.Equal(Add(1, 1), 3)")]
    result = run(lang, sandbox, tests, solution=FORGE)
    assert [t.status for t in result.tests] == ["error", "error"], result.tests
    assert result.build_error is None


def test_fake_results_from_a_test_are_never_a_pass(lang, sandbox):
    forge = FORGE.replace("func init() {", "func Forge() {")
    tests = [TestSpec("forge", "Forge()"), TestSpec("wrong", "Forge()\nt.Equal(Add(1, 1), 3)")]
    result = run(lang, sandbox, tests, solution=forge)
    assert [t.status for t in result.tests] == ["error", "error"], result.tests


@pytest.mark.parametrize(("attack", "line"), [
    ('package main\n\n/*\n__attribute__((constructor)) static void forge(void) {}\n*/\n'
     'import "C"\n\nfunc Add(a, b int) int { return a - b }\n', 6),
    ('package main\n\nimport (\n\t_ "unsafe"\n)\n\n//go:linkname token bwsample/bwdriver.token\n'
     'var token string\n\nfunc Add(a, b int) int { return a - b }\n', 7),
])
def test_cgo_and_linkname_are_refused(lang, sandbox, attack, line):
    """A cgo constructor runs before every Go initialiser (and could take the token); linkname
    reaches the driver's unexported token: such solutions are not built."""
    tests = [TestSpec("a", "t.Equal(Add(1, 1), 2)"), TestSpec("b", "t.Equal(Add(2, 2), 4)")]
    result = run(lang, sandbox, tests, solution=attack)
    assert [t.status for t in result.tests] == ["error", "error"]
    assert result.build_error is not None and "is not allowed" in result.build_error
    assert result.tests[0].line == line


def test_a_pass_of_a_solution_reading_proc_self_is_flagged(lang, sandbox):
    solution = SOLUTION.replace('"sort"', '"os"\n\t"sort"') + (
        '\nfunc Peek() int {\n\tdata, _ := os.ReadFile("/proc/self/status")\n\treturn len(data)\n}\n')
    tests = [TestSpec("peek", "t.Equal(Peek() > 0, true)"), TestSpec("wrong", "t.Equal(Add(1, 1), 3)")]
    out = by_name(run(lang, sandbox, tests, solution=solution))
    assert out["peek"].status == "pass" and "/proc/self" in (out["peek"].suspicious or "")
    assert out["wrong"].status == "fail" and out["wrong"].suspicious is None


def test_solution_main_and_package_are_adapted(lang, sandbox):
    solution = "package solution\n\nfunc Add(a, b int) int { return a + b }\n\nfunc main() {\n\tpanic(1)\n}\n"
    result = run(lang, sandbox, [TestSpec("add", "t.Equal(Add(1, 2), 3)")], solution=solution)
    assert result.tests[0].status == "pass"
    code = result.tests[0].code
    assert code.startswith("package main\n\nfunc Add") and "func bwSolutionMain() {" in code
    bare = run(lang, sandbox, [TestSpec("add", "t.Equal(Add(1, 2), 3)")],
               solution="func Add(a, b int) int { return a + b }\n")
    assert bare.tests[0].status == "pass"
    assert bare.tests[0].code.startswith("package main\nfunc Add")


# -- build errors -------------------------------------------------------------------------

def test_compile_error_in_solution_is_build_error_with_line(lang, sandbox):
    solution = 'package main\n\nimport "fmt"\n\nfunc Add(a, b int) int {\n\tvar s string = a + b\n\treturn s\n}\n'
    tests = [TestSpec("a", "t.Equal(Add(1, 2), 3)"), TestSpec("b", "t.Equal(1, 1)")]
    result = run(lang, sandbox, tests, solution=solution)
    assert result.build_error is not None
    assert "solution.go:6:" in result.build_error  # paths relative to the module
    for t in result.tests:
        assert t.status == "error"
        assert line_text(t) == "var s string = a + b"
        # the unused import was dropped (goimports-style), on its own line: no line moved
        assert t.code.splitlines()[2] == '// import "fmt": not used (dropped by benchwright)'


def test_standard_imports_are_fixed_line_for_line(lang, sandbox):
    # HumanEval-X's Go prompts import packages their solutions do not use and miss some they do
    solution = ('import (\n    "math"\n    "strings"\n)\n\n'
                'func Words(x string) int {\n    return len(strings.Fields(x)) + sort.SearchInts([]int{1}, 1)\n}\n')
    result = run(lang, sandbox, [TestSpec("w", "t.Equal(Words(\"a b\"), 2)")], solution=solution)
    (t,) = result.tests
    assert t.status == "pass", t
    assert t.code.splitlines()[:3] == ['package main; import "sort" // added by benchwright', "import (",
                                       '    // "math": not used (dropped by benchwright)']
    # a package the solution declares itself, or one that is not the standard library's, stays
    assert prepare_solution('package main\nimport "github.com/x/y"\nvar sort = 1\nfunc f() int { return sort }\n') \
        == 'package main\nimport "github.com/x/y"\nvar sort = 1\nfunc f() int { return sort }\n'


def test_compile_error_caused_by_a_test_points_into_that_test(lang, sandbox):
    tests = [
        TestSpec("fine", "t.Equal(Add(1, 2), 3)"),
        TestSpec("missing", "x := 1\nt.Equal(Subtract(3, x), 2)"),
    ]
    result = run(lang, sandbox, tests)
    assert result.build_error is not None and "Subtract" in result.build_error
    out = by_name(result)
    assert line_text(out["missing"]) == "t.Equal(Subtract(3, x), 2)"
    assert all(t.status == "error" for t in result.tests)


def test_unknown_package_is_a_build_error(lang, sandbox):
    solution = 'package main\n\nimport "golang.org/x/exp/slices"\n\nfunc F() bool { return slices.Contains([]int{1}, 1) }\n'
    result = run(lang, sandbox, [TestSpec("f", "t.Equal(F(), true)")], solution=solution)
    assert result.build_error is not None and result.tests[0].status == "error"


# -- prelude, imports, output, environment ----------------------------------------------------

def test_prelude_helpers_and_imports(lang, sandbox):
    prelude = ('import (\n\t"fmt"\n\t"sort"\n)\nimport m "math"\n\n'
               "func expectAdd(t *bwdriver.T, a, b, sum int) {\n\tt.Helper()\n"
               "\tt.Equal(Add(a, b), sum, fmt.Sprintf(\"%d + %d\", a, b))\n}\n")
    tests = [
        TestSpec("helper", "expectAdd(t, 2, 3, 5)"),
        TestSpec("helper-fails", "expectAdd(t, 2, 3, 6)"),
        TestSpec("auto-import", "t.Equal(strings.Repeat(\"ab\", 2), \"abab\")\n"
                                "t.Equal(utf8.RuneCountInString(\"héllo\"), 5)"),
        TestSpec("alias", "t.Equal(m.Sqrt(16), 4.0)"),
    ]
    out = by_name(run(lang, sandbox, tests, prelude=prelude))
    assert [t.status for t in out.values()] == ["pass", "fail", "pass", "pass"], out
    fails = out["helper-fails"]
    assert fails.message == "2 + 3: got 5, want 6"
    assert line_text(fails) == "expectAdd(t, 2, 3, 6)"  # the test's line, not the helper's
    code = out["helper"].code.split("// ---- bw_tests.go")[1]
    assert '"sort"' not in code  # unused: dropped, or it would not compile
    assert '\t"strings"' in code and '\t"unicode/utf8"' in code and '\tm "math"' in code


def test_output_is_captured_per_test_and_capped(lang, sandbox):
    tests = [
        TestSpec("loud", "fmt.Println(\"hello from test\")\nfmt.Fprintln(os.Stderr, \"and stderr\")\nt.Log(\"logged\")"),
        TestSpec("flood", "for i := 0; i < 100000; i++ {\n\tfmt.Println(\"xxxxxxxxxxxxxxxxxxxx\")\n}"),
        TestSpec("quiet", "t.Equal(Add(1, 1), 2)"),
    ]
    out = by_name(run(lang, sandbox, tests))
    assert [t.status for t in out.values()] == ["pass", "pass", "pass"]
    loud = out["loud"].output
    assert "hello from test" in loud and "and stderr" in loud and "logged" in loud
    assert 0 < len(out["flood"].output) <= 10_000
    assert out["quiet"].output == ""


def test_memory_limit_reaches_the_go_runtime(lang, sandbox):
    tests = [TestSpec("limit", "t.Equal(os.Getenv(\"GOMEMLIMIT\"), \"512MiB\")"),
             TestSpec("alloc", "v := make([]byte, 200<<20)\nv[len(v)-1] = 1\nt.Equal(len(v), 200<<20)")]
    assert [t.status for t in run(lang, sandbox, tests).tests] == ["pass", "pass"]


def test_environment_has_no_secret(lang, sandbox, monkeypatch):
    monkeypatch.setenv("BW_TEST_SECRET", "s3cr3t")
    tests = [TestSpec("env", "for _, kv := range os.Environ() {\n"
                             "\tif strings.Contains(kv, \"s3cr3t\") {\n\t\tt.Error(kv)\n\t}\n}")]
    assert run(lang, sandbox, tests).tests[0].status == "pass"


def test_no_tests(lang, sandbox):
    result = run(lang, sandbox, [])
    assert result.tests == [] and result.build_error is None


# -- the example tasks ----------------------------------------------------------------------

BROKEN = {
    "collapse-runs": "package main\n\nfunc CollapseRuns(text string) string {\n\tout := []rune{}\n"
                     "\tfor _, r := range text {\n\t\tif len(out) == 0 || out[len(out)-1] != r {\n"
                     "\t\t\tout = append(out, r)\n\t\t}\n\t}\n\treturn string(out)\n}\n",
    "additive-persistence": "package main\n\nfunc AdditivePersistence(n uint64) int {\n"
                            "\tif n < 10 {\n\t\treturn 0\n\t}\n\treturn 1\n}\n",
    "bracket-depth": "package main\n\nimport \"strings\"\n\nfunc BracketDepth(text string) int {\n"
                     "\treturn strings.Count(text, \"(\") + strings.Count(text, \"[\")\n}\n",
}


def test_example_tasks_pass_with_golden_and_fail_with_broken_solutions(lang, sandbox):
    source = load_task_source(EXAMPLE_TASKS).source
    assert source.name == "benchwright-go"
    assert {t.name for t in source.tasks} == set(BROKEN)
    for task in source.tasks:
        rendered = render_task(task, "go", {})
        assert rendered.entry_point is not None and rendered.entry_point[0].isupper()
        golden = lang.run_tests(sandbox, task.golden_solution["go"], rendered.tests,
                                prelude=rendered.prelude, limits=LIMITS, test_timeout_s=10)
        assert [t.status for t in golden.tests] == ["pass"] * len(rendered.tests), golden.tests
        assert {t.hidden for t in rendered.tests} == {True, False}
        broken = lang.run_tests(sandbox, BROKEN[task.name], rendered.tests,
                                prelude=rendered.prelude, limits=LIMITS, test_timeout_s=10)
        failing = [t for t in broken.tests if t.status == "fail"]
        assert failing, (task.name, broken.tests)
        assert all(t.status in ("pass", "fail") for t in broken.tests)
        for t in failing:
            assert t.message and "want" in t.message
            text = line_text(t)
            assert text.startswith(("t.Equal(", "t.Errorf(", "check(")), (task.name, t.name, text)


# -- no toolchain, entry points, fences, generation ----------------------------------------

def test_missing_toolchain_is_an_infra_error(lang, sandbox, monkeypatch):
    real = shutil.which
    monkeypatch.setattr(shutil, "which",
                        lambda name, *a, **k: None if name == "go" else real(name, *a, **k))
    with pytest.raises(InfraError, match="apt-get install golang-go"):
        run(lang, sandbox, [TestSpec("a", "t.Equal(1, 1)")])
    assert "apt-get install golang-go" in (lang.missing() or "")
    with pytest.raises(InfraError):
        lang.toolchain()


def test_toolchain_and_missing(lang):
    assert lang.missing() is None
    tools = lang.toolchain()
    assert set(tools) == {"go"} and tools["go"].startswith("go1.")
    assert lang.toolchain() == tools


def test_registered():
    assert isinstance(registry.create("language", "go"), GoLanguage)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        (SOLUTION, "Add"),
        ("package main\n\nfunc helper() {}\n\nfunc Solve(x int) int { return x }\n", "Solve"),
        ("package main\nfunc main() {}\nfunc init() {}\nfunc only(x int) int { return x }\n", "only"),
        ("package main\ntype S struct{}\nfunc (s S) Method() {}\nfunc Free() {}\n", "Free"),
        ("package main\nvar x = 1\n", None),
        ("", None),
    ],
)
def test_infer_entry_point(lang, code, expected):
    assert lang.infer_entry_point(code) == expected
    assert entry_point(code) == expected


def test_extract_code_prefers_go_blocks(lang):
    answer = ("```golang\npackage main\n\nfunc F() int { return 1 }\n```\n"
              "```python\ndef f():\n    return 1  # a longer block in another language, really\n```\n")
    assert lang.extract_code(answer) == "package main\n\nfunc F() int { return 1 }\n"
    assert lang.fence_names == ("go", "golang") and lang.name == "go"


def test_solution_and_import_helpers():
    assert prepare_solution("// doc\npackage foo\nfunc main() {}") == "// doc\npackage main\nfunc bwSolutionMain() {}\n"
    imports, rest = split_prelude('import "fmt"\nimport (\n\tx "strings"\n\t_ "embed"\n)\nfunc h() {}\n')
    assert imports == [(None, "fmt"), ("x", "strings"), ("_", "embed")]
    assert rest == ["func h() {}"]
    # names inside strings and comments do not count; a local package name shadows nothing
    code = 's := "strings.Repeat"\n// sort.Ints\nfmt.Println(x.ToUpper(s), bits.Len(3))'
    assert imports_for_tests(imports, code) == ['"fmt"', 'x "strings"', '_ "embed"', '"math/bits"']
    # a local variable or a solution's global with a package's name is not that package
    code = "list := NewList()\nlist.Push(1)\nt.Equal(rand.Intn(1), 0)\nt.Equal(sort.Len, 0)"
    assert imports_for_tests([], code, "var rand = R{}\n") == ['"sort"']


# -- testify's assert, offered without the network ------------------------------------------

TESTIFY_PRELUDE = 'import (\n\t"testing"\n\t"github.com/stretchr/testify/assert"\n)\n'


def test_testify_assert_works_offline_with_testify_like_messages(lang, sandbox):
    tests = [
        TestSpec("equal", "assert := assert.New(t)\nassert.Equal(5, Add(2, 3))"),
        TestSpec("not-equal", "assert := assert.New(t)\nassert.Equal(6, Add(2, 3))"),
        TestSpec("types", "assert.Equal(t, int64(5), Add(2, 3))"),
        TestSpec("slices", "assert := assert.New(t)\nassert.Equal([]int{1, 2, 3}, Sorted([]int{3, 1, 2}))\n"
                           "assert.ElementsMatch([]int{3, 2, 1}, Sorted([]int{3, 1, 2}))\n"
                           "assert.Len(Sorted([]int{1}), 1)\nassert.Contains(\"abc\", \"b\")"),
        TestSpec("nil-vs-empty", "assert.Equal(t, []int{}, Sorted(nil))"),
        TestSpec("others", "assert := assert.New(t)\nassert.True(Add(1, 1) == 2)\nassert.False(false)\n"
                           "_, err := Divide(1, 0)\nassert.Error(err)\nassert.Nil(nil)\n"
                           "assert.InDelta(0.3, 0.1+0.2, 1e-9)\nassert.Panics(func() { MustDivide(1, 0) })"),
        TestSpec("message", "assert.Equal(t, 1, Add(1, 1), \"Add(%d, %d)\", 1, 1)"),
        TestSpec("goes-on", "assert := assert.New(t)\nassert.True(false)\nassert.False(true)"),
    ]
    result = run(lang, sandbox, tests, prelude=TESTIFY_PRELUDE)
    by = by_name(result)
    assert {t.name: t.status for t in result.tests} == {
        "equal": "pass", "not-equal": "fail", "types": "fail", "slices": "pass",
        "nil-vs-empty": "fail", "others": "pass", "message": "fail", "goes-on": "fail"}
    assert by["not-equal"].message == "Not equal: \nexpected: 6\nactual  : 5"
    assert line_text(by["not-equal"]) == "assert.Equal(6, Add(2, 3))"
    assert by["types"].message == "Not equal: \nexpected: int64(5)\nactual  : int(5)"
    assert by["message"].message == "Not equal: \nexpected: 1\nactual  : 2\nMessages: Add(1, 1)"
    assert by["goes-on"].message == "Should be true\nShould be false"
    assert line_text(by["goes-on"]) == "assert.True(false)"


def test_testify_is_compiled_in_only_when_imported(lang, sandbox):
    files, _ = generate(SOLUTION, [TestSpec("a", "t.Equal(Add(1, 1), 2)")], None)
    assert not any("testify" in name for name in files)
    files, _ = generate(SOLUTION, [TestSpec("a", "assert.Equal(t, 2, Add(1, 1))")], TESTIFY_PRELUDE)
    assert b"replace github.com/stretchr/testify => ./testify" in files["bwsample/go.mod"]
    assert "bwsample/testify/assert/assertions.go" in files
