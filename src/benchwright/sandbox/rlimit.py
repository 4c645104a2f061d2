"""The last-resort sandbox: a child process in its own session with rlimits and a clean env.

It isolates nothing from the file system or the network; ``run.yaml`` records its isolation
level as ``rlimits`` and the CLI says so loudly. The isolating backends (:mod:`.bwrap`,
:mod:`.unshare`) reuse this module's process machinery -- rlimits, the output pump, the
timeout kill, rusage -- and only wrap the command (:meth:`RlimitSandbox._prepare`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import select
import selectors
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchwright.errors import InfraError, UnsafeFile
from benchwright.safefs import Tree, remove_tree
from benchwright.sandbox.base import Bridge, Mount, ProcessResult, Sandbox, SandboxLimits, Session

BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONHASHSEED": "0",
}


EXIT_GRACE_S = 0.5
"""Once a command has closed its output it gets this long to exit before its process group is
killed (a program that closes stdout and stderr before it exits is not killed mid-exit)."""


def rlimit_values(limits: SandboxLimits, *, processes: bool) -> dict[str, tuple[int, int]]:
    """The rlimits of ``limits`` (``RLIMIT_<name>``: (soft, hard)) that :func:`apply_limits`
    sets; a warm server sets the same on each command it starts.

    ``processes``: also RLIMIT_NPROC. It counts every process of the real uid and the
    kernel ignores it for root, so it is only meaningful when the command runs as a uid of
    its own (the isolating backends) or the harness is not root.
    """
    cpu = int(limits.cpu_s if limits.cpu_s is not None else limits.wall_s + 1) + 1
    values = {"CPU": (cpu, cpu + 1)}
    if limits.memory_mb > 0:
        mem = limits.memory_mb * 1024 * 1024
        values["AS"] = (mem, mem)
    fsize = limits.file_size_mb * 1024 * 1024
    values["FSIZE"] = (fsize, fsize)
    values["CORE"] = (0, 0)
    if processes:
        values["NPROC"] = (limits.processes, limits.processes)
    return values


def apply_limits(limits: SandboxLimits, *, processes: bool) -> None:
    """Set the rlimits of ``limits`` on this process (the child, before it executes); see
    :func:`rlimit_values`."""
    for name, value in rlimit_values(limits, processes=processes).items():
        resource.setrlimit(getattr(resource, "RLIMIT_" + name), value)


_prctl: Callable[..., int] | None
try:  # looked up here: the forked child must not load a library
    _prctl = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # pragma: no cover - not glibc/Linux
    _prctl = None
_PR_SET_PDEATHSIG = 1


def _preexec(limits: SandboxLimits, processes: bool | None = None, uid: int | None = None,
             die_with_parent: bool = False, parent: int | None = None) -> None:
    os.setsid()
    # NPROC counts every process of the uid; meaningless for root
    apply_limits(limits, processes=os.getuid() != 0 if processes is None else processes)
    if uid is not None:  # root drops to the run's own uid (and every capability) before exec
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    if die_with_parent and _prctl is not None:  # after the uid change, which would clear it
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if parent is not None and os.getppid() != parent:
            os._exit(127)  # the harness died before the signal was armed: never run orphaned


MAX_LINE_BYTES = 256 * 1024 * 1024
"""The longest line a session's process may write (a warm javac's answer carries class files)."""
DRAIN_S = 0.05
"""How long the pipes are still read once the command is gone while something it left holds
them open: what it wrote itself is in them already; a leftover that keeps writing is cut off."""


def _exited(pid: int) -> bool:
    """Whether ``pid`` has exited, without reaping it."""
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    return info is not None


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def discard(root: Path) -> None:
    """Remove a run's private folder and whatever the command left in it, following no link
    it made and however deep its folders go (``shutil.rmtree`` recurses: a tree a few thousand
    folders deep would raise ``RecursionError`` in the harness)."""
    with contextlib.suppress(InfraError):
        remove_tree(root)


def write_files(folder: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def check_sources(mounts: Sequence[Mount], backend: str) -> None:
    """Each mount's source must be an existing host folder, given by an absolute path
    (InfraError naming it otherwise)."""
    for mount in mounts:
        source = Path(mount.source)
        if not source.is_absolute():
            raise InfraError(f"cannot mount {str(source)!r} in the {backend} sandbox: give the "
                             "host folder as an absolute path")
        if not source.exists():
            raise InfraError(f"cannot mount {source} in the {backend} sandbox: it does not "
                             "exist (create the folder before the run)")
        if not source.is_dir():
            raise InfraError(f"cannot mount {source} in the {backend} sandbox: it is not a "
                             "folder (mount the folder that holds it)")


@dataclass
class Launch:
    """How the harness starts one sandboxed command (built by :meth:`RlimitSandbox._prepare`)."""

    argv: list[str]
    """What the harness executes: the command itself, or the command wrapped by a backend."""
    cwd: Path
    env: dict[str, str]
    work: Path
    """The private work folder on the host (``collect`` reads from it)."""
    processes: bool
    """Whether RLIMIT_NPROC is set (see :func:`apply_limits`)."""
    uid: int | None = None
    """The uid and gid (without supplementary groups) the harness switches to before it
    executes ``argv``; None: its own."""
    die_with_parent: bool = False
    """SIGKILL ``argv`` when the harness thread that started it dies (PR_SET_PDEATHSIG)."""
    ready: bytes = b""
    """What a wrapper writes to stderr once the sandbox is set up, just before the command
    starts. It is removed from the output; without it the sandbox failed (InfraError). The
    command cannot forge its absence: it only runs after the wrapper wrote it."""


SESSION_START_S = 30.0
"""How long a session's sandbox may take to say it is ready."""


