"""What the isolating backends share: their own failures, the interpreter they offer."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import replace

import pytest

from benchwright.errors import InfraError
from benchwright.lang.base import TestSpec
from benchwright.lang.python import PythonLanguage
from benchwright.registry import registry
from benchwright.sandbox import isolated
from benchwright.sandbox.base import ProcessResult, SandboxLimits
from benchwright.sandbox.isolated import IsolatedSandbox, decode_status
from benchwright.sandbox.select import availability


@pytest.fixture(params=["bwrap", "unshare"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[IsolatedSandbox]:
    why = availability(request.param)
    if why is not None:
        pytest.fail(f"sandbox {request.param!r} is not available here: {why}")  # setup installs it
    root = tempfile.mkdtemp(prefix="bw-isolated-")
    os.chmod(root, 0o755)
    yield registry.create("sandbox", request.param, tmp_root=root)
    assert os.listdir(root) == []
    shutil.rmtree(root, ignore_errors=True)


def test_a_failing_setup_is_an_infra_error(sandbox: IsolatedSandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    view = isolated.system_view()
    broken = replace(view, binds=(*view.binds, "/nonexistent-bw-folder"))
    monkeypatch.setattr(isolated, "system_view", lambda: broken)
    monkeypatch.setattr(os.path, "isdir", lambda p, real=os.path.isdir: real(p) or p == "/nonexistent-bw-folder")
    with pytest.raises(InfraError, match=f"sandbox '{sandbox.name}' failed to set up"):
        sandbox.run(["true"], files={}, limits=SandboxLimits(wall_s=10))


def test_the_setup_marker_never_reaches_the_output(sandbox: IsolatedSandbox) -> None:
    r = sandbox.run(["/bin/sh", "-c", "echo to-err >&2"], files={}, limits=SandboxLimits(wall_s=10))
    assert r.stderr == b"to-err\n"
    tiny = sandbox.run(["/bin/sh", "-c", "echo 0123456789 >&2"], files={},
                       limits=SandboxLimits(wall_s=10, output_bytes=4))
    assert tiny.stderr == b"0123"


def test_programs_the_sandbox_cannot_see_are_infra_errors(sandbox: IsolatedSandbox) -> None:
    import sys

    # the harness's venv Python (here under /work, elsewhere under a home folder)
    with pytest.raises(InfraError, match=r"could not start .*invisible"):
        sandbox.run([sys.executable, "-c", "pass"], files={}, limits=SandboxLimits(wall_s=10))
    with pytest.raises(InfraError, match=r"not inside the .* sandbox"):
        sandbox.run(["/root/bw-some-tool"], files={}, limits=SandboxLimits(wall_s=10))
    with pytest.raises(InfraError, match="work folder"):
        sandbox.run(["./missing.sh"], files={}, limits=SandboxLimits(wall_s=10))
    ran = sandbox.run(["/bin/sh", "given.sh"], files={"given.sh": b"echo given"},
                      limits=SandboxLimits(wall_s=10))
    assert ran.stdout == b"given\n"


def test_a_missing_system_python_names_the_package(sandbox: IsolatedSandbox,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(isolated, "SYSTEM_PYTHON", "/nonexistent/python3")
    with pytest.raises(InfraError, match="apt-get install python3"):
        _ = sandbox.python
    with pytest.raises(InfraError, match="apt-get install python3"):
        PythonLanguage().run_tests(sandbox, "x = 1", [TestSpec("t", "assert x == 1")],
                                   prelude=None, limits=SandboxLimits(), test_timeout_s=5)


def test_an_explicit_interpreter_still_wins(sandbox: IsolatedSandbox) -> None:
    lang = PythonLanguage(interpreter="/usr/bin/python3")
    result = lang.run_tests(sandbox, "x = 1", [TestSpec("t", "assert x == 1")], prelude=None,
                            limits=SandboxLimits(), test_timeout_s=5)
    lang.close()
    assert result.tests[0].status == "pass"


def test_exit_statuses_above_128_are_signals() -> None:
    def result(code: int | None) -> ProcessResult:
        return ProcessResult(code, None, b"", b"", False, 1.0, 1.0, 1)

    assert (decode_status(result(137)).exit_code, decode_status(result(137)).signal) == (None, 9)
    assert decode_status(result(128)).exit_code == 128
    assert decode_status(result(1)).exit_code == 1
    assert decode_status(result(200)).exit_code == 200


def test_the_view_is_system_folders_only() -> None:
    view = isolated.system_view()
    assert "/usr" in view.binds
    for path in view.binds:
        assert path == "/usr" or path.startswith(("/etc/", "/bin", "/sbin", "/lib")), path
    assert not any(p.startswith(("/root", "/home", "/tmp", "/var", "/opt", "/work")) for p in view.binds)
