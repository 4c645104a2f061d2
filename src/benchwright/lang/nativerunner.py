"""Runs inside the sandbox, never in the harness. Standard library only; ``python -I -S``.

The trusted half of a compiled language's sample (Rust, Go): this process builds the test
program, then runs it once per test case, each time in a child process of its own, and alone
writes the results. It never executes model code itself.

The job comes on stdin (JSON): ``nonce`` (the prefix of every result line: ``BWR <nonce> {json}``),
``build`` (steps: ``argv``, ``cwd``, ``env``), ``build_timeout_s``, ``build_data_mb``, ``run``
(``argv`` of the test program, the test index is appended; ``env``), ``tests`` (each with its
``timeout``), ``data_mb`` and ``stack_mb`` (RLIMIT_DATA and RLIMIT_STACK of every test process),
``output_cap`` (bytes of output kept per test), ``location`` (a regex with one group: the line
of a crash in the generated source, read from a crashed test's output), ``crash_markers`` (line
prefixes that explain a crash: ``panic:``, ``fatal error:``...), ``dirs`` (folders to create),
``product`` (the program the build makes: its SHA-256 goes in the build record, taken before any
test runs, so that the harness keeps for later samples only a program that no test rewrote) and
``cached`` (the program is an earlier sample's, given as a file: no build, the file is made
executable and the build record says ``"cached": true``).

Each test process gets a fresh random token on stdin, a pipe as file descriptor 3 (its result
channel) and another pipe as stdout and stderr (its output). The test program writes one line
``<token> {json}`` on fd 3 once the test body has returned (``status`` ``pass``) or failed
(``fail``/``error`` with ``message``, ``file``, ``line``, ``col``), then exits with 0. A test is
a pass only when that line carries the token *and* the process then exited with status 0: an
early exit, a crash, a kill, fake lines on stdout or on fd 3 without the token are an ``error``;
a test still running after its ``timeout`` is killed (its process group) and is a ``timeout``.
The result lines this process writes carry the job's nonce, which no test process ever sees;
the process makes itself non-dumpable first, so that no test process can read its memory or
reach its file descriptors through ``/proc``.

``cpu_ms`` and ``max_rss_bytes`` in the ``done`` line are the sum of the CPU time and the
largest peak RSS of the test processes (``wait4``), without the build.
"""

from __future__ import annotations

import os
import resource
import select
import sys
import time

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs every sample ~5 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    Emit = Callable[[dict[str, object]], None]

SIGKILL, SIGXCPU = 9, 24
"""Linux's numbers (the ``signal`` module costs every sample a few ms to import, as ``json``,
``contextlib`` and the ``re`` they pull in do: this runner starts once per sample)."""


def _no_default(value: object) -> object:
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


try:  # json's own C scanner and encoder, without importing json (and re, enum...)
    import _json

    class _Decoding:
        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = {"NaN": float("nan"), "Infinity": float("inf"),
                          "-Infinity": float("-inf")}.__getitem__

    _CONTEXT: Any = _Decoding()  # the attributes json.JSONDecoder gives the scanner
    _SCAN: Any = _json.make_scanner(_CONTEXT)
    _ENCODE: Any = _json.make_encoder(None, _no_default, _json.encode_basestring_ascii, None, ": ",
                                 ", ", False, False, True)
except (ImportError, AttributeError, TypeError):
    _SCAN = _ENCODE = None


def loads(text: str) -> Any:
    """``json.loads(text)`` (ValueError on what it refuses)."""
    if _SCAN is None:
        import json

        return json.loads(text)
    body = text.strip(" \t\n\r")
    try:
        value, end = _SCAN(body, 0)
    except StopIteration:
        raise ValueError("no JSON value") from None
    if end != len(body):
        raise ValueError("extra data after the JSON value")
    return value


def dumps(value: object) -> str:
    """``json.dumps(value)``."""
    if _ENCODE is None:
        import json

        return json.dumps(value)
    return "".join(_ENCODE(value, 0))


CHUNK = 1 << 16
RESULT_CAP = 1 << 20
BUILD_LOG_CAP = 64 * 1024
SIGNALS = {4: "SIGILL", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 9: "SIGKILL", 11: "SIGSEGV",
           13: "SIGPIPE", 15: "SIGTERM", 24: "SIGXCPU", 25: "SIGXFSZ", 31: "SIGSYS"}


