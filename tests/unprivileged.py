"""Running benchwright's sandbox and language code as an unprivileged user.

CI runs the suite as root; users run benchwright as themselves. Some attacks only work against
one of the two (a root harness gives every sandbox a uid of its own; an unprivileged one shares
its uid with the sandbox), so the trust-boundary tests run them both ways. As root, the second
way is a child process as ``nobody`` (uid 65534) on the system interpreter, with a copy of the
package and of the test's script in a folder every user may read (the repository may sit under
a home folder that ``nobody`` cannot enter); as another user, the tests already run unprivileged
and the child keeps that user.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
NOBODY = 65534
SYSTEM_PYTHON = "/usr/bin/python3"

SCRIPTS = ("hostile.py", "mounts_probe.py")
"""The standalone scripts of ``tests/sandbox`` that :func:`run_script` runs."""

HARNESS_USERS = ["root", "unprivileged"] if os.getuid() == 0 else ["unprivileged"]
"""The ways the harness runs in these tests: the user the suite runs as, and an unprivileged
user when that is root."""


@functools.cache
def _copy() -> Path:
    """A world-readable copy of ``src/benchwright`` and of the tests' standalone scripts."""
    home = Path(tempfile.mkdtemp(prefix="bw-unprivileged-"))
    atexit.register(shutil.rmtree, home, True)
    import benchwright  # the package these tests run on (src/, or whatever PYTHONPATH names)

    shutil.copytree(Path(benchwright.__file__).parent, home / "benchwright",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for script in SCRIPTS:
        shutil.copy(REPO / "tests" / "sandbox" / script, home / script)
    for folder, _dirs, files in os.walk(home):
        os.chmod(folder, 0o755)
        for name in files:
            os.chmod(os.path.join(folder, name), 0o644)
    return home


def run_script(script: str, *args: str, user: str, timeout: float = 600) -> Any:
    """Run one of the scripts copied by :func:`_copy` (:data:`SCRIPTS`) with ``args`` as
    ``user`` (one of :data:`HARNESS_USERS`) and return the JSON it printed last."""
    if user == "root" or os.getuid() != 0:
        import sys

        import benchwright

        python, preexec = sys.executable, None
        env_path = str(Path(benchwright.__file__).parents[1])
        script_path = REPO / "tests" / "sandbox" / script
        work = Path(tempfile.mkdtemp(prefix="bw-harness-"))
        os.chmod(work, 0o755)  # a root harness's sandbox uid passes through it
    else:
        if not os.access(SYSTEM_PYTHON, os.X_OK):
            pytest.fail(f"{SYSTEM_PYTHON} is missing: ./scripts/setup installs it")
        home = _copy()
        python, env_path, script_path = SYSTEM_PYTHON, str(home), home / script
        work = Path(tempfile.mkdtemp(prefix="bw-harness-"))
        os.chmod(work, 0o755)
        os.chown(work, NOBODY, NOBODY)

        def preexec() -> None:
            os.setgroups([])
            os.setresgid(NOBODY, NOBODY, NOBODY)
            os.setresuid(NOBODY, NOBODY, NOBODY)

    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(work), "TMPDIR": str(work),
           "LANG": "C.UTF-8", "BW_PACKAGE_PATH": env_path, "PYTHONPATH": env_path}
    try:
        proc = subprocess.run([python, str(script_path), *args], env=env, cwd=work,
                              capture_output=True, text=True, timeout=timeout, preexec_fn=preexec)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and lines, (proc.returncode, proc.stdout[-3000:], proc.stderr[-3000:])
    return json.loads(lines[-1])
