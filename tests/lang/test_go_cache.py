"""Go's warm build cache: benchwright's own packages (``bwdriver``, testify's ``assert``) are
compiled once per sandbox, without any model code, and every sample's build starts from a copy
of that cache; the verdicts, messages and lines are those of a build from nothing."""

from __future__ import annotations

import pytest

from benchwright.lang import golang
from benchwright.lang.base import TestSpec
from benchwright.lang.golang import CACHE_ARCHIVE, GoLanguage
from benchwright.sandbox.base import SandboxLimits
from tests.lang.support import Spy, shown

LIMITS = SandboxLimits(memory_mb=512)

SOLUTION = """\
package main

import "strings"

func Shout(s string) string {
	if s == "boom" {
		var m map[string]int
		m[s] = 1
	}
	return strings.ToUpper(s) + "!"
}
"""

TESTS = [
    TestSpec("pass", 't.Equal(Shout("hi"), "HI!")'),
    TestSpec("fail", 't.Equal(Shout("hi"), "hi")'),
    TestSpec("panic", 'Shout("boom")'),
]

TESTIFY_PRELUDE = 'import (\n\t"testing"\n\t"github.com/stretchr/testify/assert"\n)\n'
TESTIFY_TESTS = [
    TestSpec("testify-pass", 'assert.Equal(&testing.T{}, "HI!", Shout("hi"))\n'
             't.Equal(Shout("a"), "A!")'),
]






@pytest.mark.parametrize(("prelude", "tests"), [(None, TESTS), (TESTIFY_PRELUDE, TESTIFY_TESTS)],
                         ids=["driver", "testify"])
def test_samples_build_from_a_cache_made_without_model_code_and_judge_the_same(
        sandbox, prelude, tests):
    spy = Spy(sandbox)
    warm, cold = GoLanguage(), GoLanguage(warm_cache=False)
    warm_results = [warm.run_tests(spy, SOLUTION + f"// sample {i}\n", tests, prelude=prelude,  # type: ignore[arg-type]
                                   limits=LIMITS, test_timeout_s=10.0) for i in range(2)]
    cold_result = cold.run_tests(sandbox, SOLUTION + "// sample 1\n", tests, prelude=prelude,
                                 limits=LIMITS, test_timeout_s=10.0)
    # one call makes the cache, then one a sample, each given the same archive
    assert len(spy.calls) == 3
    made_from = spy.calls[0][1]
    assert not any(name.endswith(("solution.go", "bw_tests.go")) for name in made_from)
    assert any(name.endswith("bwdriver/driver.go") for name in made_from)
    assert ("testify" in " ".join(made_from)) == (prelude is not None)
    archives = [files.get(CACHE_ARCHIVE) for _, files in spy.calls[1:]]
    assert archives[0] and archives[0] == archives[1]
    expected = shown(cold_result)
    assert shown(warm_results[1]) == expected
    if prelude is None:
        assert [s for s, *_ in expected] == ["pass", "fail", "error"]
        assert expected[2][2] is not None  # the panic's line, mapped into the solution
    else:
        assert [s for s, *_ in expected] == ["pass"]
    warm.close()


def test_a_cache_that_cannot_be_made_leaves_the_sample_to_build_from_nothing(sandbox, monkeypatch):
    monkeypatch.setattr(golang, "CACHE_MAX_BYTES", 1)  # every archive is refused as too large
    spy = Spy(sandbox)
    lang = GoLanguage()
    results = [lang.run_tests(spy, SOLUTION, TESTS[:1], prelude=None, limits=LIMITS,  # type: ignore[arg-type]
                              test_timeout_s=10.0) for _ in range(2)]
    assert [[t.status for t in r.tests] for r in results] == [["pass"], ["pass"]]
    # one attempt, then no archive and no attempt again
    assert len(spy.calls) == 3
    assert not any(CACHE_ARCHIVE in files for _, files in spy.calls[1:])


def test_a_sample_cannot_reach_the_cache_of_the_next(sandbox):
    """The archive is bytes kept by the harness: a sample that rewrites its copy of the cache
    (here: empties it) changes nothing for the samples after it."""
    lang = GoLanguage()
    vandal = SOLUTION.replace('import "strings"', 'import (\n\t"os"\n\t"strings"\n)') + (
        "\nfunc init() { _ = os.RemoveAll(\"../.gocache\"); _ = os.RemoveAll(\"/work/.gocache\") }\n")
    first = lang.run_tests(sandbox, vandal, TESTS[:1], prelude=None, limits=LIMITS, test_timeout_s=10.0)
    assert [t.status for t in first.tests] == ["pass"]
    before = dict(lang._caches._made)
    after = lang.run_tests(sandbox, SOLUTION, TESTS, prelude=None, limits=LIMITS, test_timeout_s=10.0)
    assert lang._caches._made == before
    assert [t.status for t in after.tests] == ["pass", "fail", "error"]
