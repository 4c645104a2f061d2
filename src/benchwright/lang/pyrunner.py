"""Runs inside the sandbox, never in the harness: exec a solution, then each test case.

Reads ``spec.json`` from its folder; writes one JSON line per test case to ``results.jsonl``
(opened before any untrusted code runs). Standard library only; started as ``python -I -S``.
"""

import io
import json
import signal
import sys
import time

FILENAME = "<solution>"


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


def main() -> None:
    with open("spec.json", encoding="utf-8") as f:
        spec = json.load(f)
    out = open("results.jsonl", "w", encoding="utf-8", buffering=1)  # noqa: SIM115 - open until exit
    cap = int(spec.get("output_cap", 4096))
    timeout = float(spec["test_timeout_s"])
    setup = spec["setup"]
    offset = setup.count("\n")
    signal.signal(signal.SIGALRM, _alarm)
    real_stdout, real_stderr = sys.stdout, sys.stderr

    def write(rec: "dict[str, object]") -> None:
        out.write(json.dumps(rec) + "\n")

    ns: dict[str, object] = {"__name__": "solution", "__builtins__": __builtins__}
    cpu0 = time.process_time()
    buf = io.StringIO()
    sys.stdout = sys.stderr = buf
    start = time.perf_counter()
    try:
        signal.setitimer(signal.ITIMER_REAL, timeout)
        exec(compile(setup, FILENAME, "exec"), ns)
        signal.setitimer(signal.ITIMER_REAL, 0)
    except BwTimeout:
        sys.stdout, sys.stderr = real_stdout, real_stderr
        write({"build": "timeout", "message": f"loading the solution took more than {timeout:g} s",
               "line": None, "time_ms": (time.perf_counter() - start) * 1000})
        return
    except BaseException as exc:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdout, sys.stderr = real_stdout, real_stderr
        write({"build": "error", "message": _message(exc), "line": _where(exc),
               "output": buf.getvalue()[:cap], "time_ms": (time.perf_counter() - start) * 1000})
        return
    sys.stdout, sys.stderr = real_stdout, real_stderr
    write({"build": "ok", "output": buf.getvalue()[:cap]})

    for i, code in enumerate(spec["tests"]):
        status, message, line = "pass", None, None
        buf = io.StringIO()
        local = dict(ns)
        start = time.perf_counter()
        try:
            # leading newlines put the test's lines where they are in the reported code
            compiled = compile("\n" * offset + code, FILENAME, "exec")
            sys.stdout = sys.stderr = buf
            signal.setitimer(signal.ITIMER_REAL, timeout)
            exec(compiled, local)
            signal.setitimer(signal.ITIMER_REAL, 0)
        except BwTimeout:
            status, message = "timeout", f"test took more than {timeout:g} s"
        except AssertionError as exc:
            signal.setitimer(signal.ITIMER_REAL, 0)
            status, message, line = "fail", _message(exc), _where(exc)
        except SyntaxError as exc:
            signal.setitimer(signal.ITIMER_REAL, 0)
            status, message = "error", _message(exc)
            line = exc.lineno if exc.filename == FILENAME else None
        except BaseException as exc:
            signal.setitimer(signal.ITIMER_REAL, 0)
            status, message, line = "error", _message(exc), _where(exc)
        finally:
            sys.stdout, sys.stderr = real_stdout, real_stderr
        write({"i": i, "status": status, "message": message, "line": line,
               "time_ms": (time.perf_counter() - start) * 1000, "output": buf.getvalue()[:cap]})
    write({"done": True, "cpu_ms": (time.process_time() - cpu0) * 1000})


if __name__ == "__main__":
    main()
