"""The bubblewrap sandbox: the preferred backend (see :mod:`.isolated` for what it shows).

One run executes, in a child of the harness that has set the rlimits (CPU, address space,
file size, core, NPROC), started a session of its own and -- when the harness is root --
switched to the run's own uid U (like ``setpriv --reuid=U --regid=U --clear-groups``), lines
broken for reading::

    bwrap --unshare-all --unshare-user --disable-userns --die-with-parent --new-session
          --as-pid-1 --clearenv --uid 1000 --gid 1000 --hostname sandbox
          --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/sbin /sbin
          --symlink usr/lib /lib --symlink usr/lib64 /lib64
          --ro-bind /etc/alternatives /etc/alternatives --ro-bind /etc/java-17-openjdk ...
          --ro-bind /etc/ld.so.cache /etc/ld.so.cache
          --ro-bind RUN/etc/passwd /etc/passwd   (group, hosts, nsswitch.conf likewise)
          --proc /proc --dev /dev --size BYTES --tmpfs /dev/shm --mqueue /dev/mqueue
          --remount-ro /dev
          --size BYTES --tmpfs /tmp
          --ro-bind MOUNT INSIDE ... --bind WRITABLE INSIDE ...   (run_in's mounts, and the
                                                                   bridge's socket folder at
                                                                   /bw-bridge: read-only)
          --bind RUN/work /work --chdir /work --ro-bind RUN/init /bw-init --remount-ro /
          --setenv PATH ... --setenv LANG ... --setenv HOME /work --setenv TMPDIR /tmp ...
          -- /bw-init -c INIT bw-init COMMAND...

The mounts come after the tmpfs ``/tmp``, so one under ``/tmp`` lands on top of it; bwrap makes
their mount points (in its root tmpfs, or in the private ``/tmp``) before ``--remount-ro /``.
``--ro-bind`` is recursive and makes every submount read-only too. With a bridge, COMMAND is
the forwarder of :mod:`.bridge` followed by the command (see :mod:`.isolated`).

``--unshare-all`` gives new user, mount, PID, network
(only ``lo``), IPC, UTS and cgroup namespaces; ``--disable-userns`` forbids nested user
namespaces; bwrap drops every capability and sets ``no_new_privs``. ``--as-pid-1`` leaves PID 1
to :data:`.isolated.INIT` (a shell that runs the command as its child), so that the command's
CPU time and peak memory reach the harness's ``wait4``. That shell is an execute-only copy of
``/bin/sh`` (:func:`.isolated.init_shell`), which makes PID 1 non-dumpable: no process of the
sandbox can ptrace it or open its ``/proc`` files.

Measured on the project's machine (``benchmarks/sandbox_overhead.py``, medians of 50): about
+5 ms a run over the rlimit backend (``true`` 9.6 against 4.9 ms, ``python3 -I -S -c pass``
16.7 against 11.2 ms with the same interpreter), of which ``--disable-userns`` is about 1 ms
and ``--proc`` about 1 ms.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benchwright.sandbox.base import SandboxLimits
from benchwright.sandbox.isolated import (
    ETC_FILES,
    INIT,
    INSIDE_CMD,
    INSIDE_INIT,
    INSIDE_TMP,
    INSIDE_UID,
    INSIDE_WORK,
    IsolatedSandbox,
    Shown,
    SystemView,
    init_shell,
    tmp_size_bytes,
)


class BwrapSandbox(IsolatedSandbox):
    """bubblewrap: new namespaces, a read-only system, a private work folder, no network."""

    name = "bwrap"
    isolation = "bwrap"
    tools = ("bwrap",)
    install_hint = "apt-get install bubblewrap"

    def _wrap(
        self, argv: list[str], root: Path, work: Path, view: SystemView, limits: SandboxLimits,
        env: dict[str, str], *, network: bool = False, shown: Sequence[Shown] = (),
    ) -> list[str]:
        cmd = [
            "bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
            "--new-session", "--as-pid-1", "--clearenv",
            "--uid", str(INSIDE_UID), "--gid", str(INSIDE_UID), "--hostname", "sandbox",
        ]
        if network:
            cmd.append("--share-net")
        for path in view.binds:
            cmd += ["--ro-bind", path, path]
        for target, path in view.symlinks:
            cmd += ["--symlink", target, path]
        for name in ETC_FILES:
            cmd += ["--ro-bind", str(root / "etc" / name), f"/etc/{name}"]
        cmd += [
            "--proc", "/proc", "--dev", "/dev",
            "--size", str(tmp_size_bytes(limits)), "--tmpfs", "/dev/shm",
            "--mqueue", "/dev/mqueue", "--remount-ro", "/dev",
            "--size", str(tmp_size_bytes(limits)), "--tmpfs", INSIDE_TMP,
        ]
        for mount in shown:  # after the tmpfs: a mount under /tmp lands on top of it
            cmd += ["--bind" if mount.writable else "--ro-bind", mount.source, mount.inside]
        cmd += [
            "--bind", str(work), INSIDE_WORK, "--chdir", INSIDE_WORK,
            "--ro-bind", init_shell(root), INSIDE_INIT,
            *(["--ro-bind", str(root / "cmd"), INSIDE_CMD] if (root / "cmd").exists() else []),
            "--remount-ro", "/",
        ]
        for key, value in env.items():
            cmd += ["--setenv", key, value]
        return [*cmd, "--", INSIDE_INIT, "-c", INIT, "bw-init", *argv]