class ProcessSession(Session):
    """A sandboxed process started by :meth:`RlimitSandbox.start`, talked to over pipes."""

    def __init__(self, proc: subprocess.Popen[bytes], root: Path) -> None:
        self.proc = proc
        self.root = root
        self._buf = bytearray()
        self._err = bytearray()
        self._dead = False
        assert proc.stdout is not None and proc.stderr is not None
        os.set_blocking(proc.stdout.fileno(), False)
        os.set_blocking(proc.stderr.fileno(), False)
        self._poll = select.poll()
        self._poll.register(proc.stdout.fileno(), select.POLLIN | select.POLLHUP)
        self._err_open = False
        """Whether :meth:`readline` also drains stderr (from the first call on: the sandbox's
        ready marker comes first, read by :meth:`expect_ready`)."""

    @property
    def alive(self) -> bool:
        if not self._dead and self.proc.poll() is not None:
            self._dead = True
        return not self._dead

    def expect_ready(self, marker: bytes, timeout_s: float) -> bool:
        """Wait for ``marker`` at the start of stderr (see ``Launch.ready``)."""
        deadline = time.monotonic() + timeout_s
        while len(self._err) < len(marker):
            if not self._read_err(deadline - time.monotonic()):
                return False
        ok = bytes(self._err[: len(marker)]) == marker
        del self._err[: len(marker)]
        return ok

    def _read_err(self, timeout_s: float) -> bool:
        """Read what stderr has (waiting up to ``timeout_s``; 0: only what is there); False
        when nothing came or it is closed."""
        assert self.proc.stderr is not None
        fd = self.proc.stderr.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            if not sel.select(max(0.0, timeout_s)):
                return False
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return True
        if not chunk:
            return False
        self._err.extend(chunk)
        del self._err[: max(0, len(self._err) - 65536)]
        return True

    def send(self, data: bytes) -> bool:
        if not self.alive or self.proc.stdin is None:
            return False
        fd = self.proc.stdin.fileno()
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        except OSError:
            self._dead = True
            return False
        return True

    def readline(self, timeout_s: float) -> bytes | None:
        """The next line of stdout, without its newline; None when none comes within
        ``timeout_s``, the process closed stdout, or the line grows past
        :data:`MAX_LINE_BYTES` (the session is then dead). What the process writes to stderr
        meanwhile is read too (its last 64 KiB are kept for :meth:`stderr_tail`), so a process
        that writes much there never blocks on it."""
        assert self.proc.stdout is not None and self.proc.stderr is not None
        fd, err = self.proc.stdout.fileno(), self.proc.stderr.fileno()
        if not self._err_open:
            self._err_open = True
            self._poll.register(err, select.POLLIN | select.POLLHUP)
        deadline = time.monotonic() + timeout_s
        while True:
            end = self._buf.find(b"\n")
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[: end + 1]
                return line
            if len(self._buf) > MAX_LINE_BYTES:
                self._dead = True
                return None
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                left = deadline - time.monotonic()
                events = self._poll.poll(left * 1000) if left > 0 else []
                if not events:
                    return None
                if any(ready == err for ready, _ in events) and not self._read_err(0):
                    self._poll.unregister(err)  # closed: stdout alone from now on
                continue
            if not chunk:
                self._dead = True
                return None
            self._buf.extend(chunk)

    def stderr_tail(self) -> str:
        while self._read_err(0.05):
            pass
        return self._err.decode("utf-8", "replace").strip()[-2000:]

    def close(self) -> None:
        self._dead = True
        _kill_group(self.proc.pid)
        with contextlib.suppress(ProcessLookupError, OSError):
            self.proc.kill()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=10)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        discard(self.root)


