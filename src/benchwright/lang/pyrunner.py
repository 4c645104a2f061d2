"""Runs inside the sandbox, never in the harness. Standard library only; ``python -I -S``.

Two processes, so that the process that decides a verdict never runs the solution:

* the *judge* (this process) forks the *sample* process before it reads anything, then reads
  the job (solution, prelude, tests) from stdin. It never executes model code.
* the *sample* process closes stdin and stdout, then waits for requests on a pipe: ``setup``
  (exec the solution and prelude), ``value`` (evaluate one expression and send back its
  ``repr``) and ``run`` (exec a whole test case and say how it ended).

A test case shaped ``assert <expr> <op> <literal>`` is judged here: the sample process only
sees ``<expr>``, never the expected value, and the judge compares what it returns. Other test
cases run whole in the sample process ("judged in sample"); early exits, crashes and silence are
still never a pass, because only the judge writes results (one ``BWR {json}`` line each to its
stdout, which the sample process no longer holds).
"""

import _signal  # type: ignore[import-not-found]  # signal.signal without its enum wrapping
import json
import os
import signal
import sys
import time

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs every sample ~5 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

FILENAME = "<solution>"
PREFIX = "BWR "


class BwTimeout(BaseException):
    """Raised by the per-test alarm; a BaseException so ``except Exception`` cannot swallow it."""


def _alarm(signum: int, frame: object) -> None:
    raise BwTimeout()


def _where(exc: BaseException) -> "int | None":
    """Line (in the executed code) of the deepest frame of the solution or test, if any."""
    line = None
    tb = exc.__traceback__
    while tb is not None:  # no traceback module: it costs an import per sample
        if tb.tb_frame.f_code.co_filename == FILENAME:
            line = tb.tb_lineno
        tb = tb.tb_next
    if line is None and isinstance(exc, SyntaxError) and exc.filename == FILENAME:
        line = exc.lineno
    return line


def _message(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, AssertionError):
        return text or "AssertionError"
    return type(exc).__name__ + (": " + text if text else "")


# -- the sample process ---------------------------------------------------------------------

def sample_main(requests: int, replies: int, wholes: int, stdio: bool = True) -> None:
    """Serve requests until the judge closes the pipe, then exit. Runs the untrusted code.

    ``wholes``: where the judge sends a whole test case when the value of its expression
    was not plain data (the expected value is never sent otherwise). ``stdio``: point
    standard input and outputs at /dev/null first (a zygote's children have them so)."""
    if stdio:
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(devnull, 1)  # the judge's result channel is out of reach
        os.dup2(devnull, 2)
    serve_requests(requests, replies, wholes)
    os._exit(0)


def warm_sample_loop() -> None:
    """Run a made-up sample through :func:`serve_requests` here, in the process samples are
    forked from: what its first run creates and caches (about 0.25 ms of a sample's CPU time)
    is then there before every fork."""
    requests_r, requests_w = os.pipe()
    replies_r, replies_w = os.pipe()
    wholes_r, wholes_w = os.pipe()
    reqs = [{"op": "setup", "code": WARM_UP, "timeout": 5, "cap": 64},
            {"op": "value", "code": "(sum(xs)\n)", "offset": 0, "timeout": 5, "whole": True},
            {"op": "run", "code": "assert len(d) > 0", "offset": 0, "timeout": 5}]
    os.write(requests_w, b"".join(map(encode_request, reqs)))
    os.close(requests_w)
    os.close(wholes_w)
    out = sys.stdout
    try:
        serve_requests(requests_r, replies_w, wholes_r)
    finally:
        sys.stdout = sys.stderr = out
        for fd in (requests_r, replies_r, replies_w, wholes_r):
            os.close(fd)


def serve_requests(requests: int, replies: int, wholes: int) -> None:
    """The sample process's loop (see :func:`sample_main`)."""
    import io

    write, _len = os.write, len  # bound now: the solution may patch os, repr, len or type later
    _repr, _type = repr, type
    real_out = sys.stdout
    _signal.signal(signal.SIGALRM, _alarm)  # not signal.signal: its enum wrapping costs ~0.3 ms
    ns: dict[str, object] = {"__name__": "solution", "__builtins__": __builtins__}
    reader = _requests(requests)

    def reply(rec: "dict[str, Any]") -> None:
        texts = [None if rec.get(k) is None else rec[k].encode("utf-8", "surrogatepass")
                 for k in REPLY_TEXTS]
        line = rec.get("line")
        sizes = " ".join(["-1" if t is None else f"{_len(t)}" for t in texts])
        data = (f"{rec['status']} {-1 if line is None else line} {rec.get('time_ms', 0.0)!r} "
                f"{1 if rec.get('waiting') else 0} {sizes}\n").encode()
        data += b"".join([t for t in texts if t is not None])
        if _len(data) > 1 << 16:  # a program's output: no copy of the rest per write
            view = memoryview(data)
            while view:
                view = view[write(replies, view):]
            return
        while data:
            data = data[write(replies, data):]

    value_seen: list[object] = [None]
    program: list[object] = [None]  # a stdin/stdout task's solution, compiled by op "compile"

    def execute(code: str, op: str, offset: int, timeout: float, local: "dict[str, object]",
                rec: "dict[str, object]") -> None:
        try:
            compiled = compile("\n" * offset + code, FILENAME, "eval" if op == "value" else "exec")
            if op == "compile":  # run later, once per stdin/stdout case (see run_program)
                program[0] = compiled
                return
            signal.setitimer(signal.ITIMER_REAL, timeout)
            if op == "value":
                value = eval(compiled, local)
                signal.setitimer(signal.ITIMER_REAL, 0)
                value_seen[0] = value
                rec["value"] = _repr(value)[: 1 << 20]
                rec["type"] = _type(value).__name__
            else:
                exec(compiled, local)
                signal.setitimer(signal.ITIMER_REAL, 0)
        except BwTimeout:
            rec.update(status="timeout", message=f"took more than {timeout:g} s")
        except AssertionError as exc:
            signal.setitimer(signal.ITIMER_REAL, 0)
            rec.update(status="fail", message=_message(exc), line=_where(exc))
        except BaseException as exc:
            signal.setitimer(signal.ITIMER_REAL, 0)
            rec.update(status="error", message=_message(exc), line=_where(exc))

    for op, offset, timeout, cap, wants_whole, limits, code in reader:
        if limits:
            _set_limits(limits)
        if op == "stdio":  # the compiled program on this input (``code``); its stdout comes back
            reply(run_program(program[0], code, timeout, cap))
            continue
        buf = io.StringIO()
        local = ns if op == "setup" else dict(ns)
        rec: dict[str, object] = {"status": "ok", "message": None, "line": None, "value": None}
        start = time.perf_counter()
        sys.stdout = sys.stderr = buf
        try:
            execute(code, op, offset, timeout, local, rec)
        finally:
            sys.stdout = sys.stderr = real_out
        waiting = (op == "value" and wants_whole and rec["status"] == "ok"
                   and not (_plain_value(value_seen[0]) or _plain(str(rec["value"]))))
        if waiting:
            rec["waiting"] = True
        rec["time_ms"] = (time.perf_counter() - start) * 1000
        rec["output"] = buf.getvalue()[:cap]
        reply(rec)
        if not waiting:
            continue
        # not plain data the judge could compare: it sends the whole test case to run here
        wreq = next(_requests(wholes), None)  # one at a time: the judge writes no more
        if wreq is None:
            break
        _, whole_offset, _, _, _, _, whole_code = wreq
        buf = io.StringIO()
        whole: dict[str, object] = {"status": "ok", "message": None, "line": None}
        start = time.perf_counter()
        sys.stdout = sys.stderr = buf
        try:
            execute(whole_code, "run", whole_offset, timeout, local, whole)
        finally:
            sys.stdout = sys.stderr = real_out
        whole["time_ms"] = (time.perf_counter() - start) * 1000
        whole["output"] = buf.getvalue()[:cap]
        reply(whole)


STDOUT_CAP = 64 << 20
"""The most of a program's standard output the sample process sends back (the sandbox's file
size limit, which also bounds what a program can print, is lower by default)."""
EFBIG = 27


def _exit_builtins() -> None:
    """``exit`` and ``quit``, which ``python -S`` leaves out, as ``python3 prog.py`` has them:
    programs end with ``exit()`` (raises SystemExit like ``sys.exit``)."""
    import builtins

    for name in ("exit", "quit"):
        if not hasattr(builtins, name):
            setattr(builtins, name, sys.exit)


