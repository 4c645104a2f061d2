"""The sandbox conformance suite: every backend available here against hostile programs.

Each test attacks one guarantee of :data:`benchwright.sandbox.base.GUARANTEES`. A backend that
promises the guarantee (``sandbox.guarantees``) must hold it; a backend that does not has the
same attack asserting the *opposite*, so the suite documents what the fallback cannot promise
(for the rlimit backend run as root: the attack works). Attacks that would harm the machine or
the test process when they succeed (a real fork bomb as root, killing the parent) only run
where they are promised to fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import benchwright
from benchwright.registry import registry
from benchwright.sandbox.base import GUARANTEES, ProcessResult, Sandbox, SandboxLimits
from benchwright.sandbox.select import availability
from tests.sandbox.hostile import INIT_PROBE

BACKENDS = ("bwrap", "unshare", "rlimit")
REPO = Path(__file__).resolve().parents[2]

COVERAGE = {
    "no-network": ["test_no_network"],
    "hidden-home": ["test_hidden_home"],
    "hidden-tmp": ["test_hidden_tmp"],
    "hidden-workspace": ["test_hidden_workspace"],
    "read-only-system": ["test_read_only_system", "test_write_outside_the_work_folder"],
    "clean-env": ["test_clean_env"],
    "limits": ["test_memory_bomb", "test_busy_loop_hits_the_wall_limit",
               "test_busy_loop_hits_the_cpu_limit", "test_stdout_flood_is_capped",
               "test_what_the_command_writes_as_it_exits_is_read",
               "test_huge_file_is_cut_by_the_file_size_limit"],
    "process-limit": ["test_process_limit", "test_fork_bomb", "test_twenty_thousand_threads"],
    "stdin-closed": ["test_stdin_gets_eof"],
    "private-workdir": ["test_private_workdir"],
    "group-killed": ["test_nothing_survives_the_sample", "test_nothing_survives_a_timeout"],
    "tree-killed": ["test_nothing_survives_the_sample", "test_nothing_survives_a_timeout",
                    "test_killing_the_parent", "test_nothing_survives_a_killed_harness"],
    "unprivileged": ["test_unprivileged"],
    "init-out-of-reach": ["test_the_sandbox_init_is_out_of_reach"],
}


def test_every_guarantee_has_an_attack() -> None:
    assert set(COVERAGE) == set(GUARANTEES)
    names = {name for names in COVERAGE.values() for name in names}
    missing = [n for n in names if n not in globals()]
    assert not missing


# -- fixtures and helpers ---------------------------------------------------------------------


@pytest.fixture
def tmp_root() -> Iterator[Path]:
    """Where the sandbox makes its private folders: reachable by a sandbox uid (pytest's
    tmp_path is mode 0700), and checked empty afterwards."""
    root = Path(tempfile.mkdtemp(prefix="bw-conformance-"))
    os.chmod(root, 0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(params=BACKENDS)
def sandbox(request: pytest.FixtureRequest, tmp_root: Path) -> Sandbox:
    why = availability(request.param)
    if why is not None:  # ./scripts/setup installs bubblewrap; unshare is util-linux
        pytest.fail(f"sandbox {request.param!r} is not available here: {why}")
    made: Sandbox = registry.create("sandbox", request.param, tmp_root=str(tmp_root))
    return made


def promising(*guarantees: str) -> list[str]:
    """The backends that promise every one of ``guarantees`` on this machine (as this user):
    attacks that would really do harm where nothing stops them run only against those."""
    return [name for name in BACKENDS
            if set(guarantees) <= registry.create("sandbox", name).guarantees]


def test_what_the_rlimit_fallback_cannot_promise() -> None:
    rlimit = registry.create("sandbox", "rlimit").guarantees
    for guarantee in ("no-network", "read-only-system", "tree-killed", "unprivileged"):
        assert guarantee not in rlimit
    assert ("process-limit" in rlimit) == (os.getuid() != 0)


def promises(sandbox: Sandbox, guarantee: str) -> bool:
    assert guarantee in GUARANTEES
    return guarantee in sandbox.guarantees


def py(sandbox: Sandbox, code: str, *, limits: SandboxLimits | None = None,
       files: dict[str, bytes] | None = None, stdin: bytes | None = None) -> ProcessResult:
    """Run Python ``code`` in the sandbox with the interpreter the sandbox offers."""
    return sandbox.run([sandbox.python, "-I", "-S", "-c", code], files=files or {},
                       limits=limits or SandboxLimits(wall_s=20), stdin=stdin)


def out(result: ProcessResult) -> str:
    return result.stdout.decode("utf-8", "replace").strip()


def processes_with(token: str) -> list[int]:
    """Live host processes whose command line holds ``token`` (zombies are dead)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        state = stat.rsplit(")", 1)[1].split()[0]
        if token.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