def _undumpable() -> None:
    """PR_SET_DUMPABLE 0: /proc/<this pid>/{mem,fd,environ} become unreachable for the test
    processes, which run as the same user."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)
    except Exception:  # best effort: not glibc, or no ctypes
        pass


class Child:
    """One child process: its output (capped), its result channel, its end."""

    def __init__(self, argv: list[str], env: dict[str, str], *, cwd: str | None = None,
                 stdin: bytes = b"", result_fd: bool = False,
                 limits: dict[int, int] | None = None) -> None:
        out_r, out_w = os.pipe()
        res_r, res_w = os.pipe() if result_fd else (-1, -1)
        in_r, in_w = os.pipe()
        err_r, err_w = os.pipe()  # an exec failure, reported by the forked child
        pid = os.fork()
        if pid == 0:  # the child: no Python-level work beyond plumbing, then exec
            try:
                os.setpgid(0, 0)
                for res, value in (limits or {}).items():
                    hard = resource.getrlimit(res)[1]
                    if hard != resource.RLIM_INFINITY:
                        value = min(value, hard)  # never above what this sandbox allows
                    resource.setrlimit(res, (value, value))
                os.dup2(in_r, 0)
                os.dup2(out_w, 1)
                os.dup2(out_w, 2)
                if result_fd:
                    if res_w == 3:
                        os.set_inheritable(3, True)
                    else:
                        os.dup2(res_w, 3)
                if cwd:
                    os.chdir(cwd)
                os.execve(argv[0], argv, env)
            except BaseException as exc:
                try:
                    os.write(err_w, f"{type(exc).__name__}: {exc}".encode()[:2000])
                finally:
                    os._exit(127)
            os._exit(127)
        self.pid = pid
        self.started = time.monotonic()
        for fd in (out_w, in_r, err_w) + ((res_w,) if result_fd else ()):
            os.close(fd)
        failure = b""
        while True:
            chunk = os.read(err_r, 4096)
            if not chunk:
                break
            failure += chunk
        os.close(err_r)
        self.spawn_error = failure.decode("utf-8", "replace") or None
        try:
            if stdin:
                os.write(in_w, stdin)
        except OSError:
            pass
        os.close(in_w)
        self.out_fd, self.res_fd = out_r, res_r
        self.output = bytearray()
        self.output_dropped = 0
        self.result = bytearray()
        self.status: int | None = None
        self.usage: resource.struct_rusage | None = None
        self.timed_out = False
        self.wall_ms = 0.0

    def wait(self, timeout: float, cap: int) -> None:
        """Collect output until the child ends or ``timeout`` seconds pass (then kill it)."""
        open_fds = [fd for fd in (self.out_fd, self.res_fd) if fd >= 0]
        try:
            pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):
            pidfd = -1
        poller = select.poll()
        for fd in open_fds:
            poller.register(fd, select.POLLIN | select.POLLHUP)
        if pidfd >= 0:
            poller.register(pidfd, select.POLLIN)
        deadline = self.started + timeout
        while self.status is None:
            left = deadline - time.monotonic()
            if left <= 0:
                self.timed_out = True
                self._kill()
                self._reap(0)
                break
            wait_ms = left * 1000 if pidfd >= 0 else min(left * 1000, 5)
            for fd, _ in poller.poll(wait_ms):
                if fd == pidfd:
                    continue
                if not self._read(fd, cap):
                    poller.unregister(fd)
                    open_fds.remove(fd)
            self._reap(os.WNOHANG)
        self.wall_ms = (time.monotonic() - self.started) * 1000
        if pidfd >= 0:
            os.close(pidfd)
        for fd in open_fds:  # what is left in the pipes; a grandchild may still hold them
            os.set_blocking(fd, False)
            try:
                for _ in range(64):
                    if not self._read(fd, cap):
                        break
            except BlockingIOError:
                pass
        for fd in (self.out_fd, self.res_fd):
            if fd >= 0:
                os.close(fd)
        try:  # noqa: SIM105 (contextlib costs an import) what the test left in its group
            os.killpg(self.pid, SIGKILL)
        except OSError:
            pass

    def _read(self, fd: int, cap: int) -> bool:
        data = os.read(fd, CHUNK)
        if not data:
            return False
        if fd == self.res_fd:
            self.result += data[: max(0, RESULT_CAP - len(self.result))]
        else:
            room = max(0, cap - len(self.output))
            self.output += data[:room]
            self.output_dropped += max(0, len(data) - room)
        return True

    def _reap(self, flags: int) -> None:
        pid, status, usage = os.wait4(self.pid, flags)
        if pid == self.pid:
            self.status, self.usage = status, usage

    def _kill(self) -> None:
        for kill in (os.killpg, os.kill):
            try:  # noqa: SIM105 (contextlib costs an import)
                kill(self.pid, SIGKILL)
            except OSError:
                pass

    def text(self) -> str:
        out = self.output.decode("utf-8", "replace")
        if self.output_dropped:
            out += f"\n[output truncated: {self.output_dropped} more bytes]"
        return out

    def death(self) -> str:
        """How the process ended, in words."""
        status = self.status if self.status is not None else 0
        if os.WIFSIGNALED(status):
            sig = os.WTERMSIG(status)
            name = SIGNALS.get(sig)
            return f"was killed by signal {sig}" + (f" ({name})" if name else "")
        return f"exited with code {os.WEXITSTATUS(status)}"

    def exit_code(self) -> int | None:
        if self.status is None or not os.WIFEXITED(self.status):
            return None
        return os.WEXITSTATUS(self.status)

    def signal(self) -> int | None:
        if self.status is None or not os.WIFSIGNALED(self.status):
            return None
        return os.WTERMSIG(self.status)


def _limits(data_mb: int, stack_mb: int, cpu_s: float) -> dict[int, int]:
    limits = {resource.RLIMIT_CORE: 0}
    if data_mb > 0:
        limits[resource.RLIMIT_DATA] = data_mb * 1024 * 1024
    if stack_mb > 0:
        limits[resource.RLIMIT_STACK] = stack_mb * 1024 * 1024
    if cpu_s > 0:
        limits[resource.RLIMIT_CPU] = int(cpu_s) + 1
    return limits


def environ(extra: dict[str, str], workdir: str) -> dict[str, str]:
    """The runner's own PATH, LANG, HOME and TMPDIR, plus ``extra`` (``{work}`` in a value is
    this folder's absolute path)."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "HOME", "TMPDIR")}
    env.update({k: str(v).replace("{work}", workdir) for k, v in extra.items()})
    return env


