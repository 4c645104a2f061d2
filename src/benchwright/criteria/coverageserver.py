"""A warm coverage.py: one server per executor thread, a forked process per sample.

This file runs inside the sandbox with the tools' Python, started by
:class:`benchwright.criteria.coverage.PythonCoverage` as ``python -I -c <program>
<runner> <config>``: the program is this file after :mod:`.coveragerun`'s ``cover_tests`` and
``collect`` (the per-sample path's functions, so both paths measure the same way), the runner
is the source of the Python fork server's runner (:mod:`benchwright.lang.pyrunner`, whose
clean-up between samples this server uses), never a file a sample could change.

The server imports coverage.py once, says ``BWV ready``, then for each line on its stdin
(``{"nonce": ..., "code": ..., "job": ...}``), in the folder ``sample`` (empty before each):

* writes the solution, the job and coverage.py's configuration, and checks that the solution
  compiles (if not: the result says so, nothing runs);
* forks the *instrumented process*: a session of its own, its output to ``bw_output.txt``, the
  sample's limits (address space, file size, CPU); it starts coverage.py with that
  configuration and runs ``cover_tests``, which is what ``coverage run`` runs on the per-sample
  path;
* waits for it (the job's ``wall`` at most), kills it and whatever it left (this server is its
  subreaper), and forks a *collector* that runs ``collect`` on what it left (the files are the
  code's: a process of its own reads them, with a time limit);
* empties the folder and the sandbox's private ``/tmp``, ``/dev/shm`` and ``/dev/mqueue``,
  and answers one line, ``BWV <nonce> {"result": ..., "restart": ...}``.

``restart`` is set, and the server ends after its answer, when the sample changed this server's
limits, priority or CPU affinity, or left anything the next sample could meet (files that could
not be removed, a changed work folder, System V IPC objects, a process): the harness starts the
next sample's server in a new sandbox. The server is not dumpable, so the sample (same uid) can
neither read its memory nor open its descriptors (the answer channel) through ``/proc``.
"""

import contextlib
import json
import os
import select
import signal
import sys
import time
from typing import TYPE_CHECKING, Any

import coverage  # type: ignore[import-not-found]  # once, for every sample
import coverage.jsonreport  # type: ignore[import-not-found]
import coverage.report  # type: ignore[import-not-found]

if TYPE_CHECKING:  # in the sandbox, the program defines them before this file
    from benchwright.criteria.coveragerun import collect, cover_tests

COLLECT_WAIT_S = 60.0
"""How long the collector may take (it reads the code's files and may load the saved data)."""
FILE_SIZE = 64 << 20
"""The largest file the instrumented process may write (as on the per-sample path)."""
RESULT_CAP = 16 << 20
"""The most of the collector's answer this server reads."""


def main() -> None:
    runner: dict[str, Any] = {"__name__": "bw_pyrunner", "__builtins__": __builtins__}
    exec(compile(sys.argv[1], "bw_runner.py", "exec"), runner)
    config = json.loads(sys.argv[2])
    runner["_undumpable"]()
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER

    base = os.getcwd()
    warm_up(base, config["rcfile"])
    folder = os.path.join(base, "sample")
    os.makedirs(folder, 0o700, exist_ok=True)
    scratch = [str(p) for p in config.get("scratch", ())] + [folder]
    layout = runner["_layout"](base, folder, scratch) if config.get("isolated") else None
    state = runner["process_state"]()
    me = os.getpid()
    out = sys.stdout
    out.write("BWV ready\n")
    out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        try:
            result: Any = measure(request["code"], request["job"], folder, me, runner)
        except Exception as exc:  # our own failure: the harness takes the per-sample path
            result = {"failed": f"{type(exc).__name__}: {exc}"}
        runner["empty"](scratch)
        restart = None
        if runner["process_state"]() != state:
            restart = "the sample changed the limits, priority or CPU affinity of its server"
            result = {"failed": restart}
        elif layout is not None:
            restart = runner["leftovers"](base, folder, scratch, layout, set())
        out.write("BWV " + str(request["nonce"]) + " "
                  + json.dumps({"result": result, "restart": restart}) + "\n")
        out.flush()
        if restart is not None:
            return


WARM_UP = "def f(x):\n    if x > 0:\n        return 1\n    return [i for i in range(x)]\n"


def warm_up(base: str, rcfile: str) -> None:
    """Measure a made-up solution here, in the process samples are forked from, in a folder of
    its own (removed after): what coverage.py builds and caches on first use (regular
    expressions, ``inspect``'s module maps, lazily imported modules: about 40 ms of a sample)
    is then there before every fork. Nothing of it is a sample's, and no sample's file has its
    path."""
    import shutil

    folder = os.path.join(base, "warm")
    os.makedirs(folder, 0o700)
    here = os.getcwd()
    os.chdir(folder)
    saved_exit = os._exit  # ``patch = _exit`` replaces it while measuring
    try:
        _write(folder, "bw_coverage.ini", rcfile.encode())
        _write(folder, "solution.py", WARM_UP.encode())
        path = os.path.join(folder, "solution.py")
        cov = coverage.Coverage(config_file="bw_coverage.ini")
        cov.start()
        try:
            ns: dict[str, Any] = {"__name__": "solution"}
            exec(compile(WARM_UP, path, "exec"), ns)
            ns["f"](3)
            ns["f"](-1)
        finally:
            cov.stop()
        cov.save()
        cov.json_report(morfs=[path], outfile="report.json")
    finally:
        os._exit = saved_exit
        os.chdir(here)
        shutil.rmtree(folder, ignore_errors=True)