def survivors(token: str, settle_s: float = 3.0) -> list[int]:
    """Processes with ``token`` still alive after up to ``settle_s`` (the kernel tears a PID
    namespace down asynchronously)."""
    end = time.monotonic() + settle_s
    while True:
        alive = processes_with(token)
        if not alive or time.monotonic() > end:
            return alive
        time.sleep(0.05)


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def canary(folder: Path) -> tuple[Path, str]:
    """A file with a secret in ``folder`` (removed by the caller)."""
    secret = f"bw-canary-{uuid.uuid4().hex}"
    path = folder / f".{secret}"
    path.write_text(secret)
    return path, secret


READ_FILE = """
import sys
path = sys.argv[1] if len(sys.argv) > 1 else {path!r}
try:
    with open(path) as fh:
        print("READ", fh.read())
except OSError as e:
    print("DENIED", type(e).__name__)
"""


def read_attempt(sandbox: Sandbox, path: Path) -> str:
    r = py(sandbox, READ_FILE.format(path=str(path)))
    assert r.exit_code == 0, r
    return out(r)


# -- no network --------------------------------------------------------------------------------


def test_no_network(sandbox: Sandbox) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)
    listener.settimeout(10)
    port = listener.getsockname()[1]
    accepted: list[bool] = []

    def accept() -> None:
        try:
            conn, _ = listener.accept()
            accepted.append(True)
            conn.close()
        except OSError:
            pass

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    code = f"""
import socket
print("interfaces", sorted(name for _, name in socket.if_nameindex()))
try:
    s = socket.create_connection(("127.0.0.1", {port}), timeout=5)
    print("CONNECTED")
except OSError as e:
    print("REFUSED", type(e).__name__)
try:
    socket.create_connection(("1.1.1.1", 53), timeout=2)
    print("EGRESS")
except OSError as e:
    print("NO-EGRESS", type(e).__name__)
"""
    try:
        r = py(sandbox, code)
    finally:
        listener.close()
        thread.join(5)
    text = out(r)
    if promises(sandbox, "no-network"):
        assert "REFUSED" in text and "CONNECTED" not in text, text
        assert "NO-EGRESS" in text, text
        assert "interfaces ['lo']" in text, text
        assert not accepted
    else:
        assert "CONNECTED" in text, text  # the host's loopback services are reachable
        assert accepted


# -- invisible files ---------------------------------------------------------------------------


def test_hidden_home(sandbox: Sandbox) -> None:
    home = Path.home()
    assert home.is_dir(), f"the harness's home {home} does not exist"
    path, secret = canary(home)
    try:
        text = read_attempt(sandbox, path)
        listing = out(py(sandbox, f"import os\nprint(os.path.exists({str(home)!r}), "
                                  "os.path.exists('/home') and os.listdir('/home'))"))
    finally:
        path.unlink()
    if promises(sandbox, "hidden-home"):
        assert secret not in text and text.startswith("DENIED"), text
        assert listing.split()[0] == "False" or home == Path("/work"), listing
    else:
        assert text == f"READ {secret}"


