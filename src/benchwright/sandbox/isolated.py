"""What the isolating backends (:mod:`.bwrap`, :mod:`.unshare`) share.

Both run the command in new user, mount, PID, network, IPC and UTS namespaces and show it the
same small world:

* **Visible, read-only** (:func:`system_view`): ``/usr``; ``/bin``, ``/sbin``, ``/lib``,
  ``/lib64`` (the same symlinks into ``/usr`` as on the host, or read-only binds where the host
  has real folders); from ``/etc`` only what toolchains need: ``/etc/alternatives`` (``java``
  and ``javac`` in ``/usr/bin`` point through it), ``/etc/java-*`` (the JDK's ``conf`` and
  ``jvm.cfg`` point there) and ``/etc/ld.so.cache`` (faster dynamic linking); plus four files
  written for the sandbox (:data:`ETC_FILES`: ``passwd``, ``group``, ``hosts`` with only
  ``localhost``, ``nsswitch.conf``). Not ``/etc/ssl`` (there is no network), not
  ``/etc/localtime`` (sandboxed code runs in UTC on every host), not ``/opt``, ``/srv``,
  ``/var``, ``/run``, ``/mnt``, ``/media``, ``/root``, ``/home``, the host's ``/tmp`` nor any
  workspace or results folder: they do not exist inside.
* **Private**: ``/proc`` of the sandbox's own PID namespace, a minimal ``/dev`` (``null``,
  ``zero``, ``full``, ``random``, ``urandom``, ``tty``, ``shm``, ``mqueue`` for the IPC
  namespace's POSIX message queues), a size-limited tmpfs at
  ``/tmp`` and the work folder (the run's ``files``) read-write at :data:`INSIDE_WORK`, which
  is also the working directory and ``HOME``. Everything else is read-only.
* **Mounts** (:meth:`~benchwright.sandbox.base.Sandbox.run_in` only, what the caller asks
  for and nothing more): each :class:`~benchwright.sandbox.base.Mount`'s host folder at
  ``mount.inside`` (its host path, or its ``target``: these backends remap), non-recursively
  under unshare. Read-only unless ``writable``; a writable one is handed to the run's uid on
  every run when the harness is root, like the work folder (with ``lchown``: a link the
  command left is never followed). The harness checks before the run that the source is an
  existing folder the run's uid can reach (a root harness: ``o+x`` on every folder of its
  path, and on the folder itself when it is read-only; its files need ``o+r`` to be read), that
  the target is absolute, normalised, neither ``/``, ``/tmp`` itself, nor at or under the
  sandbox's own folders (:data:`RESERVED`, the system view), that no mount nests in another,
  and never mounts a system folder (:data:`SYSTEM_TREES`, :data:`TOP_FOLDERS`) writable: an
  ``InfraError`` otherwise. A mount under ``/tmp`` lies on top of the private tmpfs. A program
  in a mount resolves like a system one (``_check_program``).
* **Bridge** (``run_in`` without ``network``): the folder of ``bridge.socket`` is shown
  read-only at :data:`INSIDE_BRIDGE` and the command becomes ``/usr/bin/python3 -I -S -c
  FORWARDER PORT /bw-bridge/<socket name> -- COMMAND...`` (:mod:`.bridge`): it listens on the
  sandbox's own ``127.0.0.1:PORT``, leaves an orphaned server that connects each accepted
  connection to the socket, and executes the command, which thus starts once the port
  listens and is still the child of PID 1 whose status is reported. That port and that socket
  are all the command reaches; the network namespace is still its own. When the harness is
  root the socket must be connectable by the run's uid: mode ``0o666``, in a folder of its own
  (``0o711``, with ``o+x`` above it), or the run is an ``InfraError`` naming that. The port is
  1024-65535 (the command has no privilege). With ``network`` the bridge does nothing: the
  caller's server listens on the host's ``127.0.0.1:PORT`` too.
* **Identity**: when the harness is root the command runs as a host uid/gid of its own
  (:func:`sandbox_uid`, no supplementary groups), dropped in the forked child *before* the
  wrapper is executed, i.e. before the namespaces are made (what ``setpriv --reuid=U
  --regid=U --clear-groups`` does, without starting one more program): a uid switched inside
  a user namespace created by root would still be kuid 0 (RLIMIT_NPROC would not bind, host
  files owned by root would stay readable). A uid per sample rather than a
  shared ``nobody`` keeps samples that run at the same time apart: RLIMIT_NPROC counts per
  uid, so one sample's fork bomb cannot starve another of processes. When the harness is not
  root the command keeps the harness's uid (unprivileged user namespaces). The work folder is
  handed to that uid; nothing else it can see belongs to it.
* **Lifetime**: a small ``/bin/sh`` is PID 1 of the sandbox, runs the command as its child
  and exits with its status (:data:`INIT`; it keeps no pipe to the harness while it waits, and
  under bwrap it is an execute-only copy, :func:`init_shell`, so that no process of the sandbox
  can ptrace it or open its ``/proc`` files; under unshare it keeps its capabilities in the
  namespace, which the command has not, with the same effect); when PID 1 exits the kernel kills everything left in the PID
  namespace (setsid daemons, SIGTERM-ignoring children). On a timeout the harness kills the
  wrapper's process group and the namespace dies with it (``--die-with-parent`` /
  ``--kill-child``). The wrapper also gets PR_SET_PDEATHSIG: if the harness itself is killed,
  the sandbox dies with it. The shell also makes resource usage add up: the harness's ``wait4`` sees
  the CPU time and peak memory of the command and what it waited for.
* **Exit status**: the command's status comes back through that shell, so a death by signal
  N arrives as exit status ``128 + N``. It is reported as the signal (``exit_code None``,
  ``signal N``); a command that really exits with 129-192 is reported as killed.
* **Start-up check**: the shell writes :data:`READY` to stderr after the sandbox is set up
  and just before the command starts. A run without it is an ``InfraError`` (the sandbox,
  not the code, failed); the command cannot remove it, so it cannot pass itself off as one.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from benchwright.errors import InfraError
from benchwright.safefs import chown_tree
from benchwright.sandbox import bridge as forwarder
from benchwright.sandbox.base import GUARANTEES, Bridge, Mount, ProcessResult, SandboxLimits
from benchwright.sandbox.rlimit import BASE_ENV, Launch, RlimitSandbox, write_files

INSIDE_WORK = "/work"
"""Where the private work folder is inside the sandbox (also the working directory, HOME)."""
INSIDE_TMP = "/tmp"
SYSTEM_PYTHON = "/usr/bin/python3"
"""Sandboxed Python code runs with the system interpreter: a venv or pyenv Python lives under a
home folder, which is invisible inside."""
PYTHON_HINT = "apt-get install python3"
READY = b"[bw-sandbox-ready]\n"
UID_BASE = 1 << 30
"""Sandbox uids are ``UID_BASE + 64 * (pid mod 2**22) + (n mod 64)``: far above the uids of
real users, distinct per harness process and per concurrent run (see :func:`sandbox_uid`)."""
TMP_MIN_MB = 64
"""The private ``/tmp`` is ``max(TMP_MIN_MB, 4 * file_size_mb)`` MiB (it lives in memory)."""
INSIDE_UID = 1000
"""The uid the command sees inside the bwrap sandbox (the unshare sandbox maps it to 0)."""
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")

ETC_FILES: dict[str, str] = {
    "passwd": (
        "root:x:0:0:root:/work:/bin/sh\n"
        f"sandbox:x:{INSIDE_UID}:{INSIDE_UID}:sandbox:/work:/bin/sh\n"
        "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
    ),
    "group": f"root:x:0:\nsandbox:x:{INSIDE_UID}:\nnogroup:x:65534:\n",
    "hosts": "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n",
    "nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\n",
}
RESET_SIGNALS = ("/usr/bin/env", "--default-signal=INT,QUIT")
"""Put before the command started in the background by :data:`INIT`: a shell without job
control starts background commands with SIGINT and SIGQUIT ignored, and no shell builtin can
undo that (``env`` from coreutils 8.31 can)."""
INIT = (
    f"printf '{READY.decode().strip()}\\n' >&2\n"
    "exec 4<&0 5>&1 6>&2\n"
    f"{' '.join(RESET_SIGNALS)} \"$@\" <&4 >&5 2>&6 4<&- 5>&- 6>&- &\n"
    "exec 0</dev/null 1>/dev/null 2>/dev/null 4<&- 5>&- 6>&-\n"
    "wait $!\n"
    "exit $?\n"
)
"""PID 1 of the sandbox: report that the sandbox is up, run the command as a child (not
``exec``: the command must not be PID 1, which ignores signals it has no handler for), and
exit with its status. The command gets the standard streams; PID 1 itself then holds nothing
but /dev/null while it waits. It is a shell, and a shell cannot make itself non-dumpable: had
it kept the pipes to the harness, any process of the sandbox's uid could open them through
``/proc/1/fd`` (write result lines into the harness's stdout pipe, read or inject the jobs on
its stdin). Nothing of its own reaches the command's stderr ("Killed", "Terminated")."""