def build(job: dict[str, Any], workdir: str) -> dict[str, object]:
    """Run the build steps; the build record."""
    started = time.monotonic()
    timeout = float(job.get("build_timeout_s", 60))
    limits = _limits(int(job.get("build_data_mb", 0)), 0, 0)
    for step in job.get("build", []):
        left = timeout - (time.monotonic() - started)
        child = Child(list(step["argv"]), environ(step.get("env") or {}, workdir),
                      cwd=step.get("cwd"), limits=limits)
        if child.spawn_error is not None:
            return {"build": "infra", "message": f"cannot start {step['argv'][0]}: {child.spawn_error}"}
        child.wait(max(left, 0.001), BUILD_LOG_CAP)
        log = child.text().replace(workdir + "/", "")
        if child.timed_out:
            return {"build": "timeout", "message": f"the build took more than {timeout:g} s\n{log}"}
        if child.exit_code() != 0:
            return {"build": "error", "message": log, "exit": child.exit_code(),
                    "death": child.death()}
    head: dict[str, object] = {"build": "ok", "build_ms": (time.monotonic() - started) * 1000}
    product = job.get("product")
    if product:
        sha = _sha256(str(product))
        if sha is not None:
            head["sha256"] = sha
    return head


def _sha256(path: str) -> str | None:
    """The hex SHA-256 of the regular file ``path`` (never through a link), taken before any
    test runs: the harness keeps the program for later samples only when the bytes it reads
    back after the tests hash to this."""
    import hashlib
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        h = hashlib.sha256()
        while True:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                return h.hexdigest()
            h.update(chunk)
    finally:
        os.close(fd)


