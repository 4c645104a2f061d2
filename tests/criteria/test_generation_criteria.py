"""``cost`` and ``latency`` through a real run: a loopback OpenAI-compatible server that reports
usage and answers slowly, a price in the settings, then the same run again from the cache; and
a model with no price, whose cost is ``n/a`` with the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from benchwright.testing import OpenAIServer, Reply
from tests.conftest import Runner, humaneval_canonical, read_jsonl

KEY = "sk-bw-cost-1b2c3d4e5f"
DELAY_S = 0.15


def _workspace(tmp_path: Path, bw: Runner, base_url: str) -> Path:
    ws = tmp_path / "ws"
    (ws / "configs").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text(
        "version: 1\ndefault_provider: fake\nproviders:\n"
        f"  fake:\n    type: openai-compatible\n    base_url: {base_url}\n"
        "    api_key_env: BW_FAKE_KEY\n"
        "    prices:\n      priced-1: {input: 2.0, output: 10.0}\n")
    proc = bw("import", "humaneval", "--limit", "3", "--out", ws / "tasks" / "he.yaml")
    assert proc.returncode == 0, proc.stderr
    (ws / "configs" / "he.yaml").write_text(
        "version: 1\ntask_sources: [tasks/he.yaml]\ncriteria: [unit-test, cost, latency]\n"
        "llms:\n  - id: fake/priced-1\n  - id: fake/unpriced-1\n")
    return ws


def _by(records: list[dict[str, Any]], criterion: str, model: str) -> list[dict[str, Any]]:
    return [r for r in records if r["criterion"] == criterion and r["model"] == model]


@pytest.mark.slow
def test_cost_and_latency_from_the_generation_and_from_the_cache(tmp_path: Path, bw: Runner) -> None:
    canonical = humaneval_canonical()

    def answer(body: dict[str, Any]) -> Reply:
        return Reply.answer(canonical[body["prompt"]], usage=(1000, 200))

    with OpenAIServer(answer=answer, delay_s=DELAY_S, expected_key=KEY) as srv:
        ws = _workspace(tmp_path, bw, srv.base_url)
        env = {"BW_FAKE_KEY": KEY}
        for run_id in ("first", "again"):
            proc = bw("run", "configs/he.yaml", "--run-id", run_id, cwd=ws, env=env)
            assert proc.returncode == 0, proc.stderr
        assert srv.count == 6  # the second run was answered by the cache

    first = read_jsonl(ws / "results" / "first" / "records.jsonl")
    again = read_jsonl(ws / "results" / "again" / "records.jsonl")
    for records, cached in ((first, False), (again, True)):
        costs = _by(records, "cost", "fake/priced-1")
        assert len(costs) == 3
        for r in costs:  # 1000 tokens in at $2/M, 200 out at $10/M
            assert r["unit"] == "USD"
            assert r["score"] == pytest.approx(0.004)
            assert r["details"]["paid_this_run"] == (0.0 if cached else pytest.approx(0.004))
        unpriced = _by(records, "cost", "fake/unpriced-1")
        assert [r["verdict"] for r in unpriced] == ["n/a"] * 3
        assert all(r["score"] is None and "prices" in r["output"] for r in unpriced)
        latencies = _by(records, "latency", "fake/priced-1")
        assert len(latencies) == 3
        assert all(r["unit"] == "ms" and r["score"] >= DELAY_S * 1000 for r in latencies)
        assert all(r["details"]["cached"] is cached for r in latencies)
    # a cached answer keeps the latency it had when it was asked
    assert sorted(r["score"] for r in _by(again, "latency", "fake/priced-1")) == \
        sorted(r["score"] for r in _by(first, "latency", "fake/priced-1"))

    summary = YAML(typ="safe").load(ws / "results" / "first" / "summary.yaml")
    assert summary["units"]["cost"] == "USD" and summary["units"]["latency"] == "ms"
    report = bw("report", "first", cwd=ws)
    assert report.returncode == 0, report.stderr
    lines = report.stdout.splitlines()

    def cells(line: str) -> list[str]:
        return [c.strip() for c in line.strip("│┃").split("│" if "│" in line else "┃")]

    header = cells(next(line for line in lines if line.startswith("┃ Criteria")))
    cost_row = dict(zip(header, cells(next(line for line in lines if line.startswith("│ cost "))),
                        strict=True))
    assert cost_row == {"Criteria": "cost", "Unit": "USD", "fake/priced-1": "0.004",
                        "fake/unpriced-1": "\u2013"}
    assert any(line.startswith("│ latency ") and "│ ms " in line for line in report.stdout.splitlines())
