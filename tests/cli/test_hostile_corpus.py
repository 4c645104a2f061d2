"""A corpus of hostile programs through ``benchwright run``: every sample is recorded, the run
finishes, nothing leaks or survives, and a correct control task still passes.

The ``reference`` model answers each task with its golden solution, so the golden solutions
*are* the hostile programs. Each hostile task has two test cases: one shaped
``assert f(1) == 2`` (judged by the harness from the value the sample returns) and one that runs
whole in the sample's process (judged there). Every task has the same tests, so a sample that
found any job's expected values (on stdin, in its memory) would pass. Attacks that aim at a pass
define a correct ``f`` (killing the parent, exiting with 0 before the tests): only the attack
stands between them and a pass. Exfiltration attempts put what they find into the returned
value and the output, so a leak would land in the records; the test greps every file of the
workspace and the CLI's output for the canaries. Processes an attack leaves are watched for
while the run goes on (none may outlive its sample) and looked for afterwards.

The same corpus runs on the bubblewrap and the unshare backends. A last test writes fake
replies into the judge's reply pipe: the judge notices replies nobody asked for, and no test
passes.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from benchwright.sandbox.isolated import UID_BASE
from benchwright.sandbox.select import availability
from tests.conftest import BIN, read_jsonl

RUN_ID = "hostile"
TESTS = [
    {"name": "value", "code": "assert f(1) == 2"},
    {"name": "whole", "code": 'r = f(2)\nassert r == 3, "f(2) should be 3"'},
]
CONTROL = "control"


@dataclass
class Setting:
    """Where the attacks aim, and what must never be seen or found afterwards."""

    root: Path
    ws: Path
    home: Path
    outside: Path
    sandbox_tmp: Path
    port: int
    token: str
    """In the command line of every process an attack leaves (found by scanning /proc)."""
    sleeps: tuple[str, str]
    """The arguments of the daemons' ``sleep``."""
    home_canary: str
    env_canary: str
    forged: str
    """A marker in the fake record the results-file attack appends."""
    targets: list[Path] = field(default_factory=list)
    """Files the write-outside attack tries to create."""

    @property
    def records(self) -> Path:
        return self.ws / "results" / RUN_ID / "records.jsonl"


