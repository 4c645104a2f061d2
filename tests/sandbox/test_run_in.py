"""``Sandbox.run_in``: a coding agent's workspace is a host folder that outlives each run (set-up,
the agent, the scorers run in it in turn). It is the only host folder a command can change, and
the network stays closed unless it is granted."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.registry import registry
from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.sandbox.select import availability
from tests.sandbox.test_conformance import processes_with

LIMITS = SandboxLimits(wall_s=30, memory_mb=0)


@pytest.fixture
def folder() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="bw-run-in-"))
    os.chmod(root, 0o711)  # a sandbox uid must reach the workspace
    (root / "ws").mkdir()
    yield root / "ws"
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(params=["bwrap", "unshare"])
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    why = availability(request.param)
    if why is not None:
        pytest.fail(f"sandbox {request.param!r} is not available here: {why}")
    made: Sandbox = registry.create("sandbox", request.param)
    return made


def test_the_workspace_persists_between_runs_and_nothing_else_is_writable(sandbox: Sandbox, folder: Path) -> None:
    (folder / "a.txt").write_text("one\n")
    first = sandbox.run_in(folder, ["/bin/sh", "-c", "cat a.txt && echo two >> a.txt && mkdir -p d/e && "
                                    "echo deep > d/e/f && pwd"], limits=LIMITS)
    assert first.exit_code == 0, first.stderr
    assert first.stdout.decode().split() == ["one", "/work"]
    second = sandbox.run_in(folder, ["/bin/sh", "-c", "cat a.txt d/e/f; rm a.txt"], limits=LIMITS)
    assert second.stdout.decode().split() == ["one", "two", "deep"]
    assert not (folder / "a.txt").exists() and (folder / "d" / "e" / "f").read_text() == "deep\n"
    outside = folder.parent / "outside.txt"
    attempt = sandbox.run_in(folder, ["/bin/sh", "-c", f"echo x > {outside}; echo y > /tmp/t; ls /tmp"],
                             limits=LIMITS)
    assert not outside.exists()
    assert attempt.stdout.decode().split() == ["t"]  # its own /tmp, gone with it
    again = sandbox.run_in(folder, ["/bin/sh", "-c", "ls /tmp | wc -l"], limits=LIMITS)
    assert again.stdout.decode().strip() == "0"


def test_the_network_is_closed_unless_granted(sandbox: Sandbox, folder: Path) -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    accepted: list[bool] = []

    def accept() -> None:
        conn, _ = listener.accept()
        accepted.append(True)
        conn.close()

    threading.Thread(target=accept, daemon=True).start()
    code = (f"import socket; s = socket.socket(); s.settimeout(5); s.connect(('127.0.0.1', {port})); "
            "print('connected')")
    closed = sandbox.run_in(folder, ["/usr/bin/python3", "-c", code], limits=LIMITS)
    assert closed.exit_code != 0 and b"connected" not in closed.stdout
    assert accepted == []
    granted = sandbox.run_in(folder, ["/usr/bin/python3", "-c", code], limits=LIMITS, network=True)
    assert granted.exit_code == 0, granted.stderr
    assert granted.stdout == b"connected\n"
    listener.close()


def test_a_command_that_never_stops_is_killed_with_its_children(sandbox: Sandbox, folder: Path) -> None:
    token = f"bwagent{uuid.uuid4().hex}"
    sleeper = f"/usr/bin/python3 -c 'import time; time.sleep(317)' {token}"
    proc = sandbox.run_in(folder, ["/bin/sh", "-c", f"({sleeper} &) ; echo started > s; {sleeper}"],
                          limits=SandboxLimits(wall_s=1, memory_mb=0))
    assert proc.timed_out
    assert (folder / "s").read_text() == "started\n"
    # killed with the sandbox's namespace: the kernel finishes them off a moment later at most
    deadline = time.monotonic() + 10
    while processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_with(token) == []
