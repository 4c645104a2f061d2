"""tests/lang/test_python.py again, every test, through the isolating backends.

The functions that take a ``sandbox`` are the same objects (imported, so pytest collects them
here too); only the ``sandbox`` fixture differs: bwrap, then unshare. Sandboxed Python is the system interpreter
(``/usr/bin/python3``), so this also checks the runner on it.
"""

from __future__ import annotations

import inspect

import tests.lang.test_python as python_tests

lang = python_tests.lang  # the module's fixture

for _name, _test in vars(python_tests).items():
    if _name.startswith("test_") and "sandbox" in inspect.signature(_test).parameters:
        globals()[_name] = _test