class RlimitSandbox(Sandbox):
    """A subprocess with rlimits, its own session and a clean environment (no isolation)."""

    name = "rlimit"
    isolation = "rlimits"

    def __init__(self, tmp_root: str | None = None) -> None:
        self.tmp_root = tmp_root
        promised = {"clean-env", "limits", "stdin-closed", "private-workdir", "group-killed"}
        if os.getuid() != 0:
            promised.add("process-limit")
        self.guarantees = frozenset(promised)

    def run(
        self,
        argv: list[str],
        *,
        files: dict[str, bytes],
        limits: SandboxLimits,
        stdin: bytes | None = None,
        collect: tuple[str, ...] = (),
        env: dict[str, str] | None = None,
        undumpable: bool = False,
    ) -> ProcessResult:
        return self._once(argv, files, limits, env or {}, stdin, collect, undumpable=undumpable)

    def run_in(
        self,
        folder: Path,
        argv: list[str],
        *,
        limits: SandboxLimits,
        env: dict[str, str] | None = None,
        network: bool = False,
        stdin: bytes | None = None,
        mounts: Sequence[Mount] = (),
        bridge: Bridge | None = None,
    ) -> ProcessResult:
        return self._once(argv, {}, limits, env or {}, stdin, (), folder=folder, network=network,
                          mounts=tuple(mounts), bridge=bridge)

    def _once(self, argv: list[str], files: dict[str, bytes], limits: SandboxLimits,
              env: dict[str, str], stdin: bytes | None, collect: tuple[str, ...], *,
              folder: Path | None = None, network: bool = False,
              undumpable: bool = False, mounts: tuple[Mount, ...] = (),
              bridge: Bridge | None = None) -> ProcessResult:
        """One command in a private folder made for it and removed after it."""
        if mounts:
            check_sources(mounts, self.name)
            self._check_mounts(mounts)
        root = Path(tempfile.mkdtemp(prefix="bw-sbx-", dir=self.tmp_root))
        try:
            launch = self._prepare(root, argv, files, limits, env, folder=folder, network=network,
                                   undumpable=undumpable, mounts=mounts, bridge=bridge)
            return self._finish(self._run(launch, limits, stdin, collect))
        finally:
            discard(root)

    def _check_mounts(self, mounts: tuple[Mount, ...]) -> None:
        """Refuse what this backend cannot show (InfraError). Here the host is visible as it
        is: a mount cannot be shown at another path."""
        for mount in mounts:
            if mount.target is not None and os.path.normpath(mount.target) != os.path.normpath(
                    mount.source):
                raise InfraError(
                    f"the {self.name} sandbox isolates nothing and cannot show {mount.source} "
                    f"at {mount.target}: pass Mount(source) without a target (the command then "
                    "sees it at its host path), or use a sandbox that remaps mounts (bwrap, "
                    "unshare)"
                )

    def _prepare(
        self, root: Path, argv: list[str], files: dict[str, bytes], limits: SandboxLimits,
        env: dict[str, str], *, folder: Path | None = None, network: bool = False,
        undumpable: bool = False, mounts: tuple[Mount, ...] = (), bridge: Bridge | None = None,
    ) -> Launch:
        """Lay out the private folder ``root`` (made for this run, removed after it) and say
        what to execute. Here: ``files`` straight into ``root`` (or ``folder``, the work folder
        given by :meth:`run_in`), the command as it is; ``network``, ``undumpable``, ``mounts``
        and ``bridge`` change nothing (there is no isolation to lift, nor any to keep a process
        from another: the host's folders are visible where they are, and the caller's server
        listens on the host's own ``127.0.0.1:bridge.port``, which the command shares)."""
        work = folder if folder is not None else root
        write_files(work, files)
        full_env = {**BASE_ENV, "HOME": str(work), "TMPDIR": str(root), **env}
        return Launch(argv, work, full_env, work, processes=os.getuid() != 0)

    def _finish(self, result: ProcessResult) -> ProcessResult:
        """Post-process a result (the isolating backends decode their wrapper's exit status)."""
        return result

    def _run(
        self,
        launch: Launch,
        limits: SandboxLimits,
        stdin: bytes | None,
        collect: tuple[str, ...],
    ) -> ProcessResult:
        work = launch.work
        start = time.perf_counter()
        proc = self._spawn(launch, limits, stdin=stdin is not None)
        if stdin is not None and proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError):
                proc.stdin.write(stdin)
            proc.stdin.close()
        out, err, timed_out = self._pump(proc, start + limits.wall_s, limits.output_bytes,
                                         len(launch.ready))
        if not timed_out:  # its streams closed: let it finish exiting (coreutils close them first)
            self._exit_seen(proc.pid, min(start + limits.wall_s, time.perf_counter() + EXIT_GRACE_S))
        _kill_group(proc.pid)  # nothing of the sample outlives it (the leader is not reaped yet)
        waited = self._reap(proc.pid, start + limits.wall_s if not timed_out else None)
        if waited is None:
            timed_out = True
            _kill_group(proc.pid)
            waited = self._reap(proc.pid, None)
        assert waited is not None
        status, usage = waited
        if launch.ready:
            if not err.startswith(launch.ready):
                tail = err.decode("utf-8", "replace").strip()[-2000:]
                raise InfraError(f"sandbox {self.name!r} failed to set up (wait status {status}):"
                                 f" {tail or 'no message'}")
            err = err[len(launch.ready):]
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall_ms = (time.perf_counter() - start) * 1000
        code = proc.returncode
        collected: dict[str, bytes] = {}
        tree = Tree(work)
        for rel in collect:  # the command wrote these: no link followed, regular files only
            try:
                got = tree.read(rel, limits.output_bytes * 16)
            except UnsafeFile:
                continue
            if got is not None:
                collected[rel] = got.data
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
    def _spawn(launch: Launch, limits: SandboxLimits, *, stdin: bool) -> subprocess.Popen[bytes]:
        parent = os.getpid()
        try:
            return subprocess.Popen(
                launch.argv,
                cwd=launch.cwd,
                env=launch.env,
                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                preexec_fn=lambda: _preexec(limits, launch.processes, launch.uid,
                                            launch.die_with_parent, parent),
                close_fds=True,
            )
        except OSError as e:
            raise InfraError(f"could not start {launch.argv[0]!r}: {e}") from e

    def start(
        self,
        argv: list[str],
        *,
        files: dict[str, bytes],
        limits: SandboxLimits,
        env: dict[str, str] | None = None,
    ) -> Session:
        root = Path(tempfile.mkdtemp(prefix="bw-sbx-", dir=self.tmp_root))
        try:
            launch = self._prepare(root, argv, files, limits, env or {})
            proc = self._spawn(launch, limits, stdin=True)
        except BaseException:
            discard(root)
            raise
        session = ProcessSession(proc, root)
        if launch.ready and not session.expect_ready(launch.ready, SESSION_START_S):
            tail = session.stderr_tail()
            session.close()
            raise InfraError(f"sandbox {self.name!r} failed to set up: {tail or 'no message'}")
        return session

    @staticmethod
    def _exit_seen(pid: int, deadline: float) -> None:
        """Wait until ``pid`` has exited (until ``deadline``) without reaping it: its process
        group keeps its id while the leader is a zombie, so killing the group afterwards can
        never reach a process that took the id over."""
        while time.perf_counter() < deadline:
            try:
                if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT | os.WNOHANG) is not None:
                    return
            except ChildProcessError:
                return
            time.sleep(0.0005)

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
    def _pump(proc: subprocess.Popen[bytes], deadline: float, cap: int,
              err_extra: int = 0) -> tuple[bytes, bytes, bool]:
        """Read stdout and stderr (``cap`` bytes each, ``err_extra`` more of stderr) until both
        close, the command is gone, or ``deadline``."""
        bufs: dict[int, bytearray] = {}
        caps: dict[int, int] = {}
        sel = selectors.DefaultSelector()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                os.set_blocking(stream.fileno(), False)
                sel.register(stream, selectors.EVENT_READ)
                bufs[stream.fileno()] = bytearray()
                caps[stream.fileno()] = cap + (err_extra if stream is proc.stderr else 0)
        timed_out = False
        open_streams = len(bufs)
        gone: float | None = None  # when the command was seen gone
        while open_streams:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                timed_out = True
                _kill_group(proc.pid)
                break
            events = sel.select(timeout=0 if gone is not None else min(remaining, 0.05))
            if gone is not None and (not events or time.perf_counter() - gone > DRAIN_S):
                break  # what it wrote before it exited is read; the rest is not its own
            if not events:
                # the command may be gone while something it left behind holds the pipes
                # open; what it wrote just before it exited is still in them: read that first
                if _exited(proc.pid):
                    gone = time.perf_counter()
                continue
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
                buf, limit = bufs[fd], caps[fd]
                if len(buf) < limit:
                    buf.extend(chunk[: limit - len(buf)])
        sel.close()
        assert proc.stdout is not None and proc.stderr is not None
        out = bytes(bufs.get(proc.stdout.fileno(), b""))
        err = bytes(bufs.get(proc.stderr.fileno(), b""))
        proc.stdout.close()
        proc.stderr.close()
        return out, err, timed_out
