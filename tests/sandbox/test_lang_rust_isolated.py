"""tests/lang/test_rust.py again, every test that runs a sample, through the isolating backends.

The functions that take a ``sandbox`` are the same objects (imported, so pytest collects them
here too); only the ``sandbox`` fixture differs: bwrap, then unshare. Inside, only /usr is
visible, so this also checks that the toolchain works from Debian's packages alone.
"""

from __future__ import annotations

import inspect
import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

import tests.lang.test_rust as rust_tests
from benchwright.registry import registry
from benchwright.sandbox.base import Sandbox
from benchwright.sandbox.select import availability

lang = rust_tests.lang  # the module's fixture

for _name, _test in vars(rust_tests).items():
    if _name.startswith("test_") and "sandbox" in inspect.signature(_test).parameters:
        globals()[_name] = _test


@pytest.fixture(params=["bwrap", "unshare"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    why = availability(request.param)
    if why is not None:
        pytest.fail(f"sandbox {request.param!r} is not available here: {why}")  # setup installs it
    root = tempfile.mkdtemp(prefix="bw-lang-")
    os.chmod(root, 0o755)  # reachable by the sandbox's uid (pytest's tmp_path is 0700)
    yield registry.create("sandbox", request.param, tmp_root=root)
    shutil.rmtree(root, ignore_errors=True)
