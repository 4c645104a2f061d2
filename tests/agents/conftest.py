"""Shared by the agent tests: the bwrap sandbox that agents and scorer commands run in."""

from __future__ import annotations

import pytest

from benchwright.registry import registry
from benchwright.sandbox.base import Sandbox
from benchwright.sandbox.select import availability


@pytest.fixture(scope="module")
def sandbox() -> Sandbox:
    why = availability("bwrap")
    if why is not None:  # ./scripts/setup installs bubblewrap
        pytest.fail(f"the bwrap sandbox is not available here: {why}")
    made: Sandbox = registry.create("sandbox", "bwrap")
    return made
