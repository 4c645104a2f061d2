"""The isolating backends, for the language suites re-run inside them."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator

import pytest

from benchwright.registry import registry
from benchwright.sandbox.base import Sandbox
from benchwright.sandbox.select import availability


@pytest.fixture(params=["bwrap", "unshare"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """bwrap, then unshare (a module may define its own ``sandbox`` instead)."""
    why = availability(request.param)
    if why is not None:
        pytest.fail(f"sandbox {request.param!r} is not available here: {why}")  # setup installs it
    root = tempfile.mkdtemp(prefix="bw-lang-")
    os.chmod(root, 0o755)  # reachable by the sandbox's uid (pytest's tmp_path is 0700)
    yield registry.create("sandbox", request.param, tmp_root=root)
    shutil.rmtree(root, ignore_errors=True)
