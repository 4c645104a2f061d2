"""The ``unshare`` sandbox: util-linux tools only, for hosts without bubblewrap.

It builds the same world as bwrap (see :mod:`.isolated`) by hand. The harness lays out a
skeleton root in the run's private folder (mount points, ``/bin -> usr/bin`` symlinks, the
sandbox's ``/etc`` files, empty files to bind devices onto) and an fstab; one run executes,
in a child of the harness with the rlimits set, in a session of its own and -- when the harness
is root -- as the run's own uid U (see :mod:`.isolated`), lines broken for reading::

    unshare --user --map-root-user --mount --propagation private --pid --fork --kill-child
            --net --ipc --uts --
    /bin/sh -c SETUP bw-setup RUN/fstab RUN/root COMMAND...

SETUP, inside the new namespaces (as uid 0 of the new user namespace, i.e. host uid U)::

    mount --fstab RUN/fstab -a          # the skeleton bound onto itself read-only, /usr, the
                                        # /etc pieces and devices read-only binds, a fresh
                                        # /proc, tmpfs /dev/shm and /tmp, RUN/work at /work
                                        # then run_in's mounts (and a bridge's socket folder
                                        # at /bw-bridge): bind,ro or bind (never rbind, whose
                                        # submounts mount(8) would leave writable), nosuid,nodev
    ip link set lo up                   # where iproute2 is installed (else lo stays down)
    cd RUN/root && pivot_root . . && umount -l . && cd /work    # the host's root is gone
    printf READY >&2
    setpriv --bounding-set=-all --inh-caps=-all --no-new-privs -- env --default-signal=INT,QUIT \
        COMMAND... &                    # with the standard streams; this shell (PID 1) then
    exec </dev/null >/dev/null 2>&1     # holds none of them (see isolated.INIT)
    wait $!; exit $?

A mount's mount point is made in the skeleton before the run (which is read-only once bound),
except under ``/tmp``: the tmpfs mounted there in the namespace would hide it, so its fstab
entry carries ``X-mount.mkdir`` and ``mount`` makes it in the tmpfs. A bridge needs the
loopback up: without ``ip`` on the host it is an ``InfraError``.

``pivot_root`` followed by a lazy unmount of the old root leaves nothing of the host reachable
(a ``chroot`` could be escaped by a process with capabilities in the namespace). ``setpriv``
then drops every capability before the command runs, so inside it is uid 0 without any
privilege, and host uid U outside. The shell stays PID 1 (as with bwrap): when the command
ends, the kernel kills whatever is left in the PID namespace; ``--kill-child`` kills the
namespace when the harness kills ``unshare`` on a timeout.

What it cannot do that bwrap does: forbid nested user namespaces (``--disable-userns``), set a
hostname. It promises the same guarantees; the conformance suite checks each of them.
Measured here: about +11 ms a run over rlimits (bwrap: +5 ms): five more programs start
(``mount``, ``ip``, ``pivot_root``, ``umount``, ``setpriv``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from benchwright.errors import InfraError
from benchwright.sandbox.base import Bridge, SandboxLimits
from benchwright.sandbox.isolated import (
    DEVICES,
    ETC_FILES,
    INSIDE_CMD,
    INSIDE_TMP,
    INSIDE_WORK,
    READY,
    RESET_SIGNALS,
    IsolatedSandbox,
    Shown,
    SystemView,
    tmp_size_bytes,
)

SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
"""Where SETUP looks for its programs."""
LOOPBACK_UP = "! command -v ip >/dev/null || ip link set lo up || exit 1\n"
"""Brings up the new network namespace's loopback (not run with the host's network)."""
SETUP = (
    'path=$PATH; PATH=/usr/sbin:/usr/bin:/sbin:/bin\n'
    'mount --fstab "$1" -a || exit 1\n'
    + LOOPBACK_UP +
    'cd "$2" && pivot_root . . && umount -l . && cd /work || exit 1\n'
    "shift 2; PATH=$path; unset OLDPWD\n"
    f"printf '{READY.decode().strip()}\\n' >&2\n"
    "exec 4<&0 5>&1 6>&2\n"
    "/usr/bin/setpriv --bounding-set=-all --inh-caps=-all --no-new-privs -- "
    f'{" ".join(RESET_SIGNALS)} "$@" <&4 >&5 2>&6 4<&- 5>&- 6>&- &\n'
    "exec 0</dev/null 1>/dev/null 2>/dev/null 4<&- 5>&- 6>&-\n"
    "wait $!\n"
    "exit $?\n"
)


def _fstab_path(path: str | Path) -> str:
    """A path as an fstab field (spaces and the like octal-escaped)."""
    text = str(path)
    for ch in ("\\", " ", "\t", "\n"):
        text = text.replace(ch, f"\\{ord(ch):03o}")
    return text


class UnshareSandbox(IsolatedSandbox):
    """util-linux ``unshare`` + ``mount`` + ``pivot_root``: the same view as bwrap."""

    name = "unshare"
    isolation = "namespaces"
    tools = ("unshare", "mount", "umount", "pivot_root", "setpriv")
    install_hint = "apt-get install util-linux mount"

    def _check_bridge(self, bridge: Bridge) -> None:
        super()._check_bridge(bridge)
        if shutil.which("ip", path=SYSTEM_PATH) is None:
            raise InfraError(
                f"the {self.name} sandbox's bridge to {bridge.socket} needs the sandbox's "
                "loopback, which it brings up with iproute2's `ip`, not installed here: "
                "`apt-get install iproute2` (or use the bwrap sandbox)"
            )

    def _wrap(
        self, argv: list[str], root: Path, work: Path, view: SystemView, limits: SandboxLimits,
        env: dict[str, str], *, network: bool = False, shown: Sequence[Shown] = (),
    ) -> list[str]:
        new = root / "root"
        entries: list[tuple[str, str, str, str]] = [(str(new), str(new), "none", "bind,ro")]
        for d in ("proc", "dev", "dev/shm", "dev/mqueue", "tmp", "work", "etc"):
            (new / d).mkdir(parents=True, exist_ok=True)
        for path in view.binds:
            target = new / path.lstrip("/")
            if os.path.isdir(path):
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.touch()
            entries.append((path, str(target), "none", "rbind,ro"))
        for target_link, path in view.symlinks:
            os.symlink(target_link, new / path.lstrip("/"))
        for name, text in ETC_FILES.items():
            (new / "etc" / name).write_text(text)
        for dev in DEVICES:
            (new / "dev" / dev).touch()
            entries.append((f"/dev/{dev}", str(new / "dev" / dev), "none", "bind"))
        for i, name in enumerate(("stdin", "stdout", "stderr")):
            os.symlink(f"/proc/self/fd/{i}", new / "dev" / name)
        os.symlink("/proc/self/fd", new / "dev" / "fd")
        os.symlink("/proc/kcore", new / "dev" / "core")
        size = tmp_size_bytes(limits)
        entries += [
            ("tmpfs", str(new / "dev/shm"), "tmpfs", f"nosuid,nodev,mode=1777,size={size}"),
            ("mqueue", str(new / "dev/mqueue"), "mqueue", "nosuid,nodev,noexec"),
            ("proc", str(new / "proc"), "proc", "nosuid,nodev,noexec"),
            ("tmpfs", str(new / INSIDE_TMP.lstrip("/")), "tmpfs",
             f"nosuid,nodev,mode=1777,size={size}"),
            (str(work), str(new / INSIDE_WORK.lstrip("/")), "none", "bind,nosuid,nodev"),
        ]
        for mount in shown:
            # not rbind: mount(8) would leave the host's submounts of a read-only mount writable
            opts = "bind,nosuid,nodev" if mount.writable else "bind,ro,nosuid,nodev"
            point = new / mount.inside.lstrip("/")
            if mount.inside.startswith(INSIDE_TMP + "/"):  # in the tmpfs, once it is mounted
                opts += ",X-mount.mkdir=0755"
            else:  # in the skeleton, which is read-only once mounted
                point.mkdir(parents=True, exist_ok=True)
            entries.append((mount.source, str(point), "none", opts))
        if (root / "cmd").exists():  # an undumpable command's execute-only program
            (new / INSIDE_CMD.lstrip("/")).touch()
            entries.append((str(root / "cmd"), str(new / INSIDE_CMD.lstrip("/")), "none", "bind,ro"))
        fstab = root / "fstab"
        fstab.write_text("".join(
            f"{_fstab_path(src)} {_fstab_path(dst)} {kind} {opts} 0 0\n"
            for src, dst, kind, opts in entries
        ))
        return [
            "unshare", "--user", "--map-root-user", "--mount", "--propagation", "private",
            "--pid", "--fork", "--kill-child", *([] if network else ["--net"]), "--ipc", "--uts", "--",
            "/bin/sh", "-c", SETUP.replace(LOOPBACK_UP, "") if network else SETUP, "bw-setup",
            str(fstab), str(new), *argv,
        ]
