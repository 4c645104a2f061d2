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

import json
import os
import signal
import sys
import time

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs every sample ~5 ms
if TYPE_CHECKING:
    from collections.abc import Callable
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

def sample_main(requests: int, replies: int) -> None:
    """Serve requests until the judge closes the pipe. Runs the untrusted code."""
    import io

    dumps = json.dumps  # bound now: the solution may patch json.dumps later
    write = os.write
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)  # the judge's result channel is out of reach
    os.dup2(devnull, 2)
    real_out = sys.stdout
    signal.signal(signal.SIGALRM, _alarm)
    ns: dict[str, object] = {"__name__": "solution", "__builtins__": __builtins__}
    reader = os.fdopen(requests, "r", encoding="utf-8")

    def reply(rec: "dict[str, object]") -> None:
        data = (dumps(rec) + "\n").encode()
        while data:
            data = data[write(replies, data):]

    for line in reader:
        req = json.loads(line)
        op, timeout, cap = req["op"], float(req["timeout"]), int(req.get("cap", 4096))
        buf = io.StringIO()
        local = ns if op == "setup" else dict(ns)
        rec: dict[str, object] = {"status": "ok", "message": None, "line": None, "value": None}
        start = time.perf_counter()
        try:
            code = compile("\n" * int(req.get("offset", 0)) + req["code"], FILENAME,
                           "eval" if op == "value" else "exec")
            sys.stdout = sys.stderr = buf
            signal.setitimer(signal.ITIMER_REAL, timeout)
            if op == "value":
                value = eval(code, local)
                rec["value"] = repr(value)[: 1 << 20]
            else:
                exec(code, local)
            signal.setitimer(signal.ITIMER_REAL, 0)
        except BwTimeout:
            rec.update(status="timeout", message=f"took more than {timeout:g} s")
        except AssertionError as exc:
            signal.setitimer(signal.ITIMER_REAL, 0)
            rec.update(status="fail", message=_message(exc), line=_where(exc))
        except BaseException as exc:
            signal.setitimer(signal.ITIMER_REAL, 0)
            rec.update(status="error", message=_message(exc), line=_where(exc))
        finally:
            sys.stdout = sys.stderr = real_out
        rec["time_ms"] = (time.perf_counter() - start) * 1000
        rec["output"] = buf.getvalue()[:cap]
        reply(rec)
    os._exit(0)


# -- the judge ------------------------------------------------------------------------------

class Judge:
    def __init__(self, pid: int, requests: int, replies: int) -> None:
        self.pid, self.requests, self.replies = pid, requests, replies
        self.pending = b""
        self.alive = True
        self.failure: str | None = None
        """Why the sample process is gone: ``timeout`` (killed by us) or ``died``."""

    def ask(self, req: "dict[str, object]", wait_s: float) -> "dict[str, object] | None":
        """Send one request; the reply, or None when the sample process died or hung."""
        if not self.alive:
            return None
        data = (json.dumps(req) + "\n").encode()
        try:
            while data:
                data = data[os.write(self.requests, data):]
        except OSError:
            self.alive, self.failure = False, "died"
            return None
        import select

        deadline = time.monotonic() + wait_s
        poller = select.poll()
        poller.register(self.replies, select.POLLIN | select.POLLHUP)
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not poller.poll(left * 1000):
                self.kill("timeout")
                return None
            chunk = os.read(self.replies, 1 << 16)
            if not chunk:
                self.alive, self.failure = False, "died"
                return None
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        try:
            rec = json.loads(line)
        except ValueError:
            self.kill("died")
            return None
        return rec if isinstance(rec, dict) else None

    def kill(self, why: str) -> None:
        if self.alive:
            self.alive, self.failure = False, why
            try:  # noqa: SIM105 - contextlib costs an import per sample
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def finish(self) -> "tuple[int | None, float, int]":
        """Close the pipe, reap the sample process: (exit code, CPU ms, peak RSS bytes)."""
        os.close(self.requests)
        deadline = time.monotonic() + 2
        while True:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG)
            if pid == self.pid:
                break
            if time.monotonic() >= deadline:
                self.kill("timeout")
                pid, status, usage = os.wait4(self.pid, 0)
                break
            time.sleep(0.001)
        code = os.waitstatus_to_exitcode(status)
        return code, (usage.ru_utime + usage.ru_stime) * 1000, usage.ru_maxrss * 1024


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
    """For ``assert <expr> <op> <literal>[, "msg"]``: what the judge needs to compare itself."""
    import ast

    try:
        tree = ast.parse(code)
    except SyntaxError:
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
        return None
    stmt = tree.body[0]
    test = stmt.test
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return None
    op = type(test.ops[0]).__name__
    ok, expected = _literal(test.comparators[0])
    if op not in COMPARE or not ok:
        return None
    expr = ast.get_source_segment(code, test.left)
    if expr is None:
        return None
    msg = None
    if stmt.msg is not None:
        has_msg, msg = _literal(stmt.msg)
        if not has_msg:
            return None  # a computed message needs the solution's names: run it whole
    return {"expr": expr, "expr_line": test.left.lineno, "op": op, "expected": expected,
            "msg": msg, "line": stmt.lineno,
            "source": f"{expr} {SYMBOL[op]} {ast.get_source_segment(code, test.comparators[0])}"}


