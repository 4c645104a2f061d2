"""tests/lang/test_c.py, tests/lang/test_cpp.py and tests/lang/test_cpp_headers.py again, every test that runs code, through
the isolating backends.

The functions that take a ``sandbox`` are the same objects (imported, so pytest collects them
here too); only the ``sandbox`` fixture differs: bwrap, then unshare. This checks the judge
(built by the host compiler) and the compiler inside each sandbox.
"""

from __future__ import annotations

import inspect

import tests.lang.test_c as c_tests
import tests.lang.test_cpp as cpp_tests
import tests.lang.test_cpp_headers as header_tests

lang = c_tests.lang  # C and C++ (parametrised)
cpp = cpp_tests.cpp

for _module in (c_tests, cpp_tests, header_tests):
    for _name, _test in vars(_module).items():
        if _name.startswith("test_") and "sandbox" in inspect.signature(_test).parameters:
            assert _name not in globals(), _name
            globals()[_name] = _test