INSIDE_INIT = "/bw-init"
"""Where the bwrap sandbox's PID 1 program is: :func:`init_shell`."""
INSIDE_CMD = "/bw-cmd"
"""Where an undumpable command's program is (``Sandbox.run(undumpable=True)``)."""
INSIDE_BRIDGE = "/bw-bridge"
"""Where the folder of a :class:`~benchwright.sandbox.base.Bridge`'s socket is shown, read-only
(the socket itself is ``/bw-bridge/<its name>``)."""
RESERVED = ("/proc", "/dev", "/etc", "/sys", INSIDE_WORK, INSIDE_INIT, INSIDE_CMD, INSIDE_BRIDGE)
"""Inside paths a mount may neither be at nor under (nor at ``/`` or ``/tmp`` itself, nor in
the system view)."""
SYSTEM_TREES = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/boot",
                "/proc", "/sys", "/dev")
"""Host folders never mounted writable, nor anything in them (a root harness hands a writable
mount to the run's uid)."""
TOP_FOLDERS = (*SYSTEM_TREES, "/var", "/home", "/root", "/tmp", "/opt", "/srv", "/run", "/mnt",
               "/media")
"""Host folders never mounted writable themselves, nor any folder above them (``/``)."""
_counter = itertools.count()


def exec_only(program: str, dest: Path) -> None:
    """Put at ``dest`` (in a run's private folder, removed with it) a copy of the host's
    ``program`` that nobody may read, only execute (mode 0111). About 0.2 ms for a shell.

    A process that executes a program it cannot read is not dumpable (the kernel keeps the
    memory of execute-only binaries private): processes of the same uid cannot ptrace it, read
    its memory or open its ``/proc/<pid>/fd``. That is how the sandbox makes a shell -- which
    cannot make itself non-dumpable -- its PID 1 (:func:`init_shell`), and how it starts an
    undumpable command (a judge written in a shell language).

    Raises:
        InfraError: the copy could not be made.
    """
    try:
        shutil.copyfile(os.path.realpath(program), dest)
        os.chmod(dest, 0o111)
    except OSError as e:
        raise InfraError(f"could not prepare an execute-only copy of {program} in "
                         f"{dest.parent}: {e}") from e