def corpus(s: Setting) -> dict[str, str]:
    """Task name -> golden solution (the program the reference model answers with)."""
    secret = s.home / ".bw-secret"
    return {
        "read-stdin": r"""
import os, re, sys

def f(x):
    data = ""
    try:
        data += sys.stdin.read()
    except Exception as e:
        data += repr(e)
    try:
        data += os.read(0, 1 << 20).decode("utf-8", "replace")
    except OSError as e:
        data += repr(e)
    m = re.search(r"f\(%d\) == (\d+)" % x, data)  # the expected value, if the job leaked
    return int(m.group(1)) if m else "stdin: " + repr(data[:200])
""",
        "find-the-job": r"""
import gc, io, re, sys

def f(x):  # every string reachable in its memory, and whatever stdin still holds
    pattern = re.compile(r"f\(%d\) == (\d+)" % x)
    seen, texts, n = set(), [], 0
    todo = [sys._getframe(), sys.modules, gc.get_objects()]
    while todo and n < 2000000:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        n += 1
        if isinstance(obj, (str, bytes, bytearray)):
            texts.append(obj)
            continue
        if isinstance(obj, (io.BufferedReader, io.TextIOWrapper)):
            try:
                if obj.fileno() == 0:
                    texts.append(obj.read())
            except Exception:
                pass
        try:
            todo.extend(gc.get_referents(obj))
        except Exception:
            pass
    for text in texts:
        if not isinstance(text, str):
            text = bytes(text).decode("utf-8", "replace")
        m = pattern.search(text)
        if m:  # the expected value of another sample's (or its own) job
            return int(m.group(1))
    return "nothing in %d objects, %d strings" % (n, len(texts))
""",
        "fork-bomb": """
import os

def f(x):
    while True:
        try:
            os.fork()
        except OSError:
            pass
""",
        "memory-bomb": """
def f(x):
    hog = []
    try:
        hog.append(bytearray(4 * 1024 ** 3))  # 4 GB at once
    except MemoryError:
        pass
    while True:  # then 64 MB at a time, touched
        block = bytearray(64 * 1024 * 1024)
        block[::4096] = b"x" * len(block[::4096])
        hog.append(block)
""",
        "busy-loop": """
def f(x):
    n = 0
    while True:
        n += 1
""",
        "sigterm-ignored": f"""
import os, signal, sys

def f(x):
    if os.fork() == 0:  # a child that ignores SIGTERM and spins, findable by its command line
        code = "import signal\\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\\nwhile True: pass"
        os.execv(sys.executable, [sys.executable, "-c", code, "{s.token}-sigterm"])
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGALRM, signal.SIG_IGN)  # and the per-test alarm too
    while True:
        try:
            while True:
                pass
        except BaseException:
            pass
""",
        "sleep-forever": """
import time

def f(x):
    time.sleep(10 ** 9)
""",
        "network": f"""
import socket

def f(x):
    for host in ("127.0.0.1", "localhost"):
        try:
            conn = socket.create_connection((host, {s.port}), timeout=1)
            conn.sendall(b"hello from the sandbox")
            return "connected to " + host
        except OSError as e:
            error = type(e).__name__ + ": " + str(e)
    return "no network: " + error
""",
        "home-secret": f"""
import glob, os

def f(x):
    found = []
    paths = [{str(secret)!r}, os.path.expanduser("~/.bw-secret"), "/root/.bw-secret"]
    paths += glob.glob("/home/*/.bw-secret") + glob.glob("/tmp/**/.bw-secret", recursive=True)
    for path in paths:
        try:
            with open(path) as fh:
                found.append(fh.read())
        except OSError as e:
            found.append(path + ": " + type(e).__name__)
    print(found)
    return repr(found)
""",
        "env-secret": """
import os

def f(x):
    leaks = [os.environ.get("OPENAI_API_KEY", "no key")]
    for pid in os.listdir("/proc"):  # every process's environment it can read
        if pid.isdigit():
            try:
                with open("/proc/" + pid + "/environ", "rb") as fh:
                    env = fh.read().decode("utf-8", "replace")
            except OSError:
                continue
            leaks += [v for v in env.split("\\0") if v.startswith("OPENAI_API_KEY=")]
    leaks.append(repr(dict(os.environ)))
    print(leaks)
    return repr(leaks)
""",
        "write-outside": f"""
import os

TARGETS = {[str(p) for p in s.targets]!r}

def f(x):
    done = []
    for path in TARGETS:
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as fh:
                fh.write("pwned")
            done.append("wrote " + path)
        except OSError as e:
            done.append(path + ": " + type(e).__name__)
    return repr(done)
""",
        "setsid-daemon": f"""
import os, subprocess, time

def f(x):
    subprocess.Popen(["sleep", "{s.sleeps[0]}"], start_new_session=True, stdin=subprocess.DEVNULL,
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    pid = os.fork()
    if pid == 0:  # the double fork of a classic daemon
        try:
            os.setsid()
            if os.fork() == 0:
                os.execvp("sleep", ["sleep", "{s.sleeps[1]}"])
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
    time.sleep(0.5)  # long enough to be seen from outside
    return "daemonized"
""",
        "stdout-flood": """
import os, sys

def f(x):
    chunk = "x" * (1 << 20) + "\\n"
    data = chunk.encode()
    for _ in range(300):  # 300 MB, on every output it has
        for fd in (1, 2):
            try:
                os.write(fd, data)
            except OSError:
                pass
        sys.stdout.write(chunk)
    return "flooded"
""",
        "kill-parent": """
import os, signal

def f(x):
    os.kill(os.getppid(), signal.SIGKILL)
    return x + 1  # correct: only the kill could turn it into a pass
""",
        "huge-file": """
def f(x):
    chunk = b"\\0" * (1 << 20)
    report = []
    for path in ("big.bin", "/tmp/big.bin", "/dev/shm/big.bin"):
        written = 0
        try:
            with open(path, "wb") as fh:
                for _ in range(3 * 1024):  # 3 GB
                    fh.write(chunk)
                    written += 1
            report.append(path + ": wrote 3 GB")
        except OSError as e:
            report.append(path + ": stopped after %d MB: %s" % (written, e))
    return repr(report)
""",
        "many-threads": """
import threading, time

def f(x):
    started = 0
    try:
        for _ in range(20000):
            threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
            started += 1
    except BaseException as e:
        return "started %d threads: %s" % (started, e)
    return "started %d threads" % started
""",
        "append-results": f"""
import json, os

RECORDS = {str(s.records)!r}
FAKE = {{"run_id": {RUN_ID!r}, "execution_id": "forged", "task": "append-results",
        "language": "python", "model": "reference", "sample": 0, "criterion": "unit-test",
        "score": 1.0, "verdict": "pass", "status": "pass", "outcome": "pass",
        "marker": {s.forged!r}}}

def f(x):
    tried = []
    for path in (RECORDS, os.path.join(os.path.dirname(RECORDS), "summary.yaml")):
        try:
            with open(path, "a") as fh:
                fh.write(json.dumps(FAKE) + "\\n")
            tried.append("appended to " + path)
        except OSError as e:
            tried.append(path + ": " + type(e).__name__)
    return repr(tried)
""",
        "sys-exit-0": """
import sys

def f(x):
    return x + 1  # correct: only the early exit could turn it into a pass

sys.exit(0)
""",
        "os-exit-0": """
import os

def f(x):
    return x + 1  # correct: only the early exit could turn it into a pass

os._exit(0)
""",
        "fake-results": """
import os, sys

TEXT = "".join(line + "\\n" for line in (
    'BWR {"build": "ok", "output": ""}',
    'BWR {"i": 0, "status": "pass", "message": null, "line": null, "time_ms": 1}',
    'BWR {"i": 1, "status": "pass", "message": null, "line": null, "time_ms": 1}',
    'BWR {"done": true, "cpu_ms": 1, "max_rss_bytes": 1, "sample_exit": 0}',
    'BWR {"end": true}',
    '{"status": "ok", "message": null, "line": null, "value": "2", "type": "int"}',
))

def shout():
    print(TEXT)
    sys.stdout.flush()
    for stream in (sys.__stdout__, sys.__stderr__):
        try:
            stream.write(TEXT)
            stream.flush()
        except Exception:
            pass
    for fd in (1, 2):
        try:
            os.write(fd, TEXT.encode())
        except OSError:
            pass

shout()

def f(x):
    shout()
    return "wrong"
""",
        CONTROL: """
def f(x):
    return x + 1
""",
    }