def _write(folder: str, name: str, data: bytes) -> None:
    """A new file in the (emptied) folder: never through a link a sample left."""
    fd = os.open(os.path.join(folder, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


def measure(code: str, job: "dict[str, Any]", folder: str, me: int, runner: "dict[str, Any]") -> "dict[str, Any]":
    """One sample: what the per-sample driver prints (see :func:`.coveragerun.cover_driver`)."""
    source = code.encode()
    _write(folder, "solution.py", source)
    _write(folder, "bw_job.json", json.dumps(job).encode())
    _write(folder, "bw_coverage.ini", job["rcfile"].encode())
    out: dict[str, Any] = {"report": None, "steps": [], "started": False, "exit": None,
                           "timed_out": False}
    try:
        compile(source, os.path.join(folder, "solution.py"), "exec")
    except SyntaxError as e:
        out["syntax_error"] = {"line": e.lineno, "message": e.msg}
        return out
    pid = _fork(lambda: _instrumented(folder, job))
    out["timed_out"] = not _exited(pid, float(job["wall"]))
    _kill(pid)  # and whatever it left in its session (not reaped yet: the group is still its)
    out["exit"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    runner["kill_leftovers"](pid, me)
    return _collect_apart(out, job, folder)


def _fork(child: Any) -> int:
    pid = os.fork()
    if pid == 0:
        try:
            child()
        finally:
            os._exit(70)
    return pid


def _kill(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


def _exited(pid: int, wait_s: float) -> bool:
    """Whether child ``pid`` exits within ``wait_s`` (it is not reaped)."""
    fd = os.pidfd_open(pid)
    try:
        deadline = time.monotonic() + wait_s
        while os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            select.select([fd], [], [], remaining)
        return True
    finally:
        os.close(fd)


def _instrumented(folder: str, job: "dict[str, Any]") -> None:
    """The instrumented process: what ``coverage run --rcfile=bw_coverage.ini bw_tests.py``
    does on the per-sample path, forked instead of started."""
    import resource

    exit_now = os._exit
    os.setsid()
    os.chdir(folder)
    os.environ["HOME"] = os.environ["TMPDIR"] = folder
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    output = os.open("bw_output.txt", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    os.dup2(output, 1)
    os.dup2(output, 2)
    for fd in (devnull, output):
        os.close(fd)
    sys.stdin = open(0, closefd=False)  # noqa: SIM115
    sys.stdout = sys.stderr = open(1, "w", closefd=False)  # noqa: SIM115
    limits = {"FSIZE": FILE_SIZE, "CPU": int(job["wall"]) + 1}
    if job.get("memory_mb"):
        limits["AS"] = int(job["memory_mb"]) << 20
    for name, value in limits.items():
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(getattr(resource, "RLIMIT_" + name), (value, value))
    sys.path.insert(0, folder)  # as ``coverage run`` puts the script's folder first
    sys.argv = ["bw_tests.py"]
    try:
        cov = coverage.Coverage(config_file="bw_coverage.ini")
        cov.start()
    except Exception as exc:  # what ``coverage run`` prints and exits with
        sys.stderr.write(f"{exc}\n")
        sys.stderr.flush()
        exit_now(1)
    cover_tests(cov)
    if not job["self_report"]:
        cov.stop()
        cov.save()
    sys.stdout.flush()
    exit_now(0)


def _collect_apart(out: "dict[str, Any]", job: "dict[str, Any]", folder: str) -> "dict[str, Any]":
    """``collect`` in a process of its own: it reads the code's files and may load the data
    it saved."""
    read, write = os.pipe()

    def collector() -> None:
        os.close(read)
        os.setsid()
        os.chdir(folder)
        import resource

        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_CPU, (int(COLLECT_WAIT_S), int(COLLECT_WAIT_S)))
        data = json.dumps(collect(out, job)).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(write, view):]
        os._exit(0)

    pid = _fork(collector)
    os.close(write)
    chunks: list[bytes] = []
    size = 0
    deadline = time.monotonic() + COLLECT_WAIT_S
    try:
        while size <= RESULT_CAP:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([read], [], [], remaining)[0]:
                break
            chunk = os.read(read, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(read)
        _kill(pid)
        status = os.waitpid(pid, 0)[1]
    if os.waitstatus_to_exitcode(status) != 0 or size > RESULT_CAP:
        raise RuntimeError(f"the collector failed (wait status {status})")
    result: dict[str, Any] = json.loads(b"".join(chunks))
    return result


if __name__ == "__main__":
    main()
