"""``benchwright serve-model TURNS.yaml``: the command in a subprocess, queried with the openai SDK;
a bad turns file is a user error naming the file."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import openai

import benchwright

SRC = str(Path(benchwright.__file__).resolve().parents[1])
ENV = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "200"}


def test_serve_model_answers_the_openai_sdk(tmp_path: Path) -> None:
    turns = tmp_path / "turns.yaml"
    turns.write_text("version: 1\nturns:\n  - text: Fixed.\n"
                     "    tool_calls: [{name: shell, arguments: {command: ls}}]\nusage: [7, 3]\n")
    proc = subprocess.Popen([sys.executable, "-m", "benchwright", "serve-model", str(turns),
                             "--port", "0"], env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        found = re.search(r"OPENAI_BASE_URL=(http://127\.0\.0\.1:\d+/v1)", "".join(lines))
        assert found, "".join(lines) + (proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        client = openai.OpenAI(base_url=found.group(1), api_key="none", max_retries=0, timeout=20)
        got = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "fix"}])
        message = got.choices[0].message
        assert message.content == "Fixed." and message.tool_calls is not None
        assert message.tool_calls[0].function.name == "shell"  # type: ignore[union-attr]
        assert got.usage is not None and got.usage.prompt_tokens == 7
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0 and "stopped" in out


def test_serve_model_bad_file_is_a_user_error(tmp_path: Path) -> None:
    turns = tmp_path / "turns.yaml"
    turns.write_text("version: 2\nturns: []\n")
    done = subprocess.run([sys.executable, "-m", "benchwright", "serve-model", str(turns)], env=ENV,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert f"{turns}:1: error: version: version must be 1" in done.stderr


def test_the_scripted_model_answers_loopback_host_names_only(tmp_path: Path) -> None:
    import httpx

    from benchwright.testing.script import ScriptedModel, ScriptedServer

    turns = tmp_path / "t.yaml"
    turns.write_text("version: 1\nturns:\n  - text: hi\n")
    with ScriptedServer(ScriptedModel.load(turns)) as srv:
        ask = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        ok = httpx.post(f"{srv.url}/v1/chat/completions", json=ask)
        assert ok.status_code == 200 and ok.json()["choices"][0]["message"]["content"] == "hi"
        rebound = httpx.post(f"{srv.url}/v1/chat/completions", json=ask, headers={"Host": "evil.example:8766"})
        assert rebound.status_code == 403


def test_ctrl_c_stops_it_even_when_its_parent_ignored_sigint(tmp_path: Path) -> None:
    """A parent that ignores SIGINT (a test runner's worker, a server's thread) passes that on to
    what it starts; a command in a session of its own takes Ctrl-C back (a run the server
    starts is cancelled with it). Before, serve-model then never stopped."""
    turns = tmp_path / "turns.yaml"
    turns.write_text("version: 1\nturns:\n  - text: Fixed.\n")
    proc = subprocess.Popen([sys.executable, "-m", "benchwright", "serve-model", str(turns), "--port", "0"],
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        assert proc.stdout is not None
        assert "serve-model" in proc.stdout.readline()
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=30)
        assert "benchwright serve-model: stopped" in out
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