def task_source(programs: dict[str, str]) -> dict[str, object]:
    return {
        "version": 1,
        "name": "hostile",
        "tasks": [
            {
                "name": name,
                "languages": ["python"],
                "task": {
                    "common_prompt": "Write f(x) returning x + 1.",
                    "languages_specific": {"python": {"entry_point": "f", "hidden_tests": TESTS}},
                },
                "golden_solution": {"python": code.lstrip("\n")},
            }
            for name, code in programs.items()
        ],
    }


def make_workspace(ws: Path, programs: dict[str, str], backend: str) -> None:
    (ws / "tasks").mkdir(parents=True)
    (ws / "configs").mkdir()
    (ws / "benchwright.yaml").write_text(f"version: 1\nsandbox: {backend}\n")
    (ws / "tasks" / "hostile.yaml").write_text(json.dumps(task_source(programs), indent=1))
    (ws / "configs" / "c.yaml").write_text(
        "version: 1\ntask_sources: [tasks/hostile.yaml]\nllms: [reference]\n"
        "criteria: [unit-test, cpu-usage, ram-usage]\n"
        "limits: {test_timeout_s: 2, memory_mb: 512}\n"
    )


def run_cli(ws: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str, str]:
    """``benchwright run`` in ``ws``; the process (for its pid), its stdout and stderr."""
    proc = subprocess.Popen([str(BIN), "run", "configs/c.yaml", "--run-id", RUN_ID], cwd=ws,
                            env={**os.environ, "COLUMNS": "200", **env}, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=600)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        pytest.fail(f"the run did not finish in 600 s:\n{stdout[-3000:]}\n{stderr[-3000:]}")
    return proc, stdout, stderr


