"""The rlimit sandbox, with real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchwright.errors import InfraError
from benchwright.sandbox.base import SandboxLimits
from benchwright.sandbox.rlimit import RlimitSandbox

PY = sys.executable


@pytest.fixture
def work_root(tmp_path: Path) -> Path:
    root = tmp_path / "sbx"
    root.mkdir()
    return root


@pytest.fixture
def sandbox(work_root: Path) -> RlimitSandbox:
    return RlimitSandbox(tmp_root=str(work_root))


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie has been killed: it is not alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    state = next((line for line in status.splitlines() if line.startswith("State:")), "")
    return "Z" not in state.split(":", 1)[1].split()[0] if state else False


def wait_dead(pid: int, seconds: float = 3.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return not alive(pid)


def test_exit_code_stdout_and_stderr(sandbox):
    r = sandbox.run(["sh", "-c", "echo hello; echo oops >&2; exit 3"], files={},
                    limits=SandboxLimits(wall_s=10))
    assert r.exit_code == 3
    assert r.signal is None
    assert r.stdout == b"hello\n"
    assert r.stderr == b"oops\n"
    assert not r.timed_out
    assert not r.ok


def test_success_is_ok(sandbox):
    r = sandbox.run([PY, "-c", "print('fine')"], files={}, limits=SandboxLimits(wall_s=10))
    assert r.exit_code == 0
    assert r.ok
    assert r.stdout.strip() == b"fine"


def test_killed_by_signal(sandbox):
    r = sandbox.run(["sh", "-c", "kill -TERM $$"], files={}, limits=SandboxLimits(wall_s=10))
    assert r.exit_code is None
    assert r.signal == 15
    assert not r.ok


def test_files_are_written_and_stdin(sandbox):
    r = sandbox.run(
        ["sh", "-c", "cat sub/in.txt; cat"],
        files={"sub/in.txt": b"from-file\n"},
        stdin=b"from-stdin\n",
        limits=SandboxLimits(wall_s=10),
    )
    assert r.exit_code == 0
    assert r.stdout == b"from-file\nfrom-stdin\n"


def test_stdin_is_closed_by_default(sandbox):
    r = sandbox.run(["sh", "-c", "cat; echo end"], files={}, limits=SandboxLimits(wall_s=10))
    assert not r.timed_out
    assert r.stdout == b"end\n"


def test_collect_returns_requested_files(sandbox, work_root):
    r = sandbox.run(
        ["sh", "-c", "echo data > out.txt; mkdir -p d; printf 'nested' > d/x.bin; echo no > other.txt"],
        files={},
        limits=SandboxLimits(wall_s=10),
        collect=("out.txt", "d/x.bin", "missing.txt"),
    )
    assert r.exit_code == 0
    assert r.files == {"out.txt": b"data\n", "d/x.bin": b"nested"}
    # the private work folder is gone afterwards
    assert list(work_root.iterdir()) == []


def test_clean_environment(sandbox, monkeypatch):
    monkeypatch.setenv("BW_TEST_SECRET", "s3cr3t")
    r = sandbox.run([PY, "-c", "import os, json; print(json.dumps(dict(os.environ)))"],
                    files={}, limits=SandboxLimits(wall_s=10), env={"EXTRA": "yes"})
    assert r.exit_code == 0
    env = json.loads(r.stdout)
    assert "BW_TEST_SECRET" not in env
    assert b"s3cr3t" not in r.stdout
    assert env["EXTRA"] == "yes"
    assert "PATH" in env


def test_runs_in_private_folder(sandbox, work_root):
    r = sandbox.run(["sh", "-c", "pwd; ls -A"], files={"a.txt": b"x"},
                    limits=SandboxLimits(wall_s=10))
    cwd, *listing = r.stdout.decode().splitlines()
    assert Path(cwd).parent == work_root
    assert listing == ["a.txt"]


def test_missing_program_is_infra_error(sandbox):
    with pytest.raises(InfraError):
        sandbox.run(["/nonexistent/program-xyz"], files={}, limits=SandboxLimits(wall_s=5))


def test_wall_timeout_kills_the_whole_process_group(sandbox, tmp_path):
    pid_file = tmp_path / "sleep.pid"
    script = f"sleep 30 &\necho $! > {pid_file}\nwhile true; do :; done\n"
    start = time.monotonic()
    r = sandbox.run(["sh", "run.sh"], files={"run.sh": script.encode()},
                    limits=SandboxLimits(wall_s=1.0))
    elapsed = time.monotonic() - start
    assert r.timed_out
    assert not r.ok
    assert r.exit_code is None and r.signal == 9
    assert elapsed < 20  # nowhere near the 30 s of the background sleep
    pid = int(pid_file.read_text())
    assert wait_dead(pid), f"background 'sleep 30' (pid {pid}) survived the sandbox"


def test_background_child_does_not_hold_the_run_open(sandbox, tmp_path):
    """The command exits at once but leaves a child holding stdout: run returns, child dies."""
    pid_file = tmp_path / "bg.pid"
    script = f"sleep 30 &\necho $! > {pid_file}\necho started\n"
    start = time.monotonic()
    r = sandbox.run(["sh", "run.sh"], files={"run.sh": script.encode()},
                    limits=SandboxLimits(wall_s=20.0))
    elapsed = time.monotonic() - start
    assert r.exit_code == 0
    assert not r.timed_out
    assert r.stdout == b"started\n"
    assert elapsed < 15
    pid = int(pid_file.read_text())
    assert wait_dead(pid), f"background 'sleep 30' (pid {pid}) outlived its sample"


def test_timeout_kills_grandchildren(sandbox, tmp_path):
    """A Python grandchild stuck in a loop is killed with its group on timeout."""
    pid_file = tmp_path / "py.pid"
    code = (
        "import subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "p.wait()\n"
    )
    r = sandbox.run([PY, "-c", code], files={}, limits=SandboxLimits(wall_s=1.5))
    assert r.timed_out
    pid = int(pid_file.read_text())
    assert wait_dead(pid)


def test_output_is_capped(sandbox):
    code = "import sys\nsys.stdout.write('x' * 200_000)\nsys.stderr.write('y' * 200_000)\n"
    r = sandbox.run([PY, "-c", code], files={}, limits=SandboxLimits(wall_s=10, output_bytes=1000))
    assert r.exit_code == 0  # the writer is not blocked by the cap
    assert r.stdout == b"x" * 1000
    assert r.stderr == b"y" * 1000


def test_output_below_cap_is_complete(sandbox):
    r = sandbox.run([PY, "-c", "print('z' * 5000)"], files={},
                    limits=SandboxLimits(wall_s=10, output_bytes=64 * 1024))
    assert r.stdout == b"z" * 5000 + b"\n"


def test_cpu_and_memory_are_measured(sandbox):
    code = (
        "import time\n"
        "b = bytearray(100_000_000)\n"
        "for i in range(0, len(b), 4096):\n"
        "    b[i] = 1\n"
        "t = time.process_time()\n"
        "while time.process_time() - t < 0.3:\n"
        "    pass\n"
    )
    r = sandbox.run([PY, "-c", code], files={}, limits=SandboxLimits(wall_s=30, memory_mb=1024))
    assert r.exit_code == 0, r.stderr
    assert r.max_rss_bytes > 100e6
    assert r.max_rss_bytes < 2e9
    assert r.cpu_ms >= 250
    assert r.cpu_ms < 30_000
    assert r.wall_ms >= r.cpu_ms * 0.5


def test_small_process_uses_little_memory():
    # from a small harness: Linux carries the parent's resident size at fork into the child's
    # ru_maxrss, so a fat harness inflates this figure (the language runners measure their own)
    code = ("from benchwright.sandbox.rlimit import RlimitSandbox\n"
            "from benchwright.sandbox.base import SandboxLimits\n"
            "r = RlimitSandbox().run(['sh', '-c', 'true'], files={}, limits=SandboxLimits(wall_s=10))\n"
            "print(r.max_rss_bytes, r.cpu_ms)\n")
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    rss, cpu = int(out[0]), float(out[1])
    assert 0 < rss < 100e6
    assert cpu < 5000


def test_python_sample_memory_is_measured_apart_from_a_fat_harness():
    from benchwright.lang.base import TestSpec
    from benchwright.lang.python import PythonLanguage

    ballast = bytearray(300 << 20)
    for i in range(0, len(ballast), 4096):
        ballast[i] = 1
    result = PythonLanguage().run_tests(RlimitSandbox(), "def f():\n    return 1\n",
                                        [TestSpec("t", "assert f() == 1")], prelude=None,
                                        limits=SandboxLimits(wall_s=10), test_timeout_s=5)
    assert result.tests[0].status == "pass"
    rss = result.extra["max_rss_bytes"]
    assert isinstance(rss, int) and 0 < rss < 100e6
    del ballast


def test_memory_limit_applies(sandbox):
    code = "try:\n    bytearray(2 << 30)\nexcept MemoryError:\n    print('memory error')\n"
    r = sandbox.run([PY, "-c", code], files={}, limits=SandboxLimits(wall_s=10, memory_mb=256))
    assert r.stdout.strip() == b"memory error"


def test_cpu_limit_kills_busy_loop(sandbox):
    r = sandbox.run([PY, "-c", "while True: pass"], files={},
                    limits=SandboxLimits(wall_s=30, cpu_s=1))
    assert not r.ok
    assert r.signal is not None  # SIGXCPU or SIGKILL from RLIMIT_CPU
    assert not r.timed_out


def test_file_size_limit(sandbox):
    code = (
        "try:\n"
        "    with open('big', 'wb') as f:\n"
        "        f.write(b'x' * (3 * 1024 * 1024))\n"
        "    print('wrote')\n"
        "except OSError as e:\n"
        "    print('refused')\n"
    )
    r = sandbox.run([PY, "-c", code], files={}, limits=SandboxLimits(wall_s=10, file_size_mb=1))
    # SIGXFSZ kills the writer, or the write fails: never a 3 MB file
    assert b"wrote" not in r.stdout
