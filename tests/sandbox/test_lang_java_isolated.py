"""tests/lang/test_java.py again, every test that runs a JDK, through the isolating backends.

The functions are the same objects (imported, so pytest collects them here too); the module
builds its sandbox as ``RlimitSandbox()``, which an autouse fixture swaps for bwrap, then
unshare, for the duration of each test.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator

import pytest

import tests.lang.test_java as java_tests
from benchwright.registry import registry
from benchwright.sandbox.base import Sandbox
from benchwright.sandbox.select import availability


def _needs_jdk(test: object) -> bool:
    return any(m.name == "jdk" for m in getattr(test, "pytestmark", []))


for _name, _test in vars(java_tests).items():
    if _name.startswith("test_") and _needs_jdk(_test) and "toolchain" not in _name:
        globals()[_name] = _test


@pytest.fixture(params=["bwrap", "unshare"], autouse=True)
def isolated_sandbox(request: pytest.FixtureRequest,
                     monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], Sandbox]]:
    why = availability(request.param)
    if why is not None:
        pytest.fail(f"sandbox {request.param!r} is not available here: {why}")  # setup installs it
    root = tempfile.mkdtemp(prefix="bw-lang-")
    os.chmod(root, 0o755)  # reachable by the sandbox's uid (pytest's tmp_path is 0700)

    made: list[Sandbox] = []

    def make() -> Sandbox:
        made.append(registry.create("sandbox", request.param, tmp_root=root))
        return made[-1]

    monkeypatch.setattr(java_tests, "RlimitSandbox", make)
    yield make
    shutil.rmtree(root, ignore_errors=True)
    assert made, "the test ran no sandbox: the swap did not take"