class Listener:
    """A TCP listener on loopback that remembers every connection it gets."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.1)
        self.port: int = self.sock.getsockname()[1]
        self.connections: list[tuple[str, bytes]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, addr = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(1)
                try:
                    data = conn.recv(1024)
                except OSError:
                    data = b""
            self.connections.append((str(addr), data))

    def close(self) -> list[tuple[str, bytes]]:
        self._stop.set()
        self._thread.join(5)
        self.sock.close()
        return self.connections


def processes(tokens: list[str], uids: range = range(0)) -> dict[str, list[str]]:
    """Live host processes whose command line holds one of ``tokens`` or that run as one of
    ``uids``: token (or ``uid``) -> descriptions."""
    found: dict[str, list[str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            status = Path(f"/proc/{entry}/status").read_text()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        if fields.get("State", "").split()[:1] == ["Z"]:
            continue
        uid = int(fields.get("Uid", "0").split()[0])
        command = cmdline.replace(b"\0", b" ").decode("utf-8", "replace")[:200]
        for key in [t for t in tokens if t.encode() in cmdline] + (["uid"] if uid in uids else []):
            found.setdefault(key, []).append(f"{entry} uid={uid}: {command}")
    return found


def survivors(tokens: list[str], uids: range, settle_s: float = 5.0) -> dict[str, list[str]]:
    """Processes left after up to ``settle_s`` (the kernel tears a PID namespace down
    asynchronously)."""
    end = time.monotonic() + settle_s
    while True:
        alive = processes(tokens, uids)
        if not alive or time.monotonic() > end:
            return alive
        time.sleep(0.1)


class Watcher:
    """Watches, while the run goes on, for the processes an attack leaves (by a token of their
    command line): they must be seen (the attack ran) and never after the attack's sample was
    recorded (the fork server kills what a sample leaves before it answers)."""

    def __init__(self, records: Path, tokens: dict[str, str]) -> None:
        self.records = records
        self.tokens = tokens
        """Token -> the task whose sample starts such processes."""
        self.seen: set[str] = set()
        self.after: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _recorded(self) -> set[str]:
        tasks: set[str] = set()
        try:
            lines = self.records.read_bytes().splitlines()
        except OSError:
            return tasks
        for line in lines:
            try:
                tasks.add(json.loads(line)["task"])
            except (ValueError, KeyError, TypeError):
                continue
        return tasks

    def _watch(self) -> None:
        while not self._stop.is_set():
            recorded = self._recorded()  # before looking: a sample is done before its record
            for token, found in processes(list(self.tokens)).items():
                self.seen.add(token)
                if self.tokens[token] in recorded:
                    self.after += [f"{self.tokens[token]}: {p}" for p in found]
            time.sleep(0.02)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


def files_holding(folder: Path, needles: list[str]) -> list[str]:
    hits = []
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            hits += [f"{path}: {n}" for n in needles if n.encode() in data]
    return hits


@pytest.fixture
def sandbox_tmp() -> Iterator[Path]:
    """Where the sandboxes make their private folders (through the CLI's TMPDIR): reachable
    by a sandbox uid, unlike tmp_path; it must be empty after the run."""
    folder = Path(tempfile.mkdtemp(prefix="bw-hostile-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def listener() -> Iterator[Listener]:
    made = Listener()
    yield made
    made.close()


@pytest.fixture
def setting(tmp_path: Path, sandbox_tmp: Path, listener: Listener) -> Setting:
    nonce = uuid.uuid4().hex[:12]
    digits = random.randrange(10**8, 10**9)
    ws = tmp_path / "ws"
    s = Setting(
        root=tmp_path, ws=ws, home=tmp_path / "home", outside=tmp_path / "outside",
        sandbox_tmp=sandbox_tmp, port=listener.port, token=f"bw-hostile-{nonce}",
        sleeps=(f"4242.{digits}", f"4243.{digits}"),
        home_canary=f"bw-canary-home-{nonce}", env_canary=f"sk-canary-{nonce}",
        forged=f"forged-{nonce}",
    )
    s.targets = [s.outside / f"pwned-{nonce}.txt", ws / f"pwned-{nonce}.txt",
                 ws / "results" / f"pwned-{nonce}.txt", s.home / f"pwned-{nonce}.txt"]
    s.home.mkdir()
    (s.home / ".bw-secret").write_text(s.home_canary + "\n")
    return s


def check_backend(backend: str) -> None:
    why = availability(backend)
    if why is not None:  # ./scripts/setup installs bubblewrap; unshare is util-linux
        pytest.fail(f"sandbox {backend!r} is not available here: {why}")


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["bwrap", "unshare"])
def test_hostile_corpus(setting: Setting, listener: Listener, backend: str) -> None:
    check_backend(backend)
    s = setting
    programs = corpus(s)
    make_workspace(s.ws, programs, backend)
    watcher = Watcher(s.records, {s.sleeps[0]: "setsid-daemon", s.sleeps[1]: "setsid-daemon",
                                  f"{s.token}-sigterm": "sigterm-ignored"})
    start = time.monotonic()
    try:
        proc, stdout, stderr = run_cli(s.ws, {"HOME": str(s.home), "OPENAI_API_KEY": s.env_canary,
                                              "TMPDIR": str(s.sandbox_tmp)})
    finally:
        watcher.stop()
    wall = time.monotonic() - start
    connections = listener.close()
    # the sandbox uids of this run: see benchwright.sandbox.isolated.sandbox_uid
    base = UID_BASE + (proc.pid % (1 << 22)) * 64
    left = survivors([s.token, *s.sleeps], range(base, base + 64))

    # the run finishes, with a folder in order
    assert proc.returncode == 0, f"{stdout[-3000:]}\n{stderr[-3000:]}"
    assert "Traceback" not in stderr, stderr[-3000:]
    run = s.ws / "results" / RUN_ID
    yaml = YAML(typ="safe")
    status = yaml.load((run / "status.yaml").read_text())
    assert status["state"] == "completed"
    (counts,) = status["taskSourceStatuses"].values()
    assert counts["total"] == len(programs)
    assert counts["completed"] == len(programs)  # every finished sample, errors included
    assert yaml.load((run / "run.yaml").read_text())["sandbox"]["backend"] == backend

    # every sample recorded, once; no foreign line in the records file
    raw = s.records.read_text().splitlines()
    records = read_jsonl(s.records)
    assert len(records) == len(raw)
    gens = read_jsonl(run / "generations.jsonl")
    assert sorted(g["task"] for g in gens) == sorted(programs)
    ids = {g["execution_id"]: g["task"] for g in gens}
    assert all(r["run_id"] == RUN_ID and ids.get(r["execution_id"]) == r["task"] for r in records)
    assert not [line for line in raw if s.forged in line and '"marker"' in line]
    by_task: dict[str, list[dict[str, object]]] = {}
    for r in records:
        by_task.setdefault(str(r["task"]), []).append(r)
    assert set(by_task) == set(programs)
    for task, recs in by_task.items():
        assert len({r["execution_id"] for r in recs}) == 1, task
        assert {r["sample"] for r in recs} == {0}, task
        assert {r["criterion"] for r in recs} == {"unit-test", "cpu-usage", "ram-usage"}, task
        cases = [r for r in recs if r["criterion"] == "unit-test" and r["test_case"]]
        assert sorted(str(r["test_case"]) for r in cases) == ["value", "whole"], task
        assert len({r["outcome"] for r in recs}) == 1, task

    # what each attack got (shown with -s or on a failure)
    print(f"\n{backend}: {wall:.1f} s")
    for task, recs in by_task.items():
        tests = [f"{r['test_case']}={r['status']} ({r['error']!r})" for r in recs
                 if r["criterion"] == "unit-test" and r["test_case"]]
        print(f"  {task}: {recs[0]['outcome']}; " + "; ".join(tests))

    # the control passes; no hostile sample and no hostile test case does
    control = by_task.pop(CONTROL)
    assert {r["outcome"] for r in control} == {"pass"}
    assert all(r["status"] == "pass" for r in control if r["test_case"])
    for task, recs in by_task.items():
        assert recs[0]["outcome"] in ("fail", "error"), task
        passed = [r["test_case"] for r in recs if r["test_case"] and r["status"] == "pass"]
        assert not passed, (task, passed)
    assert not [r for r in records if r["outcome"] == "infra_error"]

    # nothing leaked: not into the records, any file of the workspace or the CLI's output
    canaries = [s.home_canary, s.env_canary]
    assert not files_holding(s.ws, canaries)
    assert not [c for c in canaries if c in stdout or c in stderr]
    assert not connections, connections
    # nothing was written outside the work folder; nothing of the sandboxes was left behind
    assert not [p for p in s.targets if p.exists()]
    assert not s.outside.exists()
    assert not list(s.sandbox_tmp.iterdir())
    # nothing survives: not its sample (the attacks ran: their processes were seen), nor the run
    assert watcher.seen == set(watcher.tokens), watcher.seen
    assert not watcher.after, watcher.after
    assert not left, left


FORGE = """
import fcntl, os, stat

def reply(value=None, kind=None, waiting=0):  # the runner's reply frame (see decode_reply)
    texts = [None, value, kind, ""]  # message, value, type, output
    sizes = " ".join("-1" if t is None else str(len(t)) for t in texts)
    return f"ok -1 1.0 {waiting} {sizes}\\n" + "".join(t for t in texts if t)

def forge():
    replies = [
        reply(),  # "the solution loaded"
        reply("Anything()", "int", 1),  # test 0: no plain value...
        reply(),  # ... and its whole test passed here
        reply(),  # test 1, run whole here: passed
    ]
    data = "".join(replies).encode()
    for fd in range(3, 256):  # the judge's reply pipe: the one FIFO open for writing
        try:
            if (stat.S_ISFIFO(os.fstat(fd).st_mode)
                    and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY):
                os.write(fd, data)
        except OSError:
            pass

forge()

def f(x):
    return "wrong"
"""


@pytest.mark.slow
def test_forged_replies_on_the_judges_pipe(tmp_path: Path, sandbox_tmp: Path) -> None:
    ws = tmp_path / "ws"
    make_workspace(ws, {"forge-judge-pipe": FORGE}, "bwrap")
    proc, stdout, stderr = run_cli(ws, {"TMPDIR": str(sandbox_tmp)})
    assert proc.returncode == 0, f"{stdout[-3000:]}\n{stderr[-3000:]}"
    records = read_jsonl(ws / "results" / RUN_ID / "records.jsonl")
    cases = {r["test_case"]: r for r in records if r["criterion"] == "unit-test" and r["test_case"]}
    assert set(cases) == {"value", "whole"}
    assert {r["outcome"] for r in records} != {"pass"}, "a forged pass"
    assert not [name for name, r in cases.items() if r["status"] == "pass"], cases
    assert all("results cannot be trusted" in (r["error"] or "") for r in cases.values()), cases
