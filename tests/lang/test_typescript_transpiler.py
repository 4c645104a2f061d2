"""TypeScript's warm transpiler: each sample's parts transpiled by a node that keeps the compiler
loaded, with the verdicts, messages and lines of a sample that transpiles them itself; it runs
none of the code it reads; a dead, slow or lying transpiler costs the sample nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchwright.lang import transpiler
from benchwright.lang.base import TestSpec
from benchwright.lang.javascript import TypeScriptLanguage
from benchwright.sandbox.base import SandboxLimits

LIMITS = SandboxLimits(memory_mb=512)

SOLUTION = """\
interface Box<T> { value: T }
export function unbox<T>(box: Box<T>): T {
  if (box.value === undefined) {
    throw new TypeError("empty box");
  }
  return box.value;
}
"""
PRELUDE = "const boxed = (n: number): Box<number> => ({ value: n });\n"
TESTS = [
    TestSpec("pass", "assert.strictEqual(unbox(boxed(3)), 3);"),
    TestSpec("fail", "assert.deepStrictEqual(unbox(boxed(3)), 4, 'three');"),
    TestSpec("throws", "unbox({ value: undefined as unknown as number });"),
    TestSpec("syntax", "const n: = unbox(boxed(1));"),
]
CASES = {
    "tests": (SOLUTION, PRELUDE, TESTS),
    "solution syntax error": ("export function f(x: number {\n  return x\n}\n", None, TESTS[:1]),
    "prelude throws": (SOLUTION, "throw new Error('prelude');\n", TESTS[:1]),
}


def warm() -> TypeScriptLanguage:
    lang = TypeScriptLanguage()
    lang._transpilers.cold_uses = 0  # every sample through the transpiler
    return lang


def shown(result: Any) -> tuple[Any, ...]:
    return (result.build_error, [(t.status, t.message, t.line, t.code) for t in result.tests])


@pytest.mark.parametrize("case", list(CASES))
def test_the_transpiler_judges_as_the_sample_s_own_node(sandbox, case):
    solution, prelude, tests = CASES[case]
    lang = warm()
    baseline = TypeScriptLanguage(warm_transpiler=False).run_tests(
        sandbox, solution, tests, prelude=prelude, limits=LIMITS, test_timeout_s=10.0)
    assert baseline.extra.get("typescript_cache") in ("used", "none")
    for _ in range(2):
        result = lang.run_tests(sandbox, solution, tests, prelude=prelude, limits=LIMITS,
                                test_timeout_s=10.0)
        assert result.extra.get("typescript_cache") == "transpiler"
        assert shown(result) == shown(baseline)
    if case == "tests":
        assert [t.status for t in baseline.tests] == ["pass", "fail", "error", "error"]
        assert baseline.tests[2].line == 4  # the throw, in the solution's TypeScript lines
    lang.close()


def test_the_transpiler_runs_no_code_and_a_hanging_solution_hangs_only_its_own_sample(sandbox):
    lang = warm()
    hang = "while (true) {}\nexport const x: number = 1;\n"
    result = lang.run_tests(sandbox, hang, TESTS[:1], prelude=None, limits=LIMITS,
                            test_timeout_s=1.0)
    assert result.extra.get("typescript_cache") == "transpiler"  # answered: it ran nothing
    assert [t.status for t in result.tests] == ["timeout"], shown(result)  # in its own node
    after = lang.run_tests(sandbox, SOLUTION, TESTS[:2], prelude=PRELUDE, limits=LIMITS,
                           test_timeout_s=10.0)
    assert [t.status for t in after.tests] == ["pass", "fail"]
    servers = list(lang._transpilers._servers.values())
    assert len(servers) == 1 and servers[0].started == 1
    lang.close()


def test_a_dead_transpiler_leaves_the_sample_to_its_own_node_and_a_new_one_starts(sandbox):
    lang = warm()
    first = lang.run_tests(sandbox, SOLUTION, TESTS[:1], prelude=PRELUDE, limits=LIMITS,
                           test_timeout_s=10.0)
    assert first.extra.get("typescript_cache") == "transpiler"
    (server,) = lang._transpilers._servers.values()
    assert server.session is not None
    server.session.close()  # as if it had died
    second = lang.run_tests(sandbox, SOLUTION, TESTS[:2], prelude=PRELUDE, limits=LIMITS,
                            test_timeout_s=10.0)
    assert [t.status for t in second.tests] == ["pass", "fail"]
    assert server.started == 2  # started anew for the sample (ask() found it gone)
    lang.close()


def answer(nonce: str, **transpiled: Any) -> bytes:
    part = {"js": "x;\n", "map": [0], "errors": []}
    body = {"solution": part, "prelude": None, "tests": [part]} | transpiled
    return f"BWT {nonce} {json.dumps({'transpiled': body})}".encode()


def test_an_answer_that_is_not_one_is_refused():
    part = {"js": "x;\n", "map": [0], "errors": []}
    parse = transpiler._parse
    assert parse(answer("n1"), "n1", 1, False) is not None
    assert parse(answer("n1"), "n2", 1, False) is None  # another request's
    assert parse(answer("n1"), "n1", 2, False) is None  # a test missing
    assert parse(answer("n1"), "n1", 1, True) is None  # the prelude missing
    assert parse(answer("n1", prelude=part), "n1", 1, False) is None  # a prelude not sent
    assert parse(answer("n1", solution={"js": 1, "map": [], "errors": []}), "n1", 1, False) is None
    assert parse(answer("n1", tests=[{"js": "", "map": [True], "errors": []}]), "n1", 1, False) is None
    assert parse(b"BWT n1 {not json", "n1", 1, False) is None
    assert parse(b'BWT n1 {"error": "TypeScript threw"}', "n1", 1, False) is None
