"""Test programs a compiled language built for one sample, kept for the next sample whose build
would be the same (C, C++, Rust, Go).

A model's samples are often the same code: greedy decoding, a short function written the same
way at any temperature, a run repeated with its generations cached. Such a sample's build is
the same compile of the same files with the same compiler, so its program is the one an earlier
sample's build made; only the tests run again (every test case in a process of its own, with its
CPU time and memory measured, as always).

The key is the hash of everything the build reads that can differ: the sandbox backend, the
compiler (path, size, modification time), its command line and every file given to it. A
language leaves out sources whose program does not follow from them (a build that reads the
clock, the environment or a file outside the work folder); those build every time.

A program built in a sandbox call that then ran the sample's tests is only kept when its bytes,
read back after the tests, hash to what trusted code reported right after the build and before
any code of the sample ran (the C judge's shell, the Rust and Go runner): a sample that rewrote
its own program cannot hand the rewritten one to a later sample. Each later sample gets a fresh
copy of the bytes in its own work folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator

from benchwright.lang.execserver import ExecServers

__all__ = ["BuildCache", "build_key", "collect_output_bytes", "digest"]

CACHE_BYTES = 256 * 1024 * 1024
"""Bytes of programs kept per language instance (the least recently used go first)."""
ENTRY_BYTES = 16 * 1024 * 1024
"""A program larger than this is never kept (a sandbox call that may hand one back collects
up to ``16 * output_bytes``: see :func:`collect_output_bytes`)."""
WAIT_S = 5.0
"""How long a sample waits for the program of the same build another thread is making (its
sandbox call runs the tests too) before it builds its own."""


def collect_output_bytes(output_bytes: int) -> int:
    """The ``output_bytes`` limit of a sandbox call that collects a program it builds: at least
    enough for :data:`ENTRY_BYTES` (a sandbox collects up to 16 times it)."""
    return max(output_bytes, ENTRY_BYTES // 16)


def digest(data: bytes) -> str:
    """The hex SHA-256 of ``data``, as ``sha256sum`` prints it."""
    return hashlib.sha256(data).hexdigest()


def build_key(sandbox: str, tool: str, argv: Iterable[str], files: dict[str, bytes],
              *extra: str) -> str:
    """The key of one build: ``sandbox`` (the backend's name), ``tool`` (the compiler's path;
    its size and modification time are read here), its command line, the files it reads (every
    name and content) and anything else that shapes the program (``extra``)."""
    h = hashlib.sha256()

    def part(value: bytes) -> None:
        h.update(len(value).to_bytes(8, "little"))
        h.update(value)

    try:
        st = os.stat(tool)
        stamp = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
    except OSError:
        stamp = "missing"
    for text in (sandbox, tool, stamp, "\0".join(argv), *extra):
        part(text.encode())
    for name in sorted(files):
        part(name.encode())
        part(files[name])
    return h.hexdigest()


class BuildCache:
    """Programs by build key, least recently used dropped past :data:`CACHE_BYTES`, and the
    warm sandboxes that run them (:attr:`servers`); thread-safe."""

    def __init__(self, max_bytes: int = CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._programs: OrderedDict[str, bytes] = OrderedDict()
        self._making: dict[str, threading.Event] = {}
        self._bytes = 0
        self.hits = 0
        """Samples that ran a kept program (no build)."""
        self.kept = 0
        """Programs kept after their build."""
        self.refused = 0
        """Programs not kept: their bytes after the tests did not match the hash reported
        right after the build, or no hash was reported."""
        self.servers = ExecServers()
        """Where a kept program's tests run: a warm sandbox per executor thread."""

    def get(self, key: str, wait_s: float | None = None) -> bytes | None:
        """The program of this build, if one was kept. When another thread is making it, wait
        for it up to ``wait_s`` seconds (default :data:`WAIT_S`). Otherwise (None) the caller
        builds it and must end with :meth:`offer` or :meth:`release`, which wake those
        waiting."""
        with self._lock:
            program = self._lookup(key)
            if program is not None:
                return program
            making = self._making.get(key)
            if making is None:
                self._making[key] = threading.Event()
                return None
        making.wait(WAIT_S if wait_s is None else wait_s)
        with self._lock:
            return self._lookup(key)

    @contextlib.contextmanager
    def lookup(self, key: str | None) -> Iterator[bytes | None]:
        """The kept program of ``key`` (:meth:`get`), for a block that builds it when there is
        none (and :meth:`offer`s it): the samples waiting for it are woken when the block ends,
        whatever happens in it. A None key has no program."""
        program = self.get(key) if key is not None else None
        try:
            yield program
        finally:
            if key is not None and program is None:
                self.release(key)  # a no-op once offered

    def _lookup(self, key: str) -> bytes | None:
        program = self._programs.get(key)
        if program is not None:
            self._programs.move_to_end(key)
            self.hits += 1
        return program

    def release(self, key: str) -> None:
        """The build of ``key`` is over (kept or not): wake the samples waiting for it."""
        with self._lock:
            making = self._making.pop(key, None)
        if making is not None:
            making.set()

    def offer(self, key: str, program: bytes | None, reported: object) -> bool:
        """Keep ``program`` (read back after the tests ran) for ``key`` when its hash is
        ``reported`` (the hex SHA-256 trusted code printed right after the build); whether it
        was kept. Wakes the samples waiting for it either way."""
        try:
            return self._keep(key, program, reported)
        finally:
            self.release(key)

    def _keep(self, key: str, program: bytes | None, reported: object) -> bool:
        if program is None or not isinstance(reported, str) or len(program) > ENTRY_BYTES \
                or len(program) > self.max_bytes or digest(program) != reported.strip().lower():
            with self._lock:
                self.refused += 1
            return False
        with self._lock:
            old = self._programs.pop(key, None)
            if old is not None:
                self._bytes -= len(old)
            self._programs[key] = program
            self._bytes += len(program)
            self.kept += 1
            while self._bytes > self.max_bytes and self._programs:
                _, dropped = self._programs.popitem(last=False)
                self._bytes -= len(dropped)
        return True

    def clear(self) -> None:
        """Forget every program and stop the warm sandboxes (they start again when needed)."""
        with self._lock:
            self._programs = OrderedDict()
            self._bytes = 0
        self.servers.close()
