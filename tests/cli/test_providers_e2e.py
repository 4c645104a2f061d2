"""Real providers end to end: HumanEval through a loopback OpenAI-compatible server that fails
some requests, the cache on a rerun, an always-failing task, and no key anywhere in results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchwright.testing import OpenAIServer, Reply
from tests.conftest import Runner, humaneval_canonical, read_jsonl

KEY = "sk-bw-e2e-7f3c9a1d5e8b2f4a6c0d"


def _workspace(tmp_path: Path, bw: Runner, base_url: str) -> Path:
    ws = tmp_path / "ws"
    (ws / "configs").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text(
        "version: 1\ndefault_provider: fake\nproviders:\n"
        f"  fake:\n    type: openai-compatible\n    base_url: {base_url}\n"
        "    api_key_env: BW_FAKE_KEY\n    concurrency: 16\n    backoff_s: 0.01\n"
        "    max_backoff_s: 0.05\n    max_retries: 3\n")
    proc = bw("import", "humaneval", "--out", ws / "tasks" / "humaneval.yaml")
    assert proc.returncode == 0, proc.stderr
    (ws / "configs" / "he.yaml").write_text(
        "version: 1\ntask_sources: [tasks/humaneval.yaml]\ncriteria: [unit-test, token-count]\n"
        "llms:\n  - id: fake/coder-1\n    temperature: 0\n    max_tokens: 512\n")
    return ws


class Flaky:
    """Correct completions; the first attempt at every third prompt fails (429 or 503 or a drop)."""

    def __init__(self, always_fail: str | None = None) -> None:
        self.canonical = humaneval_canonical()
        self.seen: dict[str, int] = {}
        self.always_fail = always_fail

    def __call__(self, body: dict[str, Any]) -> Reply:
        prompt = body["prompt"]
        n = self.seen[prompt] = self.seen.get(prompt, 0) + 1
        if self.always_fail is not None and prompt == self.always_fail:
            return Reply.error(500, "internal error")
        index = list(self.canonical).index(prompt)
        if n == 1 and index % 3 == 0:
            return [Reply.error(429, "slow down", headers={"Retry-After": "0.01"}),
                    Reply.error(503, "overloaded"), Reply.drop()][index // 3 % 3]
        return Reply.answer(self.canonical[prompt], usage=(len(prompt) // 4, 30))


def _scan_for_key(*folders: Path) -> list[Path]:
    hits = []
    for folder in folders:
        for p in folder.rglob("*"):
            if p.is_file() and KEY.encode() in p.read_bytes():
                hits.append(p)
    return hits


@pytest.mark.slow
def test_humaneval_through_a_flaky_server_then_from_the_cache(tmp_path: Path, bw: Runner) -> None:
    flaky = Flaky()
    with OpenAIServer(answer=flaky, delay_s=0.02, expected_key=KEY) as srv:
        ws = _workspace(tmp_path, bw, srv.base_url)
        env = {"BW_FAKE_KEY": KEY}
        first = bw("run", "configs/he.yaml", "--run-id", "first", cwd=ws, env=env)
        assert first.returncode == 0, first.stderr
        sent = srv.count
        assert sent > 164  # the failed first attempts were retried
        records = read_jsonl(ws / "results" / "first" / "records.jsonl")
        outcomes = {r["task"]: r["outcome"] for r in records}
        assert len(outcomes) == 164 and set(outcomes.values()) == {"pass"}
        gens = read_jsonl(ws / "results" / "first" / "generations.jsonl")
        assert all(not g["cached"] and g["tokens_in"] and not g["tokens_estimated"] for g in gens)
        assert max(g["attempts"] for g in gens) == 2
        assert all(g["messages"] == [] and g["mode"] == "complete" for g in gens)
        body = srv.requests[-1].json
        assert body is not None and body["model"] == "coder-1" and body["temperature"] == 0

        again = bw("run", "configs/he.yaml", "--run-id", "again", cwd=ws, env=env)
        assert again.returncode == 0, again.stderr
        assert srv.count == sent, "the cached rerun sent requests"
        regens = read_jsonl(ws / "results" / "again" / "generations.jsonl")
        assert all(g["cached"] and g["attempts"] == 0 for g in regens)
        original = {g["execution_id"]: g["latency_ms"] for g in gens}
        assert all(g["latency_ms"] == original[g["execution_id"]] for g in regens)
        assert sum(g["replay_ms"] for g in regens) * 10 < sum(original.values())
        outcomes = {r["task"]: r["outcome"] for r in read_jsonl(ws / "results" / "again" / "records.jsonl")}
        assert set(outcomes.values()) == {"pass"}

        stats = bw("cache", "stats", "--format", "json", cwd=ws)
        assert json.loads(stats.stdout)["entries"] == 164

        refresh = ws / "configs" / "refresh.yaml"
        refresh.write_text((ws / "configs" / "he.yaml").read_text() + "cache: refresh\n")
        assert bw("run", "configs/refresh.yaml", cwd=ws, env=env).returncode == 0
        assert srv.count == sent + 164

    assert _scan_for_key(ws / "results", ws / ".benchwright") == []


@pytest.mark.slow
def test_a_task_that_always_fails_is_infra_error_and_the_run_goes_on(tmp_path: Path, bw: Runner) -> None:
    doomed = next(iter(humaneval_canonical()))  # HumanEval/0
    flaky = Flaky(always_fail=doomed)
    with OpenAIServer(answer=flaky, expected_key=KEY) as srv:
        ws = _workspace(tmp_path, bw, srv.base_url)
        env = {"BW_FAKE_KEY": KEY}
        proc = bw("run", "configs/he.yaml", "--run-id", "r", cwd=ws, env=env)
        assert proc.returncode == 0, proc.stderr
        records = read_jsonl(ws / "results" / "r" / "records.jsonl")
        outcomes = {r["task"]: r["outcome"] for r in records}
        assert outcomes.pop("HumanEval/0") == "infra_error"
        assert len(outcomes) == 163 and set(outcomes.values()) == {"pass"}
        (bad,) = [r for r in records if r["task"] == "HumanEval/0"]
        assert "gave up after 4 attempts" in bad["error"] and "500" in bad["error"]
        assert flaky.seen[doomed] == 4
        assert "infra_error" in proc.stdout

        flaky.always_fail = None  # the service recovers
        before = srv.count
        retry = bw("run", "--resume", "r", "--retry-errors", cwd=ws, env=env)
        assert retry.returncode == 0, retry.stderr
        assert srv.count == before + 1  # only the failed sample was asked again
        outcomes = {r["task"]: r["outcome"] for r in read_jsonl(ws / "results" / "r" / "records.jsonl")}
        assert len(outcomes) == 164 and set(outcomes.values()) == {"pass"}


def test_wrong_key_fails_every_request_without_leaking_it(tmp_path: Path, bw: Runner) -> None:
    with OpenAIServer(answer=lambda body: Reply.answer("x"), expected_key="another-key") as srv:
        ws = _workspace(tmp_path, bw, srv.base_url)
        cfg = ws / "configs" / "few.yaml"
        cfg.write_text("version: 1\ntask_sources: [tasks/humaneval.yaml]\ncriteria: [unit-test]\n"
                       "llms: [fake/coder-1]\n")
        tasks = ws / "tasks" / "humaneval.yaml"
        from ruamel.yaml import YAML

        yaml = YAML()
        data = yaml.load(tasks.read_text())
        data["tasks"] = data["tasks"][:3]
        with tasks.open("w") as f:
            yaml.dump(data, f)
        proc = bw("run", "configs/few.yaml", cwd=ws, env={"BW_FAKE_KEY": KEY})
        assert proc.returncode == 0, proc.stderr
        assert srv.count == 3  # 401 is not retried
        records = [r for p in (ws / "results").iterdir() for r in read_jsonl(p / "records.jsonl")]
        assert {r["outcome"] for r in records} == {"infra_error"}
        assert all("401" in r["error"] and "BW_FAKE_KEY" in r["error"] for r in records)
        assert KEY not in proc.stdout + proc.stderr
    assert _scan_for_key(ws / "results", ws / ".benchwright") == []


def test_missing_key_and_unreachable_local_server_stop_before_any_work(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path, bw, "https://api.example.invalid/v1")
    proc = bw("run", "configs/he.yaml", cwd=ws, env={"BW_FAKE_KEY": ""})
    assert proc.returncode == 2 and "BW_FAKE_KEY" in proc.stderr
    assert not (ws / "results").exists()

    (ws / "benchwright.yaml").write_text(
        "version: 1\nproviders:\n  local:\n    type: openai-compatible\n"
        "    base_url: http://127.0.0.1:9/v1\n")
    (ws / "configs" / "local.yaml").write_text(
        "version: 1\ntask_sources: [tasks/humaneval.yaml]\nllms: [local/qwen]\n")
    proc = bw("run", "configs/local.yaml", cwd=ws)
    assert proc.returncode == 2 and "http://127.0.0.1:9/v1" in proc.stderr
    assert not (ws / "results").exists()


def test_completion_tasks_asked_of_a_chat_model(tmp_path: Path, bw: Runner) -> None:
    canonical = humaneval_canonical()
    prompts = list(canonical)[:12]

    def chat(body: dict[str, Any]) -> Reply:
        asked = body["messages"][-1]["content"]
        prompt = next(p for p in prompts if p.strip() in asked)
        index = prompts.index(prompt)
        full = prompt + canonical[prompt]
        if index % 2:  # only the function, without the prompt's imports
            full = full[full.index("def "):]
        return Reply.answer(f"Here you go:\n```python\n{full}```\nDone.")

    with OpenAIServer(answer=chat, expected_key=KEY) as srv:
        ws = _workspace(tmp_path, bw, srv.base_url)
        tasks = ws / "tasks" / "humaneval.yaml"
        from ruamel.yaml import YAML

        yaml = YAML()
        data = yaml.load(tasks.read_text())
        data["tasks"] = data["tasks"][:12]
        with tasks.open("w") as f:
            yaml.dump(data, f)
        (ws / "configs" / "chat.yaml").write_text(
            "version: 1\ntask_sources: [tasks/humaneval.yaml]\ncriteria: [unit-test]\n"
            "llms:\n  - id: fake/chatty\n    api: chat\n    system_prompt: You write Python.\n")
        proc = bw("run", "configs/chat.yaml", "--run-id", "chat", cwd=ws, env={"BW_FAKE_KEY": KEY})
        assert proc.returncode == 0, proc.stderr
        assert all(r.path == "/v1/chat/completions" for r in srv.requests)
        first = srv.requests[0].json
        assert first is not None and first["messages"][0] == {"role": "system", "content": "You write Python."}
    outcomes = {r["task"]: r["outcome"] for r in read_jsonl(ws / "results" / "chat" / "records.jsonl")}
    assert len(outcomes) == 12 and set(outcomes.values()) == {"pass"}, outcomes
    gens = read_jsonl(ws / "results" / "chat" / "generations.jsonl")
    assert all(g["raw"].startswith("Here you go") and g["mode"] == "instruct" for g in gens)