def init_shell(root: Path) -> str:
    """The bwrap sandbox's PID 1 program in the run's private folder ``root``: an execute-only
    ``/bin/sh`` (:func:`exec_only`). PID 1 is then out of reach of every process of the
    sandbox: no ptrace (a sample could otherwise make PID 1 run its code, outside the reach of
    the fork server's reaping, or take the pipes it holds), no ``/proc/1/mem``, no ``/proc/1/fd``.
    """
    path = root / "init"
    exec_only("/bin/sh", path)
    return str(path)


def sandbox_uid() -> int:
    """A host uid for one run: unique among this process's concurrent runs and across harness
    processes (their pids differ)."""
    return UID_BASE + (os.getpid() % (1 << 22)) * 64 + next(_counter) % 64


@dataclass(frozen=True)
class SystemView:
    """The host paths shown read-only inside, at the same place."""

    binds: tuple[str, ...]
    """Folders and files bound read-only."""
    symlinks: tuple[tuple[str, str], ...]
    """``(target, path)``: ``/bin -> usr/bin`` and the like, copied from the host."""
    roots: tuple[str, ...]
    """The folders whose contents are visible (programs must resolve into one of them)."""


@lru_cache(maxsize=1)
def system_view() -> SystemView:
    binds = ["/usr"]
    links: list[tuple[str, str]] = []
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = "/" + name
        if os.path.islink(path):
            target = os.readlink(path)
            if os.path.realpath(path).startswith("/usr/"):
                links.append((target, path))
        elif os.path.isdir(path):
            binds.append(path)
    roots = tuple(binds)
    for extra in ("/etc/alternatives", *sorted(glob.glob("/etc/java-*")), "/etc/ld.so.cache"):
        if os.path.exists(extra):
            binds.append(extra)
    return SystemView(tuple(binds), tuple(links), roots)