def run_program(compiled: object, stdin: str, timeout: float, cap: int) -> "dict[str, object]":
    """Run a stdin/stdout task's program as ``__main__`` on ``stdin``: its file descriptors 0
    and 1 (and ``sys.stdin``/``sys.stdout``) are in-memory files for this run only, so it can
    neither wait for input (reading past the end gives end of file) nor reach anything of the
    judge's. The reply's ``value`` is what it printed (at most :data:`STDOUT_CAP` bytes); what
    it wrote to ``sys.stderr`` is its ``output``. ``SystemExit`` ends it as a program's exit
    would (LiveCodeBench's harness also takes any exit for the end of the program)."""
    import io

    rec: dict[str, object] = {"status": "ok", "message": None, "line": None, "value": "",
                              "type": "stdout"}
    if compiled is None:
        rec.update(status="error", message="the program was not compiled")
        return rec
    _exit_builtins()
    _signal.signal(signal.SIGXFSZ, _signal.SIG_IGN)  # past the file size limit: EFBIG, not a kill
    data = stdin.encode("utf-8", "surrogateescape")
    fd_in, fd_out = os.memfd_create("stdin"), os.memfd_create("stdout")
    while data:
        data = data[os.write(fd_in, data):]
    os.lseek(fd_in, 0, os.SEEK_SET)
    saved = os.dup(0), os.dup(1)
    os.dup2(fd_in, 0)
    os.dup2(fd_out, 1)
    os.close(fd_in)
    err = io.StringIO()
    old = sys.stdin, sys.stdout, sys.stderr
    out = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8",
                           errors="surrogateescape")
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)),
                                 encoding="utf-8", errors="surrogateescape")
    sys.stdout, sys.stderr = out, err
    ns: dict[str, object] = {"__name__": "__main__", "__builtins__": __builtins__}
    start = time.perf_counter()
    try:
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            exec(compiled, ns)  # type: ignore[arg-type]
        except SystemExit as exc:
            if exc.code is not None and not isinstance(exc.code, int):
                err.write(f"{exc.code}\n")
            elif exc.code:
                err.write(f"exit status {exc.code}\n")
        finally:
            for stream in (sys.stdout, out):
                flush = getattr(stream, "flush", None)
                if flush is not None:
                    flush()
            ns.clear()  # what the program opened and left unflushed is flushed now
        signal.setitimer(signal.ITIMER_REAL, 0)
    except BwTimeout:
        rec.update(status="timeout", message=f"took more than {timeout:g} s")
    except BaseException as exc:
        signal.setitimer(signal.ITIMER_REAL, 0)
        if isinstance(exc, OSError) and exc.errno == EFBIG:
            rec.update(status="error", line=_where(exc),
                       message="the program printed more than the sandbox's file size limit")
        else:
            rec.update(status="error", message=_message(exc), line=_where(exc))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdin, sys.stdout, sys.stderr = old
        size = os.lseek(fd_out, 0, os.SEEK_END)
        os.lseek(fd_out, 0, os.SEEK_SET)
        chunks = []
        left = min(size, STDOUT_CAP)
        while left > 0:
            chunk = os.read(fd_out, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        for fd in (*saved, fd_out):
            os.close(fd)
    rec["time_ms"] = (time.perf_counter() - start) * 1000
    rec["value"] = b"".join(chunks).decode("utf-8", "replace")
    if size > STDOUT_CAP and rec["status"] == "ok":
        rec.update(status="error", message=f"the program printed {size} bytes: more than "
                                           f"{STDOUT_CAP >> 20} MiB, not compared")
    rec["output"] = err.getvalue()[:cap]
    return rec


REPLY_TEXTS = ("message", "value", "type", "output")


def decode_reply(data: bytearray) -> "tuple[dict[str, object] | None, bytearray]":
    """(the first reply in ``data``, what follows it), or (None, ``data``) while it is not
    all there. A reply is a header line (status, line, time in ms, waiting, the byte size of
    each of :data:`REPLY_TEXTS`, -1 for none) and those texts; not JSON, which costs the
    sample process about 20 page copies to write.

    Raises:
        ValueError: ``data`` is not a reply."""
    end = data.find(b"\n")
    if end < 0:
        if len(data) > 4096:
            raise ValueError("no reply header")
        return None, data
    head = data[:end].decode("ascii").split(" ")
    if len(head) != 4 + len(REPLY_TEXTS) or head[0] not in ("ok", "fail", "error", "timeout"):
        raise ValueError("not a reply header")
    sizes = [int(n) for n in head[4:]]
    start = end + 1
    if len(data) < start + sum(max(n, 0) for n in sizes):
        return None, data
    line = int(head[1])
    rec: dict[str, object] = {"status": head[0], "line": None if line < 0 else line,
                              "time_ms": float(head[2])}
    if head[3] == "1":
        rec["waiting"] = True
    for name, size in zip(REPLY_TEXTS, sizes, strict=True):
        if size < 0:
            rec[name] = None
            continue
        rec[name] = data[start:start + size].decode("utf-8", "surrogatepass")
        start += size
    return rec, data[start:]


def encode_request(req: "dict[str, Any]") -> bytes:
    """A request for the sample process: a header line (op, line offset, timeout, output
    cap, whole, limits, code size) and the code. Not JSON: decoding JSON costs a forked
    process about 60 page copies, splitting a line a dozen."""
    code = str(req["code"]).encode()
    limits = ",".join(f"{k}={int(v)}" for k, v in (req.get("limits") or {}).items()) or "-"
    head = (f"{req.get('op', 'run')} {int(req.get('offset', 0))} {float(req.get('timeout', 3.0))!r} "
            f"{int(req.get('cap', 4096))} {int(bool(req.get('whole')))} {limits} {len(code)}\n")
    return head.encode() + code


def _requests(fd: int) -> "Iterator[tuple[str, int, float, int, bool, dict[str, int], str]]":
    """The requests read from ``fd`` (see :func:`encode_request`), with plain reads: an
    ``io`` text reader costs a forked process about 100 page copies to set up."""
    pending = b""
    while True:
        end = pending.find(b"\n")
        if end < 0:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return
            pending += chunk
            continue
        op, offset, timeout, cap, whole, limits, size = pending[:end].decode().split(" ")
        stop = end + 1 + int(size)
        while len(pending) < stop:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return
            pending += chunk
        code = pending[end + 1:stop].decode()
        pending = pending[stop:]
        yield (op, int(offset), float(timeout), int(cap), whole == "1",
               {} if limits == "-" else {k: int(v) for k, v in
                                         (item.split("=") for item in limits.split(","))},
               code)


_PLAIN_TYPES = (int, float, str, bool, type(None), bytes, complex)


def _plain_value(value: object, depth: int = 0) -> bool:
    """A quick look at a value's types (exact types: no subclass can pretend): True when it is
    plain data whose repr the judge can read back. False only means "ask :func:`_plain`"."""
    kind = type(value)
    if kind in _PLAIN_TYPES:
        return True
    if depth > 20 or kind not in (list, tuple, dict, set, frozenset):
        return False
    if kind is dict:
        return all(_plain_value(k, depth + 1) and _plain_value(v, depth + 1)
                   for k, v in value.items())  # type: ignore[attr-defined]
    return all(_plain_value(v, depth + 1) for v in value)  # type: ignore[attr-defined]


def _plain(text: str) -> bool:
    """Whether ``text`` (a repr) is a literal the judge can compare."""
    import ast

    try:
        return _literal(ast.parse(text, mode="eval"))[0]
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def _set_limits(limits: "dict[str, int]") -> None:
    """Lower this process's limits (soft = hard: the solution cannot raise them again)."""
    import resource

    for name, value in limits.items():
        res = getattr(resource, "RLIMIT_" + name.upper(), None)
        if res is not None and value >= 0:
            try:  # noqa: SIM105 - contextlib costs an import per sample
                resource.setrlimit(res, (value, value))
            except (ValueError, OSError):
                pass


# -- the judge ------------------------------------------------------------------------------

class Judge:
    def __init__(self, pid: int, requests: int, replies: int, wholes: int,
                 zygote: "Zygote | None" = None) -> None:
        self.pid, self.requests, self.replies, self.wholes = pid, requests, replies, wholes
        self.zygote = zygote
        """The process that forked the sample and reaps it (None: this one)."""
        self.pending = bytearray()  # grows in place: a reply can hold megabytes of output
        self.alive = True
        self.failure: str | None = None
        """Why the sample process is gone: ``timeout`` (killed by us) or ``died``."""
        self.forged: str | None = None
        """Why the replies cannot be trusted (see :meth:`finish`)."""

    def send(self, data: bytes, fd: "int | None" = None) -> bool:
        """Write requests (:func:`encode_request`); False when the sample process is gone."""
        if not self.alive:
            return False
        try:
            while data:
                data = data[os.write(self.requests if fd is None else fd, data):]
        except OSError:
            self.alive, self.failure = False, "died"
            return False
        return True

    def receive(self, wait_s: float) -> "dict[str, object] | None":
        """The next reply, or None when the sample process died or hung (then it is killed)."""
        if not self.alive:
            return None
        import select

        deadline = time.monotonic() + wait_s
        poller = None
        while True:
            try:
                rec, self.pending = decode_reply(self.pending)
            except ValueError:  # not what the runner writes
                self.kill("died")
                return None
            if rec is not None:
                return rec
            if poller is None:
                poller = select.poll()
                poller.register(self.replies, select.POLLIN | select.POLLHUP)
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(left * 1000):
                self.kill("timeout")
                return None
            chunk = os.read(self.replies, 1 << 16)
            if not chunk:
                self.alive, self.failure = False, "died"
                return None
            self.pending += chunk

    def kill(self, why: str) -> None:
        if self.alive:
            self.alive, self.failure = False, why
            try:  # noqa: SIM105 - contextlib costs an import per sample
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def finish(self) -> "tuple[int | None, float, int]":
        """Close the pipe, reap the sample process: (exit code, CPU ms, peak RSS bytes).

        Sets ``forged`` when the sample process did not behave as the runner does: it was gone
        before the judge was done, it did not leave when the pipe closed, or it wrote replies
        nobody asked for (a solution writing results of its own into the reply pipe)."""
        import select

        try:
            pidfd = os.pidfd_open(self.pid)
        except OSError:  # gone and reaped already (or no pidfd): it cannot be waited for here
            pidfd = -1
        poller = select.poll()
        if pidfd >= 0:
            poller.register(pidfd, select.POLLIN)
            if poller.poll(0) and self.alive:
                self.forged = "the sample process ended before the judge was done with it"
        os.close(self.requests)
        if pidfd >= 0:  # give it up to 2 s to leave after the pipe closed, then kill it
            if not poller.poll(2000):
                if self.alive:
                    self.forged = "the sample process did not leave when its work was done"
                self.kill("timeout")
            os.close(pidfd)
        elif self.zygote is None:  # no pidfd: poll our own child
            deadline = time.monotonic() + 2
            while os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
                if time.monotonic() > deadline:
                    self.kill("timeout")
                    break
                time.sleep(0.005)
        if self.zygote is not None:
            status, cpu_ms, rss = self.zygote.reap(self.pid)
            if status is None:
                self.forged = self.forged or "the sample process killed the process that forked it"
                status = 9
            elif self.zygote.tainted:
                self.forged = self.forged or ("the sample process changed the limits, priority "
                                              "or CPU affinity of the process that forked it")
        else:
            status, usage = os.wait4(self.pid, 0)[1:]
            cpu_ms, rss = (usage.ru_utime + usage.ru_stime) * 1000, usage.ru_maxrss * 1024
        if self.alive and self.forged is None:
            os.set_blocking(self.replies, False)
            extra = self.pending
            try:
                while len(extra) < 1 << 20:
                    chunk = os.read(self.replies, 1 << 16)
                    if not chunk:
                        break
                    extra += chunk
            except BlockingIOError:
                pass
            if extra.strip():
                self.forged = "the sample process wrote replies nobody asked for"
        self.alive = False
        os.close(self.replies)
        os.close(self.wholes)
        return os.waitstatus_to_exitcode(status), cpu_ms, rss


def _literal(node: object) -> "tuple[bool, object]":
    """Evaluate a literal syntax tree here (no names but inf/nan/True/False/None)."""
    import ast

    if isinstance(node, ast.Expression):
        node = node.body
    if isinstance(node, ast.Constant):
        return True, node.value
    if isinstance(node, ast.Name) and node.id in ("inf", "nan"):
        return True, float(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
        ok, v = _literal(node.operand)
        if not ok:
            return False, None
        try:
            if isinstance(node.op, ast.Not):
                return True, not v
            return True, (-v if isinstance(node.op, ast.USub) else +v)  # type: ignore[operator]
        except TypeError:
            return False, None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = [_literal(e) for e in node.elts]
        if not all(ok for ok, _ in items):
            return False, None
        values = [v for _, v in items]
        try:
            return True, (list(values) if isinstance(node, ast.List)
                          else tuple(values) if isinstance(node, ast.Tuple) else set(values))
        except TypeError:
            return False, None
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            return False, None
        keys = [_literal(k) for k in node.keys]
        vals = [_literal(v) for v in node.values]
        if not all(ok for ok, _ in keys + vals):
            return False, None
        try:
            return True, {k: v for (_, k), (_, v) in zip(keys, vals, strict=False)}
        except TypeError:
            return False, None
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("set", "frozenset") and not node.keywords and len(node.args) <= 1):
        if not node.args:
            return True, set() if node.func.id == "set" else frozenset()
        ok, v = _literal(node.args[0])
        if ok:
            try:
                return True, set(v) if node.func.id == "set" else frozenset(v)  # type: ignore[call-overload]
            except TypeError:
                pass
    return False, None


COMPARE: "dict[str, Callable[[Any, Any], Any]]" = {
    "Eq": lambda a, b: a == b, "NotEq": lambda a, b: a != b, "Lt": lambda a, b: a < b,
    "LtE": lambda a, b: a <= b, "Gt": lambda a, b: a > b, "GtE": lambda a, b: a >= b,
    "In": lambda a, b: a in b, "NotIn": lambda a, b: a not in b,
}
SYMBOL = {"Eq": "==", "NotEq": "!=", "Lt": "<", "LtE": "<=", "Gt": ">", "GtE": ">=", "In": "in",
          "NotIn": "not in"}


def value_check(code: str) -> "dict[str, object] | None":
    """For ``assert <expr> <op> <literal>[, "msg"]``: what the judge needs to compare itself;
    for other single asserts, :func:`expr_check`."""
    import ast

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
        return None
    stmt = tree.body[0]
    test = stmt.test
    msg = None
    if stmt.msg is not None:
        has_msg, msg = _literal(stmt.msg)
        if not has_msg:
            return None  # a computed message needs the solution's names: run it whole
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return expr_check(code, stmt, msg)
    op = type(test.ops[0]).__name__
    ok, expected = _literal(test.comparators[0])
    if not ok or op not in COMPARE:
        return expr_check(code, stmt, msg)
    expr = ast.get_source_segment(code, test.left)
    if expr is None:
        return None
    expected_src = ast.get_source_segment(code, test.comparators[0])
    return {"expr": expr, "expr_line": test.left.lineno, "op": op, "expected": expected,
            "msg": msg, "line": stmt.lineno, "expected_src": expected_src,
            "msg_src": None if stmt.msg is None else ast.get_source_segment(code, stmt.msg),
            "source": f"{expr} {SYMBOL[op]} {expected_src}"}


SAFE = ("abs", "all", "any", "bool", "dict", "divmod", "enumerate", "float", "frozenset", "int",
        "isinstance", "len", "list", "max", "min", "range", "reversed", "round", "set", "sorted",
        "str", "sum", "tuple", "zip", "math", "inf", "nan")
"""Names a test may use that the judge evaluates itself (builtins, ``math``)."""
UNSAFE_NODES = ("Lambda", "ListComp", "SetComp", "DictComp", "GeneratorExp", "NamedExpr",
                "Await", "Yield", "YieldFrom", "Starred", "JoinedStr")


def expr_check(code: str, stmt: "Any", msg: object) -> "dict[str, object] | None":
    """For any other ``assert <test>[, "msg"]``: the parts of ``<test>`` that reach into the
    solution (a call of one of its functions, one of its names, a method of one of its objects)
    are asked of the sample process as one tuple; the judge evaluates the rest of ``<test>``
    itself on those values (builtins and ``math`` only). None when the test needs more."""
    import ast

    test = stmt.test
    if any(type(n).__name__ in UNSAFE_NODES for n in ast.walk(test)):
        return None
    parents: dict[int, Any] = {}
    for node in ast.walk(test):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    reach: list[Any] = []
    for node in ast.walk(test):
        if isinstance(node, ast.Name) and node.id not in SAFE:
            top: Any = node
            while True:
                up = parents.get(id(top))
                if ((isinstance(up, ast.Attribute) and up.value is top)
                        or (isinstance(up, ast.Call) and up.func is top)):
                    top = up
                else:
                    break
            reach.append(top)
    inside = set()
    for node in reach:
        for sub in ast.walk(node):
            if sub is not node:
                inside.add(id(sub))
    fetch: list[Any] = []
    for node in reach:
        if id(node) not in inside and all(node is not f for f in fetch):
            fetch.append(node)
    lazy = any(isinstance(n, (ast.BoolOp, ast.IfExp)) or (isinstance(n, ast.Compare) and len(n.ops) > 1)
               for n in ast.walk(test))
    if lazy and any(not isinstance(n, ast.Name) for n in fetch):
        return None  # `a or f(x)`: asking for f(x) up front could run what the test never would
    segments = [ast.get_source_segment(code, n) for n in fetch]
    if any(seg is None for seg in segments):
        return None
    index = {id(n): i for i, n in enumerate(fetch)}

    class Swap(ast.NodeTransformer):
        def visit(self, node: "ast.AST") -> "Any":
            if id(node) in index:
                return ast.copy_location(ast.Name(id=f"__bw_{index[id(node)]}", ctx=ast.Load()), node)
            return super().visit(node)

    template = ast.unparse(Swap().visit(test))  # the tree is ours: parsed for this call
    source = ast.get_source_segment(code, test) or template
    first = min((n.lineno for n in fetch), default=stmt.lineno)
    return {"kind": "expr", "expr": "(" + "".join(f"{seg}, " for seg in segments) + ")",
            "expr_line": first, "op": "Expr", "expected": None, "expected_src": "None",
            "template": template, "msg": msg, "line": stmt.lineno,
            "msg_src": None if stmt.msg is None else ast.get_source_segment(code, stmt.msg),
            "source": source, "fetched": segments}


def _judge_expr(check: "dict[str, Any]", values: "tuple[Any, ...]") -> "tuple[str, str | None]":
    """Evaluate an :func:`expr_check` template on the values the sample returned."""
    import math

    names: dict[str, object] = {name: getattr(__builtins__, name, None) if not isinstance(
        __builtins__, dict) else __builtins__.get(name) for name in SAFE}
    names.update(math=math, inf=math.inf, nan=math.nan)
    fetched = list(check.get("fetched") or [])
    shown = ", ".join(f"{seg} = {v!r}"[:300] for seg, v in zip(fetched, values, strict=False))
    for i, value in enumerate(values):
        names[f"__bw_{i}"] = value
    try:
        passed = bool(eval(compile(str(check["template"]), "<test>", "eval"),
                           {"__builtins__": {}}, names))
    except Exception as exc:
        return "fail", f"{check['source']}: {type(exc).__name__}: {exc}" + (f" ({shown})" if shown else "")
    if passed:
        return "pass", None
    if check["msg"] is not None:
        return "fail", str(check["msg"])
    return "fail", f"{check['source']}" + (f": {shown}" if shown else " is false")


def check_spec(code: str) -> "dict[str, object] | None":
    """:func:`value_check` as plain JSON data (literals as their source), for the harness to
    work out once per test case and send with each job."""
    check = value_check(code)
    if check is None or check["expected_src"] is None:
        return None
    return {k: v for k, v in check.items() if k not in ("expected", "msg")}


_LITERALS: "dict[str, tuple[bool, object, str | None]]" = {}
"""Literal sources the judge has evaluated (the samples of a task share their tests)."""


def _literal_source(src: str) -> "tuple[bool, object, str | None]":
    """:func:`_literal` of source ``src``, evaluated once per judge, and the repr of a value
    equal to it (None where NaN is involved: a NaN is equal to nothing). The value is shared
    by the checks of all samples: the judge only compares it."""
    import ast

    found = _LITERALS.get(src)
    if found is None:
        if len(_LITERALS) > 4096:
            _LITERALS.clear()
        try:
            ok, value = _literal(ast.parse(src, mode="eval"))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            ok, value = False, None
        text = repr(value) if ok else None
        found = _LITERALS[src] = (ok, value, None if text is None or "nan" in text else text)
    return found


def check_from_spec(spec: "dict[str, object]") -> "dict[str, object] | None":
    """The check a :func:`check_spec` describes (its literals evaluated here, not trusted)."""
    ok, expected, same = _literal_source(str(spec["expected_src"]))
    has_msg, msg, _ = (True, None, None) if spec.get("msg_src") is None else _literal_source(
        str(spec["msg_src"]))
    if not (ok and has_msg) or (spec.get("op") not in COMPARE and spec.get("kind") != "expr"):
        return None
    equal_repr = same if spec.get("op") == "Eq" and spec.get("kind") != "expr" else None
    return {**spec, "expected": expected, "msg": msg, "same_repr": equal_repr}


def judge(check: "dict[str, object]", got_repr: str) -> "tuple[str, str | None, bool]":
    """(status, message, judged here) for a value the sample process returned."""
    import ast

    if got_repr == check.get("same_repr"):  # what parsing it would show: equal to expected
        return "pass", None, True
    try:
        ok, got = _literal(ast.parse(got_repr, mode="eval"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        ok, got = False, None
    if not ok:
        return "unjudged", None, False
    if check.get("kind") == "expr":
        if not isinstance(got, tuple):
            return "unjudged", None, False
        status, text = _judge_expr(check, got)
        return status, text, True
    try:
        passed = bool(COMPARE[str(check["op"])](got, check["expected"]))
    except Exception as exc:
        return "fail", f"{check['source']}: got {got_repr[:500]} ({type(exc).__name__}: {exc})", True
    if passed:
        return "pass", None, True
    message = check["msg"] if check["msg"] is not None else f"{check['source']}: got {got_repr[:500]}"
    return "fail", str(message), True


RLIMITS = ("CPU", "FSIZE", "DATA", "STACK", "CORE", "RSS", "NPROC", "NOFILE", "MEMLOCK", "AS",
           "LOCKS", "SIGPENDING", "MSGQUEUE", "NICE", "RTPRIO", "RTTIME")


def process_state() -> "tuple[object, ...]":
    """What another process of the sandbox's uid can change about this one from outside, even
    when it is not dumpable: its limits (``prlimit``), priority (``setpriority``), scheduling
    policy and CPU affinity. The zygote and the judge compare it before each sample: a sample
    that lowered the zygote's memory limit would otherwise fail every sample forked after it."""
    import resource

    limits = tuple(resource.getrlimit(getattr(resource, "RLIMIT_" + name)) for name in RLIMITS
                   if hasattr(resource, "RLIMIT_" + name))
    try:
        affinity: tuple[int, ...] = tuple(sorted(os.sched_getaffinity(0)))
    except OSError:
        affinity = ()
    return (limits, os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0), affinity,
            _ioprio())


IOPRIO_GET = {"x86_64": 252, "aarch64": 31}
"""The ``ioprio_get`` system call's number per machine (no libc wrapper)."""


_syscall: "list[Any]" = []


def _ioprio() -> int:
    """This process's I/O priority (``ioprio_set`` needs only the same uid); -1 where it cannot
    be read."""
    if not _syscall:  # looked up once: the zygote asks before every fork
        import ctypes

        _syscall[:] = [IOPRIO_GET.get(os.uname().machine),
                       ctypes.CDLL(None, use_errno=True).syscall]
    number, syscall = _syscall
    return -1 if number is None else int(syscall(number, 1, 0))  # IOPRIO_WHO_PROCESS, itself


class Zygote:
    """The fork server's forking half: a lean process, forked before any job was read, that
    forks each sample on request and hands the judge the sample's pipes (``SCM_RIGHTS``).

    The judge never shares memory with a sample, so its own work after each fork copies no
    pages, and a sample is forked from a process that never held any job. The zygote is the
    samples' parent and their descendants' subreaper: it reaps each sample (its CPU time and
    peak memory come back to the judge) and kills what the sample left.

    Every page the zygote writes after a fork is copied (the sample still shares it), so
    between forks it does as little as it can: the judge empties the scratch folders."""

    def __init__(self, folder: str, scratch: "list[str]") -> None:
        import socket

        self.scratch = scratch
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.pid = os.fork()
        if self.pid == 0:
            try:
                ours.close()
                _zygote_main(theirs, folder)
            finally:
                os._exit(70)
        theirs.close()
        self.sock = ours
        self.alive = True
        self.tainted = False
        """The zygote found its limits, priority or CPU affinity changed by the last sample
        (see :func:`process_state`): it forks no more."""
        self.ready: Judge | None = None
        """The next sample process, forked when the last one was reaped."""

    def _receive_sample(self, message: bytes) -> "tuple[list[bytes], Judge | None]":
        """Send ``message``; the zygote answers with the pid of a new sample process after
        what else it has to say (space-separated), and the sample's three pipe ends."""
        import socket

        try:
            self.sock.send(message)
            data, fds, _, _ = socket.recv_fds(self.sock, 256, 3)
        except OSError:
            data, fds = b"", []
        values = data.split()
        if values[-1:] == [b"tainted"] and not fds:  # see _zygote_main
            self.alive, self.tainted = False, True
            return values[:-1], None
        if not data or len(fds) != 3:
            self.alive = False
            for fd in fds:
                os.close(fd)
            return [], None
        return values[:-1], Judge(int(values[-1]), fds[0], fds[1], fds[2], zygote=self)

    def spawn(self) -> "Judge | None":
        """The next sample process: forked already when the last one was reaped, else now."""
        ready, self.ready = self.ready, None
        if ready is not None:
            return ready
        return self._receive_sample(b"fork")[1]

    def reap(self, pid: int) -> "tuple[int | None, float, int]":
        """(wait status, CPU ms, peak RSS bytes) of sample ``pid``. The zygote reaps it, kills
        what it left and forks the next sample (one round trip for all); this process then
        empties the scratch folders. None when it cannot be had."""
        values, self.ready = self._receive_sample(b"next %d" % pid)
        empty(self.scratch)
        if not values:
            return None, 0.0, 0
        status, cpu_ms, rss = values
        return int(status), float(cpu_ms), int(rss)

    def clean(self, pid: int) -> None:
        """Kill what sample ``pid`` left and empty the scratch folders (the judge did not
        reap it: see :func:`serve`)."""
        try:
            self.sock.send(b"clean %d" % pid)
            if not self.sock.recv(16):
                self.alive = False
        except OSError:
            self.alive = False
        empty(self.scratch)

    def close(self) -> None:
        self.sock.close()
        try:  # noqa: SIM105 - contextlib costs an import per sample
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:  # noqa: SIM105 - contextlib costs an import per sample
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def _zygote_main(sock: "Any", folder: str) -> None:
    import ctypes
    import gc
    import socket

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER: what a sample leaves comes back here
    libc.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0
    for fd in (0, 1):  # the harness's channel is the judge's alone (2 is /dev/null already)
        os.dup2(os.open(os.devnull, os.O_RDWR), fd)
    os.chdir(folder)  # what every sample would do: done once, here
    os.environ["HOME"] = os.environ["TMPDIR"] = folder
    recv, send_fds, close, fork = sock.recv, socket.send_fds, os.close, _fork_sample
    keep = (sock.fileno(),)
    me = os.getpid()
    state = process_state()
    gc.freeze()  # the samples' collections then skip (do not copy) what they share with us
    while True:
        try:
            message = recv(64)
        except OSError:
            message = b""
        if not message:
            return
        head = b""
        if message.startswith(b"next "):  # reap and clean up after one sample, fork the next
            pid = int(message[5:])
            try:
                _, status, usage = os.wait4(pid, 0)
                head = b"%d %.3f %d " % (status, (usage.ru_utime + usage.ru_stime) * 1000,
                                         usage.ru_maxrss * 1024)
            except ChildProcessError:
                head = b"9 0 0 "
            kill_leftovers(pid, me)
            message = b"fork"
        if message == b"fork":
            if process_state() != state:  # changed from outside: what we fork would inherit it
                sock.send(head + b"tainted")
                continue
            pid, fds = fork(keep, True)
            send_fds(sock, [head + b"%d" % pid], fds)
            for fd in fds:
                close(fd)
        elif message.startswith(b"clean "):
            kill_leftovers(int(message[6:]), me)
            sock.send(b"ok")


def _fork_sample(close: "tuple[int, ...]" = (), zygote: bool = False) -> "tuple[int, list[int]]":
    """Fork a sample process: (its pid, [requests, replies, wholes] pipe ends for its judge).

    A ``zygote`` has all a sample needs already (its folder, environment, /dev/null as stdio):
    the child only starts a session of its own."""
    requests_r, requests_w = os.pipe()
    replies_r, replies_w = os.pipe()
    wholes_r, wholes_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(requests_w)
            os.close(replies_r)
            os.close(wholes_w)
            for fd in close:
                os.close(fd)
            if zygote:
                os.setsid()
            sample_main(requests_r, replies_w, wholes_r, stdio=not zygote)
        finally:
            os._exit(70)
    os.close(requests_r)
    os.close(replies_w)
    os.close(wholes_r)
    return pid, [requests_w, replies_r, wholes_w]


def spawn_sample() -> Judge:
    """Fork the sample process of a one-shot run (before the job is read: it never sees
    expected values); the fork server's come from its :class:`Zygote`."""
    pid, (requests, replies, wholes) = _fork_sample()
    return Judge(pid, requests, replies, wholes)


def run_job(sample: Judge, job: "dict[str, Any]", emit: "Callable[[dict[str, object]], None]") -> None:
    """Load the solution in ``sample``, judge every test case, emit one record each."""
    tests = [t if isinstance(t, dict) else {"code": t} for t in job["tests"]]
    default = float(job["test_timeout_s"])
    cap = int(job.get("output_cap", 4096))
    setup = job["setup"]
    offset = setup.count("\n")
    limits = job.get("limits") or {}
    if limits:  # CPU seconds for the whole sample: every test's limit, plus loading
        budget = default + sum(float(t.get("timeout") or default) + 1 for t in tests) + 1
        limits = {**limits, "cpu": int(budget) + 1}
    program = any("stdin" in t for t in tests)  # the solution is a program, run once per case
    setup_req = {"op": "compile" if program else "setup", "code": setup, "timeout": default,
                 "cap": cap, "limits": limits}
    plans = [plan_stdio(t, float(t.get("timeout") or default), cap) if program else
             plan_test(str(t["code"]), offset, float(t.get("timeout") or default), cap,
                       t.get("check", False)) for t in tests]
    payload = [encode_request(setup_req)]
    payload += [encode_request(req) for _, req, _ in plans]
    pipelined = sum(map(len, payload)) <= PIPELINE_BYTES
    if pipelined:  # all at once: the sample works through them without waiting for us
        sample.send(b"".join(payload))
    else:
        sample.send(payload[0])
    rec = sample.receive(default + 1.0)
    if rec is None:
        emit({"build": "timeout" if sample.failure == "timeout" else "error", "line": None,
              "message": "loading the solution did not finish" if sample.failure == "timeout"
              else "the process ended while loading the solution"})
    elif rec["status"] != "ok":
        emit({"build": "timeout" if rec["status"] == "timeout" else "error",
              "message": rec.get("message"), "line": rec.get("line"), "output": rec.get("output")})
    else:
        held: list[dict[str, object]] = [{"build": "ok", "output": rec.get("output")}]
        for i, (check, _req, grace) in enumerate(plans):
            was_alive = sample.alive
            if not pipelined:
                sample.send(payload[i + 1])
            reply = sample.receive(grace)
            if reply is not None and reply.get("waiting") and check is not None:
                if _plain(str(reply.get("value"))):
                    sample.kill("died")  # it claims a plain value is not: it lies
                    reply = None
                else:
                    sample.send(encode_request({"code": check["whole_code"], "offset": offset}),
                                sample.wholes)
                    whole = sample.receive(grace)
                    reply = None if whole is None else {**reply, "whole": whole}
            held.append(verdict(i, check, reply, offset) if reply is not None
                        else _lost(i, sample, was_alive))
        exit_code, cpu_ms, rss = sample.finish()
        if sample.forged is None:  # the verdicts stand only if the process behaved
            for item in held:
                emit(item)
        else:
            emit({"build": "error", "line": None,
                  "message": f"results cannot be trusted: {sample.forged}"})
        emit({"done": True, "cpu_ms": cpu_ms, "max_rss_bytes": rss, "sample_exit": exit_code})
        return
    exit_code, cpu_ms, rss = sample.finish()
    emit({"done": True, "cpu_ms": cpu_ms, "max_rss_bytes": rss, "sample_exit": exit_code})


def _undumpable() -> None:
    """PR_SET_DUMPABLE 0: processes of the same uid (the sample) can no longer open
    ``/proc/<us>/fd/1`` (our result channel), read our memory or ptrace us. What we fork
    inherits it until it executes a program."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)


def _prefix(job: "dict[str, Any]") -> str:
    """``BWR <nonce> ``: every line about ``job`` carries the nonce the harness sent with it,
    which no sample process ever holds (see :mod:`benchwright.lang.pyserver`)."""
    return PREFIX + str(job.get("nonce") or "-") + " "


def main() -> None:
    """One sample: the job on stdin, the records on stdout."""
    _undumpable()
    sample = spawn_sample()
    job = json.loads(sys.stdin.buffer.read())
    out = sys.stdout
    prefix = _prefix(job)

    def emit(rec: "dict[str, object]") -> None:
        out.write(prefix + json.dumps(rec) + "\n")
        out.flush()

    run_job(sample, job, emit)


# -- the fork server ------------------------------------------------------------------------

WARM_UP = "xs = [i * i for i in range(50)]\nassert sum(xs) == 40425, 'warm'\nd = {str(i): i for i in xs}\n"


def serve() -> None:
    """A batch of samples, one after another, each in a fresh forked process.

    The harness writes a configuration line, then one job per line, each after the previous
    job's ``end`` record. The next sample process is forked *before* its job is read.
    After each sample, every process it left is killed (the zygote is their subreaper), its
    folder is removed and the scratch folders (the sandbox's private /tmp, /dev/shm) emptied.
    Then, in an isolating sandbox, :func:`leftovers` looks for anything the sample could have
    left for the next one; if there is anything, or the sample killed or changed the zygote or
    this process, the ``end`` record says ``restart`` and this program ends: the harness
    starts the next sample in a new sandbox. Nothing of a sample is ever run again (this
    program never starts itself afresh from a file a sample could have written).
    """
    _undumpable()
    stdin = sys.stdin.buffer
    config = json.loads(_line_unbuffered(0) or b"{}")  # not stdin.readline(): see there
    os.environ.pop("LD_BIND_NOW", None)  # bound already; not for what samples start
    if isinstance(config.get("cpu"), int):  # one core for the judge, the zygote and samples
        try:  # noqa: SIM105 - contextlib costs an import per sample
            os.sched_setaffinity(0, {config["cpu"]})
        except (OSError, ValueError):
            pass
    for name in config.get("preload", ()):
        try:  # noqa: SIM105 - contextlib costs an import per sample
            __import__(name)
        except Exception:
            pass
    warm_sample_loop()  # its first compile and run would cost every child ~1 ms
    scratch = [str(p) for p in config.get("scratch", ())]
    isolated = bool(config.get("isolated"))
    base = os.getcwd()
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 2)
    out = sys.stdout
    folder = os.path.join(base, "sample")  # each sample's own: emptied after each
    os.makedirs(folder, 0o700, exist_ok=True)
    scratch.append(folder)
    zygote = Zygote(folder, scratch)  # forked before any job is read
    state = process_state()
    layout = _layout(base, folder, scratch) if isolated else None
    while True:
        sample = zygote.spawn()
        line = stdin.readline()
        if not line or sample is None:
            if sample is not None:
                sample.kill("end")
            zygote.close()
            return
        job = json.loads(line)
        prefix = _prefix(job)
        records: list[dict[str, object]] = []
        try:
            run_job(sample, job, records.append)
        except Exception as exc:  # our own failure: say so, never a verdict
            records = [{"infra": f"{type(exc).__name__}: {exc}"}]
        del job, line
        if zygote.ready is None and zygote.alive:  # not reaped by the judge (it failed): here
            sample.kill("end")
            zygote.clean(sample.pid)
        end: dict[str, object] = {"end": True}
        if process_state() != state:  # a sample changed our limits while we judged it
            untrusted: dict[str, object] = {
                "build": "error", "line": None, "message": "results cannot be trusted: the "
                "sample process changed the limits, priority or CPU affinity of its judge"}
            records = [untrusted, *(r for r in records if r.get("done"))]
            end["restart"] = "the judge was changed"
        elif not zygote.alive:
            end["restart"] = "the zygote is gone" if not zygote.tainted else "the zygote was changed"
        elif layout is not None:
            left = leftovers(base, folder, scratch, layout,
                             {zygote.pid, *((zygote.ready.pid,) if zygote.ready else ())})
            if left is not None:
                end["restart"] = left
        out.write("".join(prefix + json.dumps(rec) + "\n" for rec in (*records, end)))
        out.flush()
        if "restart" in end:  # the harness starts a new sandbox for the next sample
            zygote.close()
            return


def _layout(base: str, folder: str, scratch: "list[str]") -> "tuple[object, ...]":
    """What the work folder, the sample's folder and the scratch folders are when no sample has
    run (their names, ids, modes, owners, extended attributes such as default ACLs, and inode
    flags), and what else of the sandbox's namespaces a sample could change for the next
    (:func:`namespace_state`)."""
    return (sorted(os.listdir(base)), *(_identity(p) for p in (base, folder, *scratch)),
            namespace_state())


def _identity(path: str) -> "tuple[object, ...]":
    """What a sample can change about a folder it owns that a later sample would inherit: its
    mode and owner, its extended attributes (a default ACL makes every later file unreadable)
    and its inode flags (``chattr +S`` makes every later write synchronous)."""
    info = os.lstat(path)
    try:
        attrs: tuple[object, ...] = tuple(sorted(
            (name, os.getxattr(path, name, follow_symlinks=False))
            for name in os.listxattr(path, follow_symlinks=False)))
    except OSError:
        attrs = ("unreadable",)
    return info.st_dev, info.st_ino, info.st_mode, info.st_uid, info.st_gid, attrs, _flags(path)


def _flags(path: str) -> int:
    """The inode flags of ``path`` (``lsattr``; -1 where the file system has none)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return -1
    try:
        buf = bytearray(8)
        fcntl.ioctl(fd, 0x80086601, buf)  # FS_IOC_GETFLAGS
        return int.from_bytes(buf[:4], "little")
    except OSError:
        return -1
    finally:
        os.close(fd)


NAMESPACE_FILES = (
    "/proc/sys/kernel/shmmax", "/proc/sys/kernel/shmall", "/proc/sys/kernel/shmmni",
    "/proc/sys/kernel/msgmni", "/proc/sys/kernel/msgmax", "/proc/sys/kernel/msgmnb",
    "/proc/sys/kernel/sem", "/proc/sys/kernel/shm_rmid_forced", "/proc/sys/kernel/pid_max",
    "/proc/sys/fs/mqueue/msg_max", "/proc/sys/fs/mqueue/msgsize_max",
    "/proc/sys/fs/mqueue/queues_max", "/proc/sys/fs/mqueue/msg_default",
    "/proc/sys/fs/mqueue/msgsize_default", "/proc/keys", "/proc/net/sockstat",
    "/proc/net/sockstat6",
)
"""What a process without capabilities can change in the sandbox's own namespaces and a later
sample would meet: the IPC and message-queue limits, ``pid_max``, the keys of its user (a key
added by one sample is readable by the next) and the sockets of its network namespace (a
``TIME_WAIT`` connection keeps a port taken: ``sockstat`` counts them, at a fraction of the
cost of listing them)."""


PER_NAMESPACE = (b"used", b"inuse", b"tw")
"""The counts of ``/proc/net/sockstat`` that are the network namespace's own (sockets in use,
``TIME_WAIT``); the others (``orphan``, ``alloc``, ``mem``) are the machine's and change with
what the host does."""


def namespace_state() -> "tuple[bytes, ...]":
    """The contents of :data:`NAMESPACE_FILES` (empty where one cannot be read)."""
    out = []
    for path in NAMESPACE_FILES:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            out.append(b"")
            continue
        try:
            data = b""
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                data += chunk
            if path.startswith("/proc/net/sockstat"):  # only the namespace's own counts
                kept = []
                for line in data.splitlines():
                    words = line.split()
                    kept += words[:1] + [b"%s=%s" % (words[i], words[i + 1])
                                         for i in range(1, len(words) - 1, 2)
                                         if words[i] in PER_NAMESPACE]
                data = b" ".join(kept)
            out.append(data)
        except OSError:
            out.append(b"")
        finally:
            os.close(fd)
    return tuple(out)


SYSV_IPC = ("/proc/sysvipc/shm", "/proc/sysvipc/sem", "/proc/sysvipc/msg")


def leftovers(base: str, folder: str, scratch: "list[str]", layout: "tuple[object, ...]",
              expected: "set[int]") -> "str | None":
    """What the last sample left that the next one could meet, after the clean-up (None:
    nothing): files that could not be removed, a changed work folder, System V IPC objects,
    POSIX message queues, or a process that is not the sandbox's init, this process or one of
    ``expected`` (the zygote and the next sample: in the sandbox's own PID namespace every
    process is in ``/proc``)."""
    try:
        now = _layout(base, folder, scratch)
        if now[:-1] != layout[:-1]:
            return "the sample changed the work folder or a scratch folder"
        if now[-1] != layout[-1]:
            return ("the sample changed the sandbox's IPC or message-queue limits, pid_max, "
                    "its user's keys or its network sockets")
        for root in scratch:
            if os.listdir(root):
                return f"the sample left files in {root} that could not be removed"
        for table in SYSV_IPC:
            fd = os.open(table, os.O_RDONLY)
            try:
                data = os.read(fd, 4096)
            finally:
                os.close(fd)
            if data.count(b"\n") > 1:
                return "the sample left System V IPC objects"
        expected = {1, os.getpid(), *expected}
        if any(int(p) not in expected for p in os.listdir("/proc") if p.isdigit()):
            return "the sample left a process behind"
    except (OSError, ValueError) as exc:
        return f"the sandbox could not be checked after the sample: {exc}"
    return None


def _line_unbuffered(fd: int) -> bytes:
    """One line of ``fd``, read a byte at a time. A buffered ``readline`` of the configuration
    may read the first job too (the harness sends both at once); the first sample, forked
    afterwards, would inherit it in ``sys.stdin``'s buffer and read its own expected values."""
    data = bytearray()
    while not data.endswith(b"\n"):
        byte = os.read(fd, 1)
        if not byte:
            break
        data += byte
    return bytes(data)


def kill_leftovers(pid: int, me: int) -> None:
    """Kill everything sample ``pid`` left running and reap it (``me``: its subreaper, whose
    children the sample's descendants are once the sample is gone)."""
    kids = _children(me)
    if not kids:  # nothing left, not even a zombie (the usual case: no exceptions to raise)
        return
    try:  # noqa: SIM105 - contextlib costs an import per sample
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for _ in range(200):
        if not kids:
            break
        for kid in kids:
            try:  # noqa: SIM105 - contextlib costs an import per sample
                os.kill(kid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for kid in kids:
            try:  # noqa: SIM105 - contextlib costs an import per sample
                os.waitpid(kid, 0)
            except ChildProcessError:
                pass
        kids = _children(me)  # what those left behind came back to us
    while True:  # zombies already gone from the children lists
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                break
        except ChildProcessError:
            break


def empty(scratch: "list[str]") -> None:
    """Remove everything in the ``scratch`` folders."""
    import shutil

    for root in scratch:
        try:
            names = os.listdir(root)
        except OSError:
            continue
        for name in names:
            path = os.path.join(root, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:  # noqa: SIM105 - contextlib costs an import per sample
                    os.unlink(path)
                except OSError:
                    pass


def _children(pid: int) -> "list[int]":
    """The children of single-threaded process ``pid`` (plain reads: no file objects)."""
    try:
        fd = os.open(f"/proc/{pid}/task/{pid}/children", os.O_RDONLY)
    except OSError:
        return []
    try:
        data = os.read(fd, 1 << 16)
    finally:
        os.close(fd)
    return [int(k) for k in data.split()]


# -- the exec server ------------------------------------------------------------------------

EXIT_GRACE_S = 0.5
"""Once a command has closed its output it gets this long (within its wall time) to exit."""
DRAIN_S = 0.05
"""How long the pipes are still read once the command is gone while something it left holds
them open."""


def exec_serve() -> None:
    """Commands, one after another, each as a run of its own sandbox would run it: a kept
    program's judge, without the cost of a new sandbox (see
    :mod:`benchwright.lang.execserver`).

    The harness writes a configuration line, then one job per line, each after the previous
    job's answer. A job's files are written to the work folder (this process's folder, empty
    between jobs); its command runs in a session of its own with the job's rlimits, reading the
    job's stdin, for at most its wall time. Then every process it left is killed (this process
    is their subreaper), the work folder and the scratch folders are emptied, and
    :func:`leftovers` looks for anything the next command could meet: if there is anything, or
    a command changed this process's limits, priority or affinity, the answer says
    ``restart`` and this program ends (the harness starts a new sandbox). The answer is one
    ``BWR <nonce> {json}`` line: wait status, times, peak memory, output and collected files.
    """
    import ctypes

    _undumpable()
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    config = json.loads(_line_unbuffered(0) or b"{}")
    base = os.getcwd()
    scratch = [base, *(str(p) for p in config.get("scratch", ()))]
    os.dup2(os.open(os.devnull, os.O_RDWR), 2)
    env = dict(os.environ)
    out = sys.stdout
    me = os.getpid()
    state = process_state()
    layout = _layout(base, base, scratch)
    stdin = sys.stdin.buffer  # buffered: what a command gets is a pipe of its own
    while True:
        line = stdin.readline()
        if not line:
            return
        job = json.loads(line)
        try:
            answer = exec_job(job, base, env, me)
            empty(scratch)
        except Exception as exc:  # our own failure: a new sandbox, and the harness runs it
            answer = {"infra": f"{type(exc).__name__}: {exc}", "restart": "the server failed"}
        if "restart" in answer:
            pass
        elif process_state() != state:
            answer["restart"] = "a command changed the limits, priority or affinity of its server"
        else:
            left = leftovers(base, base, scratch, layout, set())
            if left is not None:
                answer["restart"] = left
        out.write(_prefix(job) + json.dumps(answer) + "\n")
        out.flush()
        if "restart" in answer:
            return


def exec_job(job: "dict[str, Any]", folder: str, env: "dict[str, str]",
             me: int) -> "dict[str, object]":
    """Run one job's command in ``folder`` (see :func:`exec_serve`); its answer."""
    import base64
    import resource
    import select

    for name, data in (job.get("files") or {}).items():
        if not name or "/" in name or name in (".", ".."):
            raise ValueError(f"not a plain file name: {name!r}")
        fd = os.open(os.path.join(folder, name),
                     os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            view = memoryview(base64.b64decode(data))
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
    argv = [str(a) for a in job["argv"]]
    stdin = None if job.get("stdin") is None else base64.b64decode(job["stdin"])
    cap = int(job["output_bytes"])
    wall_s = float(job["wall_s"])
    limits = [(getattr(resource, "RLIMIT_" + name), (int(v[0]), int(v[1])))
              for name, v in (job.get("rlimits") or {}).items()]
    in_r, in_w = os.pipe() if stdin is not None else (os.open(os.devnull, os.O_RDONLY), -1)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            os.dup2(in_r, 0)
            os.dup2(out_w, 1)
            os.dup2(err_w, 2)
            for sig in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGINT, signal.SIGQUIT):
                _signal.signal(sig, _signal.SIG_DFL)
            for which, value in limits:
                resource.setrlimit(which, value)
            os.chdir(folder)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    deadline = start + wall_s
    bufs = {out_r: bytearray(), err_r: bytearray()}
    poll = select.poll()
    for fd in bufs:
        os.set_blocking(fd, False)
        poll.register(fd, select.POLLIN)
    pending = memoryview(stdin or b"")
    if in_w >= 0:
        os.set_blocking(in_w, False)
        if pending:
            poll.register(in_w, select.POLLOUT)
        else:
            os.close(in_w)
            in_w = -1
    open_streams, gone, timed_out = len(bufs), None, False
    while open_streams:
        remaining = deadline - time.perf_counter()
        if remaining <= 0:
            timed_out = True
            break
        events = poll.poll(0 if gone is not None else min(remaining, 0.05) * 1000)
        if gone is not None and (not events or time.perf_counter() - gone > DRAIN_S):
            break  # what it wrote before it exited is read; the rest is not its own
        if not events:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                gone = time.perf_counter()
            continue
        for fd, _ in events:
            if fd == in_w:
                try:
                    pending = pending[os.write(in_w, pending[:65536]):]
                except BlockingIOError:
                    continue
                except OSError:  # it closed its stdin
                    pending = pending[:0]
                if not pending:
                    poll.unregister(in_w)
                    os.close(in_w)
                    in_w = -1
                continue
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                continue
            if not chunk:
                poll.unregister(fd)
                open_streams -= 1
                continue
            buf = bufs[fd]
            if len(buf) < cap:
                buf.extend(chunk[:cap - len(buf)])
    if not timed_out:  # its streams closed: let it finish exiting
        until = min(deadline, time.perf_counter() + EXIT_GRACE_S)
        while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            if time.perf_counter() >= until:
                timed_out = time.perf_counter() >= deadline
                break
            time.sleep(0.0005)
    try:  # noqa: SIM105 - contextlib costs an import
        os.killpg(pid, signal.SIGKILL)  # the leader is not reaped yet: the group is its own
    except (ProcessLookupError, PermissionError):
        pass
    _kill_others(me)  # a tracer elsewhere would hold the leader from us
    _, status, usage = os.wait4(pid, 0)
    wall_ms = (time.perf_counter() - start) * 1000
    for fd in (out_r, err_r, in_w):
        if fd >= 0:
            os.close(fd)
    kill_leftovers(pid, me)
    files: dict[str, str] = {}
    for name in job.get("collect") or ():
        got = _regular_file(os.path.join(folder, str(name)), int(job.get("collect_bytes") or cap))
        if got is not None:
            files[str(name)] = base64.b64encode(got).decode()
    return {"status": os.waitstatus_to_exitcode(status), "timed_out": timed_out,
            "wall_ms": wall_ms, "cpu_ms": (usage.ru_utime + usage.ru_stime) * 1000,
            "max_rss_bytes": usage.ru_maxrss * 1024,
            "stdout": base64.b64encode(bufs[out_r]).decode(),
            "stderr": base64.b64encode(bufs[err_r]).decode(), "files": files}


def _kill_others(me: int) -> None:
    """SIGKILL every process of the sandbox but its init and ``me`` (in the sandbox's own PID
    namespace every process is in ``/proc``)."""
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in (1, me):
            try:  # noqa: SIM105 - contextlib costs an import
                os.kill(int(name), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def _regular_file(path: str, cap: int) -> "bytes | None":
    """At most ``cap`` bytes of ``path`` when it is a regular file with one name (never
    through a link, never a FIFO); else None."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            return None
        data = bytearray()
        while len(data) < cap:
            chunk = os.read(fd, min(1 << 20, cap - len(data)))
            if not chunk:
                break
            data += chunk
        return bytes(data)
    finally:
        os.close(fd)


PIPELINE_BYTES = 48 * 1024
"""Requests up to this size are written at once (a pipe holds 64 KiB); larger jobs go one
request at a time."""


def plan_test(code: str, offset: int, timeout: float, cap: int,
              spec: "object" = False) -> "tuple[dict[str, object] | None, dict[str, object], float]":
    """(value check, request, how long to wait for its reply) for one test case.

    A test shaped ``assert <expr> <op> <literal>`` asks the sample for the value of ``<expr>``
    only (the judge compares). When the value is not plain data the judge could compare, the
    sample waits and the judge sends it the whole test case (see :func:`sample_main`). Any
    other test runs whole. ``spec``: the harness's :func:`check_spec` of ``code`` (None: not
    a value check), or False to work it out here."""
    if spec is False:
        check = value_check(code)
    else:
        check = check_from_spec(spec) if isinstance(spec, dict) else None
    grace = timeout + 1.0
    if check is None:
        return None, {"op": "run", "code": code, "offset": offset, "timeout": timeout,
                      "cap": cap}, grace
    expr_offset = offset + int(check["expr_line"]) - 1  # type: ignore[call-overload]
    req = {"op": "value", "code": "(" + str(check["expr"]) + "\n)", "offset": expr_offset,
           "timeout": timeout, "cap": cap, "whole": True}
    check["whole_code"] = code
    return check, req, grace


def plan_stdio(test: "dict[str, Any]", timeout: float,
               cap: int) -> "tuple[dict[str, object], dict[str, object], float]":
    """(check, request, wait) for a stdin/stdout case: the sample process gets its input only;
    the expected output stays here."""
    check: dict[str, object] = {"kind": "stdio", "stdin": str(test["stdin"]),
                                "expected": str(test["stdout"])}
    return check, {"op": "stdio", "code": check["stdin"], "timeout": timeout, "cap": cap}, timeout + 1.0


def _lines(text: str) -> "list[str]":
    return [line.strip() for line in text.strip().split("\n")]


def _decimals(line: str) -> "list[object] | None":
    from decimal import Decimal

    try:
        return [Decimal(item) for item in line.split()]
    except Exception:  # decimal.InvalidOperation and anything else: not numbers
        return None


def compare_output(got: str, expected: str) -> "str | None":
    """None when ``got`` matches ``expected`` by LiveCodeBench's rules, else why not: both are
    stripped and split into lines, each line stripped; there must be as many lines, and each
    line must be equal, or hold the same numbers (whitespace-separated, compared as exact
    decimals: ``1.0`` matches ``1``, ``0.30000000000000004`` does not match ``0.3``)."""
    ours, theirs = _lines(got), _lines(expected)
    if len(ours) != len(theirs):
        return f"wrong output: {len(ours)} line(s) where {len(theirs)} expected"
    for n, (a, b) in enumerate(zip(ours, theirs, strict=True), start=1):
        if a == b:
            continue
        numbers = _decimals(a)
        if numbers is not None and numbers == _decimals(b):
            continue
        return f"wrong output at line {n}: {_clip(a, 200)!r} where {_clip(b, 200)!r} expected"
    return None


def _clip(text: str, size: int = 1000) -> str:
    if len(text) <= size:
        return text
    return f"{text[:size // 2]}...({len(text) - size} characters left out)...{text[-size // 2:]}"


def _io_report(check: "dict[str, object]", got: object) -> str:
    """The case's input, expected and actual output, for its message."""
    return (f"\ninput:\n{_clip(str(check['stdin']))}\nexpected output:\n"
            f"{_clip(str(check['expected']))}\nactual output:\n{_clip(str(got or ''))}")


def stdio_verdict(i: int, check: "dict[str, object]", rec: "dict[str, object]") -> "dict[str, object]":
    """The record of stdin/stdout case ``i``: what the program printed compared here."""
    got = rec.get("value")
    out: dict[str, object] = {"i": i, "line": rec.get("line"), "time_ms": rec.get("time_ms"),
                              "output": rec.get("output"), "judged": "harness"}
    if rec["status"] != "ok":
        message = str(rec.get("message") or rec["status"])
        return {**out, "status": rec["status"], "message": message + _io_report(check, got)}
    if not isinstance(got, str) or rec.get("type") != "stdout":
        return {**out, "status": "error", "message": "the sample process sent no output"}
    why = compare_output(got, str(check["expected"]))
    if why is None:
        return {**out, "status": "pass", "message": None}
    return {**out, "status": "fail", "line": None, "message": why + _io_report(check, got)}


def verdict(i: int, check: "dict[str, object] | None", rec: "dict[str, object]",
            offset: int) -> "dict[str, object]":
    """The record of test ``i`` from the sample's reply; the judge compares plain values."""
    if check is not None and check.get("kind") == "stdio":
        return stdio_verdict(i, check, rec)
    if check is None:
        status = "pass" if rec["status"] == "ok" else str(rec["status"])
        return {"i": i, **_test_fields(rec), "status": status, "judged": "sample"}
    if rec["status"] != "ok":
        return {"i": i, **_test_fields(rec), "judged": "harness"}
    status, message, here = judge(check, str(rec["value"]))
    expected_type = type(check["expected"]).__name__
    got_type = str(rec.get("type"))
    if here:
        line = None if status == "pass" else offset + int(check["line"])  # type: ignore[call-overload]
        out = {"i": i, "status": status, "message": message, "line": line,
               "time_ms": rec.get("time_ms"), "output": rec.get("output"), "judged": "harness"}
        if status == "pass" and got_type != expected_type and check["op"] == "Eq":
            out["suspicious"] = (f"the value is a {got_type} where the expected "
                                 f"value is a {expected_type}")
        return out
    whole = rec.get("whole")
    if not isinstance(whole, dict):
        return {"i": i, "status": "error", "line": None, "time_ms": rec.get("time_ms"),
                "output": rec.get("output"), "judged": "harness",
                "message": "the sample process returned no verdict for a value it could not show"}
    status = "pass" if whole.get("status") == "ok" else str(whole.get("status"))
    result = {"i": i, "status": status, "message": whole.get("message"), "line": whole.get("line"),
              "time_ms": rec.get("time_ms"), "output": rec.get("output"), "judged": "sample"}
    if status == "pass":
        result["suspicious"] = (
            f"what the test reads of the solution is not plain data ({check['fetched']})"
            if check.get("kind") == "expr" else
            f"the value is a {got_type} (not a plain value) where the expected value is a "
            f"{expected_type}")
    return result


def _test_fields(rec: "dict[str, object]") -> "dict[str, object]":
    return {"status": rec["status"], "message": rec.get("message"), "line": rec.get("line"),
            "time_ms": rec.get("time_ms"), "output": rec.get("output")}


def _lost(i: int, sample: Judge, was_alive: bool) -> "dict[str, object]":
    """The verdict on a test whose answer never came: never a pass."""
    base: dict[str, object] = {"i": i, "judged": "harness", "line": None, "time_ms": None}
    if not was_alive:
        return {**base, "status": "not_run", "message": "not run: the sample process had ended"}
    if sample.failure == "timeout":
        return {**base, "status": "timeout", "message": "the test did not finish in time"}
    return {**base, "status": "error", "message": "the process exited or crashed during this test"}


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        serve()
    elif sys.argv[1:2] == ["--exec"]:
        exec_serve()
    else:
        main()
