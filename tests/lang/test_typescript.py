"""The TypeScript language plug-in: transpiled by Debian's typescript in the node driver, run
for real through the rlimit sandbox (tests/sandbox/test_lang_javascript_isolated.py runs the
tests that take a ``sandbox`` again under bwrap and unshare)."""

from __future__ import annotations

import pytest

import benchwright.lang.javascript as javascript
import benchwright.lang.toolchain as toolchain
from benchwright.errors import InfraError
from benchwright.lang.base import ExecutionResult, TestSpec
from benchwright.lang.javascript import TypeScriptLanguage
from benchwright.sandbox.base import Sandbox, SandboxLimits
from tests.lang.test_javascript import by_name, check_example_tasks, line_text, statuses

SOLUTION = """\
interface Circle {
  radius: number;
}

type Shape = Circle | { side: number };

export function add(a: number, b: number): number {
  return a + b;
}

export function area(shape: Shape): number {
  if ("radius" in shape) {
    if (shape.radius < 0) {
      throw new RangeError("negative radius");
    }
    return Math.PI * shape.radius * shape.radius;
  }
  return shape.side * shape.side;
}
"""

LIMITS = SandboxLimits(memory_mb=512)


@pytest.fixture(scope="module")
def ts() -> TypeScriptLanguage:
    return TypeScriptLanguage()



def run_ts(
    lang: TypeScriptLanguage,
    sandbox: Sandbox,
    tests: list[TestSpec],
    solution: str = SOLUTION,
    prelude: str | None = None,
    timeout: float = 5.0,
    limits: SandboxLimits = LIMITS,
) -> ExecutionResult:
    return lang.run_tests(sandbox, solution, tests, prelude=prelude, limits=limits,
                          test_timeout_s=timeout)


def test_ts_passing_tests_pass(ts, sandbox):
    tests = [
        TestSpec("add", "assert.strictEqual(add(1, 2), 3);"),
        TestSpec("typed", "const s: Shape = { side: 3 };\nassert.strictEqual(area(s), 9);"),
        TestSpec("circle", "const c: Circle = { radius: 1 };\nassert.ok(Math.abs(area(c) - Math.PI) < 1e-9);"),
    ]
    result = run_ts(ts, sandbox, tests)
    assert result.build_error is None and result.infra_error is None
    assert statuses(result) == ["pass", "pass", "pass"]
    for spec, outcome in zip(tests, result.tests, strict=True):
        assert outcome.code == SOLUTION + spec.code + "\n"  # the TypeScript as written
        assert outcome.time_ms is not None
    assert isinstance(result.extra.get("cpu_ms"), float)
    assert isinstance(result.extra.get("max_rss_bytes"), int)
    assert result.extra.get("typescript_cache") == "used"  # the compiler loads from V8's cache


def test_ts_lines_map_to_the_typescript_as_written(ts, sandbox):
    prelude = "interface Pair {\n  a: number;\n  b: number;\n}\nconst pair: Pair = { a: 1, b: 2 };\n"
    tests = [
        TestSpec("wrong", "const total: number = add(pair.a, pair.b);\n\nassert.strictEqual(total, 4, 'sum');"),
        TestSpec("throws-in-solution", "area({ radius: -1 } as Circle);"),
        TestSpec("throws-in-test", "type T = { x: number };\nconst t = null as unknown as T;\nt.x;"),
    ]
    result = run_ts(ts, sandbox, tests, prelude=prelude)
    out = by_name(result)
    wrong = out["wrong"]
    assert wrong.status == "fail"
    assert wrong.message is not None and wrong.message.startswith("sum") and "3 !== 4" in wrong.message
    assert line_text(wrong) == "assert.strictEqual(total, 4, 'sum');"
    assert wrong.line == SOLUTION.count("\n") + prelude.count("\n") + 3
    inside = out["throws-in-solution"]
    assert inside.status == "error" and inside.message == "RangeError: negative radius"
    assert line_text(inside) == 'throw new RangeError("negative radius");'
    in_test = out["throws-in-test"]
    assert in_test.status == "error"
    assert line_text(in_test) == "t.x;"


def test_ts_types_are_not_checked(ts, sandbox):
    tests = [TestSpec("wrong-type", "const n: number = 'not a number' as any as string as unknown as number;\n"
                                    "const s: string = add(1, 2) as unknown as string;\nassert.strictEqual(s, 3);")]
    assert statuses(run_ts(ts, sandbox, tests)) == ["pass"]
    # a plain type error (no casts) is not reported either: transpile only
    solution = "export function one(): number {\n  const text: number = 'one';\n  return 1;\n}\n"
    assert statuses(run_ts(ts, sandbox, [TestSpec("one", "assert.strictEqual(one(), 1);")],
                           solution=solution)) == ["pass"]


def test_ts_syntax_error_in_solution_is_build_error_with_line(ts, sandbox):
    solution = "interface A {\n  x: number;\n}\nexport function f(a: A): number {\n  return a.x +;\n}\n"
    result = run_ts(ts, sandbox, [TestSpec("a", "assert.ok(f({ x: 1 }));"), TestSpec("b", "assert.ok(true);")],
                    solution=solution)
    assert result.build_error is not None and "error TS" in result.build_error
    assert "solution.ts:5:" in result.build_error
    assert statuses(result) == ["error", "error"]
    assert all(t.line == 5 for t in result.tests)