def test_hidden_tmp(sandbox: Sandbox) -> None:
    texts = []
    made = []
    try:
        for folder in (Path("/tmp"), Path("/var/tmp")):
            if folder.is_dir():
                path, secret = canary(folder)
                made.append(path)
                texts.append((read_attempt(sandbox, path), secret))
        own_tmp = out(py(sandbox, "import os, tempfile\n"
                                  "p = os.path.join(tempfile.gettempdir(), 'mine')\n"
                                  "open(p, 'w').write('x')\nprint(tempfile.gettempdir())"))
    finally:
        for path in made:
            path.unlink()
    assert texts
    for text, secret in texts:
        if promises(sandbox, "hidden-tmp"):
            assert secret not in text and text.startswith("DENIED"), text
        else:
            assert text == f"READ {secret}"
    assert own_tmp  # a temporary folder to write in exists either way
    if promises(sandbox, "hidden-tmp"):
        assert not Path(own_tmp, "mine").exists() or own_tmp != "/tmp"


def test_hidden_workspace(sandbox: Sandbox) -> None:
    """A workspace-like folder (in this repository) and the harness's own code."""
    folder = Path(tempfile.mkdtemp(prefix=".bw-workspace-", dir=REPO))
    os.chmod(folder, 0o755)
    try:
        (folder / "results").mkdir()
        path, secret = canary(folder / "results")
        text = read_attempt(sandbox, path)
        code = out(py(sandbox, f"import os\nprint(os.path.exists({benchwright.__file__!r}))"))
    finally:
        shutil.rmtree(folder)
    if promises(sandbox, "hidden-workspace"):
        assert secret not in text and text.startswith("DENIED"), text
        assert code == "False"
    else:
        assert text == f"READ {secret}"
        assert code == "True"


# -- writing -----------------------------------------------------------------------------------


WRITE = """
import sys
for path in sys.argv[1:]:
    try:
        with open(path, "w") as fh:
            fh.write("pwned")
        print("WROTE", path)
    except OSError as e:
        print("DENIED", path, type(e).__name__)
"""


def write_attempts(sandbox: Sandbox, paths: list[str]) -> dict[str, str]:
    r = sandbox.run([sandbox.python, "-I", "-S", "-c", WRITE, *paths], files={},
                    limits=SandboxLimits(wall_s=20))
    assert r.exit_code == 0, r
    verdicts = {}
    for line in out(r).splitlines():
        verdict, path, *_ = line.split()
        verdicts[path] = verdict
    return verdicts


def test_write_outside_the_work_folder(sandbox: Sandbox, tmp_path: Path) -> None:
    """A folder of the test's own on the host (safe to write even where it works)."""
    target = tmp_path / "outside.txt"
    os.chmod(tmp_path, 0o777)
    verdicts = write_attempts(sandbox, [str(target), "inside.txt"])
    assert verdicts["inside.txt"] == "WROTE"  # the work folder is writable
    if promises(sandbox, "read-only-system"):
        assert verdicts[str(target)] == "DENIED"
        assert not target.exists()
    else:
        assert verdicts[str(target)] == "WROTE"
        assert target.read_text() == "pwned"


@pytest.mark.parametrize("sandbox", promising("read-only-system"), indirect=True)
def test_read_only_system(sandbox: Sandbox) -> None:
    """System folders. Only attacked where the backend promises to stop it: as root, the
    rlimit backend would really write into /usr."""
    paths = ["/usr/bw-pwned", "/usr/bin/python3", "/etc/passwd", "/etc/bw-pwned", "/bw-pwned",
             "/proc/sys/kernel/hostname", "/dev/bw-pwned"]
    private = ["/tmp/ok.txt", "/work/ok.txt", "/dev/shm/ok.txt"]
    verdicts = write_attempts(sandbox, [*paths, *private])
    assert {p: verdicts[p] for p in paths} == dict.fromkeys(paths, "DENIED")
    assert {p: verdicts[p] for p in private} == dict.fromkeys(private, "WROTE")
    assert not Path("/usr/bw-pwned").exists() and not Path("/bw-pwned").exists()


