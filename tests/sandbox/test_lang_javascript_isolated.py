"""tests/lang/test_javascript.py, test_typescript.py and test_typescript_transpiler.py again, every test that takes a
``sandbox``, through the isolating backends.

The functions are the same objects (imported, so pytest collects them here too); only the
``sandbox`` fixture differs: bwrap, then unshare. node and Debian's typescript come from /usr,
which both backends show read-only.
"""

from __future__ import annotations

import inspect

import tests.lang.test_javascript as javascript_tests
import tests.lang.test_typescript as typescript_tests
import tests.lang.test_typescript_transpiler as transpiler_tests

js = javascript_tests.js  # the modules' fixtures
ts = typescript_tests.ts

for _module in (javascript_tests, typescript_tests, transpiler_tests):
    for _name, _test in vars(_module).items():
        if _name.startswith("test_") and "sandbox" in inspect.signature(_test).parameters:
            assert _name not in globals(), _name
            globals()[_name] = _test

