"""A warm ``javac`` per executor thread: Java samples compile in a long-lived JVM.

A command-line ``javac`` spends most of a small compile starting a JVM and loading, verifying and
warming up its own classes: about 0.7 s wall and 0.8 s of CPU for a sample of a few dozen lines,
85 % of what a Java sample costs. A compiler that stays up compiles the same files in a few tens of
milliseconds once the JIT has warmed it. So each executor thread keeps one *javac server*
(``javacserver.java``, run by the JDK's source launcher as ``java BwJavac.java <javac flags>``) in
a sandbox session of its own, and each sample:

1. sends its two sources to its thread's server, which compiles them with the JDK's own
   ``javax.tools`` compiler and the same flags as the command line (``-proc:none``: no annotation
   processor, so javac runs nothing of what it compiles), in a folder of its own that it removes
   before it answers; the answer holds javac's exit status, its messages (naming the files as
   the command line does) and, when it compiled, the class files;
2. runs its tests with those class files in place of the sources (in a JVM of its own, or in
   its thread's warm test JVM when :mod:`.javagate` lets it: see :mod:`.java`); the compiler
   never runs a sample's code at all.

Samples often repeat one another (a model at temperature 0, the copies of a golden solution,
a resumed or re-scored run): a compile of the same sources with the same flags gives the same
class files, so each language object keeps the last answers (:class:`CompileCache`, by a hash of
the sources, :data:`CACHE_BYTES` at most) and a repeated sample skips javac. Only class files
are shared, copied into each sample's own sandbox; nothing a sample does reaches them.

The harness checks every answer: the nonce of its request, and class file names that are plain
file names ending in ``.class`` (no folder, no ``..``), :data:`MAX_CLASSES` of them and
:data:`MAX_CLASS_BYTES` in all at most. A server that does not answer within
:data:`COMPILE_WAIT_S`, dies, or answers anything else is closed with its sandbox, and that sample
compiles the old way (``javac`` and the tests in one sandbox call), so a compiler that hangs on a
pathological source costs that sample what it always did, and the next sample gets a new server.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from importlib import resources

from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.sandbox.servers import SERVER_CPU_S, WarmServer

SOURCE = resources.files("benchwright.lang").joinpath("javacserver.java").read_bytes()
SOURCE_FILE = "BwJavac.java"
COMPILE_WAIT_S = 30.0
"""How long a compile may take in the server before the sample compiles the old way."""
START_WAIT_S = 60.0
"""How long the server may take to start (the source launcher compiles it first: about 1 s)."""
SERVER_HEAP_MB = 1024
SERVER_PROCESSES = 256
"""RLIMIT_NPROC counts threads: a JVM starts a few dozen."""
MAX_CLASSES = 4096
MAX_CLASS_BYTES = 64 * 1024 * 1024
CLASS_FILE = re.compile(r"[^/\\\x00-\x1f.][^/\\\x00-\x1f]{0,250}\.class")
"""A sample's class file name the server may return: one plain name, no folder, not hidden
(a solution's package line is commented out, so all its classes are in the unnamed package)."""
FOLDER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
"""A package folder, in the answer to the harness's own compile of the runner only."""
CACHE_BYTES = 64 * 1024 * 1024
"""How much compiled output (class files and messages) a language object keeps for repeats."""


@dataclass(frozen=True)
class Compiled:
    """What the javac server said about one sample."""

    exit_code: int
    """javac's exit status (0: compiled; -1: javac itself failed)."""
    messages: str
    """javac's output, with the files named as on the command line."""
    classes: dict[str, bytes]
    """The class files (empty unless it compiled)."""
    wall_ms: float
    """How long the compile took, as the harness saw it (0 when it came from the cache)."""
    cached: bool = False
    """Whether an earlier compile of the same sources answered."""

    @property
    def size(self) -> int:
        return len(self.messages) + sum(len(n) + len(d) for n, d in self.classes.items())


class CompileCache:
    """The last compiles of one language object, by a hash of their sources and flags."""

    def __init__(self, budget: int = CACHE_BYTES) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, Compiled] = OrderedDict()
        self._bytes = 0
        self.budget = budget

    @staticmethod
    def key(argv: list[str], sources: dict[str, bytes]) -> str:
        h = hashlib.sha256()
        for part in (*argv, *sorted(sources)):
            h.update(part.encode() + b"\0")
        for name in sorted(sources):
            h.update(hashlib.sha256(sources[name]).digest())
        return h.hexdigest()

    def get(self, key: str) -> Compiled | None:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
        return replace(found, wall_ms=0.0, cached=True) if found is not None else None

    def put(self, key: str, compiled: Compiled) -> None:
        """Keep ``compiled`` unless javac itself failed (a crash is retried, not repeated)."""
        if compiled.exit_code not in (0, 1) or compiled.size > self.budget:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old.size
            self._entries[key] = compiled
            self._bytes += compiled.size
            while self._bytes > self.budget:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= dropped.size


