"""The exec server: a kept program's command run in a warm sandbox runs as it would in a sandbox
of its own (same folder, environment, limits, identity; its output, status, timeout and files
come back the same), and nothing a command leaves reaches the next one: what it leaves is
removed, and what cannot be removed (or a change to the server itself) ends the server, so the
next command gets a new sandbox. The attacker's kit against it, as root and as an unprivileged
harness: tests/sandbox/test_hostile_batch.py."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from benchwright.lang.execserver import ExecServer, ExecServers
from benchwright.sandbox.base import Sandbox, SandboxLimits

LIMITS = SandboxLimits(wall_s=10, memory_mb=512, output_bytes=64 * 1024)
PROBE = (
    "echo cwd=$(pwd) uid=$(id -u) gid=$(id -g)\n"
    "env | grep -v '^_=' | sort\n"
    "ulimit -a | sort\n"
    "ls -A\n"
    "cat\n"
    "echo to-stderr >&2\n"
    "exit 3\n"
)
"""What a command can see of where it runs."""


@pytest.fixture
def server(sandbox: Sandbox) -> Iterator[ExecServer]:
    s = ExecServer(sandbox)
    yield s
    s.close()


def sh(server: ExecServer, script: str, **kwargs: object) -> tuple[bytes, int | None, bool]:
    result = server.run(["/bin/sh", "-c", script], files=kwargs.pop("files", {}),  # type: ignore[arg-type]
                        limits=kwargs.pop("limits", LIMITS), **kwargs)  # type: ignore[arg-type]
    assert result is not None
    return result.stdout, result.exit_code, result.timed_out


def test_a_command_runs_as_in_a_sandbox_of_its_own(sandbox: Sandbox, server: ExecServer) -> None:
    files = {"a.txt": b"A", "prog": b"B"}
    own = sandbox.run(["/bin/sh", "-c", PROBE], files=files, limits=LIMITS, stdin=b"the job\n")
    for _ in range(2):  # the second in the same server: the first left nothing behind
        warm = server.run(["/bin/sh", "-c", PROBE], files=files, limits=LIMITS,
                          stdin=b"the job\n")
        assert warm is not None
        assert warm.stdout.decode() == own.stdout.decode()
        assert (warm.exit_code, warm.signal, warm.stderr, warm.timed_out) == (
            3, None, b"to-stderr\n", False)
    assert "cwd=/work" in own.stdout.decode() and "the job" in own.stdout.decode()
    assert server.stats.started == 1 and server.stats.served == 2


def test_status_timeout_output_cap_and_collected_files(sandbox: Sandbox, server: ExecServer) -> None:
    killed = server.run(["/bin/sh", "-c", "kill -SEGV $$"], files={}, limits=LIMITS)
    assert killed is not None and (killed.exit_code, killed.signal) == (None, 11)
    out, code, timed_out = sh(server, "echo started; sleep 30",
                              limits=SandboxLimits(wall_s=1, memory_mb=512))
    assert (out, code is None or code != 0, timed_out) == (b"started\n", True, True)
    out, _, _ = sh(server, "head -c 100000 /dev/zero",
                   limits=SandboxLimits(wall_s=10, memory_mb=512, output_bytes=1000))
    assert out == b"\0" * 1000
    got = server.run(["/bin/sh", "-c", "echo kept > out.txt; ln -s /etc/passwd link.txt;"
                      " mkfifo fifo.txt"], files={}, limits=LIMITS,
                     collect=("out.txt", "link.txt", "fifo.txt", "missing.txt"))
    assert got is not None and got.files == {"out.txt": b"kept\n"}  # no link, no FIFO
    # a CPU-bound command meets its own CPU limit, not the server's
    cpu = server.run(["/bin/sh", "-c", "while :; do :; done"], files={},
                     limits=SandboxLimits(wall_s=10, cpu_s=1, memory_mb=512))
    assert cpu is not None and cpu.signal in (9, 24) and not cpu.timed_out  # SIGKILL or SIGXCPU
    assert server.stats.restarts == [] and server.stats.started == 1


def test_what_a_command_leaves_is_gone_for_the_next(server: ExecServer) -> None:
    sh(server, "echo x > /tmp/left; echo x > /dev/shm/left; echo x > mine; mkdir -p d/e;"
               " (setsid sleep 60 >/dev/null 2>&1 &); (sleep 60 >/dev/null 2>&1 &)")
    out, _, _ = sh(server, "ls -A /tmp /dev/shm .; ps -e -o comm= | sort")
    assert b"left" not in out and b"mine" not in out and b"sleep" not in out
    assert server.stats.restarts == [] and server.stats.started == 1  # all removed: no restart


@pytest.mark.parametrize("attack,why", [
    ("mkdir -p locked/inner && chmod 0 locked/inner locked", "work folder"),
    ("mkdir -p /tmp/locked/inner && chmod 0 /tmp/locked/inner /tmp/locked", "files"),
    ("chmod 0700 /work", "work folder"),
    ("python3 -c 'import ctypes; ctypes.CDLL(None).shmget(0x4242, 4096, 0o1666)'", "System V"),
    ("prlimit --nofile=16:16 --pid $PPID", "limits"),
    ("renice -n 10 -p $PPID >/dev/null", "limits"),
    ("chmod 0555 /tmp", "scratch folder"),
    # a default ACL: every file the next command is given would be unreadable
    ("python3 -c \"import os; os.setxattr('/work', 'system.posix_acl_default', "
     "bytes.fromhex('0200000001000000ffffffff04000000ffffffff20000000ffffffff'))\"",
     "work folder"),
    ("echo 8 > /proc/sys/kernel/shmmni", "IPC"),
    ("python3 -c \"import ctypes; ctypes.CDLL(None).syscall(248, b'user', b'k', b'v', 1, -4)\"",
     "keys"),  # add_key (x86_64) to the user keyring
    ("python3 -c \"import ctypes; ctypes.CDLL(None).syscall(251, 1, $PPID, 3 << 13 | 7)\"",
     "limits"),  # ioprio_set (x86_64) of the server: the idle class
])
def test_what_cannot_be_removed_ends_the_server(server: ExecServer, attack: str, why: str) -> None:
    sh(server, "true")
    sh(server, attack)
    assert len(server.stats.restarts) == 1 and why in server.stats.restarts[0]
    out, code, _ = sh(server, "ls -A; ls -A /tmp; echo done")  # a new sandbox
    assert (out, code) == (b"done\n", 0)
    assert server.stats.started == 2


def test_a_command_that_kills_its_server_is_run_in_a_sandbox_of_its_own(sandbox: Sandbox) -> None:
    servers = ExecServers()
    try:
        for _ in range(2):  # the thread's first copy runs in a sandbox of its own
            servers.run(sandbox, ["/bin/true"], files={}, limits=LIMITS)
        result = servers.run(sandbox, ["/bin/sh", "-c", "kill -9 $PPID; echo ran"], files={},
                             limits=LIMITS)
        # the server died without an answer: the command ran again, in a sandbox of its own
        assert result.stdout == b"ran\n" and result.exit_code == 0
        assert servers.stats.started == 1 and servers.stats.served == 1
        assert servers.run(sandbox, ["/bin/echo", "next"], files={},
                           limits=LIMITS).stdout == b"next\n"
        assert servers.stats.started == 2
    finally:
        servers.close()


def test_no_command_reaches_the_server_or_forges_its_answer(server: ExecServer) -> None:
    """The server is not dumpable: a command (same uid) can neither open its descriptors (the
    harness's pipes), nor read its memory, nor ptrace it."""
    probe = (
        "import ctypes, os\n"
        "ppid = os.getppid()\n"
        "found = []\n"
        "for fd in range(8):\n"
        "    for flags in (os.O_RDONLY, os.O_WRONLY):\n"
        "        try:\n"
        "            os.close(os.open(f'/proc/{ppid}/fd/{fd}', flags | os.O_NONBLOCK))\n"
        "            found.append(f'fd{fd}')\n"
        "        except OSError:\n"
        "            pass\n"
        "try:\n"
        "    os.close(os.open(f'/proc/{ppid}/mem', os.O_RDONLY))\n"
        "    found.append('mem')\n"
        "except OSError:\n"
        "    pass\n"
        "if ctypes.CDLL(None).ptrace(16, ppid, 0, 0) == 0:\n"
        "    found.append('ptrace')\n"
        "print('reached', found)\n"
    )
    result = server.run(["/usr/bin/python3", "-I", "-S", "-c", probe], files={}, limits=LIMITS)
    assert result is not None and result.stdout == b"reached []\n", result


def test_what_the_host_does_with_its_own_sockets_ends_no_server(server: ExecServer) -> None:
    """The socket counts checked between commands are the sandbox's own: the machine's TCP
    sockets (``alloc`` in ``/proc/net/sockstat`` counts every namespace's) change nothing."""
    sh(server, "true")
    held = [socket.socket() for _ in range(5)]  # allocated on the host, between two commands
    try:
        sh(server, "true")
        sh(server, "true")
    finally:
        for s in held:
            s.close()
    assert server.stats.restarts == [] and server.stats.started == 1