def test_ts_syntax_error_in_one_test_only_errors_that_test(ts, sandbox):
    tests = [
        TestSpec("first", "assert.strictEqual(add(1, 2), 3);"),
        TestSpec("broken", "const x: number = 1;\nassert.strictEqual(add(x, 2), 3;"),
        TestSpec("last", "assert.strictEqual(add(0, 0), 0);"),
    ]
    result = run_ts(ts, sandbox, tests)
    out = by_name(result)
    assert result.build_error is None
    assert out["first"].status == "pass" and out["last"].status == "pass"
    broken = out["broken"]
    assert broken.status == "error" and broken.message is not None and "error TS" in broken.message
    assert broken.line == SOLUTION.count("\n") + 2


def test_ts_exception_while_loading_is_build_error(ts, sandbox):
    solution = "type N = number;\nconst limit: N = 1;\nthrow new Error(`boom ${limit}`);\n"
    result = run_ts(ts, sandbox, [TestSpec("a", "assert.ok(true);")], solution=solution)
    assert result.build_error is not None and "boom 1" in result.build_error
    assert result.tests[0].line == 3


@pytest.mark.parametrize(
    "solution",
    [
        "export default function twice(x: number): number {\n  return 2 * x;\n}\n",
        "export const twice = (x: number): number => 2 * x;\n",
        "import { strict as assert } from 'assert';\nexport function twice(x: number): number {\n"
        "  assert.ok(true);\n  return 2 * x;\n}\n",
        "function twice(x: number): number {\n  return 2 * x;\n}\nmodule.exports = { twice };\n",
        "enum Factor { Two = 2 }\nnamespace M {\n  export const k = Factor.Two;\n}\n"
        "class Doubler {\n  constructor(private readonly k: number = M.k) {}\n  run(x: number): number {\n"
        "    return this.k * x;\n  }\n}\nexport function twice<T extends number>(x: T): number {\n"
        "  return new Doubler().run(x);\n}\n",
    ],
)
def test_ts_module_forms_and_features(ts, sandbox, solution):
    result = run_ts(ts, sandbox, [TestSpec("twice", "assert.strictEqual(twice(21), 42);")], solution=solution)
    assert statuses(result) == ["pass"], result


def test_ts_timeout_and_async(ts, sandbox):
    tests = [
        TestSpec("loop", "while (true) {}"),
        TestSpec("await", "const v: number = await new Promise<number>((r) => setTimeout(() => r(7), 10));\n"
                          "assert.strictEqual(v, 7);"),
        TestSpec("after", "assert.strictEqual(add(2, 2), 4);"),
    ]
    result = run_ts(ts, sandbox, tests, timeout=0.5)
    assert statuses(result) == ["timeout", "pass", "pass"]


def test_ts_escapes_are_never_passes(ts, sandbox):
    tests = [
        TestSpec("exit", "(globalThis as any).process.exit(0);"),
        TestSpec("ctor", "(this as any).constructor.constructor('return process')().exit(0);"),
        TestSpec("fs", "require('fs');"),
        TestSpec("after", "assert.strictEqual(add(1, 2), 3);"),
    ]
    assert statuses(run_ts(ts, sandbox, tests)) == ["error", "error", "error", "pass"]


def test_ts_cpu_and_memory_are_reported(ts, sandbox):
    result = run_ts(ts, sandbox, [TestSpec("add", "assert.strictEqual(add(1, 2), 3);")])
    cpu = result.extra["cpu_ms"]
    rss = result.extra["max_rss_bytes"]
    assert isinstance(cpu, float) and cpu > 0
    assert isinstance(rss, int) and 10e6 < rss < 1e9


def test_ts_missing_typescript_is_an_infra_error(ts, sandbox, monkeypatch):
    monkeypatch.setattr(javascript, "TS_DIRS", ("/nonexistent/typescript",))
    with pytest.raises(InfraError, match="node-typescript"):
        run_ts(ts, sandbox, [TestSpec("a", "assert.ok(true);")])
    message = ts.missing()
    assert message is not None and "apt-get install nodejs node-typescript" in message


def test_ts_missing_node_is_an_infra_error(ts, sandbox, monkeypatch):
    monkeypatch.setattr(toolchain.shutil, "which", lambda *a, **k: None)
    with pytest.raises(InfraError, match="node"):
        run_ts(ts, sandbox, [TestSpec("a", "assert.ok(true);")])


def test_ts_toolchain_reports_node_and_typescript(ts):
    versions = ts.toolchain()
    assert versions["node"][0].isdigit()
    assert versions["typescript"][0].isdigit()
    assert ts.missing() is None


BROKEN = {
    "collapse-runs": "export function collapseRuns(text: string): string {\n  return text;\n}\n",
    "additive-persistence": "export function additivePersistence(n: number): number {\n  return n < 10 ? 0 : 1;\n}\n",
    "bracket-depth": "export function bracketDepth(text: string): number {\n  return text.length > 0 ? 1 : 0;\n}\n",
}


def test_ts_example_tasks_golden_pass_and_broken_fail(ts, sandbox):
    check_example_tasks(ts, sandbox, "typescript", BROKEN)


def test_ts_entry_point_and_extraction(ts):
    code = "interface X { a: number }\nfunction helper(x: X): number {\n  return x.a;\n}\n" \
           "export function solve(xs: X[]): number {\n  return xs.map(helper).length;\n}\n"
    assert ts.infer_entry_point(code) == "solve"
    answer = "```js\nfunction f() {}\n```\n```ts\nfunction f(): void {}\n```\n"
    assert ts.extract_code(answer) == "function f(): void {}\n"