def judge(check: "dict[str, object]", got_repr: str) -> "tuple[str, str | None, bool]":
    """(status, message, judged here) for a value the sample process returned."""
    import ast

    try:
        ok, got = _literal(ast.parse(got_repr, mode="eval"))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        ok, got = False, None
    if not ok:
        return "unjudged", None, False
    try:
        passed = bool(COMPARE[str(check["op"])](got, check["expected"]))
    except Exception as exc:
        return "fail", f"{check['source']}: got {got_repr[:500]} ({type(exc).__name__}: {exc})", True
    if passed:
        return "pass", None, True
    message = check["msg"] if check["msg"] is not None else f"{check['source']}: got {got_repr[:500]}"
    return "fail", str(message), True


def main() -> None:
    requests_r, requests_w = os.pipe()
    replies_r, replies_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # before the job is read: the sample process never sees expected values
        os.close(requests_w)
        os.close(replies_r)
        sample_main(requests_r, replies_w)
    os.close(requests_r)
    os.close(replies_w)
    job = json.loads(sys.stdin.buffer.read())
    out = sys.stdout

    def emit(rec: "dict[str, object]") -> None:
        out.write(PREFIX + json.dumps(rec) + "\n")
        out.flush()

    timeout = float(job["test_timeout_s"])
    grace = timeout + 1.0
    cap = int(job.get("output_cap", 4096))
    setup = job["setup"]
    offset = setup.count("\n")
    sample = Judge(pid, requests_w, replies_r)
    rec = sample.ask({"op": "setup", "code": setup, "timeout": timeout, "cap": cap}, grace)
    if rec is None:
        emit({"build": "timeout" if sample.failure == "timeout" else "error", "line": None,
              "message": "loading the solution did not finish" if sample.failure == "timeout"
              else "the process ended while loading the solution"})
    elif rec["status"] != "ok":
        emit({"build": "timeout" if rec["status"] == "timeout" else "error",
              "message": rec.get("message"), "line": rec.get("line"), "output": rec.get("output")})
    else:
        emit({"build": "ok", "output": rec.get("output")})
        for i, code in enumerate(job["tests"]):
            emit(run_test(sample, i, code, offset, timeout, grace, cap))
    exit_code, cpu_ms, rss = sample.finish()
    emit({"done": True, "cpu_ms": cpu_ms, "max_rss_bytes": rss, "sample_exit": exit_code})


def run_test(sample: Judge, i: int, code: str, offset: int, timeout: float, grace: float,
             cap: int) -> "dict[str, object]":
    was_alive = sample.alive
    check = value_check(code)
    if check is not None:
        expr_offset = offset + int(check["expr_line"]) - 1  # type: ignore[call-overload]
        rec = sample.ask({"op": "value", "code": "(" + str(check["expr"]) + "\n)",
                          "offset": expr_offset, "timeout": timeout, "cap": cap}, grace)
        if rec is not None and rec["status"] == "ok":
            status, message, here = judge(check, str(rec["value"]))
            if here:
                line = None if status == "pass" else offset + int(check["line"])  # type: ignore[call-overload]
                return {"i": i, "status": status, "message": message, "line": line,
                        "time_ms": rec.get("time_ms"), "output": rec.get("output"), "judged": "harness"}
            # not a plain value: run the test whole in the sample process
        elif rec is not None:
            return {"i": i, **_test_fields(rec), "judged": "harness"}
        else:
            return _lost(i, sample, was_alive)
    rec = sample.ask({"op": "run", "code": code, "offset": offset, "timeout": timeout, "cap": cap},
                     grace)
    if rec is None:
        return _lost(i, sample, was_alive)
    status = "pass" if rec["status"] == "ok" else str(rec["status"])
    return {"i": i, **_test_fields(rec), "status": status, "judged": "sample"}


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
    main()
