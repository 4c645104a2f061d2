"""tests/lang/test_rust.py and tests/lang/test_rust_driver.py again, every test that runs a sample, through the isolating backends.

The functions that take a ``sandbox`` are the same objects (imported, so pytest collects them
here too); only the ``sandbox`` fixture differs: bwrap, then unshare. Inside, only /usr is
visible, so this also checks that the toolchain works from Debian's packages alone.
"""

from __future__ import annotations

import inspect

import tests.lang.test_rust as rust_tests
import tests.lang.test_rust_driver as driver_tests

lang = rust_tests.lang  # the module's fixture

for _module in (rust_tests, driver_tests):
    for _name, _test in vars(_module).items():
        if _name.startswith("test_") and "sandbox" in inspect.signature(_test).parameters:
            assert _name not in globals(), _name
            globals()[_name] = _test

