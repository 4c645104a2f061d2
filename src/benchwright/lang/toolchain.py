"""Finding a language's programs on the host and asking them their version.

The sandboxes show the host's ``/usr`` read-only, so a toolchain is usable when its programs
are on :data:`TOOL_PATH` (never under a home folder, which the sandboxes hide). A missing
program is an :class:`InfraError` with the install command, never the model's fault.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from functools import lru_cache

from benchwright.errors import InfraError

TOOL_PATH = "/usr/local/bin:/usr/bin:/bin"
"""Where toolchains are looked for: the folders the sandboxes show."""


def find_tool(program: str) -> str | None:
    """The absolute path of ``program`` on :data:`TOOL_PATH`, or None."""
    return shutil.which(program, path=TOOL_PATH)


def need_tool(program: str, *, language: str, hint: str) -> str:
    """The path of ``program``, or an InfraError naming the language and the install command."""
    path = find_tool(program)
    if path is None:
        raise InfraError(f"{language}: {program!r} is not installed on this machine (`{hint}`)")
    return path


def missing_tools(programs: Sequence[str], *, language: str, hint: str) -> str | None:
    """What ``language`` lacks of ``programs`` and how to install it; None when all are there."""
    absent = [p for p in programs if find_tool(p) is None]
    if not absent:
        return None
    return f"{language} needs {' and '.join(absent)}, not installed (`{hint}`)"


@lru_cache(maxsize=32)
def tool_version(argv: tuple[str, ...], *, hint: str, prefix: str = "",
                 env: tuple[tuple[str, str], ...] | None = None) -> str:
    """The first line ``argv`` prints (stdout, else stderr), without ``prefix``; cached.

    Raises:
        InfraError: the program does not run or prints nothing.
    """
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=60, check=False,
                              env=dict(env) if env is not None else None)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise InfraError(f"`{' '.join(argv)}` failed: {e} (`{hint}`)") from e
    lines = (done.stdout.strip() or done.stderr.strip()).splitlines()
    if done.returncode != 0 or not lines:
        raise InfraError(f"`{' '.join(argv)}` failed (exit {done.returncode}) (`{hint}`)")
    return lines[0].strip().removeprefix(prefix)
