"""Command agents that leave traps in their workspace for the harness: symbolic links to host
files and folders where the harness restores hidden files, reads the response and trajectory or
writes the next prompt; FIFOs; huge files; a huge diff; a git link to a host repository; a tree
too deep for recursive code. The harness never follows, reads or writes through any of it,
never blocks, never crashes, and each trap fails the run badge with its reason.

Each test runs a real agent process in the bwrap sandbox (in this process, as the suite's user);
the last one runs the whole of `benchwright run` with a loopback judge, as root and as an
unprivileged user (the agent's sandbox uid is another uid under root, the harness's own
otherwise)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from benchwright.agents.attempt import (
    RESPONSE_CAP,
    TRAJECTORY_STEPS,
    AgentRunResult,
    evidence,
    run_agent_task,
    run_command_agent,
)
from benchwright.agents.batch import scratch_root
from benchwright.agents.evidence import Evidence
from benchwright.agents.judging import judge_prompt
from benchwright.agents.records import agent_files, agent_records, file_names
from benchwright.agents.scenario import Scenario, load_scenario
from benchwright.agents.workspace import BIG_FILE, DIFF_CAP
from benchwright.config.model import AgentSpec
from benchwright.sandbox.base import Sandbox
from tests.conftest import run_cli

MARKER = "HOST-SECRET-7f3c1a-never-in-results"
SCENARIO = """\
version: 1
name: hostile
workspace: {{repo: repo, hidden: {hidden}}}
scorers:
  - {{name: hidden-back, type: command, command: "cat tests/test_hidden.py tests/fixtures/data.txt", timeout_s: 60}}
  - {{type: max_files_changed, limit: 100}}
tasks:
  - name: attack
    turns: {turns}
"""


@dataclass
class Ran:
    """One agent run as the harness records it."""

    result: AgentRunResult
    records: dict[str, dict[str, Any]]
    files: dict[str, str]
    judge_prompt: str

    @property
    def badge(self) -> dict[str, Any]:
        return self.records["run-badge"]

    def everything(self) -> str:
        """All the harness keeps or sends of the run: records, run files, the judge's question."""
        return json.dumps(self.records) + "".join(self.files.values()) + self.judge_prompt