# -- environment, stdin, work folder -----------------------------------------------------------


def test_clean_env(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    secret = f"s3cr3t-{uuid.uuid4().hex}"
    monkeypatch.setenv("BW_SECRET_CANARY", secret)
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    r = sandbox.run([sandbox.python, "-I", "-S", "-c",
                     "import os, json\nprint(json.dumps(dict(os.environ)))"],
                    files={}, limits=SandboxLimits(wall_s=20), env={"EXTRA": "yes"})
    env = json.loads(r.stdout)
    assert promises(sandbox, "clean-env")
    assert "BW_SECRET_CANARY" not in env and "OPENAI_API_KEY" not in env
    assert secret.encode() not in r.stdout
    assert env["EXTRA"] == "yes"
    allowed = {"PATH", "LANG", "LC_ALL", "HOME", "TMPDIR", "PWD", "PYTHONDONTWRITEBYTECODE",
               "PYTHONHASHSEED", "EXTRA"}
    assert set(env) <= allowed, set(env) - allowed


def test_stdin_gets_eof(sandbox: Sandbox) -> None:
    r = py(sandbox, "import sys\nprint(repr(sys.stdin.read()))", limits=SandboxLimits(wall_s=10))
    assert promises(sandbox, "stdin-closed")
    assert not r.timed_out
    assert out(r) == "''"
    given = py(sandbox, "import sys\nprint(sys.stdin.read())", stdin=b"given\n")
    assert out(given) == "given"


def test_private_workdir(sandbox: Sandbox, tmp_root: Path) -> None:
    code = ("import os\nprint(os.getcwd())\nprint(sorted(os.listdir('.')))\n"
            "open('new.txt', 'w').write('x')\nprint(open('sub/a.txt').read())")
    r = py(sandbox, code, files={"sub/a.txt": b"given"})
    cwd, listing, content = out(r).splitlines()
    assert promises(sandbox, "private-workdir")
    assert listing == "['sub']" and content == "given"
    if sandbox.isolation == "rlimits":
        assert Path(cwd).parent == tmp_root
    else:
        assert cwd == "/work"
    # two runs never share a folder, and nothing is left behind
    again = py(sandbox, "import os\nprint(sorted(os.listdir('.')))")
    assert out(again) == "[]"
    assert list(tmp_root.iterdir()) == []


# -- limits ------------------------------------------------------------------------------------


def test_memory_bomb(sandbox: Sandbox) -> None:
    code = """
chunks = []
try:
    while True:
        chunks.append(bytearray(64 << 20))
except MemoryError:
    print("MemoryError after", len(chunks) * 64, "MiB")
"""
    r = py(sandbox, code, limits=SandboxLimits(wall_s=30, memory_mb=256))
    assert promises(sandbox, "limits")
    assert "MemoryError after" in out(r), r
    assert int(out(r).split()[2]) <= 256


def test_busy_loop_hits_the_wall_limit(sandbox: Sandbox) -> None:
    start = time.monotonic()
    r = py(sandbox, "while True: pass", limits=SandboxLimits(wall_s=1.5))
    assert r.timed_out and not r.ok
    assert time.monotonic() - start < 10


def test_busy_loop_hits_the_cpu_limit(sandbox: Sandbox) -> None:
    r = py(sandbox, "while True: pass", limits=SandboxLimits(wall_s=30, cpu_s=1))
    assert not r.timed_out
    assert r.exit_code is None and r.signal in (signal.SIGXCPU, signal.SIGKILL), r
    assert r.cpu_ms >= 1000


def test_stdout_flood_is_capped(sandbox: Sandbox) -> None:
    code = ("import sys\nchunk = b'x' * (1 << 20)\n"
            "for _ in range(300):\n    sys.stdout.buffer.write(chunk)\n")
    start = time.monotonic()
    r = py(sandbox, code, limits=SandboxLimits(wall_s=60, output_bytes=64 * 1024))
    assert r.exit_code == 0 and not r.timed_out, r.stderr
    assert r.stdout == b"x" * (64 * 1024)
    assert time.monotonic() - start < 30


def test_what_the_command_writes_as_it_exits_is_read(sandbox: Sandbox,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The harness looks whether the command is gone whenever its pipes were quiet for a
    moment; if it wrote its result and exited just then (a busy machine), that result is in
    the pipes and must still be read (it was lost: a run's result line, once in a few thousand
    samples under load). The look is made slow here, so the exit always falls in that window."""
    from benchwright.sandbox import rlimit

    real = rlimit._exited

    def late(pid: int) -> bool:
        time.sleep(0.4)
        return real(pid)

    monkeypatch.setattr(rlimit, "_exited", late)
    r = py(sandbox, "import sys, time\ntime.sleep(0.15)\nprint('LAST WORDS')\n"
                    "sys.stderr.write('and a warning')\n")
    assert r.exit_code == 0 and not r.timed_out, r
    assert out(r) == "LAST WORDS"
    assert r.stderr.decode().endswith("and a warning")


def test_huge_file_is_cut_by_the_file_size_limit(sandbox: Sandbox) -> None:
    code = """
import os
chunk = b"x" * (1 << 20)
try:
    with open("big.bin", "wb") as fh:
        for _ in range(3 * 1024):  # 3 GB
            fh.write(chunk)
    print("WROTE")
except OSError as e:
    print("STOPPED", type(e).__name__, os.path.getsize("big.bin"))
"""
    r = py(sandbox, code, limits=SandboxLimits(wall_s=60, file_size_mb=16))
    text = out(r)
    assert "WROTE" not in text, text
    # Python ignores SIGXFSZ, so the write fails with EFBIG at the limit
    assert text.startswith("STOPPED") and int(text.split()[2]) <= 16 << 20, text


# -- processes ---------------------------------------------------------------------------------


SPAWN = """
import subprocess, sys
started = []
for i in range({n}):
    try:
        started.append(subprocess.Popen(["/bin/sleep", "30"], stdin=subprocess.DEVNULL))
    except OSError as e:
        print("REFUSED", type(e).__name__)
        break
print("STARTED", len(started))
for p in started:
    p.kill()
"""


def test_process_limit(sandbox: Sandbox) -> None:
    """A bounded attack (40 sleepers against a limit of 16) that is safe where it works."""
    r = py(sandbox, SPAWN.format(n=40), limits=SandboxLimits(wall_s=30, processes=16))
    assert "STARTED" in out(r), (r.exit_code, r.signal, r.timed_out, out(r), r.stderr[-2000:])
    started = int(out(r).split("STARTED")[1].split()[0])
    if promises(sandbox, "process-limit"):
        assert started < 16, out(r)
    else:
        assert started == 40, out(r)


@pytest.mark.parametrize("sandbox", promising("process-limit", "tree-killed"), indirect=True)
def test_fork_bomb(sandbox: Sandbox) -> None:
    token = f"bwforkbomb{uuid.uuid4().hex}"
    code = f"# {token}\nimport os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    start = time.monotonic()
    r = py(sandbox, code, limits=SandboxLimits(wall_s=3, processes=32))
    assert r.timed_out and not r.ok
    assert time.monotonic() - start < 20
    assert survivors(token) == []


def test_twenty_thousand_threads(sandbox: Sandbox) -> None:
    code = """
import threading, time
stop = threading.Event()
n = 0
try:
    for _ in range(20000):
        threading.Thread(target=stop.wait, daemon=True).start()
        n += 1
except RuntimeError as e:
    print("REFUSED", n)
else:
    print("STARTED", n)
stop.set()
"""
    r = py(sandbox, code, limits=SandboxLimits(wall_s=60, processes=64, memory_mb=1024))
    text = out(r)
    if promises(sandbox, "process-limit"):
        assert text.startswith("REFUSED") and int(text.split()[1]) < 64, text
    else:  # only the address-space limit stops it
        assert text.split()[0] in ("REFUSED", "STARTED"), r


DAEMONS = """
import subprocess
quiet = dict(stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
loop = 'trap "" TERM HUP INT; while :; do sleep 1; done # {token}-{{}}'
subprocess.Popen(["/bin/sh", "-c", loop.format("daemon")], start_new_session=True, **quiet)
subprocess.Popen(["/bin/sh", "-c", loop.format("child")], **quiet)
print("SPAWNED", flush=True)
{tail}
"""


def _spawn_and_check(sandbox: Sandbox, tail: str, wall_s: float) -> ProcessResult:
    token = f"bwsurvivor{uuid.uuid4().hex}"
    r = py(sandbox, DAEMONS.format(token=token, tail=tail), limits=SandboxLimits(wall_s=wall_s))
    assert out(r) == "SPAWNED", r
    alive = survivors(token)
    try:
        if promises(sandbox, "tree-killed"):
            assert alive == [], f"{sandbox.name}: survivors {alive}"
        else:
            # the SIGTERM-ignoring child in the command's group dies; the setsid daemon escapes
            assert promises(sandbox, "group-killed")
            assert processes_with(f"{token}-child") == []
            assert processes_with(f"{token}-daemon") != []
    finally:
        kill_all(processes_with(token))
    return r


def test_nothing_survives_the_sample(sandbox: Sandbox) -> None:
    start = time.monotonic()
    r = _spawn_and_check(sandbox, "", wall_s=20)
    assert r.exit_code == 0 and not r.timed_out
    assert time.monotonic() - start < 15  # the leftovers do not hold the run open


def test_nothing_survives_a_timeout(sandbox: Sandbox) -> None:
    r = _spawn_and_check(sandbox, "import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                  "while True: pass", wall_s=1.5)
    assert r.timed_out


HARNESS = """
import sys
from benchwright.registry import registry
from benchwright.sandbox.base import SandboxLimits
sandbox = registry.create("sandbox", sys.argv[1], tmp_root=sys.argv[2])
sandbox.run(["/bin/sh", "-c", "setsid sh -c 'sleep 1000' & sleep 1000 # " + sys.argv[3]],
            files={}, limits=SandboxLimits(wall_s=60))
"""


@pytest.mark.parametrize("sandbox", promising("tree-killed"), indirect=True)
def test_nothing_survives_a_killed_harness(sandbox: Sandbox, tmp_root: Path) -> None:
    """``kill -9`` of the harness in the middle of a sample (what `run --resume` recovers from)."""
    import subprocess

    token = f"bwharness{uuid.uuid4().hex}"
    harness = subprocess.Popen([sys.executable, "-c", HARNESS, sandbox.name, str(tmp_root), token])

    def sample() -> list[int]:  # the sample's processes, not the harness (its argv has the token)
        return [p for p in processes_with(token) if p != harness.pid]

    try:
        end = time.monotonic() + 20
        while not sample() and time.monotonic() < end:
            time.sleep(0.02)
        assert sample(), "the sample never started"
        time.sleep(0.2)
    finally:
        harness.kill()
        harness.wait()
    try:
        assert survivors(token) == []
    finally:
        kill_all(processes_with(token))


@pytest.mark.parametrize("sandbox", promising("tree-killed"), indirect=True)
def test_killing_the_parent(sandbox: Sandbox) -> None:
    code = ("import os, signal\nfor sig in (signal.SIGKILL, signal.SIGTERM):\n"
            "    try:\n        os.kill(os.getppid(), sig)\n    except OSError as e:\n"
            "        print('DENIED', type(e).__name__)\nprint('STILL HERE', os.getppid())")
    r = py(sandbox, code)
    assert "STILL HERE 1" in out(r), r  # the sandbox's own PID 1, which shrugs it off
    assert r.exit_code == 0


def _host_uid_of_a_run(sandbox: Sandbox) -> int:
    """The host uid of a sandboxed command, read from the host's /proc while it runs."""
    token = f"bwuid{uuid.uuid4().hex}"
    done: list[ProcessResult] = []
    thread = threading.Thread(target=lambda: done.append(sandbox.run(
        ["/bin/sh", "-c", f"sleep 2 # {token}"], files={}, limits=SandboxLimits(wall_s=20))))
    thread.start()
    try:
        end = time.monotonic() + 10
        while time.monotonic() < end:
            for pid in processes_with(token):
                status = Path(f"/proc/{pid}/status").read_text()
                uids = next(line for line in status.splitlines() if line.startswith("Uid:"))
                return int(uids.split()[1])
            time.sleep(0.02)
        raise AssertionError("the sandboxed command never showed up")
    finally:
        thread.join(30)


def test_unprivileged(sandbox: Sandbox) -> None:
    host_uid = _host_uid_of_a_run(sandbox)
    if promises(sandbox, "unprivileged"):
        assert host_uid != 0
        if os.getuid() == 0:  # a uid of its own per run
            other = _host_uid_of_a_run(sandbox)
            assert other not in (host_uid, 0)
    else:
        assert host_uid == 0 == os.getuid()


# -- the sandbox's own failures are infra errors -------------------------------------------------


def test_missing_program_is_an_infra_error(sandbox: Sandbox) -> None:
    from benchwright.errors import InfraError

    with pytest.raises(InfraError):
        sandbox.run(["/nonexistent/program-xyz"], files={}, limits=SandboxLimits(wall_s=5))
    with pytest.raises(InfraError):
        sandbox.run(["no-such-program-xyz"], files={}, limits=SandboxLimits(wall_s=5))


def test_killed_by_signal_is_reported_as_the_signal(sandbox: Sandbox) -> None:
    r = sandbox.run(["/bin/sh", "-c", "echo out; echo err >&2; kill -TERM $$"], files={},
                    limits=SandboxLimits(wall_s=10))
    assert (r.exit_code, r.signal) == (None, signal.SIGTERM)
    assert r.stdout == b"out\n" and r.stderr == b"err\n"
    ok = sandbox.run(["/bin/sh", "-c", "exit 3"], files={}, limits=SandboxLimits(wall_s=10))
    assert (ok.exit_code, ok.signal) == (3, None)


def test_cpu_and_memory_are_measured(sandbox: Sandbox) -> None:
    code = ("import time\nb = bytearray(100_000_000)\nfor i in range(0, len(b), 4096):\n"
            "    b[i] = 1\nt = time.process_time()\nwhile time.process_time() - t < 0.3:\n"
            "    pass\n")
    r = py(sandbox, code, limits=SandboxLimits(wall_s=30))
    assert r.exit_code == 0, r.stderr
    assert r.max_rss_bytes > 100e6
    assert r.cpu_ms >= 250


def test_the_harness_python_is_used_only_without_isolation(sandbox: Sandbox) -> None:
    if sandbox.isolation == "rlimits":
        assert sandbox.python == sys.executable
    else:
        assert sandbox.python == "/usr/bin/python3"


def test_the_sandbox_has_a_loopback_of_its_own(sandbox: Sandbox) -> None:
    """No network is not no sockets: a sample may serve and connect on its own ``lo``."""
    code = ("import socket\ns = socket.socket()\ns.bind(('127.0.0.1', 0))\ns.listen(1)\n"
            "c = socket.create_connection(s.getsockname(), timeout=5)\nprint('OK')")
    assert out(py(sandbox, code)) == "OK"


@pytest.mark.parametrize("sandbox", promising("unprivileged") if os.getuid() == 0 else [], indirect=True)
def test_an_unreachable_temporary_folder_is_an_infra_error(sandbox: Sandbox, tmp_path: Path) -> None:
    """Only a root harness hands the work folder to another uid (the rlimit backend does not)."""
    from benchwright.errors import InfraError

    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    made: Sandbox = registry.create("sandbox", sandbox.name, tmp_root=str(private))
    with pytest.raises(InfraError, match="not reachable"):
        made.run(["true"], files={}, limits=SandboxLimits(wall_s=5))


# -- the sandbox's own processes and what the harness reads back ------------------------------

def test_the_sandbox_init_is_out_of_reach(sandbox: Sandbox) -> None:
    """PID 1 of the sandbox (the shell that waits for the command) holds no pipe a sample
    could write results into or read jobs from, and cannot be taken over with ptrace."""
    if not promises(sandbox, "init-out-of-reach"):
        # no PID namespace: PID 1 is the host's init, never to be ptraced from a test
        assert sandbox.isolation == "rlimits"
        return
    r = py(sandbox, INIT_PROBE, stdin=b"a job the sample must not read\n")
    assert r.exit_code == 0, r.stderr
    found = json.loads(out(r))
    assert set(found.values()) <= {"/dev/null"}, found


def test_collected_files_are_never_read_through_a_link(sandbox: Sandbox, tmp_path: Path) -> None:
    """What the harness reads back from the work folder (``collect``) is a regular file the
    command wrote, never what a link it made points to, and a FIFO there does not hang it."""
    secret = tmp_path / "host-secret"
    secret.write_text("bw-host-secret-never-read")
    secret.chmod(0o644)
    code = (f"import os\nos.symlink({str(secret)!r}, 'linked.txt')\n"
            "os.symlink('/etc/passwd', 'passwd.txt')\nos.mkfifo('fifo.txt')\n"
            "os.mkdir('folder')\nos.symlink('/etc', 'up')\n"
            "open('plain.txt', 'w').write('plain')\n")
    r = sandbox.run([sandbox.python, "-I", "-S", "-c", code], files={},
                    limits=SandboxLimits(wall_s=20),
                    collect=("linked.txt", "passwd.txt", "fifo.txt", "up/passwd", "plain.txt"))
    assert r.exit_code == 0, r.stderr
    assert r.files == {"plain.txt": b"plain"}


def test_a_session_that_writes_much_to_stderr_still_answers(sandbox: Sandbox) -> None:
    """A long-lived process (a warm server) whose stderr fills the pipe while it works: the
    harness reads it while it waits for the answer, so the process never blocks there (it did,
    and every such answer timed out). The last of what it wrote is kept for messages."""
    code = ("import sys\nsys.stderr.write('x' * (1 << 20) + 'END')\nsys.stderr.flush()\n"
            "print('ANSWER', flush=True)\nsys.stdin.read()\n")
    session = sandbox.start([sandbox.python, "-I", "-S", "-c", code], files={},
                            limits=SandboxLimits(wall_s=60))
    try:
        assert session.readline(30) == b"ANSWER"
        assert session.stderr_tail().endswith("xEND")
    finally:
        session.close()


def test_a_session_line_past_the_cap_ends_it(sandbox: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line that never ends is not read into memory for ever: past the cap the session is
    dead and the caller gets no line."""
    from benchwright.sandbox import rlimit

    monkeypatch.setattr(rlimit, "MAX_LINE_BYTES", 100_000)
    code = "import sys, time\nsys.stdout.write('y' * 1_000_000)\nsys.stdout.flush()\ntime.sleep(30)\n"
    session = sandbox.start([sandbox.python, "-I", "-S", "-c", code], files={},
                            limits=SandboxLimits(wall_s=60))
    try:
        start = time.monotonic()
        assert session.readline(20) is None
        assert time.monotonic() - start < 15 and not session.alive
    finally:
        session.close()
