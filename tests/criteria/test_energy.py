"""``energy`` through real runs: a loopback OpenAI-compatible server that reports usage, an energy
figure for one model and none for the other, codecarbon's offline tracker around the run; the
same answers again (from the cache) in another country; bad ``energy:`` settings; and the run
meter opening no network connection."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from benchwright.config.settings import EnergySettings
from benchwright.criteria.energy import RunMeter, power_model
from benchwright.testing import OpenAIServer, Reply
from tests.conftest import Runner, humaneval_canonical, read_jsonl

KEY = "sk-bw-energy-5e6f7a8b"
USAGE = (1000, 200)
FIGURE = {"wh_per_1k_input": 0.2, "wh_per_1k_output": 1.0}
GENERATION_WH = 1000 / 1000 * 0.2 + 200 / 1000 * 1.0


def _settings(ws: Path, base_url: str, country: str) -> None:
    (ws / "benchwright.yaml").write_text(
        "version: 1\ndefault_provider: fake\nproviders:\n"
        f"  fake:\n    type: openai-compatible\n    base_url: {base_url}\n"
        "    api_key_env: BW_FAKE_KEY\n"
        f"energy:\n  country: {country}\n  models:\n"
        f"    fake/fig-1: {{wh_per_1k_input: {FIGURE['wh_per_1k_input']}, "
        f"wh_per_1k_output: {FIGURE['wh_per_1k_output']}}}\n")


def _by(records: list[dict[str, Any]], criterion: str, model: str) -> list[dict[str, Any]]:
    return [r for r in records if r["criterion"] == criterion and r["model"] == model]


@pytest.mark.slow
def test_energy_per_sample_and_for_the_run_in_two_countries(tmp_path: Path, bw: Runner) -> None:
    canonical = humaneval_canonical()

    def answer(body: dict[str, Any]) -> Reply:
        return Reply.answer(canonical[body["prompt"]], usage=USAGE)

    ws = tmp_path / "ws"
    (ws / "configs").mkdir(parents=True)
    proc = bw("import", "humaneval", "--limit", "3", "--out", ws / "tasks" / "he.yaml")
    assert proc.returncode == 0, proc.stderr
    # energy first in the list: it is still evaluated after the others (it measures them)
    (ws / "configs" / "he.yaml").write_text(
        "version: 1\ntask_sources: [tasks/he.yaml]\ncriteria: [energy, unit-test, cpu-usage]\n"
        "llms:\n  - id: fake/fig-1\n  - id: fake/nofig-1\n")
    with OpenAIServer(answer=answer, expected_key=KEY) as srv:
        for run_id, country in (("deu", "DEU"), ("fra", "FRA")):
            _settings(ws, srv.base_url, country)
            proc = bw("run", "configs/he.yaml", "--run-id", run_id, cwd=ws, env={"BW_FAKE_KEY": KEY})
            assert proc.returncode == 0, proc.stderr
        assert srv.count == 6  # the second run was answered by the cache

    runs = {run_id: read_jsonl(ws / "results" / run_id / "records.jsonl") for run_id in ("deu", "fra")}
    watts = power_model().watts_per_cpu
    for run_id, records in runs.items():
        figured = _by(records, "energy", "fake/fig-1")
        unfigured = _by(records, "energy", "fake/nofig-1")
        assert len(figured) == len(unfigured) == 3
        for r in figured + unfigured:
            d = r["details"]
            assert r["unit"] == "Wh" and r["verdict"] is None
            assert d["compute_wh"] > 0 and d["co2_g"] > 0 and r["score"] > 0
            assert d["tests_cpu_ms"] > 0 and d["harness_cpu_ms"] >= 0  # the tests ran before it
            assert d["compute_wh"] == pytest.approx(d["cpu_ms"] / 1000 * watts / 3600)
            assert d["country"] == run_id.upper()
            assert d["co2_g"] == pytest.approx(r["score"] / 1000 * d["carbon_intensity_g_per_kwh"])
            assert "Wh, " in r["output"] and "gCO2e" in r["output"]
            sample = [x for x in records if x["execution_id"] == r["execution_id"]]
            assert sample[-1]["criterion"] == "energy", "energy is evaluated last"
        for r in figured:  # the generation's estimate: the provider's tokens x the figure, exactly
            d = r["details"]
            assert d["generation_wh"] == pytest.approx(GENERATION_WH, rel=1e-12)
            assert r["score"] == pytest.approx(d["compute_wh"] + GENERATION_WH, rel=1e-12)
            assert (d["tokens_in"], d["tokens_out"]) == USAGE and d["figure"] == "fake/fig-1"
        for r in unfigured:  # no figure: that part is n/a with the fix; the compute is recorded
            d = r["details"]
            assert d["generation_wh"] is None and r["score"] == d["compute_wh"]
            assert "energy.models in benchwright.yaml" in d["generation_missing"]
            assert "generation n/a" in r["output"] and "energy.models" in r["output"]

        summary = YAML(typ="safe").load(ws / "results" / run_id / "summary.yaml")
        assert summary["units"]["energy"] == "Wh"
        e = summary["energy"]
        assert e["wh"] > 0 and e["co2_g"] > 0 and e["duration_s"] > 0 and e["cpu_wh"] > 0
        assert e["country"] == run_id.upper() and "codecarbon" in e["method"]
        assert e["co2_g"] == pytest.approx(e["wh"] / 1000 * e["carbon_intensity_g_per_kwh"])
        assert e["process_cpu_s"] > 0 and e["process_wh"] > 0
        assert e["samples"]["n"] == 6 and e["samples"]["without_generation_figure"] == 3
        assert e["samples"]["generation_wh"] == pytest.approx(3 * GENERATION_WH)

    # the same Wh of generation (the cached answers' tokens) is another gCO2e in another country
    def generation_co2(run_id: str) -> dict[str, float]:
        return {r["task"]: r["details"]["generation_co2_g"] for r in _by(runs[run_id], "energy", "fake/fig-1")}

    deu, fra = generation_co2("deu"), generation_co2("fra")
    intensity = {run_id: _by(runs[run_id], "energy", "fake/fig-1")[0]["details"]["carbon_intensity_g_per_kwh"]
                 for run_id in runs}
    assert intensity["deu"] != intensity["fra"]
    for task, g in deu.items():
        assert g == pytest.approx(GENERATION_WH / 1000 * intensity["deu"])
        assert fra[task] == pytest.approx(GENERATION_WH / 1000 * intensity["fra"])
        assert fra[task] != pytest.approx(g)

    report = bw("report", "deu", cwd=ws)
    assert report.returncode == 0, report.stderr
    assert "energy: the run used" in report.stdout and "gCO2e" in report.stdout
    assert any(line.startswith("│ energy ") and "│ Wh " in line for line in report.stdout.splitlines())


@pytest.mark.parametrize(("energy", "said"), [
    ("  country: Germany\n", "not an ISO 3166-1 alpha-3 country code"),
    ("  country: ZZZ\n", "codecarbon has no carbon intensity for country 'ZZZ'"),
    ("  country: DEU\n  region: bavaria\n", "needs country USA or CAN"),
    ("  country: USA\n  region: atlantis\n", "no data for region 'atlantis'"),
    ("  models:\n    m1: {wh_per_1k_input: 0.1}\n", "both wh_per_1k_input and wh_per_1k_output"),
    ("  models:\n    m1: {wh_per_1k_tokens: -1}\n", "greater than or equal to 0"),
    ("  cpu_wats: 30\n", "unknown key 'cpu_wats'"),
])
def test_bad_energy_settings_name_the_file_and_the_key(tmp_path: Path, bw: Runner, energy: str,
                                                       said: str) -> None:
    ws = tmp_path / "ws"
    (ws / "configs").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text("version: 1\nenergy:\n" + energy)
    (ws / "configs" / "c.yaml").write_text(
        "version: 1\ntask_sources: [tasks/x.yaml]\ncriteria: [energy]\nllms:\n  - id: reference\n")
    proc = bw("run", "configs/c.yaml", cwd=ws)
    assert proc.returncode != 0
    err = " ".join(proc.stderr.split())
    assert "benchwright.yaml" in err and "energy" in err and said in err, proc.stderr


def test_energy_figures_match_like_prices() -> None:
    s = EnergySettings.model_validate({"models": {
        "openai/gpt-4o": {"wh_per_1k_tokens": 1.0},
        "mistral-small": {"wh_per_1k_tokens": 2.0},
        "llama-*": {"wh_per_1k_input": 3.0, "wh_per_1k_output": 4.0},
    }})
    found = s.figure("openai/gpt-4o")
    assert found is not None and found[0] == "openai/gpt-4o"
    found = s.figure("mistral/mistral-small-2503")
    assert found is not None and found[0] == "mistral-small"
    found = s.figure("ollama/llama-3.1-8b")
    assert found is not None and found[0] == "llama-*" and found[1].rates() == (3.0, 4.0)
    assert s.figure("openai/gpt-4.1") is None


def test_the_run_meter_measures_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """codecarbon's offline tracker opens no connection and resolves no name."""
    tried: list[str] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        tried.append(repr(args)[:200])
        raise OSError("no network in this test")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    meter = RunMeter(EnergySettings(country="DEU"))
    with meter:
        total = 0
        for i in range(2_000_000):
            total += i
    summary = meter.summary([])
    assert tried == []
    assert summary is not None and summary["wh"] > 0 and summary["co2_g"] > 0, summary
    assert summary["country"] == "DEU" and summary["samples"]["n"] == 0