@pytest.fixture
def scenario_dir(tmp_path: Path) -> Path:
    repo = tmp_path / "scenario" / "repo"
    (repo / "tests" / "fixtures").mkdir(parents=True)
    (repo / "tests" / "test_hidden.py").write_text("HIDDEN-TEST\n")
    (repo / "tests" / "fixtures" / "data.txt").write_text("HIDDEN-FIXTURE\n")
    (repo / "src.py").write_text("x = 1\n")
    return repo.parent


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A folder standing for the host, outside the workspace: nothing in it may change."""
    out = tmp_path / "host"
    (out / "fixtures").mkdir(parents=True)
    (out / "test_hidden.py").write_text("HOST TEST FILE\n")
    (out / "fixtures" / "keep.txt").write_text("HOST FIXTURE\n")
    (out / "prompt.txt").write_text("HOST PROMPT\n")
    (out / "response.txt").write_text(MARKER + " response\n")
    (out / "secret.txt").write_text(MARKER + "\n")
    (out / "secret.txt").chmod(0o600)  # the harness can read it; a sandbox uid could not
    return out


def snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): (p.read_text() if p.is_file() else "<dir>")
            for p in sorted(folder.rglob("*"))}


def run(sandbox: Sandbox, scenario_dir: Path, script: str, *, turns: tuple[str, ...] = ("go",),
        hidden: tuple[str, ...] = ("tests/test_hidden.py", "tests/fixtures")) -> Ran:
    path = scenario_dir / "hostile.yaml"
    path.write_text(SCENARIO.format(hidden=json.dumps(list(hidden)), turns=json.dumps(list(turns))))
    scenario: Scenario = load_scenario(path)
    task = scenario.tasks[0]
    agent = AgentSpec(name="hostile", command=script, network=False, timeout_s=300)
    result = run_agent_task(scenario, scenario_dir, task, agent, sandbox, scratch_root(),
                            lambda folder, turns: run_command_agent(agent, folder, turns, sandbox))
    assert result.infra_error is None, result.infra_error
    files = agent_files("x1", result)
    base = {"run_id": "r", "execution_id": "x1", "task_source": "hostile", "task": task.name,
            "model": "hostile"}
    records = {r.criterion: r.model_dump(mode="json") for r in agent_records(base, result, file_names(files))}
    shown: Evidence = evidence(scenario, task, result.outcome, result.change, result.scorers, "hostile")
    return Ran(result, records, files, judge_prompt(shown))


# -- hidden files ----------------------------------------------------------------------------------


@pytest.mark.parametrize("hidden", ["tests/test_hidden.py", "tests/fixtures"], ids=["file", "folder"])
def test_hidden_files_go_back_around_a_folder_replaced_by_a_symlink_to_the_host(
        sandbox: Sandbox, scenario_dir: Path, host: Path, hidden: str) -> None:
    """Restoring tests/test_hidden.py (or the folder tests/fixtures) through tests -> host
    replaced the host's file (or removed the host's folder) and wrote the hidden one there."""
    before = snapshot(host)
    ran = run(sandbox, scenario_dir, f"rm -rf tests && ln -s {host} tests", hidden=(hidden,))
    assert snapshot(host) == before
    assert ran.badge["verdict"] == "fail"
    assert f"tests was a symbolic link to {str(host)!r}" in ran.badge["output"]
    assert f"hidden file {hidden} put back" in ran.badge["output"]
    # the hidden file is back, in a real folder of the workspace, for the scorers
    back = {"tests/test_hidden.py": "HIDDEN-TEST", "tests/fixtures": "HIDDEN-FIXTURE"}[hidden]
    assert back in ran.records["hidden-back"]["output"]


# -- response and trajectory -----------------------------------------------------------------------


def _shadow_lines() -> list[str]:
    """The lines of /etc/shadow, when this harness can read it (root) and it has any."""
    try:
        return [line for line in Path("/etc/shadow").read_text().splitlines() if line.strip()]
    except OSError:
        return []


def test_response_and_trajectory_linked_to_host_files_are_not_read(
        sandbox: Sandbox, scenario_dir: Path, host: Path) -> None:
    shadow = _shadow_lines()
    trajectory_target = "/etc/shadow" if shadow else str(host / "secret.txt")
    ran = run(sandbox, scenario_dir,
              f'ln -s {host / "secret.txt"} "$BENCHWRIGHT_RESPONSE_FILE" && '
              f'ln -s {trajectory_target} "$BENCHWRIGHT_TRAJECTORY_FILE"')
    kept = ran.everything()
    assert MARKER not in kept
    for line in shadow:
        assert line not in kept
    assert ran.result.outcome.responses == [""] and ran.result.outcome.trajectory == []
    output = ran.badge["output"]
    assert ran.badge["verdict"] == "fail"
    assert (f".benchwright-agent/response.txt is a symbolic link to {str(host / 'secret.txt')!r}, "
            "not a regular file (not read)") in output
    assert f".benchwright-agent/trajectory.jsonl is a symbolic link to {trajectory_target!r}" in output
    assert "What the harness refused" in ran.judge_prompt  # the judge is told


# -- the next turn's prompt ------------------------------------------------------------------------


@pytest.mark.parametrize("trap", ["prompt-file", "agent-folder"])
def test_the_next_prompt_is_never_written_through_a_link(sandbox: Sandbox, scenario_dir: Path, host: Path,
                                                         trap: str) -> None:
    """Turn 1 links the prompt file (or the agent's whole folder) to the host; turn 2's prompt
    was written through it (and the host's response.txt deleted, or read as the response)."""
    before = snapshot(host)
    attack = (f'ln -sf {host / "prompt.txt"} "$BENCHWRIGHT_PROMPT_FILE"' if trap == "prompt-file" else
              f'rm -rf "$BENCHWRIGHT_AGENT_DIR" && ln -s {host} "$BENCHWRIGHT_AGENT_DIR"')
    script = f'if [ "$BENCHWRIGHT_TURN" = 1 ]; then {attack}; else echo "turn 2 saw: $(cat "$BENCHWRIGHT_PROMPT_FILE")"; fi'
    ran = run(sandbox, scenario_dir, script, turns=("first prompt", "second prompt"))
    assert snapshot(host) == before
    assert MARKER not in ran.everything()
    assert ran.result.outcome.stdout_tail == "turn 2 saw: second prompt\n"  # a real prompt file again
    found = {"prompt-file": f".benchwright-agent/prompt.txt was a symbolic link to {str(host / 'prompt.txt')!r}",
             "agent-folder": f".benchwright-agent was a symbolic link to {str(host)!r}"}[trap]
    assert ran.badge["verdict"] == "fail"
    assert f"before turn 2: {found} (removed, not followed)" in ran.badge["output"]


# -- FIFOs and sizes -------------------------------------------------------------------------------


def test_fifos_never_block_the_harness(sandbox: Sandbox, scenario_dir: Path) -> None:
    """FIFOs as the response, the trajectory, then the agent's own folder (removing that one
    with shutil.rmtree blocked the harness for ever), and in place of a hidden file."""
    script = ('if [ "$BENCHWRIGHT_TURN" = 1 ]; then mkfifo "$BENCHWRIGHT_RESPONSE_FILE" '
              '"$BENCHWRIGHT_TRAJECTORY_FILE" tests/test_hidden.py; '
              'else rm -rf "$BENCHWRIGHT_AGENT_DIR" && mkfifo "$BENCHWRIGHT_AGENT_DIR"; fi')
    done: list[Ran] = []
    worker = threading.Thread(target=lambda: done.append(run(sandbox, scenario_dir, script, turns=("a", "b"))),
                              daemon=True)
    worker.start()
    worker.join(600)  # a guard: the run either ends or blocks for ever
    assert not worker.is_alive(), "a FIFO left by the agent blocked the harness"
    (ran,) = done
    output = ran.badge["output"]
    assert ran.badge["verdict"] == "fail"
    assert ".benchwright-agent/response.txt is a FIFO (named pipe), not a regular file" in output
    assert "after the run: .benchwright-agent was a FIFO (named pipe)" in output
    assert "hidden file tests/test_hidden.py put back over what the agent left: " \
           "tests/test_hidden.py was a FIFO (named pipe)" in output
    assert "HIDDEN-TEST" in ran.records["hidden-back"]["output"]


def test_a_huge_response_and_trajectory_are_capped(sandbox: Sandbox, scenario_dir: Path) -> None:
    script = ("head -c 20000000 /dev/zero | tr '\\0' a > \"$BENCHWRIGHT_RESPONSE_FILE\" && "
              "yes '{\"tool\": \"shell\"}' | head -c 17000000 > \"$BENCHWRIGHT_TRAJECTORY_FILE\"")
    ran = run(sandbox, scenario_dir, script)
    outcome = ran.result.outcome
    assert outcome.responses == ["a" * RESPONSE_CAP]
    assert len(outcome.trajectory) == TRAJECTORY_STEPS
    output = ran.badge["output"]
    assert ran.badge["verdict"] == "fail"
    assert f".benchwright-agent/response.txt is 20,000,000 bytes, more than the {RESPONSE_CAP:,}" in output
    assert ".benchwright-agent/trajectory.jsonl is 17,000,000 bytes" in output


def test_a_trajectory_nested_deeper_than_json_parses_is_kept_as_text(sandbox: Sandbox, scenario_dir: Path) -> None:
    """json.loads raises RecursionError (not ValueError) on it: that ended the whole run."""
    script = ('python3 -c "print(\'[\' * 100000)" > "$BENCHWRIGHT_TRAJECTORY_FILE" && '
              'echo \'{"tool": "shell"}\' >> "$BENCHWRIGHT_TRAJECTORY_FILE"')
    ran = run(sandbox, scenario_dir, script)
    first, second = ran.result.outcome.trajectory
    assert first == {"turn": 1, "text": "[" * 2000} and second == {"turn": 1, "tool": "shell"}
    assert ran.badge["verdict"] == "pass"  # a trajectory the harness cannot parse is no violation


def test_a_huge_diff_is_capped(sandbox: Sandbox, scenario_dir: Path) -> None:
    script = ("for i in $(seq 1 20); do yes 'a line the agent added' | head -c 900000 > f$i.txt; done && "
              f"yes 'a line of a big file' | head -c {3 * BIG_FILE} > big.txt")
    ran = run(sandbox, scenario_dir, script)
    change = ran.result.change
    assert change is not None
    assert len(change.patch) < DIFF_CAP + 1000
    assert len(ran.files["agents/x1/diff.patch"]) < DIFF_CAP + 1000
    assert "the diff is cut here" in change.patch
    assert {f"f{i}.txt" for i in range(1, 21)} | {"big.txt"} <= set(change.paths())
    assert next(f for f in change.files if f.path == "big.txt").binary  # larger than BIG_FILE: no lines
    assert ran.badge["verdict"] == "fail"
    assert f"the change's diff is larger than the {DIFF_CAP:,} bytes the harness reads" in ran.badge["output"]


# -- git, and very deep trees ----------------------------------------------------------------------


@pytest.fixture
def host_repo(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    repo = tmp_path / "host-repo"
    repo.mkdir()
    git = ["git", "-C", str(repo), "-c", "user.name=h", "-c", "user.email=h@h"]
    subprocess.run([*git, "init", "-q"], check=True)
    (repo / "x").write_text("x\n")
    subprocess.run([*git, "add", "x"], check=True)
    subprocess.run([*git, "commit", "-qm", "host"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    yield repo, head


def test_a_git_link_to_a_host_repository_is_not_followed(sandbox: Sandbox, scenario_dir: Path,
                                                         host_repo: tuple[Path, str]) -> None:
    """A folder with a .git file naming a host repository: git read that repository (its HEAD
    landed in the diff) and left the folder's files out of the change."""
    repo, head = host_repo
    ran = run(sandbox, scenario_dir, f"mkdir vendored && echo 'key = 1' > vendored/config.py && "
                                     f"printf 'gitdir: {repo}/.git\\n' > vendored/.git")
    change = ran.result.change
    assert change is not None
    assert "vendored/config.py" in change.paths()
    assert head not in change.patch and head[:7] not in change.patch
    assert ran.badge["verdict"] == "fail"
    assert "vendored/.git was a file: a git link inside the workspace" in ran.badge["output"]


def test_a_tree_too_deep_for_recursion_and_for_git(sandbox: Sandbox, scenario_dir: Path) -> None:
    """2100 nested folders: shutil.rmtree and os.walk (the sandbox's chown) raised
    RecursionError and ended the whole run; git cannot open paths that long."""
    ran = run(sandbox, scenario_dir, "i=0; while [ $i -lt 2100 ]; do mkdir d && cd d || exit 1; "
                                     "i=$((i + 1)); done; echo deep > f.txt")
    assert ran.records["hidden-back"]["verdict"] == "pass"  # the scorers ran after it
    assert ran.badge["verdict"] == "fail"
    assert "path(s) too long for git, left out of the change: d/d/d/" in ran.badge["output"]


# -- the whole CLI, as root and as an unprivileged user ----------------------------------------

HOSTILE = """\
set -e
if [ "$BENCHWRIGHT_TURN" = 1 ]; then
  rm -rf tests && ln -s {host} tests
  ln -sf {host}/prompt.txt "$BENCHWRIGHT_PROMPT_FILE"
  echo locked > locked.txt && chmod 000 locked.txt
else
  ln -s {host}/secret.txt "$BENCHWRIGHT_RESPONSE_FILE"
  ln -s {trajectory} "$BENCHWRIGHT_TRAJECTORY_FILE"
  chmod 000 /work
fi
"""
NOBODY = 65534
HARNESSES = ["root", "unprivileged"] if os.geteuid() == 0 else ["unprivileged"]
"""As root, the unprivileged harness is the same run under uid 65534 (setpriv); a suite that
does not run as root is the unprivileged harness itself."""


def _chown(path: Path, uid: int) -> None:
    os.chown(path, uid, uid, follow_symlinks=False)
    for p in path.rglob("*"):
        os.chown(p, uid, uid, follow_symlinks=False)


def _harness_command(harness: str, site: Path) -> tuple[list[str], dict[str, str]]:
    """How to start benchwright as ``harness``: argv prefix, and the environment it needs."""
    src = Path(__file__).resolve().parents[2] / "src"
    paths = os.pathsep.join([str(src), str(site)])
    if harness == "root" or os.geteuid() != 0:
        return [sys.executable, "-m", "benchwright"], {"PYTHONPATH": paths}
    python = "/usr/bin/python3"  # the venv's interpreter may live under /root, out of reach
    argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", python]
    probe = subprocess.run([*argv, "-c", "import sys, benchwright.cli; print(sys.version_info[:2])"],
                           capture_output=True, text=True, env={"PYTHONPATH": paths, "PATH": "/usr/bin:/bin"},
                           cwd="/")
    if probe.returncode != 0 or probe.stdout.strip() != str(tuple(sys.version_info[:2])):
        pytest.fail("cannot run benchwright as an unprivileged user here (uid 65534 with "
                    f"{python} and PYTHONPATH={paths}): {probe.stderr.strip()[-500:] or probe.stdout}")
    return [*argv, "-m", "benchwright"], {"PYTHONPATH": paths}


@pytest.mark.slow
@pytest.mark.parametrize("harness", HARNESSES)
def test_a_hostile_agent_through_benchwright_run(harness: str) -> None:
    from benchwright.testing import OpenAIServer, Reply

    site = next(p for p in map(Path, sys.path) if p.name == "site-packages" and (p / "pydantic").is_dir())
    base = Path(tempfile.mkdtemp(prefix="bw-agent-traps-", dir="/tmp"))
    try:
        base.chmod(0o711)
        uid = NOBODY if harness == "unprivileged" and os.geteuid() == 0 else os.geteuid()
        host = base / "host"
        (host / "fixtures").mkdir(parents=True)
        (host / "test_hidden.py").write_text("HOST TEST FILE\n")
        (host / "fixtures" / "keep.txt").write_text("HOST FIXTURE\n")
        (host / "prompt.txt").write_text("HOST PROMPT\n")
        (host / "secret.txt").write_text(MARKER + "\n")
        (host / "secret.txt").chmod(0o600)
        shadow = _shadow_lines() if uid == 0 else []
        ws = base / "ws"
        proc = run_cli("init", ws)
        assert proc.returncode == 0, proc.stderr
        repo = ws / "scenarios" / "hostile-repo"
        (repo / "tests" / "fixtures").mkdir(parents=True)
        (repo / "tests" / "test_hidden.py").write_text("HIDDEN-TEST\n")
        (repo / "tests" / "fixtures" / "data.txt").write_text("HIDDEN-FIXTURE\n")
        (ws / "scenarios" / "hostile.yaml").write_text(
            SCENARIO.format(hidden='[tests/test_hidden.py, tests/fixtures]', turns='["first", "second"]')
            .replace("repo: repo", "repo: hostile-repo"))
        (ws / "agents" / "hostile.sh").write_text(HOSTILE.format(
            host=host, trajectory="/etc/shadow" if shadow else host / "secret.txt"))
        (ws / "configs" / "hostile.yaml").write_text(
            "version: 1\nscenarios: [scenarios/hostile.yaml]\nagents:\n"
            "  - {name: hostile, command: 'sh \"$BENCHWRIGHT_AGENT_DIR/hostile.sh\"', "
            "files: [agents/hostile.sh], network: false, timeout_s: 300}\n"
            "llm-judge: judgehost/judge-1\n")
        tmp = base / "tmp"
        tmp.mkdir(mode=0o711)
        _chown(base, uid)
        before = snapshot(host)
        argv, env = _harness_command(harness, site)
        verdict = "verdict: FAIL\ntask_completion: 1\ninstruction_adherence: 1\nefficiency: 1\nreasoning: traps\n"
        key = "sk-bw-hostile-1234"
        with OpenAIServer(answer=lambda body: Reply.answer(verdict), expected_key=key) as srv:
            settings = ws / "benchwright.yaml"
            settings.write_text(settings.read_text().replace(
                "providers:\n", f"providers:\n  judgehost:\n    type: openai-compatible\n"
                                f"    base_url: {srv.base_url}\n    api_key_env: BW_JUDGE_KEY\n", 1))
            proc = subprocess.run(
                [*argv, "run", "configs/hostile.yaml", "--run-id", "h"], cwd=ws, capture_output=True,
                text=True, timeout=600,
                env={"PATH": "/usr/bin:/bin", "HOME": str(ws), "TMPDIR": str(tmp), "COLUMNS": "200",
                     "BW_JUDGE_KEY": key, **env})
            asked = "".join(r.body.decode(errors="replace") for r in srv.requests)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert snapshot(host) == before
        run_folder = ws / "results" / "h"
        assert (run_folder / "records.jsonl").stat().st_uid == uid  # the harness ran as that user
        kept = "".join(p.read_text(errors="replace") for p in run_folder.rglob("*") if p.is_file())
        assert "agents/" in kept and asked  # the run's files were written, and the judge asked
        for text in (kept, asked):
            assert MARKER not in text
            for line in shadow:
                assert line not in text
        records = {r["criterion"]: r for r in map(json.loads, (run_folder / "records.jsonl").read_text().splitlines())}
        badge = records["run-badge"]
        assert badge["outcome"] != "infra_error", badge
        assert badge["verdict"] == "fail"
        for trap in (f"tests was a symbolic link to {str(host)!r}",
                     f".benchwright-agent/prompt.txt was a symbolic link to {str(host / 'prompt.txt')!r}",
                     ".benchwright-agent/response.txt is a symbolic link to",
                     ".benchwright-agent/trajectory.jsonl is a symbolic link to"):
            assert trap in badge["output"], badge["output"]
        assert "locked.txt" in badge["details"]["change"]["paths"]  # unreadable to git, given back
        assert "HIDDEN-TEST" in records["hidden-back"]["output"] and records["hidden-back"]["verdict"] == "pass"
        assert "What the harness refused" in asked
    finally:
        shutil.rmtree(base, ignore_errors=True)


PROXIED = """\
cat > "$BENCHWRIGHT_AGENT_DIR/probe.py" <<'PY'
import json, os, socket, urllib.error, urllib.request

def ask(key):
    body = json.dumps({{"model": "x", "messages": [{{"role": "user", "content": "hi"}}]}}).encode()
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions", data=body,
                                 headers={{"Authorization": "Bearer " + key, "Content-Type": "application/json"}})
    try:
        with urllib.request.urlopen(req, timeout=20) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except Exception as e:
        return type(e).__name__

print("legit", ask(os.environ["OPENAI_API_KEY"]))
print("forged", ask("bw-" + "A" * 43))
for host, port in (("127.0.0.1", {upstream}), ("1.1.1.1", 80)):
    try:
        socket.create_connection((host, port), timeout=3).close()
        print("reached", host, port)
    except OSError:
        print("blocked", host, port)
print("key-in-env", any({key!r} in v for v in os.environ.values()))
PY
python3 "$BENCHWRIGHT_AGENT_DIR/probe.py" > "$BENCHWRIGHT_RESPONSE_FILE" 2>&1
ln -s {host}/secret.txt "$HOME/leak"
ln -s / "$HOME/root"
mkfifo "$HOME/fifo"
mkdir -p "$HOME/.config/agent" && echo state > "$HOME/.config/agent/state.json"
"""


@pytest.mark.slow
@pytest.mark.parametrize("harness", HARNESSES)
def test_an_agent_reaches_its_model_only_through_benchwright(harness: str) -> None:
    """A command agent with ``model:`` and no network: its own key works on benchwright's
    endpoint (metered), a forged key does not, nothing else is reachable (not even the
    upstream on the host's loopback), the provider's key is nowhere in its environment or the
    results, and the links and FIFO it leaves in its home are not followed."""
    from benchwright.testing import OpenAIServer, Reply

    site = next(p for p in map(Path, sys.path) if p.name == "site-packages" and (p / "pydantic").is_dir())
    base = Path(tempfile.mkdtemp(prefix="bw-agent-proxy-", dir="/tmp"))
    key = "sk-upstream-hostile-9d1e-never-in-the-sandbox"
    try:
        base.chmod(0o711)
        uid = NOBODY if harness == "unprivileged" and os.geteuid() == 0 else os.geteuid()
        host = base / "host"
        host.mkdir()
        (host / "secret.txt").write_text(MARKER + "\n")
        (host / "secret.txt").chmod(0o600)
        ws = base / "ws"
        assert run_cli("init", ws).returncode == 0
        tmp = base / "tmp"
        tmp.mkdir(mode=0o711)
        argv, env = _harness_command(harness, site)
        with OpenAIServer(answer=lambda body: Reply.answer("hello", usage=(11, 3)), expected_key=key) as srv:
            (ws / "agents" / "probe.sh").write_text(PROXIED.format(upstream=srv.port, key=key, host=host))
            (ws / "configs" / "probe.yaml").write_text(
                "version: 1\nscenarios: [scenarios/parser-fixes.yaml]\nagents:\n"
                "  - {name: probe, command: 'sh \"$BENCHWRIGHT_AGENT_DIR/probe.sh\"', model: up/m, "
                "files: [agents/probe.sh], timeout_s: 120}\n")
            settings = ws / "benchwright.yaml"
            settings.write_text(settings.read_text().replace(
                "providers:\n", f"providers:\n  up:\n    type: openai-compatible\n"
                                f"    base_url: {srv.base_url}\n    api_key_env: BW_UP_KEY\n", 1))
            _chown(base, uid)
            proc = subprocess.run(
                [*argv, "run", "configs/probe.yaml", "--run-id", "p"], cwd=ws, capture_output=True,
                text=True, timeout=600,
                env={"PATH": "/usr/bin:/bin", "HOME": str(ws), "TMPDIR": str(tmp), "COLUMNS": "200",
                     "BW_UP_KEY": key, **env})
            upstream = srv.requests
        assert proc.returncode == 0, proc.stderr[-3000:]
        run_folder = ws / "results" / "p"
        records = {r["criterion"]: r for r in map(json.loads, (run_folder / "records.jsonl").read_text().splitlines())}
        badge = records["run-badge"]
        said = json.loads((run_folder / badge["details"]["files"]["responses"]).read_text())[0]
        assert "legit 200" in said and "forged 401" in said, said
        assert f"blocked 127.0.0.1 {srv.port}" in said and "blocked 1.1.1.1 80" in said
        assert "reached" not in said and "key-in-env False" in said
        assert len(upstream) == 1 and upstream[0].headers["authorization"] == f"Bearer {key}"
        model = badge["details"]["model"]
        assert (model["requests"], model["tokens_in"], model["tokens_out"]) == (1, 11, 3)
        home = json.loads((run_folder / badge["details"]["files"]["home"]).read_text())
        assert home["files"] == {".config/agent/state.json": "state\n"}
        assert {s.split(":")[0] for s in home["skipped"]} == {"leak", "root", "fifo"}
        assert badge["details"]["change"]["paths"] == []  # its home is not its change
        kept = "".join(p.read_text(errors="replace") for p in run_folder.rglob("*") if p.is_file())
        assert MARKER not in kept and key not in kept and key not in proc.stdout + proc.stderr
        assert not [p for p in tmp.iterdir() if p.name.startswith(("bw-home-", "bw-model-"))]  # cleaned up
    finally:
        shutil.rmtree(base, ignore_errors=True)
