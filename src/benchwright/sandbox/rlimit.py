"""The last-resort sandbox: a child process in its own session with rlimits and a clean env.

It isolates nothing from the file system or the network; ``run.yaml`` records its isolation
level as ``rlimits`` and the CLI says so loudly. The hardened backends come with bubblewrap.
"""

from __future__ import annotations

import contextlib
import os
import resource
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from benchwright.errors import InfraError
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits

BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
}


def _preexec(limits: SandboxLimits) -> None:
    os.setsid()
    cpu = int(limits.cpu_s if limits.cpu_s is not None else limits.wall_s + 1) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    if limits.memory_mb > 0:
        mem = limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    fsize = limits.file_size_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if os.getuid() != 0:  # NPROC counts every process of the uid; meaningless for root
        resource.setrlimit(resource.RLIMIT_NPROC, (limits.processes, limits.processes))


def _exited(pid: int) -> bool:
    """Whether ``pid`` has exited, without reaping it."""
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return info is not None


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class RlimitSandbox(Sandbox):
    """A subprocess with rlimits, its own session and a clean environment (no isolation)."""

    name = "rlimit"
    isolation = "rlimits"

    def __init__(self, tmp_root: str | None = None) -> None:
        self.tmp_root = tmp_root

    def run(
        self,
        argv: list[str],
        *,
        files: dict[str, bytes],
        limits: SandboxLimits,
        stdin: bytes | None = None,
        collect: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
    ) -> ProcessResult:
        work = Path(tempfile.mkdtemp(prefix="bw-sbx-", dir=self.tmp_root))
        try:
            for rel, data in files.items():
                target = work / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            full_env = {**BASE_ENV, "HOME": str(work), "TMPDIR": str(work), **(env or {})}
            return self._run(argv, work, full_env, limits, stdin, collect)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _run(
        self,
        argv: list[str],
        work: Path,
        env: dict[str, str],
        limits: SandboxLimits,
        stdin: bytes | None,
        collect: tuple[str, ...],
    ) -> ProcessResult:
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(
                argv,
                cwd=work,
                env=env,
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                preexec_fn=lambda: _preexec(limits),
                close_fds=True,
            )
        except OSError as e:
            raise InfraError(f"could not start {argv[0]!r}: {e}") from e
        if stdin is not None and proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.write(stdin)
            proc.stdin.close()
        out, err, timed_out = self._pump(proc, start + limits.wall_s, limits.output_bytes)
        _kill_group(proc.pid)  # nothing of the sample outlives it
        waited = self._reap(proc.pid, start + limits.wall_s if not timed_out else None)
        if waited is None:
            timed_out = True
            _kill_group(proc.pid)
            waited = self._reap(proc.pid, None)
        assert waited is not None
        status, usage = waited
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall_ms = (time.perf_counter() - start) * 1000
        code = proc.returncode
        collected: dict[str, bytes] = {}
        for rel in collect:
            p = work / rel
            if p.is_file():
                collected[rel] = p.read_bytes()[: limits.output_bytes * 16]
        return ProcessResult(
            exit_code=code if code >= 0 else None,
            signal=-code if code < 0 else None,
            stdout=out,
            stderr=err,
            timed_out=timed_out,
            wall_ms=wall_ms,
            cpu_ms=(usage.ru_utime + usage.ru_stime) * 1000,
            max_rss_bytes=usage.ru_maxrss * 1024,
            files=collected,
        )

    @staticmethod
    def _reap(pid: int, deadline: float | None) -> tuple[int, resource.struct_rusage] | None:
        """Wait for ``pid`` (until ``deadline``, or for ever when None) with its rusage."""
        while True:
            wpid, status, usage = os.wait4(pid, 0 if deadline is None else os.WNOHANG)
            if wpid == pid:
                return status, usage
            if deadline is not None and time.perf_counter() >= deadline:
                return None
            time.sleep(0.0005)

    @staticmethod
    def _pump(proc: subprocess.Popen[bytes], deadline: float, cap: int) -> tuple[bytes, bytes, bool]:
        bufs: dict[int, bytearray] = {}
        sel = selectors.DefaultSelector()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                os.set_blocking(stream.fileno(), False)
                sel.register(stream, selectors.EVENT_READ)
                bufs[stream.fileno()] = bytearray()
        timed_out = False
        open_streams = len(bufs)
        while open_streams:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                timed_out = True
                _kill_group(proc.pid)
                break
            events = sel.select(timeout=min(remaining, 0.05))
            if not events and _exited(proc.pid):
                # the command is gone but something it left behind holds the pipes open
                break
            for key, _ in events:
                fd = key.fileobj.fileno()  # type: ignore[union-attr]
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    sel.unregister(key.fileobj)
                    open_streams -= 1
                    continue
                buf = bufs[fd]
                if len(buf) < cap:
                    buf.extend(chunk[: cap - len(buf)])
        sel.close()
        assert proc.stdout is not None and proc.stderr is not None
        out = bytes(bufs.get(proc.stdout.fileno(), b""))
        err = bytes(bufs.get(proc.stderr.fileno(), b""))
        proc.stdout.close()
        proc.stderr.close()
        return out, err, timed_out