class JavacServer(WarmServer):
    """One javac server in one sandbox session, used by one thread."""

    def __init__(self, sandbox: Sandbox, java: str, flags: list[str], jvm_flags: list[str]) -> None:
        super().__init__(sandbox, [java, *jvm_flags, f"-Xmx{SERVER_HEAP_MB}m", SOURCE_FILE, *flags],
                         {SOURCE_FILE: SOURCE}, ready=b"BWC ready", what="the javac server",
                         start_wait_s=START_WAIT_S,
                         limits=SandboxLimits(wall_s=SERVER_CPU_S, cpu_s=SERVER_CPU_S, memory_mb=0,
                                              processes=SERVER_PROCESSES))

    def compile(self, sources: dict[str, bytes], *, packages: bool = False) -> Compiled | None:
        """Compile ``sources`` (file name -> text); None when the server failed (it is closed:
        the caller compiles the old way, and the next call starts a new server). ``packages``:
        class files may be in package folders (the harness's own sources only). A server that
        cannot start also answers None.
        """
        nonce = secrets.token_hex(16)
        request = nonce + "".join(
            f" {_b64(name.encode())}:{_b64(data)}" for name, data in sources.items()) + "\n"
        start = time.perf_counter()
        line = self.ask(request.encode("ascii"), COMPILE_WAIT_S)
        wall_ms = (time.perf_counter() - start) * 1000
        answer = _parse(line, nonce, wall_ms, packages) if line is not None else None
        if answer is None:
            self.close()
        return answer


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _parse(line: bytes, nonce: str, wall_ms: float, packages: bool) -> Compiled | None:
    """The server's answer, or None when it is not a well-formed answer to this request."""
    parts = line.split(b" ")
    if len(parts) < 4 or parts[0] != b"BWC" or parts[1] != nonce.encode():
        return None
    try:
        exit_code = int(parts[2])
        messages = base64.b64decode(parts[3], validate=True).decode("utf-8", "replace")
        classes: dict[str, bytes] = {}
        total = 0
        for part in parts[4:]:
            name_b64, _, data_b64 = part.partition(b":")
            name = base64.b64decode(name_b64, validate=True).decode("utf-8")
            data = base64.b64decode(data_b64, validate=True)
            total += len(data)
            *folders, file = name.split("/")
            if (not CLASS_FILE.fullmatch(file) or ".." in file or name in classes
                    or (folders and not packages) or not all(FOLDER.fullmatch(f) for f in folders)
                    or len(classes) >= MAX_CLASSES or total > MAX_CLASS_BYTES):
                return None
            classes[name] = data
    except (ValueError, binascii.Error, UnicodeDecodeError):
        return None
    if exit_code == 0 and not classes:
        return None
    return Compiled(exit_code, messages, classes if exit_code == 0 else {}, wall_ms)
