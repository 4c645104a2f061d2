"""``sonarqube`` through real runs against a loopback server speaking SonarQube's web API and a
stand-in scanner (:mod:`benchwright.testing.sonarqube`): not configured is n/a with the reason;
a clean and a flawed solution score apart, with findings at their lines; the token reaches no
file of the run; a failing or unreachable server, or an unset token, is infra_error and the run
goes on."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from benchwright.criteria.sonarqube import NOT_CONFIGURED, SonarQube, severity
from benchwright.testing import OpenAIServer, Reply
from benchwright.testing.sonarqube import SonarQubeServer, write_fake_scanner
from tests.conftest import Runner, humaneval_canonical, read_jsonl

KEY = "sk-bw-sonar-model-1a2b"
TOKEN = "squ_bw0123456789abcdef0123456789abcdef01"
FLAWS = "    try:\n        eval('0')\n    except:\n        pass\n"
"""Appended to a canonical solution (after its return: unreachable, still valid Python)."""


def _workspace(tmp_path: Path, bw: Runner, settings: str, llms: str, limit: int = 3) -> Path:
    ws = tmp_path / "ws"
    (ws / "configs").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text("version: 1\n" + settings)
    proc = bw("import", "humaneval", "--limit", str(limit), "--out", ws / "tasks" / "he.yaml")
    assert proc.returncode == 0, proc.stderr
    (ws / "configs" / "he.yaml").write_text(
        "version: 1\ntask_sources: [tasks/he.yaml]\ncriteria: [unit-test, sonarqube]\n"
        f"llms:\n{llms}")
    return ws


def _sonar(url: str, scanner: Path, extra: str = "") -> str:
    return (f"sonarqube:\n  url: {url}\n  token_env: BW_SONAR_TOKEN\n  scanner: {scanner}\n"
            f"  poll_s: 0.05\n  timeout_s: 60\n{extra}")


def _files_of(run: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(run.rglob("*")) if p.is_file())


def test_not_configured_is_na_with_the_reason(tmp_path: Path, bw: Runner) -> None:
    ws = _workspace(tmp_path, bw, "", "  - id: reference\n", limit=2)
    proc = bw("validate", "configs/he.yaml", cwd=ws)  # said before any run
    assert proc.returncode == 0 and "sonarqube will record n/a: no SonarQube server" in proc.stdout
    proc = bw("run", "configs/he.yaml", "--run-id", "r", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    assert "sonarqube will record n/a" in proc.stdout + proc.stderr
    records = [r for r in read_jsonl(ws / "results" / "r" / "records.jsonl") if r["criterion"] == "sonarqube"]
    assert len(records) == 2
    for r in records:
        assert r["verdict"] == "n/a" and r["score"] is None and r["output"] == NOT_CONFIGURED
        assert r["outcome"] == "pass"  # n/a is not an error: the tests passed
    report = bw("report", "r", cwd=ws)
    assert "sonarqube.url" in " ".join(report.stdout.split())


@pytest.mark.slow
def test_findings_from_the_server_score_a_flawed_solution_lower(tmp_path: Path, bw: Runner) -> None:
    canonical = humaneval_canonical()

    def answer(body: dict[str, Any]) -> Reply:
        solution = canonical[body["prompt"]]
        if body["model"] == "flawed-1":
            solution = solution.rstrip("\n") + "\n" + FLAWS
        return Reply.answer(solution, usage=(10, 10))

    scanner = write_fake_scanner(tmp_path / "sonar-scanner")
    with OpenAIServer(answer=answer, expected_key=KEY) as llm, SonarQubeServer(token=TOKEN) as sonar:
        ws = _workspace(tmp_path, bw, (
            "default_provider: fake\nproviders:\n"
            f"  fake:\n    type: openai-compatible\n    base_url: {llm.base_url}\n"
            "    api_key_env: BW_FAKE_KEY\n" + _sonar(sonar.url, scanner, "  delete_projects: true\n")),
            "  - id: fake/clean-1\n  - id: fake/flawed-1\n")
        proc = bw("run", "configs/he.yaml", "--run-id", "r", cwd=ws,
                  env={"BW_FAKE_KEY": KEY, "BW_SONAR_TOKEN": TOKEN})
        assert proc.returncode == 0, proc.stderr
        assert sonar.errors == []
        submitted = [r for r in sonar.requests if r.path == "/api/ce/submit"]
        polled = [r for r in sonar.requests if r.path == "/api/ce/task"]
        deleted = list(sonar.deleted)
        unauthorised = [r for r in sonar.requests
                        if r.path != "/api/server/version" and "authorization" not in r.headers]

    assert len(submitted) == 6 and len(polled) == 12  # one PENDING, then SUCCESS, per sample
    assert unauthorised == []
    records = read_jsonl(ws / "results" / "r" / "records.jsonl")
    sonar_records = {(r["model"], r["task"]): r for r in records if r["criterion"] == "sonarqube"}
    assert len(sonar_records) == 6
    assert sorted(deleted) == sorted(r["details"]["project"] for r in sonar_records.values())
    generations = {(g["model"], g["task"]): g for g in read_jsonl(ws / "results" / "r" / "generations.jsonl")}
    for (model, task), r in sonar_records.items():
        assert r["outcome"] == "pass" and r["error"] is None, r
        assert r["details"]["project"].startswith("benchwright-")
        if model == "fake/clean-1":
            assert r["score"] == 1.0 and r["output"] == "no findings"
            assert r["details"]["measures"]["code_smells"] == 0
            continue
        # the bare except (legacy CRITICAL, impact HIGH) and eval (impact HIGH): 1 / (1 + 1 + 1)
        assert r["score"] == pytest.approx(1 / 3)
        code_lines = generations[(model, task)]["code"].splitlines()
        found = {f["rule"]: f for f in r["details"]["findings"]}
        assert set(found) == {"python:S5754", "python:S1523"}
        assert "except:" in code_lines[found["python:S5754"]["line"] - 1]
        assert "eval(" in code_lines[found["python:S1523"]["line"] - 1]
        assert all(f["severity"] == "HIGH" and f["weight"] == 1.0 for f in found.values())
        assert r["line"] == found["python:S1523"]["line"]  # the first finding's line
        assert f"line {found['python:S5754']['line']}: python:S5754 [HIGH]" in r["output"]
        assert r["details"]["measures"]["vulnerabilities"] == 1
        assert r["details"]["types"] == {"CODE_SMELL": 1, "VULNERABILITY": 1}
    # what the server got is the extracted solution, nothing else
    sent = submitted[0].json
    assert isinstance(sent, dict) and list(sent["files"]) == ["solution.py"]
    assert TOKEN not in _files_of(ws / "results")
    assert TOKEN not in proc.stdout + proc.stderr


@pytest.mark.slow
def test_a_failing_server_an_unreachable_one_and_no_token_are_infra_errors(tmp_path: Path,
                                                                            bw: Runner) -> None:
    scanner = write_fake_scanner(tmp_path / "sonar-scanner")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{s.getsockname()[1]}"
    with SonarQubeServer(token=TOKEN, fail_status=500, fail_paths=("/api/issues/search",)) as sonar:
        ws = _workspace(tmp_path, bw, _sonar(sonar.url, scanner), "  - id: reference\n", limit=2)
        cases = {"failing": ({"BW_SONAR_TOKEN": TOKEN}, "answered 500 to /api/issues/search: An error"),
                 "no-token": ({"BW_SONAR_TOKEN": ""}, "BW_SONAR_TOKEN (sonarqube.token_env")}
        for run_id, (env, _) in cases.items():
            proc = bw("run", "configs/he.yaml", "--run-id", run_id, cwd=ws, env=env)
            assert proc.returncode == 0, proc.stderr
    (ws / "benchwright.yaml").write_text("version: 1\n" + _sonar(closed, scanner))
    proc = bw("run", "configs/he.yaml", "--run-id", "unreachable", cwd=ws, env={"BW_SONAR_TOKEN": TOKEN})
    assert proc.returncode == 0, proc.stderr
    cases["unreachable"] = ({}, "Error during SonarScanner execution")

    for run_id, (_, said) in cases.items():
        records = read_jsonl(ws / "results" / run_id / "records.jsonl")
        sonar_records = [r for r in records if r["criterion"] == "sonarqube"]
        assert len(sonar_records) == 2, run_id  # the run went on: every sample recorded
        for r in sonar_records:
            assert r["outcome"] == "infra_error" and r["score"] is None, r
            assert r["error"].startswith("infra_error: ") and said in r["error"], r["error"]
        tests = [r for r in records if r["criterion"] == "unit-test" and r["test_case"] is None]
        assert [r["verdict"] for r in tests] == ["pass", "pass"]  # the other criteria still ran
        assert TOKEN not in _files_of(ws / "results" / run_id)


def test_an_issue_weighs_its_highest_impact_else_its_legacy_severity() -> None:
    assert severity({"severity": "MINOR", "impacts": [
        {"softwareQuality": "MAINTAINABILITY", "severity": "LOW"},
        {"softwareQuality": "SECURITY", "severity": "MEDIUM"}]}) == "MEDIUM"
    assert severity({"severity": "BLOCKER"}) == "BLOCKER"
    assert severity({"severity": "INFO", "impacts": []}) == "INFO"
    weights = SonarQube.weights
    assert weights["BLOCKER"] > weights["HIGH"] == weights["CRITICAL"] > weights["MEDIUM"] == \
        weights["MAJOR"] > weights["LOW"] == weights["MINOR"] > weights["INFO"]
