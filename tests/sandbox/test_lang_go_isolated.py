"""tests/lang/test_go.py and tests/lang/test_go_cache.py again, every test that runs a sample, through the isolating backends.

The functions that take a ``sandbox`` are the same objects (imported, so pytest collects them
here too); only the ``sandbox`` fixture differs: bwrap, then unshare. Inside, only /usr is
visible, so this also checks that the toolchain works from Debian's packages alone.
"""

from __future__ import annotations

import inspect

import tests.lang.test_go as go_tests
import tests.lang.test_go_cache as cache_tests
from benchwright.lang.base import TestSpec

lang = go_tests.lang  # the module's fixture

for _module in (go_tests, cache_tests):
    for _name, _test in vars(_module).items():
        if _name.startswith("test_") and "sandbox" in inspect.signature(_test).parameters:
            assert _name not in globals(), _name
            globals()[_name] = _test



def test_the_runner_is_out_of_reach_of_the_tests(lang, sandbox):
    """The runner is non-dumpable: a test process of the same user cannot open its stdout, its
    environment or its memory through /proc (under rlimit as root it could: root passes)."""
    code = (
        'for _, p := range []string{"fd/1", "environ", "mem"} {\n'
        '\t_, err := os.OpenFile(fmt.Sprintf("/proc/%d/%s", os.Getppid(), p), os.O_RDONLY, 0)\n'
        '\tt.Equal(err != nil, true, p)\n'
        "}"
    )
    result = go_tests.run(lang, sandbox, [TestSpec("reach", code)])
    assert result.tests[0].status == "pass", result.tests[0]
