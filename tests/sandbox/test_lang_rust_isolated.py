"""tests/lang/test_rust.py again, every test that runs a sample, through the isolating backends.

The functions that take a ``sandbox`` are the same objects (imported, so pytest collects them
here too); only the ``sandbox`` fixture differs: bwrap, then unshare. Inside, only /usr is
visible, so this also checks that the toolchain works from Debian's packages alone.
"""

from __future__ import annotations

import inspect

import tests.lang.test_rust as rust_tests

lang = rust_tests.lang  # the module's fixture

for _name, _test in vars(rust_tests).items():
    if _name.startswith("test_") and "sandbox" in inspect.signature(_test).parameters:
        globals()[_name] = _test

