"""The JavaScript language plug-in, run for real by node through the rlimit sandbox.

tests/sandbox/test_lang_javascript_isolated.py runs every test here that takes a ``sandbox``
again under bwrap and unshare.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

import benchwright.lang.toolchain as toolchain
from benchwright.errors import InfraError
from benchwright.lang.base import ExecutionResult, TestSpec
from benchwright.lang.javascript import JavaScriptLanguage, infer_entry_point
from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.task.load import load_task_source
from benchwright.task.render import render_task
from tests.lang.support import by_name, line_text

SOLUTION = """\
function add(a, b) {
  return a + b;
}

function area(r) {
  if (r < 0) {
    throw new RangeError("negative radius");
  }
  return Math.PI * r * r;
}
"""

LIMITS = SandboxLimits(memory_mb=512)


@pytest.fixture(scope="module")
def js() -> JavaScriptLanguage:
    return JavaScriptLanguage()



def run(
    lang: JavaScriptLanguage,
    sandbox: Sandbox,
    tests: list[TestSpec],
    solution: str = SOLUTION,
    prelude: str | None = None,
    timeout: float = 5.0,
    limits: SandboxLimits = LIMITS,
) -> ExecutionResult:
    return lang.run_tests(sandbox, solution, tests, prelude=prelude, limits=limits,
                          test_timeout_s=timeout)




def statuses(result: ExecutionResult) -> list[str]:
    return [t.status for t in result.tests]


# -- passing and failing ---------------------------------------------------------------------

def test_passing_tests_pass(js, sandbox):
    tests = [
        TestSpec("one", "assert.strictEqual(add(1, 2), 3);"),
        TestSpec("two", "assert.ok(Math.abs(area(1) - 3.14159) < 1e-4);"),
        TestSpec("multi", "const x = add(2, 2);\nconst y = add(x, 1);\nassert.deepStrictEqual([x, y], [4, 5]);"),
        TestSpec("plain-assert", "assert(add(0, 0) === 0)"),
    ]
    result = run(js, sandbox, tests)
    assert result.build_error is None and result.infra_error is None
    assert [t.name for t in result.tests] == ["one", "two", "multi", "plain-assert"]
    assert statuses(result) == ["pass"] * 4
    for spec, outcome in zip(tests, result.tests, strict=True):
        assert outcome.message is None and outcome.line is None
        assert outcome.code == SOLUTION + spec.code + "\n"  # the code shown: solution + test
        assert outcome.time_ms is not None and outcome.time_ms >= 0
        assert outcome.judged == "sample"
    assert result.process is not None and result.process.exit_code == 0
    assert isinstance(result.extra.get("cpu_ms"), float)
    assert isinstance(result.extra.get("max_rss_bytes"), int)


def test_wrong_answer_fails_with_message_and_line(js, sandbox):
    prelude = "function helper() {\n  return 42;\n}\n"
    tests = [
        TestSpec("good", "assert.strictEqual(add(1, 1), 2);"),
        TestSpec("bad", "const x = add(1, 2);\nconst y = x * 2;\nassert.strictEqual(y, 7, 'expected seven');\nconst z = 1;"),
        TestSpec("bare", "assert.strictEqual(add(1, 1), 3);"),
        TestSpec("deep", "assert.deepStrictEqual({sum: add(1, 1), list: [1, 2]}, {sum: 2, list: [1, 3]});"),
        TestSpec("ok", "assert.ok(add(1, -1));"),
    ]
    result = run(js, sandbox, tests, prelude=prelude)
    out = by_name(result)
    assert out["good"].status == "pass"
    bad = out["bad"]
    assert bad.status == "fail"
    assert bad.message is not None
    assert bad.message.startswith("expected seven")
    assert "6 !== 7" in bad.message  # actual and expected, from node's assert
    assert bad.code == SOLUTION + prelude + tests[1].code + "\n"
    assert line_text(bad) == "assert.strictEqual(y, 7, 'expected seven');"
    assert bad.line == SOLUTION.count("\n") + prelude.count("\n") + 3
    bare = out["bare"]
    assert bare.status == "fail"
    assert bare.message == "Expected values to be strictly equal:\n\n2 !== 3"
    assert line_text(bare) == tests[2].code
    deep = out["deep"]
    assert deep.status == "fail" and deep.message is not None
    assert "strictly deep-equal" in deep.message and "3" in deep.message
    ok = out["ok"]
    assert ok.status == "fail" and ok.message is not None and "falsy" in ok.message
    assert line_text(ok) == "assert.ok(add(1, -1));"


def test_exception_inside_solution_is_error_with_type_and_solution_line(js, sandbox):
    tests = [TestSpec("neg", "area(-1);"), TestSpec("fine", "assert.strictEqual(add(2, 3), 5);")]
    out = by_name(run(js, sandbox, tests))
    neg = out["neg"]
    assert neg.status == "error"
    assert neg.message == "RangeError: negative radius"
    assert neg.line is not None and neg.line <= SOLUTION.count("\n")  # inside the solution
    assert line_text(neg) == 'throw new RangeError("negative radius");'
    assert out["fine"].status == "pass"


def test_exception_in_test_body_and_thrown_values(js, sandbox):
    tests = [
        TestSpec("type-error", "const o = null;\no.field;"),
        TestSpec("string", "throw 'plain string';"),
        TestSpec("reference", "notDefinedAnywhere();"),
    ]
    out = by_name(run(js, sandbox, tests))
    assert out["type-error"].status == "error"
    assert (out["type-error"].message or "").startswith("TypeError: Cannot read properties of null")
    assert line_text(out["type-error"]) == "o.field;"
    assert out["string"].status == "error"
    assert out["string"].message == "Uncaught 'plain string'"
    assert out["reference"].message == "ReferenceError: notDefinedAnywhere is not defined"


def test_assert_api(js, sandbox):
    tests = [
        TestSpec("throws", "assert.throws(() => area(-1), RangeError);\nassert.throws(() => area(-1), /negative/);"),
        TestSpec("throws-object", "assert.throws(() => area(-1), { name: 'RangeError', message: 'negative radius' });"),
        TestSpec("throws-missing", "assert.throws(() => add(1, 2));"),
        TestSpec("rejects", "await assert.rejects(async () => area(-1), RangeError);"),
        TestSpec("strict-module", "const strict = require('assert').strict;\nstrict.equal(add(1, 1), 2);\n"
                                  "const { deepStrictEqual } = require('node:assert');\ndeepStrictEqual([1], [1]);"),
        TestSpec("loose-equal", "assert.equal(add(1, 1), '2');\nassert.notStrictEqual(add(1, 1), '2');"),
        TestSpec("match", "assert.match(String(add(20, 3)), /^2\\d$/);"),
        TestSpec("fail", "assert.fail('boom');"),
    ]
    out = by_name(run(js, sandbox, tests))
    for name in ("throws", "throws-object", "rejects", "strict-module", "loose-equal", "match"):
        assert out[name].status == "pass", out[name]
    assert out["throws-missing"].status == "fail"
    assert out["throws-missing"].message == "Missing expected exception."
    assert out["fail"].status == "fail" and out["fail"].message == "boom"


# -- build errors, load errors, module forms, prelude, output ---------------------------------

def test_syntax_error_in_solution_is_build_error_with_line(js, sandbox):
    solution = "function f(x) {\n  return x +;\n}\n"
    result = run(js, sandbox, [TestSpec("a", "assert.ok(f(1));"), TestSpec("b", "assert.ok(true);")],
                 solution=solution)
    assert result.build_error is not None and "SyntaxError" in result.build_error
    assert statuses(result) == ["error", "error"]
    for t in result.tests:
        assert t.line == 2
        assert t.message is not None and "SyntaxError" in t.message


def test_exception_while_loading_solution_is_build_error(js, sandbox):
    solution = "const x = 1;\nthrow new Error('boom at load');\n"
    result = run(js, sandbox, [TestSpec("a", "assert.ok(true);")], solution=solution)
    assert result.build_error is not None and "boom at load" in result.build_error
    (t,) = result.tests
    assert t.status == "error" and t.line == 2


def test_busy_loop_while_loading_is_a_timeout(js, sandbox):
    result = run(js, sandbox, [TestSpec("a", "assert.ok(true);")], solution="while (true) {}\n",
                 timeout=0.5)
    assert result.build_error is not None
    assert statuses(result) == ["timeout"]


def test_syntax_error_in_one_test_only_errors_that_test(js, sandbox):
    tests = [
        TestSpec("first", "assert.strictEqual(add(1, 2), 3);"),
        TestSpec("broken", "const x = 1;\nassert.strictEqual(add(1, 2), 3;"),
        TestSpec("last", "assert.strictEqual(add(0, 0), 0);"),
    ]
    result = run(js, sandbox, tests)
    out = by_name(result)
    assert result.build_error is None
    assert out["first"].status == "pass" and out["last"].status == "pass"
    assert out["broken"].status == "error"
    assert out["broken"].message is not None and "SyntaxError" in out["broken"].message
    assert out["broken"].line == SOLUTION.count("\n") + 2


@pytest.mark.parametrize(
    "solution",
    [
        "module.exports = { twice: (x) => 2 * x };\n",
        "module.exports = function twice(x) {\n  return 2 * x;\n};\n",
        "exports.twice = function (x) { return 2 * x; };\n",
        "export function twice(x) {\n  return 2 * x;\n}\n",
        "const twice = (x) => 2 * x;\nexport { twice };\n",
        "export default function twice(x) {\n  return 2 * x;\n}\n",
        "import assert from 'assert';\nexport const twice = (x) => { assert.ok(true); return 2 * x; };\n",
        "'use strict';\nconst assert = require('assert');\nfunction twice(x) { return 2 * x; }\nmodule.exports = { twice };\n",
    ],
)
def test_module_forms(js, sandbox, solution):
    result = run(js, sandbox, [TestSpec("twice", "assert.strictEqual(twice(21), 42);")], solution=solution)
    assert statuses(result) == ["pass"], result


def test_prelude_is_usable_by_tests(js, sandbox):
    prelude = "function close(a, b) {\n  return Math.abs(a - b) < 1e-9;\n}\n"
    tests = [
        TestSpec("uses-helper", "assert.ok(close(area(2), 4 * Math.PI));"),
        TestSpec("helper-false", "assert.ok(!close(1, 2));"),
    ]
    result = run(js, sandbox, tests, prelude=prelude)
    assert statuses(result) == ["pass", "pass"]
    assert all(prelude in t.code for t in result.tests)
    without = run(js, sandbox, tests[:1])
    assert without.tests[0].status == "error"
    assert without.tests[0].message == "ReferenceError: close is not defined"


def test_tests_do_not_share_their_local_variables(js, sandbox):
    tests = [
        TestSpec("define", "const leaked = 1;\nassert.strictEqual(leaked, 1);"),
        TestSpec("same-name", "const leaked = 2;\nassert.strictEqual(leaked, 2);"),
        TestSpec("use", "assert.strictEqual(typeof leaked, 'undefined');"),
    ]
    assert statuses(run(js, sandbox, tests)) == ["pass", "pass", "pass"]


def test_console_output_is_captured_per_test_and_capped(js, sandbox):
    solution = "function shout(x) {\n  console.log('shouting', x, { n: 1 });\n  return x.toUpperCase();\n}\n"
    tests = [
        TestSpec("loud", "assert.strictEqual(shout('hi'), 'HI');"),
        TestSpec("also", "console.error('from test');\nassert.strictEqual(shout('a'), 'A');"),
        TestSpec("quiet", "assert.ok(true);"),
        TestSpec("flood", "for (let i = 0; i < 100000; i++) console.log('x'.repeat(100));"),
    ]
    result = run(js, sandbox, tests, solution=solution)
    out = by_name(result)
    assert statuses(result) == ["pass"] * 4
    assert "shouting hi { n: 1 }" in out["loud"].output
    assert "from test" in out["also"].output and "shouting a" in out["also"].output
    assert out["quiet"].output == ""
    assert 0 < len(out["flood"].output) <= 10_000
    assert result.process is not None and b"shouting" not in result.process.stdout


# -- time limits -----------------------------------------------------------------------------

def test_busy_loop_times_out_and_the_other_tests_still_run(js, sandbox):
    tests = [
        TestSpec("before", "assert.strictEqual(add(1, 1), 2);"),
        TestSpec("loop", "while (true) {}"),
        TestSpec("swallow", "try {\n  for (;;) {}\n} catch (e) {}\n"),
        TestSpec("microtasks", "function spin() { Promise.resolve().then(spin); }\nspin();"),
        TestSpec("after", "assert.strictEqual(add(2, 2), 4);"),
    ]
    result = run(js, sandbox, tests, timeout=0.5)
    assert statuses(result) == ["pass", "timeout", "timeout", "timeout", "pass"]
    assert result.process is not None and not result.process.timed_out
    assert result.tests[1].message is not None and "0.5 s" in result.tests[1].message


def test_timeouts_cannot_be_disguised(js, sandbox):
    # node creates its time-out error inside the context: an accessor on Error.prototype keeps
    # its `code` off it, yet the test is still a time-out, and the next one runs
    solution = SOLUTION + "Object.defineProperty(Error.prototype, 'code', { get() { return 'nope'; } });\n"
    tests = [
        TestSpec("loop", "while (true) {}"),
        TestSpec("atomics", "Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000);"),
        TestSpec("after", "assert.strictEqual(add(2, 2), 4);"),
    ]
    result = run(js, sandbox, tests, solution=solution, timeout=0.5)
    assert statuses(result) == ["timeout", "timeout", "pass"]


def test_per_test_timeout_is_honoured(js, sandbox):
    short = TestSpec("short", "const t = Date.now();\nwhile (Date.now() - t < 2000) {}", timeout_s=0.3)
    longer = TestSpec("longer", "const t = Date.now();\nwhile (Date.now() - t < 400) {}\nassert.ok(true);",
                      timeout_s=5.0)
    # the call's limit would let `short` finish, and stop `longer`: their own limits win
    assert statuses(run(js, sandbox, [short], timeout=5.0)) == ["timeout"]
    assert statuses(run(js, sandbox, [longer], timeout=0.2)) == ["pass"]


def test_async_tests(js, sandbox):
    solution = SOLUTION + "function later(v, ms) {\n  return new Promise((resolve) => setTimeout(() => resolve(v), ms));\n}\n"
    tests = [
        TestSpec("await-timer", "assert.strictEqual(await later(5, 20), 5);"),
        TestSpec("await-wrong", "const v = await later(5, 10);\nassert.strictEqual(v, 6);"),
        TestSpec("interval", "let n = 0;\nawait new Promise((done) => {\n  const id = setInterval(() => {"
                             " if (++n === 3) { clearInterval(id); done(); } }, 5);\n});\nassert.strictEqual(n, 3);"),
        TestSpec("too-slow", "await later(1, 10000);", timeout_s=0.3),
        TestSpec("never-settles", "await new Promise(() => {});"),
        TestSpec("returns-promise", "return later(1, 5).then((v) => assert.strictEqual(v, 1));"),
        TestSpec("throw-in-timer", "await new Promise((done) => { setTimeout(() => { null.x; }, 5); setTimeout(done, 50); });"),
    ]
    out = by_name(run(js, sandbox, tests, solution=solution))
    assert out["await-timer"].status == "pass"
    assert out["await-wrong"].status == "fail"
    assert line_text(out["await-wrong"]) == "assert.strictEqual(v, 6);"
    assert out["interval"].status == "pass"
    assert out["too-slow"].status == "timeout"
    assert out["never-settles"].status == "error"
    assert out["returns-promise"].status == "pass"
    assert out["throw-in-timer"].status == "error"
    assert "uncaught exception in a callback" in (out["throw-in-timer"].message or "")


# -- verdict integrity -----------------------------------------------------------------------

@pytest.mark.parametrize(
    "code",
    [
        "process.exit(0);",
        "this.constructor.constructor('return process')().exit(0);",
        "console.log.constructor('return process')().exit(0);",
        "assert.strictEqual.constructor('return process')().exit(0);",
        "require.constructor('return process')().exit(0);",
        "setTimeout.constructor('return process')().exit(0);",
        "require('fs').writeSync(1, 'x');",
        "require('child_process').execSync('true');",
        "globalThis.process.exit(0);",
        "await import('fs');",
        "await new Function('return import(\"node:child_process\")')();",
        "await eval('import(\"fs\")');",
    ],
)
def test_early_exit_and_escapes_are_errors_never_passes(js, sandbox, code):
    tests = [TestSpec("exit", code), TestSpec("after", "assert.strictEqual(add(1, 2), 3);")]
    result = run(js, sandbox, tests)
    out = by_name(result)
    assert out["exit"].status == "error", out["exit"]
    assert out["after"].status == "pass"


def test_escape_through_a_harness_error_gives_nothing(js, sandbox):
    # the harness's own errors never enter the context: whatever is caught is the context's
    code = (
        "let caught = null;\n"
        "function deep() { try { deep(); } catch (e) { try { console.log('x'); } catch (f) { caught = f; } } }\n"
        "deep();\n"
        "const F = caught ? caught.constructor.constructor : Function;\n"
        "assert.strictEqual(F('return typeof process')(), 'undefined');\n"
        "assert.strictEqual(assert.constructor('return typeof process')(), 'undefined');\n"
        "const refused = await import('fs').catch((e) => e);\n"
        "assert.match(refused.message, /Cannot import 'fs'/);\n"
        "assert.strictEqual(refused.constructor.constructor('return typeof process')(), 'undefined');\n"
        "const wasm = await WebAssembly.compile(new Uint8Array([1, 2, 3])).catch((e) => e);\n"
        "assert.strictEqual(wasm.constructor.constructor('return typeof process')(), 'undefined');"
    )
    result = run(js, sandbox, [TestSpec("probe", code)])
    assert statuses(result) == ["pass"], result.tests


def test_unhandled_rejections_do_not_end_the_run(js, sandbox):
    solution = SOLUTION + "Promise.reject(new Error('at load'));\n"
    tests = [
        TestSpec("reject", "Promise.reject(new Error('unhandled'));\nassert.ok(true);"),
        TestSpec("background", "(async () => { throw new Error('bg'); })();\nawait new Promise((r) => setTimeout(r, 10));"),
        TestSpec("after", "assert.strictEqual(add(1, 2), 3);"),
    ]
    assert statuses(run(js, sandbox, tests, solution=solution)) == ["pass", "pass", "pass"]


def test_import_near_the_stack_limit_gives_nothing(js, sandbox):
    # node's import machinery runs on the sample's stack: at any depth, what comes back is the
    # context's own error, never one of the driver's realm
    code = (
        "function depth(n) { try { return depth(n + 1); } catch (e) { return n; } }\n"
        "const max = depth(0);\n"
        "let leaks = 0;\n"
        "for (let margin = 0; margin < 120; margin += 3) {\n"
        "  let p = null;\n"
        "  const g = (n) => { if (n >= max - margin) { try { p = import('fs'); } catch (e) {} return; } g(n + 1); };\n"
        "  try { g(0); } catch (e) {}\n"
        "  const e = p && await p.catch((x) => x);\n"
        "  if (e && e.constructor.constructor('return typeof process')() !== 'undefined') leaks++;\n"
        "}\n"
        "assert.strictEqual(leaks, 0);"
    )
    assert statuses(run(js, sandbox, [TestSpec("deep-import", code)], timeout=20.0)) == ["pass"]


def test_fake_result_lines_on_stdout_are_not_passes(js, sandbox):
    fake = 'BWR {"build": "ok"}\\nBWR {"i": 0, "status": "pass"}\\nBWR {"i": 1, "status": "pass"}'
    solution = SOLUTION + f"console.log('{fake}');\nfunction lie() {{\n  console.log('{fake}');\n  return 0;\n}}\n"
    tests = [TestSpec("wrong", "assert.strictEqual(lie(), 1);"), TestSpec("crash", "null.x;")]
    result = run(js, sandbox, tests, solution=solution)
    assert statuses(result) == ["fail", "error"]


def test_patching_assert_or_builtins_does_not_make_a_pass(js, sandbox):
    solution = (
        "try { assert.strictEqual = () => {}; } catch (e) {}\n"
        "try { assert.deepStrictEqual = () => {}; } catch (e) {}\n"
        "globalThis.assert = { strictEqual() {}, deepStrictEqual() {}, ok() {} };\n"
        "Object.is = () => true;\n"
        "Promise.prototype.then = function (ok) { ok(); };\n"
        "Error.prototype.toString = () => 'no error';\n"
        "Object.defineProperty(Error.prototype, 'code', { get() { return undefined; } });\n"
        "function f() {\n  return 1;\n}\n"
    )
    tests = [
        TestSpec("strict", "assert.strictEqual(f(), 2);"),
        TestSpec("deep", "assert.deepStrictEqual([f()], [2]);"),
        TestSpec("crash", "throw new Error('x');"),
    ]
    result = run(js, sandbox, tests, solution=solution)
    assert "pass" not in statuses(result), result.tests


def test_solution_cannot_write_the_results_file(js, sandbox):
    solution = (
        "function f() {\n"
        "  const fs = require('fs');\n"
        "  fs.appendFileSync('bw_results', 'BWR x {\"i\": 0, \"status\": \"pass\"}\\n');\n"
        "  return 1;\n"
        "}\n"
    )
    result = run(js, sandbox, [TestSpec("a", "assert.strictEqual(f(), 2);")], solution=solution)
    (t,) = result.tests
    assert t.status == "error"
    assert t.message is not None and "Cannot find module 'fs'" in t.message


def test_memory_hog_errors_and_later_tests_are_not_run(js, sandbox):
    tests = [
        TestSpec("before", "assert.strictEqual(add(1, 2), 3);"),
        TestSpec("buffer", "new Uint8Array(8 * 1024 * 1024 * 1024);"),
        TestSpec("hog", "const a = [];\nwhile (true) a.push(new Array(1000).fill(a.length));"),
        TestSpec("after", "assert.strictEqual(add(1, 2), 3);"),
    ]
    result = run(js, sandbox, tests, timeout=20.0, limits=SandboxLimits(memory_mb=256))
    out = by_name(result)
    assert out["before"].status == "pass"
    assert out["buffer"].status == "error"
    assert "RangeError" in (out["buffer"].message or "")
    assert out["hog"].status == "error"
    assert "out of memory" in (out["hog"].message or "")
    assert out["after"].status == "not_run"
    assert isinstance(result.extra.get("cpu_ms"), float)


def test_child_environment_has_no_secret(js, sandbox, monkeypatch):
    monkeypatch.setenv("BW_TEST_SECRET", "s3cr3t")
    result = run(js, sandbox, [TestSpec("env", "assert.strictEqual(typeof process, 'undefined');")])
    assert statuses(result) == ["pass"]


def test_empty_test_list(js, sandbox):
    result = run(js, sandbox, [])
    assert result.tests == [] and result.build_error is None


def test_cpu_and_memory_of_the_sample_are_measured(js, sandbox):
    solution = "function burn() {\n  const t = Date.now();\n  while (Date.now() - t < 600) {}\n  return 1;\n}\n"
    busy = run(js, sandbox, [TestSpec("burn", "assert.strictEqual(burn(), 1);")], solution=solution)
    idle = run(js, sandbox, [TestSpec("idle", "assert.ok(true);")], solution=solution)
    assert statuses(busy) == ["pass"] and statuses(idle) == ["pass"]
    cpu = busy.extra["cpu_ms"]
    rss = busy.extra["max_rss_bytes"]
    assert isinstance(cpu, float) and 100 <= cpu <= 20_000
    idle_cpu = idle.extra["cpu_ms"]
    assert isinstance(idle_cpu, float) and 0 < idle_cpu < cpu
    assert isinstance(rss, int) and 10e6 < rss < 500e6


# -- missing toolchain -----------------------------------------------------------------------

def test_missing_node_is_an_infra_error(js, sandbox, monkeypatch):
    monkeypatch.setattr(toolchain.shutil, "which", lambda *a, **k: None)
    with pytest.raises(InfraError, match="apt-get install nodejs"):
        run(js, sandbox, [TestSpec("a", "assert.ok(true);")])
    message = js.missing()
    assert message is not None and "apt-get install nodejs" in message


def test_toolchain_reports_node_version(js):
    versions = js.toolchain()
    assert versions["node"][0].isdigit()
    assert js.missing() is None


# -- the example workspace's tasks -----------------------------------------------------------

BROKEN = {
    "collapse-runs": "function collapseRuns(text) {\n  return text;\n}\n",
    "additive-persistence": "function additivePersistence(n) {\n  return n < 10 ? 0 : 1;\n}\n",
    "bracket-depth": "function bracketDepth(text) {\n  return text.length > 0 ? 1 : 0;\n}\n",
}


def example_tasks(language: str) -> list[tuple[str, str, list[TestSpec], str | None]]:
    path = Path(str(resources.files("benchwright.workspace").joinpath(f"example/tasks/{language}.yaml")))
    source = load_task_source(path).source
    out = []
    for task in source.tasks:
        rendered = render_task(task, language, {})
        out.append((task.name, task.golden_solution[language], rendered.tests, rendered.prelude))
    return out


def check_example_tasks(lang, sandbox, language: str, broken: dict[str, str]) -> None:
    tasks = example_tasks(language)
    assert {name for name, *_ in tasks} == set(broken)
    for name, golden, tests, prelude in tasks:
        good = run(lang, sandbox, tests, solution=golden, prelude=prelude)
        assert statuses(good) == ["pass"] * len(tests), (name, good.tests)
        assert any(t.hidden for t in tests) and any(not t.hidden for t in tests)
        bad = run(lang, sandbox, tests, solution=broken[name], prelude=prelude)
        failed = [t for t in bad.tests if t.status != "pass"]
        assert failed, name
        for t in failed:
            assert t.status == "fail", (name, t)
            assert t.message
            assert "assert." in line_text(t), (name, t)  # the failing assert's own line


def test_example_tasks_golden_pass_and_broken_fail(js, sandbox):
    check_example_tasks(js, sandbox, "javascript", BROKEN)


# -- entry points and code extraction ----------------------------------------------------------

@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("function collapseRuns(text) {\n  return text;\n}\n", "collapseRuns"),
        ("function _helper(x) {}\nfunction main(x) {}\n", "main"),
        ("function helper(x) {}\nexport function main(x) {}\n", "main"),
        ("const twice = (x) => 2 * x;\n", "twice"),
        ("const twice = x => 2 * x;\n", "twice"),
        ("const f = async function (x) {};\n", "f"),
        ("export const g = (a: number): number => a;\n", "g"),
        ("function helper() {}\nfunction main() {}\nmodule.exports = { main };\n", "main"),
        ("module.exports = function solve(x) {};\n", "solve"),
        ("async function fetchIt() {}\n", "fetchIt"),
        ("class Solution {\n  solve() {}\n}\n", None),
        ("const LIMIT = 10;\n", None),
        ("", None),
        ("function outer() {\n  function inner() {}\n}\n", "outer"),
    ],
)
def test_infer_entry_point(js, code, expected):
    assert infer_entry_point(code) == expected
    assert js.infer_entry_point(code) == expected


def test_extract_code_prefers_javascript_blocks(js):
    answer = (
        "```python\ndef f(x):\n    return x  # a longer python block than the js one, surely longer\n```\n"
        "```js\nfunction f(x) { return x; }\n```\n"
        "```node\nfunction g(x) {\n  return x;\n}\n```\n"
    )
    assert js.extract_code(answer) == "function g(x) {\n  return x;\n}\n"
    assert "javascript" in js.fence_names and "mjs" in js.fence_names


def test_solution_functions_of_any_name_reach_the_tests(js, sandbox):
    """The wrapper round each test once held its own `g`, `k` and `b`: a solution's function
    of one of those names was shadowed in every test ("g is not a function")."""
    solution = "function g(x) { return 2 * x; }\nfunction k() { return 1; }\nfunction b() { return 2; }\n"
    result = run(js, sandbox, [TestSpec("g", "assert.strictEqual(g(2), 4);"),
                               TestSpec("kb", "assert.strictEqual(k() + b(), 3);")], solution)
    assert [t.status for t in result.tests] == ["pass", "pass"], result.tests


# -- console.assert and npm packages ---------------------------------------------------------

def test_a_failed_console_assert_fails_its_test_with_message_and_line(js, sandbox):
    tests = [
        TestSpec("holds", "console.assert(add(1, 2) === 3)"),
        TestSpec("bare", "console.assert(add(1, 2) === 4)"),
        TestSpec("message", "const x = add(2, 2);\nconsole.assert(x === 5, 'add(2, 2) is', x)"),
        TestSpec("goes-on", "console.assert(false, 'first')\nconsole.assert(false, 'second')\n"
                            "console.log('after')"),
        TestSpec("nested", "const check = () => {\n  console.assert(add(0, 0) === 1)\n}\ncheck()"),
    ]
    result = run(js, sandbox, tests)
    by = by_name(result)
    assert statuses(result) == ["pass", "fail", "fail", "fail", "fail"]
    assert by["bare"].message == "console.assert: Assertion failed"
    assert line_text(by["bare"]) == "console.assert(add(1, 2) === 4)"
    assert by["message"].message == "console.assert: Assertion failed: add(2, 2) is 4"
    assert line_text(by["message"]) == "console.assert(x === 5, 'add(2, 2) is', x)"
    # like node's, a failed console.assert does not stop the test; every failure is kept
    assert by["goes-on"].message == ("console.assert: Assertion failed: first\n"
                                     "console.assert: Assertion failed: second")
    assert "after" in by["goes-on"].output and "Assertion failed: first" in by["goes-on"].output
    assert line_text(by["nested"]) == "console.assert(add(0, 0) === 1)"


def test_a_solution_cannot_disarm_console_assert(js, sandbox):
    solution = SOLUTION + (
        "try { console.assert = () => {}; } catch (e) {}\n"
        "globalThis.console = { assert() {}, log() {} };\n"
    )
    result = run(js, sandbox, [TestSpec("a", "console.assert(add(1, 1) === 3)")], solution=solution)
    assert statuses(result) == ["fail"]
    assert result.unsupported is None


def test_an_npm_package_is_unsupported_not_the_models_failure(js, sandbox):
    solution = (
        "const stringToMd5 = (text) => {\n"
        "  const md5 = require('js-md5')\n"
        "  return md5(text)\n"
        "}\n"
    )
    result = run(js, sandbox, [TestSpec("md5", "console.assert(stringToMd5('a') === 'x')")],
                 solution=solution)
    (t,) = result.tests
    assert t.status == "error" and "Cannot find module 'js-md5': an npm package" in (t.message or "")
    assert result.unsupported is not None and "'js-md5'" in result.unsupported
    scoped = run(js, sandbox, [TestSpec("t", "require('@scope/pkg/sub')")])
    assert scoped.unsupported is not None and "'@scope/pkg'" in scoped.unsupported


def test_node_modules_and_caught_packages_are_not_unsupported(js, sandbox):
    # node's own modules are refused on purpose (tasks are pure functions): an ordinary error
    refused = run(js, sandbox, [TestSpec("fs", "require('fs')"), TestSpec("crypto", "require('node:crypto')")])
    assert statuses(refused) == ["error", "error"] and refused.unsupported is None
    # a solution that copes without the package it tried is judged as usual
    solution = SOLUTION + "let lodash = null;\ntry { lodash = require('lodash'); } catch (e) {}\n"
    fine = run(js, sandbox, [TestSpec("ok", "assert.strictEqual(add(1, 1), 2)")], solution=solution)
    assert statuses(fine) == ["pass"] and fine.unsupported is None


def test_a_package_only_the_sample_wants_is_the_samples_own_error(js, sandbox):
    """'unsupported' leaves a sample out of the counts, so it holds only when the task itself
    needs the package (its golden solution or tests name it): a model must not escape a failure
    by requiring a package nobody has."""
    from benchwright.criteria.base import task_needs
    from benchwright.task.model import Task
    from benchwright.task.render import RenderedTask

    tests = [TestSpec("pad", "console.assert(pad('a') === ' a')")]
    wants = "const pad = (s) => require('left-pad')(s, 2);\n"
    result = run(js, sandbox, tests, solution=wants)
    assert result.unsupported is not None and result.needs == ("left-pad",)
    rendered = RenderedTask("", "pad", tests, None, {})
    plain = Task(name="pad", golden_solution={"javascript": "const pad = (s) => ' ' + s;\n"})
    judged = task_needs(result, plain, "javascript", rendered)
    assert judged.unsupported is None
    assert "the task does not need it" in (judged.tests[0].message or "")
    needing = Task(name="pad", golden_solution={"javascript": wants})
    assert task_needs(result, needing, "javascript", rendered).unsupported == result.unsupported
