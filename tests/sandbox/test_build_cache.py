"""The compiled languages' build cache, in the isolating sandboxes (bwrap, unshare).

A sample whose build is the same as an earlier sample's runs that program without a compile and
gets the same verdicts, messages, lines and code as a compiled copy; a sample that rewrites its
own program (with a forger, a link) hands nothing to the later copies, which are compiled again
and judged as the first; a build that does not follow from its sources (the clock, a file read
at compile time) is never kept; a copy that arrives while the first is still building waits for
its program instead of compiling it a second time. The rewriting attack (:data:`POISONERS`) also
runs with the harness as root and as an unprivileged user (tests/sandbox/test_hostile_batch.py).
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from benchwright.lang import buildcache
from benchwright.lang.base import ExecutionResult, Language, TestSpec
from benchwright.lang.c import CLanguage, CppLanguage
from benchwright.lang.golang import GoLanguage
from benchwright.lang.rust import RustLanguage
from benchwright.sandbox.base import Sandbox, SandboxLimits
from tests.lang.support import Spy, shown
from tests.sandbox.hostile import POISONERS

LIMITS = SandboxLimits(memory_mb=512)
C_SOLUTION = "int add(int a, int b) { return a + b; }\nint half(int a) { return a / 2; }\n"
C_TESTS = [TestSpec("pass", "assert(add(1, 2) == 3);"), TestSpec("fail", "assert(half(5) == 3);"),
           TestSpec("crash", "volatile int *p = (int *)(long)add(0, 0);\n*p = 1;")]
SAMPLES: dict[str, tuple[type[Language], str, list[TestSpec], str]] = {
    # language: (class, solution, tests, a file only a compile receives)
    "c": (CLanguage, C_SOLUTION, C_TESTS, "bw_tests.c"),
    "cpp": (CppLanguage, "#include <vector>\n" + C_SOLUTION,
            [*C_TESTS, TestSpec("throws", "std::vector<int> v; v.at(add(1, 1));")], "bw_tests.cpp"),
    "rust": (RustLanguage, "fn add(a: i32, b: i32) -> i32 { a + b }\nfn half(a: i32) -> i32 { a / 2 }\n",
             [TestSpec("pass", "assert_eq!(add(1, 2), 3);"), TestSpec("fail", "assert_eq!(half(5), 3);"),
              TestSpec("crash", "let v: Vec<i32> = Vec::new();\nlet _ = v[add(1, 1) as usize];")],
             "main.rs"),
    "go": (GoLanguage, "package main\n\nfunc Add(a, b int) int { return a + b }\n\n"
                       "func Half(a int) int { return a / 2 }\n",
           [TestSpec("pass", "t.Equal(Add(1, 2), 3)"), TestSpec("fail", "t.Equal(Half(5), 3)"),
            TestSpec("crash", "var xs []int\n_ = xs[Add(1, 1)]")],
           "bwsample/solution.go"),
}

def run(lang: Language, sandbox: Any, solution: str, tests: list[TestSpec]) -> ExecutionResult:
    return lang.run_tests(sandbox, solution, tests, prelude=None, limits=LIMITS,
                          test_timeout_s=10.0)


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_a_copy_runs_the_kept_program_with_the_same_outcomes(sandbox: Sandbox, language: str) -> None:
    cls, solution, tests, source = SAMPLES[language]
    spy = Spy(sandbox)
    lang, fresh = cls(), cls(build_cache=False)  # type: ignore[call-arg]
    first, second = (run(lang, spy, solution, tests) for _ in range(2))
    compiled = run(fresh, sandbox, solution, tests)
    assert [t.status for t in first.tests] == ["pass", "fail", "error"] + (
        ["error"] if language == "cpp" else [])
    assert (first.extra["build"], second.extra["build"]) == ("compiled", "cached")
    assert shown(second) == shown(first) == shown(compiled)
    assert second.extra["cpu_ms"] and second.extra["max_rss_bytes"]  # the tests ran and were measured
    # the second sandbox call compiled nothing: it carried the program, not the sources
    assert source in spy.calls[-2][1] and source not in spy.calls[-1][1]
    assert "build_cpu_ms" not in second.extra and "build_ms" not in second.extra
    assert "build" not in compiled.extra or compiled.extra["build"] == "compiled"
    # a different sample (one comment more) is compiled
    other = run(lang, spy, solution + "// another sample\n", tests)
    assert other.extra["build"] == "compiled" and shown(other)[0][0] == "pass"
    # later copies run in this thread's warm sandbox (after its first, which starts none), with
    # the same outcomes, measured
    assert lang.builds is not None
    run(lang, sandbox, solution, tests)  # Go's build cache is the sandbox's: a program of its own
    warm = [run(lang, sandbox, solution, tests) for _ in range(3)]
    assert [shown(w) for w in warm] == [shown(compiled)] * 3
    assert [(w.extra["build"], bool(w.extra["cpu_ms"] and w.extra["max_rss_bytes"]))
            for w in warm] == [("cached", True)] * 3
    stats = lang.builds.servers.stats
    assert stats.started == 1 and stats.served >= 2 and stats.restarts == []
    lang.close()


@pytest.mark.parametrize("attack", sorted(POISONERS))
def test_attack_a_sample_that_rewrites_its_program_poisons_no_later_copy(
        sandbox: Sandbox, attack: str) -> None:
    language, solution, cases = POISONERS[attack]
    tests = [TestSpec(name, code) for name, code in cases]
    lang = SAMPLES[language][0]()
    results = [run(lang, sandbox, solution, tests) for _ in range(3)]
    assert [r.tests[0].status for r in results] == ["fail"] * 3, [shown(r) for r in results]
    assert [r.extra.get("build") for r in results] == ["compiled"] * 3
    builds = lang.builds  # type: ignore[attr-defined]
    assert (builds.kept, builds.hits, builds.refused) == (0, 0, 3)


@pytest.mark.parametrize(("language", "solution", "test"), [
    ("c", "int stamp(void) { return sizeof(__TIME__); }\n", "assert(stamp() == 9);"),
    ("cpp", "#include </usr/include/stdint.h>\nint32_t one() { return 1; }\n", "assert(one() == 1);"),
    ("rust", 'fn size() -> usize { include_str!("main.rs").len() }\n', "assert!(size() > 0);"),
])
def test_a_build_that_does_not_follow_from_its_sources_is_never_kept(
        sandbox: Sandbox, language: str, solution: str, test: str) -> None:
    lang = SAMPLES[language][0]()
    results = [run(lang, sandbox, solution, [TestSpec("t", test)]) for _ in range(2)]
    assert [r.extra.get("build") for r in results] == ["compiled", "compiled"]
    assert lang.builds.kept == 0  # type: ignore[attr-defined]


def test_a_copy_waits_for_the_program_another_thread_is_building(
        sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(buildcache, "WAIT_S", 120.0)  # however slow the machine
    cls, solution, tests, _ = SAMPLES["rust"]
    lang = cls()
    results: list[ExecutionResult] = []
    threads = [threading.Thread(target=lambda: results.append(run(lang, sandbox, solution, tests)))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(r.extra["build"] for r in results) == ["cached", "compiled"]
    assert shown(results[0]) == shown(results[1])


def test_the_cache_keeps_only_what_the_build_reported_and_drops_the_oldest() -> None:
    cache = buildcache.BuildCache(max_bytes=10)
    assert cache.get("a") is None  # the caller builds it
    assert not cache.offer("a", b"12345", buildcache.digest(b"other"))
    assert not cache.offer("a", b"12345", None)
    assert cache.get("a") is None
    assert cache.offer("a", b"12345", buildcache.digest(b"12345").upper())
    assert cache.offer("b", b"678", buildcache.digest(b"678"))
    assert cache.get("a") == b"12345"  # "a" is now the most recently used
    assert cache.offer("c", b"9abc", buildcache.digest(b"9abc"))  # 12 bytes: "b" goes
    assert cache.get("b") is None and cache.get("a") == b"12345" and cache.get("c") == b"9abc"
    assert not cache.offer("d", b"x" * 11, buildcache.digest(b"x" * 11))  # larger than the cache
