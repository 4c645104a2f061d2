"""What every language suite shares: the rlimit sandbox its tests run in here (the suites
under ``tests/sandbox`` run the same tests in bwrap and unshare)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.sandbox.rlimit import RlimitSandbox


@pytest.fixture
def sandbox(tmp_path: Path) -> RlimitSandbox:
    return RlimitSandbox(tmp_root=str(tmp_path))