def verdict(child: Child, token: str, timeout: float, job: dict[str, Any], workdir: str
            ) -> dict[str, object]:
    """The record of one test from what its process did (see the module's doc)."""
    rec: dict[str, object] | None = None
    for raw in bytes(child.result).decode("utf-8", "replace").splitlines():
        head, _, body = raw.partition(" ")
        if head != token:
            continue
        try:
            value = loads(body)
        except ValueError:
            continue
        if isinstance(value, dict) and value.get("status") in ("pass", "fail", "error"):
            rec = value
            break
    out = child.text().replace(workdir + "/", "")
    wall = round(child.wall_ms, 3)
    if child.timed_out:
        return {"status": "timeout", "message": f"took more than {timeout:g} s (killed)",
                "time_ms": wall, "output": out}
    if child.signal() == SIGXCPU:
        return {"status": "timeout", "message": "CPU time limit exceeded (killed)",
                "time_ms": wall, "output": out}
    if rec is not None:
        time_ms = rec.get("time_ms")
        if not isinstance(time_ms, (int, float)) or isinstance(time_ms, bool):
            time_ms = wall
        if rec["status"] == "pass":
            if child.exit_code() == 0:
                return {"status": "pass", "time_ms": time_ms, "output": out}
            why = _explain(out, job)
            return {"status": "error", "time_ms": time_ms, "output": out,
                    "message": f"the test returned, then the process {child.death()}"
                               + (f": {why}" if why else ""), **_where(out, job)}
        result: dict[str, object] = {"status": rec["status"], "time_ms": time_ms, "output": out}
        for key in ("message", "file", "line", "col", "kind"):
            if key in rec:
                result[key] = rec[key]
        return result
    why = _explain(out, job)
    if child.exit_code() == 0:
        message = "the process exited with code 0 before the test finished (an early exit)"
    else:
        message = f"the process {child.death()}"
    return {"status": "error", "message": message + (f": {why}" if why else ""),
            "time_ms": wall, "output": out, "kind": "crash", **_where(out, job)}


def _explain(output: str, job: dict[str, Any]) -> str:
    """The line of a crashed test's output that says what happened."""
    markers = tuple(job.get("crash_markers") or ())
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    for ln in lines:
        if markers and ln.startswith(markers):
            return ln[:1000]
    return lines[-1][:1000] if lines else ""


def _where(output: str, job: dict[str, Any]) -> dict[str, object]:
    pattern = job.get("location")
    if not pattern:
        return {}
    import re

    m = re.search(pattern, output)
    if not m:
        return {}
    return {"file": m.group(1), "line": int(m.group(2))}


def run_tests(job: dict[str, Any], emit: Emit, workdir: str) -> tuple[float, int]:
    run = job["run"]
    env = environ(run.get("env") or {}, workdir)
    cap = int(job.get("output_cap", 4096))
    data_mb, stack_mb = int(job.get("data_mb", 0)), int(job.get("stack_mb", 0))
    cpu_ms, rss = 0.0, 0
    for i, test in enumerate(job["tests"]):
        timeout = float(test["timeout"])
        token = os.urandom(16).hex()
        child = Child([*run["argv"], str(i)], env, stdin=(token + "\n").encode(),
                      result_fd=True, limits=_limits(data_mb, stack_mb, 2 * timeout + 1))
        if child.spawn_error is not None:
            emit({"i": i, "status": "error", "message": f"cannot start the tests: {child.spawn_error}"})
            continue
        child.wait(timeout, cap)
        if child.usage is not None:
            cpu_ms += (child.usage.ru_utime + child.usage.ru_stime) * 1000
            rss = max(rss, child.usage.ru_maxrss * 1024)
        emit({"i": i, **verdict(child, token, timeout, job, workdir)})
    return cpu_ms, rss


def main() -> None:
    _undumpable()
    job = loads(sys.stdin.buffer.read().decode("utf-8"))
    prefix = "BWR " + str(job["nonce"]) + " "
    out = sys.stdout

    def emit(rec: dict[str, object]) -> None:
        out.write(prefix + dumps(rec) + "\n")
        out.flush()

    workdir = os.getcwd()
    for folder in job.get("dirs", []):
        os.makedirs(folder, exist_ok=True)
    cached = job.get("cached")
    if cached:  # an earlier sample's program of the same build, given as a file
        os.chmod(str(cached), 0o700)
    head: dict[str, object] = {"build": "ok", "cached": True} if cached else build(job, workdir)
    emit(head)
    if head["build"] != "ok":
        return
    cpu_ms, rss = run_tests(job, emit, workdir)
    emit({"done": True, "cpu_ms": cpu_ms, "max_rss_bytes": rss})


if __name__ == "__main__":
    main()
