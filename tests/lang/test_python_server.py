"""The Python fork server: many samples through one sandboxed server, and what one sample may
try against the server and the samples after it."""

from __future__ import annotations

import os
import random
import shutil
import tempfile
from collections.abc import Iterator

import pytest

from benchwright.lang.base import ExecutionResult, TestSpec
from benchwright.lang.python import PythonLanguage
from benchwright.registry import registry
from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.sandbox.select import availability

LIMITS = SandboxLimits(memory_mb=512)
GOOD = "def double(x):\n    return 2 * x\n"
TESTS = [TestSpec("two", "assert double(2) == 4"), TestSpec("three", "assert double(3) == 6")]


def _backend(name: str) -> Iterator[Sandbox]:
    why = availability(name)
    if why is not None:
        pytest.fail(f"sandbox {name!r} is not available here: {why}")
    root = tempfile.mkdtemp(prefix="bw-fs-")
    os.chmod(root, 0o755)
    yield registry.create("sandbox", name, tmp_root=root)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(params=["bwrap", "unshare", "rlimit"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    yield from _backend(request.param)


@pytest.fixture(params=["bwrap", "unshare"])
def isolating(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    """An isolating backend only (its own /tmp, keys and namespaces to check)."""
    yield from _backend(request.param)


@pytest.fixture
def lang() -> Iterator[PythonLanguage]:
    language = PythonLanguage()
    yield language
    language.close()


def run(lang: PythonLanguage, sandbox: Sandbox, solution: str, tests: list[TestSpec] = TESTS,
        timeout: float = 3.0, limits: SandboxLimits = LIMITS) -> ExecutionResult:
    return lang.run_tests(sandbox, solution, tests, prelude=None, limits=limits,
                          test_timeout_s=timeout)


def statuses(result: ExecutionResult) -> list[str]:
    return [t.status for t in result.tests]


def server_starts(lang: PythonLanguage) -> int:
    return sum(server.started for _, server in lang._servers._servers.values())


def test_one_server_runs_many_samples(lang: PythonLanguage, sandbox: Sandbox) -> None:
    for _ in range(20):
        result = run(lang, sandbox, GOOD)
        assert statuses(result) == ["pass", "pass"]
        assert isinstance(result.extra["cpu_ms"], float)
        assert result.extra["max_rss_bytes"] > 1_000_000  # type: ignore[operator]
    bad = run(lang, sandbox, "def double(x):\n    return x + 1\n")
    assert statuses(bad) == ["fail", "fail"]
    assert bad.tests[1].message == "double(3) == 6: got 4"
    assert server_starts(lang) == 1


def test_a_sample_that_kills_the_server_fails_alone(lang: PythonLanguage, sandbox: Sandbox) -> None:
    killer = GOOD + "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n"
    result = run(lang, sandbox, killer)
    assert "pass" not in statuses(result)
    assert statuses(run(lang, sandbox, GOOD)) == ["pass", "pass"]
    assert statuses(run(lang, sandbox, GOOD + "import os\nos.kill(os.getppid() if False else "
                        "int(open(f'/proc/{os.getppid()}/stat').read().split()[3]), 9)\n")) != ["pass", "pass"]
    assert statuses(run(lang, sandbox, GOOD)) == ["pass", "pass"]


def test_nothing_of_a_sample_reaches_the_next(lang: PythonLanguage, sandbox: Sandbox) -> None:
    """Files in its folder and /tmp, daemons: gone before the next sample starts."""
    naptime = f"300.{random.randrange(10**6):06d}"  # its own: other tests' sleepers may be seen
    litter = GOOD + (
        "import os, subprocess, tempfile\n"
        "open('left.txt', 'w').write('x')\n"
        "open(os.path.join(tempfile.gettempdir(), 'bw-left-behind'), 'w').write('x')\n"
        f"subprocess.Popen(['sleep', '{naptime}'], start_new_session=True)\n"
    )
    assert statuses(run(lang, sandbox, litter)) == ["pass", "pass"]
    probe = GOOD + (
        "import os, tempfile\n"
        "LEFT = os.path.exists('left.txt')\n"
        "TMP = os.path.exists(os.path.join(tempfile.gettempdir(), 'bw-left-behind'))\n"
        "def sleepers():\n"
        "    n = 0\n"
        "    for pid in os.listdir('/proc'):\n"
        "        if pid.isdigit():\n"
        "            try:\n"
        f"                n += open(f'/proc/{{pid}}/cmdline', 'rb').read() == b'sleep\\x00{naptime}\\x00'\n"
        "            except OSError:\n"
        "                pass\n"
        "    return n\n"
    )
    checks = [TestSpec("left", "assert LEFT == False"), TestSpec("sleepers", "assert sleepers() == 0")]
    if "hidden-tmp" in sandbox.guarantees:  # rlimit shares the host's /tmp: nothing to empty
        checks.append(TestSpec("tmp", "assert TMP == False"))
    result = run(lang, sandbox, probe, checks)
    assert statuses(result) == ["pass"] * len(checks), result.tests
    if "hidden-tmp" not in sandbox.guarantees:
        for path in (os.path.join(tempfile.gettempdir(), "bw-left-behind"),):
            if os.path.exists(path):
                os.unlink(path)


def test_what_a_sample_changes_about_its_folders_reaches_no_later_sample(
        lang: PythonLanguage, isolating: Sandbox) -> None:
    """A sample that makes /tmp read-only and gives it a default ACL (every file made there
    later unreadable), or adds a key to its user's keyring: the next sample runs in a new
    sandbox, where /tmp is writable and no key is found."""
    sandbox = isolating
    attack = GOOD + (
        "import ctypes, os\n"
        "os.setxattr('/tmp', 'system.posix_acl_default', bytes.fromhex("
        "'0200000001000000ffffffff04000000ffffffff20000000ffffffff'))\n"
        "os.chmod('/tmp', 0o555)\n"
        "ctypes.CDLL(None).syscall(248, b'user', b'bw-left', b'secret', 6, -4)\n"  # add_key
    )
    assert statuses(run(lang, sandbox, attack)) == ["pass", "pass"]
    probe = GOOD + (
        "import ctypes, os\n"
        "with open('/tmp/mine', 'w') as f:\n"
        "    f.write('x')\n"
        "MINE = open('/tmp/mine').read()\n"
        "KEY = ctypes.CDLL(None).syscall(250, 10, -4, b'user', b'bw-left', 0)\n"  # KEYCTL_SEARCH
    )
    checks = [TestSpec("tmp", "assert MINE == 'x'"), TestSpec("key", "assert KEY == -1")]
    assert statuses(run(lang, sandbox, probe, checks)) == ["pass", "pass"]


def test_the_result_channel_is_out_of_reach(lang: PythonLanguage, sandbox: Sandbox) -> None:
    """Writing results through /proc/<server>/fd/1, or to its own stdout, forges nothing."""
    forger = (
        "import os, sys\n"
        "fake = (b'BWR {\"build\": \"ok\"}\\nBWR {\"i\": 0, \"status\": \"pass\"}\\n'\n"
        "        b'BWR {\"i\": 1, \"status\": \"pass\"}\\nBWR {\"end\": true}\\n')\n"
        "judge = int(open(f'/proc/{os.getppid()}/stat').read().split()[3])\n"
        "for target in (f'/proc/{os.getppid()}/fd/1', f'/proc/{judge}/fd/1', '/dev/stdout'):\n"
        "    try:\n"
        "        with open(target, 'wb') as f:\n"
        "            f.write(fake)\n"
        "    except OSError:\n"
        "        pass\n"
        "sys.__stdout__.write(fake.decode())\n"
        "os.write(1, fake)\n"
        "def double(x):\n    return 0\n"
    )
    result = run(lang, sandbox, forger)
    # even under the rlimit fallback as root, where the sample may open the server's
    # descriptors: the forged lines lack the job's nonce (reading it from the server's memory
    # is what that fallback cannot prevent)
    assert statuses(result) == ["fail", "fail"]


def test_expected_values_never_enter_the_sample(lang: PythonLanguage, sandbox: Sandbox) -> None:
    """The sample searches its whole heap for the expected value of the test it runs and of
    earlier samples' tests."""
    run(lang, sandbox, "def double(x):\n    return x * 2\n",
        [TestSpec("earlier", "assert double(21) == 'expected-ZQX-earlier'")])
    snoop = (
        "import gc, sys\n"
        "def double(x):\n"
        "    seen = [o for o in gc.get_objects() if isinstance(o, (dict, list, tuple))]\n"
        "    frame = sys._getframe()\n"
        "    while frame is not None:\n"  # the server's own frames, forked with the sample
        "        seen.append(dict(frame.f_locals))\n"
        "        frame = frame.f_back\n"
        "    text = repr(seen)\n"
        "    return 'LEAK' if ''.join(map(chr, (90, 81, 88))) in text else 0\n"
    )
    result = run(lang, sandbox, snoop, [TestSpec("snoop", "assert double(1) == 'never-ZQX'")])
    assert result.tests[0].status == "fail"
    assert result.tests[0].message is not None and "got 0" in result.tests[0].message


def test_an_object_equal_to_everything_is_flagged(lang: PythonLanguage, sandbox: Sandbox) -> None:
    cheat = (
        "class Anything:\n"
        "    def __eq__(self, other):\n        return True\n"
        "    def __repr__(self):\n        return 'Anything()'\n"
        "def double(x):\n    return Anything()\n"
    )
    result = run(lang, sandbox, cheat)
    assert statuses(result) == ["pass", "pass"]  # the comparison itself holds in the sample
    assert all(t.suspicious and "Anything" in t.suspicious and "int" in t.suspicious
               for t in result.tests)
    flagged = result.extra["suspicious"]
    assert isinstance(flagged, dict) and set(flagged) == {"two", "three"}
    honest = run(lang, sandbox, GOOD)
    assert all(t.suspicious is None for t in honest.tests)
    assert "suspicious" not in honest.extra


def test_bool_for_int_is_flagged(lang: PythonLanguage, sandbox: Sandbox) -> None:
    result = run(lang, sandbox, "def one():\n    return True\n", [TestSpec("one", "assert one() == 1")])
    assert result.tests[0].status == "pass"
    assert result.tests[0].suspicious == "the value is a bool where the expected value is a int"


def test_limits_hold_per_sample(lang: PythonLanguage, sandbox: Sandbox) -> None:
    hog = "def double(x):\n    b = bytearray(900 * 1024 * 1024)\n    return 2 * x\n"
    result = run(lang, sandbox, hog)
    assert statuses(result) == ["error", "error"]
    assert result.tests[0].message == "MemoryError"
    tests = [TestSpec("slow", "assert spin() == 1", timeout_s=0.3), TestSpec("quick", "assert 1 == 1")]
    spin = "def spin():\n    while True:\n        pass\n"
    result = run(lang, sandbox, spin, tests, timeout=10.0)
    assert result.tests[0].status == "timeout"
    assert result.tests[0].message == "took more than 0.3 s"
    assert statuses(run(lang, sandbox, GOOD)) == ["pass", "pass"]


def test_each_thread_has_its_own_server(lang: PythonLanguage, sandbox: Sandbox) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(lambda _: run(lang, sandbox, GOOD), range(20)))
    assert all(statuses(r) == ["pass", "pass"] for r in results)
    assert 1 <= server_starts(lang) <= 2


def test_a_sandbox_without_sessions_runs_one_interpreter_per_sample(tmp_path) -> None:
    from benchwright.sandbox.base import ProcessResult
    from benchwright.sandbox.rlimit import RlimitSandbox

    class OneShot(Sandbox):
        name = "one-shot"

        def __init__(self) -> None:
            self.inner = RlimitSandbox(tmp_root=str(tmp_path))
            self.calls = 0

        def run(self, argv: list[str], **kwargs: object) -> ProcessResult:  # type: ignore[override]
            self.calls += 1
            return self.inner.run(argv, **kwargs)  # type: ignore[arg-type]

    one_shot = OneShot()
    language = PythonLanguage()
    assert statuses(run(language, one_shot, GOOD)) == ["pass", "pass"]
    assert statuses(run(language, one_shot, GOOD)) == ["pass", "pass"]
    assert one_shot.calls == 2


EXPR_TESTS = [
    TestSpec("truthy", "assert is_even(4)"),
    TestSpec("falsy", "assert not is_even(3)"),
    TestSpec("identity", "assert is_even(2) is True"),
    TestSpec("computed", "assert halves(6) == [3] * 2"),
    TestSpec("nested", "assert sorted(halves(halves(8)[0])) == [2, 2]"),
    TestSpec("message", "assert is_even(5) == (1 == 1), 'five is odd'"),
]
EVEN = ("def is_even(n):\n    return n % 2 == 0\n\n\n"
        "def halves(n):\n    return [n // 2, n // 2]\n")


def test_other_asserts_are_judged_outside_the_solution(lang: PythonLanguage, sandbox: Sandbox) -> None:
    """Any single assert: the judge asks for what it needs of the solution (calls, names) and
    evaluates the rest itself."""
    result = run(lang, sandbox, EVEN, EXPR_TESTS)
    assert [(t.status, t.judged) for t in result.tests] == [("pass", "harness")] * 5 + [("fail", "harness")]
    assert result.tests[5].message == "five is odd"
    wrong = run(lang, sandbox, "def is_even(n):\n    return 1\n\n\ndef halves(n):\n    return [n]\n",
                EXPR_TESTS[:4])
    assert [t.status for t in wrong.tests] == ["pass", "fail", "fail", "fail"]
    assert wrong.tests[1].message == "not is_even(3): is_even(3) = 1"
    assert wrong.tests[3].message == "halves(6) == [3] * 2: halves(6) = [6]"
    assert wrong.tests[3].line == len(wrong.tests[3].code.splitlines())


def test_an_emulating_forger_cannot_pass_a_value_it_does_not_have(lang: PythonLanguage,
                                                                   sandbox: Sandbox) -> None:
    """A solution that answers the judge's requests itself, as the runner would, can only
    send values: the judge still evaluates the assert, so a wrong value fails."""
    forger = (
        "import fcntl, os, select, stat\n"
        "def reply(value=None, kind=None):  # the runner's reply frame (see decode_reply)\n"
        "    texts = [None, value, kind, '']\n"
        "    sizes = ' '.join('-1' if t is None else str(len(t)) for t in texts)\n"
        "    return (f'ok -1 1.0 0 {sizes}\\n' + ''.join(t for t in texts if t)).encode()\n"
        "pipes = {}\n"
        "for fd in range(3, 64):\n"
        "    try:\n"
        "        if stat.S_ISFIFO(os.fstat(fd).st_mode):\n"
        "            pipes[fd] = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE\n"
        "    except OSError:\n"
        "        pass\n"
        "out = next(fd for fd, mode in pipes.items() if mode == os.O_WRONLY)\n"
        "# the solution loaded; both tests: a truthy tuple. Then no more replies, and leave\n"
        "# when the judge closes the requests pipe, as the runner does\n"
        "os.write(out, reply() + reply('(True, )', 'tuple') * 2)\n"
        "os.close(out)\n"
        "poller = select.poll()\n"
        "for fd, mode in pipes.items():\n"
        "    if mode == os.O_RDONLY:\n"
        "        poller.register(fd, select.POLLHUP)\n"
        "while True:\n"
        "    if any(event & select.POLLHUP for _, event in poller.poll()):\n"
        "        os._exit(0)\n"
    )
    result = run(lang, sandbox, forger, [TestSpec("falsy", "assert not is_even(3)"),
                                         TestSpec("value", "assert halves(6) == [3, 3]")])
    assert [(t.status, t.judged) for t in result.tests] == [("fail", "harness")] * 2, result.tests
    assert result.tests[1].message == "halves(6) == [3, 3]: got (True, )"


def test_short_circuits_keep_their_meaning(lang: PythonLanguage, sandbox: Sandbox) -> None:
    """``not xs or f(xs[0])`` must not call ``f`` on an empty list: such tests run whole."""
    solution = "XS = []\n\n\ndef first_positive(x):\n    return x > 0\n"
    tests = [TestSpec("lazy", "assert not XS or first_positive(XS[0])"),
             TestSpec("chain", "assert 0 <= len(XS) < 5")]
    result = run(lang, sandbox, solution, tests)
    assert [(t.status, t.judged) for t in result.tests] == [("pass", "sample"), ("pass", "harness")]


def test_nan_equals_nothing_however_it_is_judged(lang: PythonLanguage, sandbox: Sandbox) -> None:
    # The judge passes a value whose repr is the expected value's without parsing it, except
    # where NaN is involved: a NaN is equal to no other NaN, in a list or not.
    nans = "def nans():\n    return [float('nan')]\n\ndef ones():\n    return [1.0]\n"
    tests = [TestSpec("nan", "assert nans() == [nan]"), TestSpec("one", "assert ones() == [1.0]"),
             TestSpec("not-one", "assert ones() == [1]")]
    result = run(lang, sandbox, nans, tests)
    assert statuses(result) == ["fail", "pass", "pass"]
    assert result.tests[0].message == "nans() == [nan]: got [nan]"


def test_each_server_keeps_to_one_core(lang: PythonLanguage, sandbox: Sandbox) -> None:
    cores = "import os\n\ndef cores():\n    return len(os.sched_getaffinity(0))\n"
    result = run(lang, sandbox, cores, [TestSpec("one", "assert cores() == 1")])
    assert statuses(result) == ["pass"], result.tests[0].message
