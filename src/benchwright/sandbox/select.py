"""Choosing the sandbox backend: the one the settings name, else the best that works here.

A backend is *available* when its programs exist (:meth:`Sandbox.unavailable`) and ``true``
really runs through it (namespaces can be forbidden by the kernel or a container even where
the programs are installed). The answer is worked out once per process and kept.
"""

from __future__ import annotations

import threading

from benchwright.errors import BenchwrightError, InfraError, UserError
from benchwright.registry import registry
from benchwright.sandbox.base import Sandbox, SandboxLimits

PREFERENCE = ("bwrap", "unshare", "rlimit")
"""Best first: bubblewrap, namespaces through util-linux, plain rlimits (no isolation)."""

_lock = threading.Lock()
_checked: dict[str, str | None] = {}


def availability(name: str) -> str | None:
    """None when backend ``name`` works on this machine, else why not (with an install hint)."""
    with _lock:
        if name not in _checked:
            _checked[name] = _probe(name)
        return _checked[name]


def _probe(name: str) -> str | None:
    try:
        sandbox = registry.create("sandbox", name)
    except BenchwrightError as e:
        return str(e)
    why = sandbox.unavailable()
    if why:
        return why
    try:
        result = sandbox.run(["true"], files={}, limits=SandboxLimits(wall_s=30))
    except InfraError as e:
        return f"{e}{_hint(sandbox)}"
    if result.exit_code != 0:
        detail = result.stderr.decode("utf-8", "replace").strip()[-500:]
        return (f"`true` failed in it (exit {result.exit_code}, signal {result.signal})"
                f"{': ' + detail if detail else ''}{_hint(sandbox)}")
    return None


def _hint(sandbox: Sandbox) -> str:
    return f" (`{sandbox.install_hint}`)" if sandbox.install_hint else ""


def best_sandbox(preferred: str | None = None) -> Sandbox:
    """The backend named ``preferred`` (the settings' ``sandbox:``), else the first available
    of :data:`PREFERENCE`.

    Raises:
        UserError: ``preferred`` is unknown or does not work on this machine.
        InfraError: no backend at all works (not even rlimit).
    """
    if preferred:
        sandbox = registry.create("sandbox", preferred)
        why = availability(preferred)
        if why:
            raise UserError(f"sandbox {preferred!r} (from the settings' `sandbox:`) does not work "
                            f"on this machine: {why}")
        return sandbox
    reasons = []
    for name in PREFERENCE:
        why = availability(name)
        if why is None:
            chosen = registry.create("sandbox", name)
            return chosen
        reasons.append(f"{name}: {why}")
    raise InfraError("no sandbox backend works on this machine: " + "; ".join(reasons))
