"""tests/lang/test_bash.py again, every test that runs code, through the isolating backends.

The functions that take a ``sandbox`` are the same objects (imported, so pytest collects them
here too); only the ``sandbox`` fixture differs: bwrap, then unshare.
"""

from __future__ import annotations

import inspect

import tests.lang.test_bash as bash_tests

lang = bash_tests.lang  # the module's fixture

for _name, _test in vars(bash_tests).items():
    if _name.startswith("test_") and "sandbox" in inspect.signature(_test).parameters:
        globals()[_name] = _test

