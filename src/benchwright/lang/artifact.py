"""Build products a language makes once and copies into every sample: Rust's driver crate, Go's
warm build cache, C++'s precompiled headers.

Each is made by :func:`made_in_sandbox` in a sandbox call of its own whose files are the
harness's own (no model code, no test code), so no sample can shape it; every sample then gets
a fresh copy of the bytes in its own work folder, so what a sample does to its copy reaches no
other sample. :class:`Artifacts` keeps them per key, made at most once (a product that could
not be made is remembered as None, and the samples take their per-sample path).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable

from benchwright.errors import InfraError
from benchwright.sandbox.base import Sandbox, SandboxLimits

__all__ = ["Artifacts", "made_in_sandbox"]

BUILD_WALL_S = 120.0
"""Wall seconds one product's build may take."""
BUILD_PROCESSES = 256
"""RLIMIT_NPROC counts threads: rustc and the go tools start a few dozen."""


def made_in_sandbox(sandbox: Sandbox, argv: list[str], files: dict[str, bytes], product: str, *,
                    max_bytes: int, env: dict[str, str] | None = None) -> bytes | None:
    """Run ``argv`` on ``files`` and return the file ``product`` it made; None when the command
    failed, made nothing, made more than ``max_bytes`` or could not start."""
    limits = SandboxLimits(wall_s=BUILD_WALL_S, memory_mb=0, processes=BUILD_PROCESSES,
                           output_bytes=max(max_bytes // 16, 64 * 1024),
                           file_size_mb=max(max_bytes // (1024 * 1024), 16))
    try:
        proc = sandbox.run(argv, files=files, limits=limits, collect=(product,), env=env)
    except InfraError:
        return None
    data = proc.files.get(product)
    if proc.exit_code != 0 or not data or len(data) > max_bytes:
        return None
    return data


class Artifacts:
    """Products by key, each made once (thread-safe; a product being made is waited for)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._made: dict[Hashable, bytes | None] = {}

    def get(self, key: Hashable, make: Callable[[], bytes | None]) -> bytes | None:
        with self._lock:
            if key not in self._made:
                self._made[key] = make()
            return self._made[key]

    def clear(self) -> None:
        with self._lock:
            self._made = {}
