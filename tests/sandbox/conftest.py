"""The isolating backends, for the language suites re-run inside them (bwrap and unshare)."""

from __future__ import annotations

import os
import shutil
import tempfile
import zlib
from collections.abc import Iterator

import pytest

from benchwright.registry import registry
from benchwright.sandbox.base import Sandbox
from benchwright.sandbox.select import availability

BACKENDS = ("bwrap", "unshare")
ALWAYS_BOTH = ("hostile", "reach", "forge", "cannot", "never", "token", "escape", "attack", "leak",
               "secret", "suspicious", "dumpable", "isolat")
"""Words of a test's name that make it run in both backends (what a sample must not do)."""


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """The language suites re-run here (``test_lang_*_isolated.py``): a test about what a sample
    must not reach runs in both isolating backends; every other test in one of them, chosen by
    its name (about half in each), so that both backends run every language's build, tests and
    messages at half the suite's time. A module with a ``sandbox`` of its own is left alone."""
    if "sandbox" not in metafunc.fixturenames or "sandbox" in vars(metafunc.module):
        return
    name = metafunc.function.__name__
    if any(word in name for word in ALWAYS_BOTH):
        backends: tuple[str, ...] = BACKENDS
    else:
        backends = (BACKENDS[zlib.crc32(name.encode()) % len(BACKENDS)],)
    metafunc.parametrize("sandbox", backends, indirect=True)


@pytest.fixture
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """An isolating backend: ``request.param`` (see :func:`pytest_generate_tests`)."""
    why = availability(request.param)
    if why is not None:
        pytest.fail(f"sandbox {request.param!r} is not available here: {why}")  # setup installs it
    root = tempfile.mkdtemp(prefix="bw-lang-")
    os.chmod(root, 0o755)  # reachable by the sandbox's uid (pytest's tmp_path is 0700)
    yield registry.create("sandbox", request.param, tmp_root=root)
    shutil.rmtree(root, ignore_errors=True)
