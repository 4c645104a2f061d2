"""``Sandbox.run_in``'s ``mounts`` and ``bridge``: a coding agent's tools and private home shown
inside, and its model endpoint reached through a Unix socket without the network.

The scenarios (:mod:`tests.sandbox.mounts_probe`) run in real sandboxes, with the harness as root
and as an unprivileged user; the bad inputs are refused before anything runs."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.errors import InfraError
from benchwright.registry import registry
from benchwright.sandbox.base import Bridge, Mount, Sandbox, SandboxLimits
from benchwright.sandbox.select import availability
from tests.sandbox.mounts_probe import SCENARIOS
from tests.unprivileged import HARNESS_USERS, run_script

ISOLATED = ("bwrap", "unshare")
LIMITS = SandboxLimits(wall_s=30, memory_mb=0)


def _available(backend: str) -> None:
    why = availability(backend)
    if why is not None:  # ./scripts/setup installs bubblewrap; unshare is util-linux
        pytest.fail(f"sandbox {backend!r} is not available here: {why}")


@pytest.mark.parametrize("user", HARNESS_USERS)
@pytest.mark.parametrize("backend", ISOLATED)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_mounts_and_bridge(scenario: str, backend: str, user: str) -> None:
    _available(backend)
    outcome = run_script("mounts_probe.py", scenario, backend, user=user, timeout=300)
    assert outcome["problems"] == [], outcome


# -- bad input ----------------------------------------------------------------------------------


@pytest.fixture
def base() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="bw-mounts-"))
    os.chmod(root, 0o755)  # a sandbox uid must reach what is in it
    (root / "ws").mkdir()
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(params=[*ISOLATED, "rlimit"])
def sandbox(request: pytest.FixtureRequest) -> Sandbox:
    _available(request.param)
    made: Sandbox = registry.create("sandbox", request.param)
    return made


def test_only_the_isolated_backends_remap(sandbox: Sandbox) -> None:
    assert sandbox.remaps == (sandbox.name != "rlimit")


def test_a_missing_source_or_a_file_is_an_infra_error(sandbox: Sandbox, base: Path) -> None:
    with pytest.raises(InfraError, match=r"does not exist \(create the folder"):
        sandbox.run_in(base / "ws", ["true"], limits=LIMITS, mounts=[Mount(base / "nothing")])
    (base / "file").write_text("x")
    with pytest.raises(InfraError, match="not a folder"):
        sandbox.run_in(base / "ws", ["true"], limits=LIMITS, mounts=[Mount(base / "file")])
    with pytest.raises(InfraError, match="absolute path"):
        sandbox.run_in(base / "ws", ["true"], limits=LIMITS, mounts=[Mount(Path("rel"))])


def test_the_rlimit_backend_cannot_remap(base: Path) -> None:
    rlimit = registry.create("sandbox", "rlimit")
    with pytest.raises(InfraError, match="without a target"):
        rlimit.run_in(base / "ws", ["true"], limits=LIMITS, mounts=[Mount(base, "/opt/x")])
    # at its host path: the host is visible as it is, nothing to do
    r = rlimit.run_in(base / "ws", ["/bin/ls", str(base)], limits=LIMITS,
                      mounts=[Mount(base), Mount(base / "ws", str(base / "ws"))])
    assert r.exit_code == 0 and b"ws" in r.stdout


def test_the_bridge_is_a_no_op_without_isolation(base: Path) -> None:
    """The rlimit backend shares the host's network: the caller's server listens on the
    host's port itself, and the command runs as it is."""
    rlimit = registry.create("sandbox", "rlimit")
    r = rlimit.run_in(base / "ws", ["/bin/sh", "-c", "echo $0"], limits=LIMITS,
                      bridge=Bridge(8000, base / "no.sock"))
    assert r.exit_code == 0 and r.stdout == b"/bin/sh\n"


@pytest.mark.parametrize("backend", ISOLATED)
@pytest.mark.parametrize("target", ["/", "/tmp", "/work", "/work/x", "/usr/local/x", "/etc/x",
                                    "/proc/x", "/bw-bridge", "/bin", "relative", "/opt/../etc"])
def test_a_target_on_the_sandbox_s_own_folders_is_an_infra_error(backend: str, target: str,
                                                                  base: Path) -> None:
    _available(backend)
    made = registry.create("sandbox", backend)
    with pytest.raises(InfraError, match="target"):
        made.run_in(base / "ws", ["true"], limits=LIMITS, mounts=[Mount(base, target)])


@pytest.mark.parametrize("backend", ISOLATED)
def test_nested_mounts_and_writable_system_folders_are_infra_errors(backend: str, base: Path) -> None:
    _available(backend)
    made = registry.create("sandbox", backend)
    (base / "a" / "b").mkdir(parents=True)
    with pytest.raises(InfraError, match="overlap"):
        made.run_in(base / "ws", ["true"], limits=LIMITS,
                    mounts=[Mount(base / "a"), Mount(base / "a" / "b")])
    for folder in ("/", "/usr/lib", "/tmp", "/etc"):
        with pytest.raises(InfraError, match="system folder"):
            made.run_in(base / "ws", ["true"], limits=LIMITS,
                        mounts=[Mount(Path(folder), "/opt/x", writable=True)])


@pytest.mark.skipif(os.getuid() != 0, reason="only a root harness hands runs a uid of their own")
@pytest.mark.parametrize("backend", ISOLATED)
def test_a_source_the_run_s_uid_cannot_reach_is_an_infra_error(backend: str, base: Path) -> None:
    _available(backend)
    made = registry.create("sandbox", backend)
    private = base / "private"
    (private / "tools").mkdir(parents=True)
    private.chmod(0o700)  # like /root
    for writable in (False, True):
        with pytest.raises(InfraError, match=r"cannot reach it .* o\+x"):
            made.run_in(base / "ws", ["true"], limits=LIMITS,
                        mounts=[Mount(private / "tools", writable=writable)])
    closed = base / "closed"
    closed.mkdir(mode=0o700)
    closed.chmod(0o700)
    with pytest.raises(InfraError, match="cannot reach it"):  # read-only: must be entered too
        made.run_in(base / "ws", ["true"], limits=LIMITS, mounts=[Mount(closed)])


@pytest.mark.parametrize("backend", ISOLATED)
def test_a_bad_bridge_is_an_infra_error(backend: str, base: Path) -> None:
    _available(backend)
    made = registry.create("sandbox", backend)
    ws = base / "ws"
    with pytest.raises(InfraError, match="start its server before the run"):
        made.run_in(ws, ["true"], limits=LIMITS, bridge=Bridge(8000, base / "none.sock"))
    with pytest.raises(InfraError, match="not a Unix socket"):
        made.run_in(ws, ["true"], limits=LIMITS, bridge=Bridge(8000, ws))
    folder = base / "sock"
    folder.mkdir(mode=0o711)
    folder.chmod(0o711)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(folder / "api.sock"))
    listener.listen()
    try:
        with pytest.raises(InfraError, match="port 80 "):
            made.run_in(ws, ["true"], limits=LIMITS, bridge=Bridge(80, folder / "api.sock"))
        os.chmod(folder / "api.sock", 0o600)
        if os.getuid() == 0:
            with pytest.raises(InfraError, match="make the socket 0o666"):
                made.run_in(ws, ["true"], limits=LIMITS, bridge=Bridge(8000, folder / "api.sock"))
        os.chmod(folder / "api.sock", 0o666)
        r = made.run_in(ws, ["true"], limits=LIMITS, bridge=Bridge(8000, folder / "api.sock"))
        assert r.exit_code == 0, r.stderr
    finally:
        listener.close()