NETWORK_FILES = ("/etc/resolv.conf", "/etc/ssl", "/etc/ca-certificates", "/etc/gai.conf")
"""Shown read-only to a command granted the network (:meth:`Sandbox.run_in`)."""


@dataclass(frozen=True)
class Shown:
    """A host folder shown inside at ``inside`` (a :class:`Mount`, or a bridge's socket folder)."""

    source: str
    """The host folder, resolved (no link in it)."""
    inside: str
    writable: bool


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _visible(path: str, view: SystemView) -> bool:
    real = os.path.realpath(path)
    return any(_under(real, root) for root in view.roots)


def _host_path(program: str, view: SystemView, shown: Sequence[Shown]) -> str | None:
    """The host path of the inside path ``program`` when it is visible inside: in the system
    view, or in a mount (and not out of it through a link)."""
    for mount in shown:
        if _under(program, mount.inside) and program != mount.inside:
            host = os.path.join(mount.source, program[len(mount.inside):].lstrip("/"))
            real = os.path.realpath(host)
            if _under(real, mount.source) or _visible(real, view):
                return host
            return None
    return program if _visible(program, view) else None


def tmp_size_bytes(limits: SandboxLimits) -> int:
    return max(TMP_MIN_MB, 4 * limits.file_size_mb) * 1024 * 1024


def decode_status(result: ProcessResult) -> ProcessResult:
    """Exit status ``128 + N`` from the sandbox's shell -> killed by signal N."""
    code = result.exit_code
    if code is not None and 128 < code <= 128 + 64:
        return ProcessResult(
            exit_code=None, signal=code - 128, stdout=result.stdout, stderr=result.stderr,
            timed_out=result.timed_out, wall_ms=result.wall_ms, cpu_ms=result.cpu_ms,
            max_rss_bytes=result.max_rss_bytes, files=result.files,
        )
    return result


class IsolatedSandbox(RlimitSandbox):
    """The shared part of the namespace backends: layout, uid, program check, status."""

    isolation = "namespaces"
    remaps = True
    work_path = INSIDE_WORK
    promised: frozenset[str] = frozenset(GUARANTEES)
    tools: tuple[str, ...] = ()
    """Host programs the backend needs."""
    install_hint = ""

    def __init__(self, tmp_root: str | None = None) -> None:
        if tmp_root is None and os.getuid() == 0 and not _reachable(Path(tempfile.gettempdir())):
            tmp_root = "/tmp"  # TMPDIR is private (0700): the sandbox's uid could not mount from it
        super().__init__(tmp_root)
        self.guarantees = self.promised

    @property
    def python(self) -> str:
        if not os.access(SYSTEM_PYTHON, os.X_OK):
            raise InfraError(
                f"the {self.name} sandbox runs Python code with the system interpreter "
                f"{SYSTEM_PYTHON}, which this machine does not have: `{PYTHON_HINT}`"
            )
        return SYSTEM_PYTHON

    def unavailable(self) -> str | None:
        needed = self.tools
        path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
        missing = [t for t in needed if shutil.which(t, path=path) is None]
        if missing:
            return f"{', '.join(missing)} not found on PATH (`{self.install_hint}`)"
        return None

    # ---- one run

    def _check_mounts(self, mounts: tuple[Mount, ...]) -> None:
        """Where each mount goes inside (absolute, not on the sandbox's own folders, not
        nested), and -- when the harness is root -- that the run's uid can reach its source."""
        view = system_view()
        seen: list[str] = []
        for mount in mounts:
            inside = mount.inside
            if not inside.startswith("/") or os.path.normpath(inside) != inside:
                raise InfraError(f"cannot show {mount.source} at {inside!r} in the {self.name} "
                                 "sandbox: the target must be an absolute, normalised path")
            taken = (*RESERVED, *view.binds, *(path for _t, path in view.symlinks))
            if inside in ("/", INSIDE_TMP) or any(_under(inside, r) for r in taken):
                raise InfraError(
                    f"cannot show {mount.source} at {inside} in the {self.name} sandbox: that "
                    f"is one of the sandbox's own folders ({', '.join(taken)}, / and "
                    f"{INSIDE_TMP} itself): pass another target, e.g. /opt/<name> or "
                    f"{INSIDE_TMP}/<name>"
                )
            for other in seen:
                if _under(inside, other) or _under(other, inside):
                    raise InfraError(f"mounts at {other} and {inside} overlap in the "
                                     f"{self.name} sandbox: mount folders that do not nest")
            seen.append(inside)
            real = os.path.realpath(mount.source)
            if mount.writable and (any(_under(real, p) for p in SYSTEM_TREES)
                                   or any(_under(p, real) for p in TOP_FOLDERS)):
                raise InfraError(f"refusing to mount the system folder {real} writable in the "
                                 f"{self.name} sandbox: mount a folder of its own")
            if os.getuid() == 0:
                reach = Path(real) if not mount.writable else Path(real).parent
                if not _reachable(reach):
                    raise InfraError(
                        f"cannot mount {mount.source} in the {self.name} sandbox: the run's "
                        "own uid cannot reach it (a folder on its path has no x bit for other "
                        "users, like /root): move it to a folder every user can pass through, "
                        "or give the folders on its path o+x"
                    )

    def _check_bridge(self, bridge: Bridge) -> None:
        """The socket must be there, and connectable by the run's uid."""
        where = f"the {self.name} sandbox's bridge to {bridge.socket}"
        if not 1024 <= bridge.port <= 65535:
            raise InfraError(f"{where}: port {bridge.port} cannot be listened on inside (the "
                             "command has no privilege): use a port from 1024 to 65535")
        try:
            mode = os.stat(bridge.socket).st_mode
        except OSError as e:
            raise InfraError(f"{where}: the socket is not there ({e}): start its server "
                             "before the run") from e
        if not stat.S_ISSOCK(mode):
            raise InfraError(f"{where}: {bridge.socket} is not a Unix socket")
        if os.getuid() == 0:
            folder = Path(os.path.realpath(bridge.socket.parent))
            if not _reachable(folder) or (mode & 0o002) == 0:
                raise InfraError(
                    f"{where}: the run's own uid cannot connect to it: put the socket in a "
                    "folder of its own that every user can pass through (mode 0o711, and o+x "
                    "on the folders above it) and make the socket 0o666"
                )

    def _prepare(
        self, root: Path, argv: list[str], files: dict[str, bytes], limits: SandboxLimits,
        env: dict[str, str], *, folder: Path | None = None, network: bool = False,
        undumpable: bool = False, mounts: tuple[Mount, ...] = (), bridge: Bridge | None = None,
    ) -> Launch:
        if not argv:
            raise InfraError("nothing to run")
        full_env = {**BASE_ENV, "HOME": INSIDE_WORK, "TMPDIR": INSIDE_TMP, **env}
        view = system_view()
        if network:  # name resolution and certificates, for an agent that calls its API
            extra = tuple(p for p in NETWORK_FILES if os.path.exists(p))
            view = SystemView(view.binds + extra, view.symlinks, view.roots)
        shown = [Shown(os.path.realpath(m.source), m.inside, m.writable) for m in mounts]
        program = self._check_program(argv[0], files, full_env.get("PATH", ""), view, shown)
        if bridge is not None and not network:
            self._check_bridge(bridge)
            argv = [SYSTEM_PYTHON, "-I", "-S", "-c", forwarder.source(), str(bridge.port),
                    f"{INSIDE_BRIDGE}/{bridge.socket.name}", "--", *argv]
            shown.append(Shown(os.path.realpath(bridge.socket.parent), INSIDE_BRIDGE, False))
        if undumpable:
            if program is None:
                raise InfraError(f"{argv[0]!r} cannot run undumpable: it is not a program of "
                                 "the system")
            exec_only(program, root / "cmd")
            argv = [INSIDE_CMD, *argv[1:]]
        uid = sandbox_uid() if os.getuid() == 0 else None
        if uid is not None:
            _check_reachable(root.parent)
            if folder is not None:
                _check_reachable(folder.parent)
        os.chmod(root, 0o711)  # the sandbox uid must reach work/ (and etc/) to bind them
        if folder is not None:
            work = folder
            os.chmod(work, 0o755)
        else:
            work = root / "work"
            work.mkdir()
        write_files(work, files)
        etc = root / "etc"
        etc.mkdir()
        for name, text in ETC_FILES.items():
            (etc / name).write_text(text)
        if uid is not None:
            _chown_tree(work, uid)
            for mount in shown:  # each run has a uid of its own
                if mount.writable:
                    _chown_tree(Path(mount.source), uid)
        wrapped = self._wrap(argv, root, work, view, limits, full_env, network=network,
                             shown=shown)
        return Launch(wrapped, root, full_env, work, processes=True, uid=uid, ready=READY,
                      die_with_parent=True)

    def _wrap(
        self, argv: list[str], root: Path, work: Path, view: SystemView, limits: SandboxLimits,
        env: dict[str, str], *, network: bool = False, shown: Sequence[Shown] = (),
    ) -> list[str]:
        """The wrapped command; ``shown``: the host folders to show besides the system view
        (mounts and a bridge's socket folder), in order, none nested in another."""
        raise NotImplementedError

    def _finish(self, result: ProcessResult) -> ProcessResult:
        return decode_status(result)

    def _check_program(self, program: str, files: dict[str, bytes], path: str,
                       view: SystemView, shown: Sequence[Shown] = ()) -> str | None:
        """Fail early (InfraError, like a missing program for the rlimit backend) when the
        program cannot exist inside: the sandbox itself would only say 'not found' (127).
        Returns the host path of a system program or of one in a mount (None: one of
        ``files``)."""
        if program.startswith(INSIDE_WORK + "/") or ("/" in program and not program.startswith("/")):
            rel = os.path.normpath(program[len(INSIDE_WORK) + 1:] if program.startswith("/")
                                   else program)
            if rel in files:
                return None
            raise InfraError(
                f"could not start {program!r}: not among the files of the sandbox's private work "
                f"folder (mounted at {INSIDE_WORK}; the host's {INSIDE_WORK} is invisible inside)"
            )
        mounted = f" and the mounts {', '.join(m.inside for m in shown)}" if shown else ""
        if program.startswith("/"):
            host = _host_path(program, view, shown)
            if host is not None and os.access(host, os.X_OK):
                return host
            raise InfraError(
                f"could not start {program!r}: it is not inside the {self.name} sandbox, which "
                f"shows only {', '.join(view.roots)}{mounted} (a program under a home folder "
                "or a virtualenv is invisible there unless its folder is mounted)"
            )
        for folder in path.split(":"):
            if not folder:
                continue
            host = _host_path(os.path.join(folder, program), view, shown)
            if host is not None and os.access(host, os.X_OK):
                return host
        raise InfraError(f"could not start {program!r}: not found on the sandbox's PATH {path!r}"
                         + (f" (it shows {', '.join(view.roots)}{mounted})" if shown else ""))


def _reachable(folder: Path) -> bool:
    """Whether any user can pass through ``folder`` and every folder above it."""
    try:
        return all(os.stat(part).st_mode & 0o001 for part in (folder, *folder.parents))
    except OSError:
        return False


@lru_cache(maxsize=8)
def _check_reachable(folder: Path) -> None:
    """The sandbox uid must reach the run's folder inside ``folder`` to mount it."""
    if not _reachable(folder):
        raise InfraError(
            f"the sandbox's temporary folder {str(folder)!r} is not reachable by other users "
            "(a folder on its path has no x bit for them), so the sandbox's uid cannot mount "
            "its work folder: use a folder like /tmp"
        )


def _chown_tree(folder: Path, uid: int) -> None:
    """Hand the work folder to the run's uid: a workspace an agent left (links, a tree
    thousands of folders deep) is walked without following a link or recursing."""
    chown_tree(folder, uid, uid)
