"""The LLM-judge criteria: a judge model served by a loopback OpenAI-compatible server answers
well-formed, fenced, prose-wrapped and garbage YAML; each criterion records its score, the
garbage is recorded as unparseable, the judge's tokens and cost stay apart from the candidate's,
and a second run asks nobody (the judge's answers are cached like generations)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from benchwright.criteria.judge import NO_JUDGE, parse_scores
from benchwright.testing import OpenAIServer, Reply
from tests.conftest import Runner, humaneval_canonical, read_jsonl

KEY = "sk-bw-judge-9f8e7d6c5b"
JUDGE_CRITERIA = ["llm-judge-code-quality", "llm-judge-comment-quality", "llm-judge-solution-correctness"]

WELL_FORMED = "solution_correctness: 9\ncode_quality: 8\ncomment_quality: 6\nstyle_quality: 7\nexplanation: fine\n"
FENCED = "```yaml\nsolution_correctness: 10\ncode_quality: 7\ncomment_quality: 2\n```\n"
PROSE = ("Here is my evaluation of the candidate.\n\nsolution_correctness: 7\ncode_quality: 6\n"
         "comment_quality: 3\n\nOverall a decent answer, though the naming could be better.")
GARBAGE = "I am sorry, but I cannot evaluate this solution."
# which judge answer each HumanEval task gets (found by its entry point in the judge's prompt)
ANSWERS = {"has_close_elements": WELL_FORMED, "separate_paren_groups": FENCED,
           "truncate_number": PROSE, "below_zero": GARBAGE}
EXPECTED = {  # task -> (code_quality, comment_quality, solution_correctness)
    "HumanEval/0": (8.0, 6.0, 9.0), "HumanEval/1": (7.0, 2.0, 10.0),
    "HumanEval/2": (6.0, 3.0, 7.0), "HumanEval/3": (None, None, None),
}


@pytest.mark.parametrize(("text", "scores", "found"), [
    (WELL_FORMED, {"solution_correctness": 9, "code_quality": 8, "comment_quality": 6, "style_quality": 7}, "yaml"),
    (FENCED, {"solution_correctness": 10, "code_quality": 7, "comment_quality": 2}, "fenced"),
    ("Sure!\n```\ncode_quality: 5\n```\nThanks", {"code_quality": 5}, "fenced"),
    (PROSE, {"solution_correctness": 7, "code_quality": 6, "comment_quality": 3}, "embedded"),
    ("**Code quality**: 7/10\n**Solution correctness**: 9/10 - works", {"code_quality": 7, "solution_correctness": 9},
     "pairs"),
    ("evaluation:\n  code_quality: '8/10'\n  comment-quality: 4.5\n", {"code_quality": 8, "comment_quality": 4.5},
     "yaml"),
    ('My scores: {"code_quality": 8, "solution_correctness": 9}. Done.',
     {"code_quality": 8, "solution_correctness": 9}, "braces"),
    ("```json\n{\"code_quality\": 4}\n```", {"code_quality": 4}, "fenced"),
    (GARBAGE, {}, "none"),
    ("code_quality: excellent", {}, "none"),
])
def test_judge_answers_are_read_leniently(text: str, scores: dict[str, float], found: str) -> None:
    assert parse_scores(text) == (scores, found)


def _answer(canonical: dict[str, str]) -> Any:
    def answer(body: dict[str, Any]) -> Reply:
        if "prompt" in body:  # the candidate, asked to continue a HumanEval prompt
            return Reply.answer(canonical[body["prompt"]], usage=(1000, 200))
        asked = body["messages"][-1]["content"]
        entry = next(name for name in ANSWERS if f"def {name}(" in asked)
        return Reply.answer(ANSWERS[entry], usage=(500, 50))
    return answer


def _workspace(tmp_path: Path, bw: Runner, base_url: str, config: str) -> Path:
    ws = tmp_path / "ws"
    (ws / "configs").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text(
        "version: 1\ndefault_provider: fake\nproviders:\n"
        f"  fake:\n    type: openai-compatible\n    base_url: {base_url}\n"
        "    api_key_env: BW_FAKE_KEY\n"
        "    prices:\n      cand-1: {input: 2.0, output: 10.0}\n      judge-1: {input: 1.0, output: 2.0}\n")
    proc = bw("import", "humaneval", "--limit", "4", "--out", ws / "tasks" / "he.yaml")
    assert proc.returncode == 0, proc.stderr
    (ws / "configs" / "he.yaml").write_text(config)
    return ws


CONFIG = ("version: 1\ntask_sources: [tasks/he.yaml]\n"
          "criteria: [unit-test, token-count, cost, " + ", ".join(JUDGE_CRITERIA) + "]\n"
          "llm-judge: fake/judge-1\nllms: [fake/cand-1]\n")


@pytest.mark.slow
def test_judge_scores_each_criterion_and_keeps_its_cost_apart(tmp_path: Path, bw: Runner) -> None:
    with OpenAIServer(answer=_answer(humaneval_canonical()), expected_key=KEY) as srv:
        ws = _workspace(tmp_path, bw, srv.base_url, CONFIG)
        env = {"BW_FAKE_KEY": KEY}
        proc = bw("run", "configs/he.yaml", "--run-id", "first", cwd=ws, env=env)
        assert proc.returncode == 0, proc.stderr
        # one candidate request and ONE judge request per task: the three criteria share it
        assert srv.count == 8
        judged = [r.json for r in srv.requests if "messages" in (r.json or {})]
        assert len(judged) == 4
        for body in judged:  # the default question carries the task and the solution
            asked = body["messages"][-1]["content"]
            assert "Respond with YAML only" in asked and "return " in asked
            assert body["model"] == "judge-1" and body["temperature"] == 0.0
        proc = bw("run", "configs/he.yaml", "--run-id", "again", cwd=ws, env=env)
        assert proc.returncode == 0, proc.stderr
        assert srv.count == 8  # the candidate's and the judge's answers both came from the cache

    for run_id, cached in (("first", False), ("again", True)):
        run = ws / "results" / run_id
        records = read_jsonl(run / "records.jsonl")
        for r in records:  # the judge never changes a sample's outcome
            assert r["outcome"] == "pass", r
        for task, expected in EXPECTED.items():
            got = {r["criterion"]: r for r in records if r["task"] == task and r["criterion"] in JUDGE_CRITERIA}
            assert sorted(got) == sorted(JUDGE_CRITERIA)
            scores = tuple(got[c]["score"] for c in JUDGE_CRITERIA)
            assert scores == expected, (task, scores)
            for c in JUDGE_CRITERIA:
                assert got[c]["unit"] == "0-10"
                assert got[c]["details"]["judge"]["model"] == "fake/judge-1"
                assert got[c]["details"]["judge"]["cached"] is cached
            if expected[0] is None:  # garbage: recorded as such, with the judge's words
                for c in JUDGE_CRITERIA:
                    assert got[c]["status"] == "unparseable"
                    assert "no usable score" in got[c]["error"]
                    assert got[c]["output"] == GARBAGE
            # the judge's cost is on exactly one record of the sample
            paid = [c for c in JUDGE_CRITERIA if got[c]["details"]["judge"]["paid"]]
            assert len(paid) == 1
            usage = got[paid[0]]["details"]["judge"]
            assert (usage["tokens_in"], usage["tokens_out"]) == (500, 50)
            assert usage["cost_usd"] == pytest.approx(500 * 1e-6 + 50 * 2e-6)
        # the candidate's own tokens and cost do not include the judge's
        for r in records:
            if r["criterion"] == "token-count":
                assert r["score"] == 1200
            if r["criterion"] == "cost":
                assert r["score"] == pytest.approx(0.004)

        summary = yaml.safe_load((run / "summary.yaml").read_text())
        model = summary["by_model"]["fake/cand-1"]
        assert model["criteria"]["llm-judge-code-quality"]["mean"] == pytest.approx(7.0)
        assert model["criteria"]["llm-judge-code-quality"]["unscored"] == 1
        assert model["criteria"]["llm-judge-solution-correctness"]["unit"] == "0-10"
        assert model["criteria"]["cost"]["mean"] == pytest.approx(0.004)
        judge = model["judge"]
        assert (judge["answers"], judge["tokens_in"], judge["tokens_out"]) == (4, 2000, 200)
        assert judge["cost_usd"] == pytest.approx(4 * 0.0006)
        assert judge.get("paid_this_run_usd", 0) == (0 if cached else pytest.approx(4 * 0.0006))

    proc = bw("report", "first", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    for c in JUDGE_CRITERIA:
        assert c in proc.stdout
    assert "judge fake/judge-1 on fake/cand-1: 4 answers" in proc.stdout
    assert "no usable score" in proc.stdout


@pytest.mark.slow
def test_a_task_s_own_judge_prompt_is_asked(tmp_path: Path, bw: Runner) -> None:
    canonical = humaneval_canonical()

    def answer(body: dict[str, Any]) -> Reply:
        if "prompt" in body:
            return Reply.answer(canonical[body["prompt"]], usage=(10, 10))
        return Reply.answer("code_quality: 4\n", usage=(10, 10))

    with OpenAIServer(answer=answer, expected_key=KEY) as srv:
        ws = _workspace(tmp_path, bw, srv.base_url, CONFIG)
        source = ws / "tasks" / "he.yaml"
        data = yaml.safe_load(source.read_text())
        data["tasks"] = data["tasks"][:1]
        data["tasks"][0]["llm_judge_prompt"] = ("Judge task ${task.name} in ${language}:\n${solution_code}\n"
                                                "Answer with code_quality only.")
        source.write_text(yaml.safe_dump(data, sort_keys=False))
        proc = bw("run", "configs/he.yaml", cwd=ws, env={"BW_FAKE_KEY": KEY})
        assert proc.returncode == 0, proc.stderr
        asked = [r.json["messages"][-1]["content"] for r in srv.requests if "messages" in (r.json or {})]
    assert len(asked) == 1
    assert asked[0].startswith("Judge task HumanEval/0 in python:\n")
    assert "def has_close_elements(" in asked[0]
    records = read_jsonl(next((ws / "results").iterdir()) / "records.jsonl")
    by = {r["criterion"]: r for r in records if r["criterion"] in JUDGE_CRITERIA}
    assert by["llm-judge-code-quality"]["score"] == 4
    # the task's own question asks for no comment_quality: said so, with the fix
    assert by["llm-judge-comment-quality"]["score"] is None
    assert "no comment_quality" in by["llm-judge-comment-quality"]["error"]
    assert "llm_judge_prompt" in by["llm-judge-comment-quality"]["error"]


@pytest.mark.slow
def test_without_a_judge_model_the_criteria_say_so(workspace: Path, bw: Runner) -> None:
    config = workspace / "configs" / "nojudge.yaml"
    config.write_text("version: 1\ntask_sources: [tasks/basics.yaml]\nlanguages: [python]\n"
                      "criteria: [unit-test, llm-judge-code-quality]\nllms: [reference]\n")
    proc = bw("validate", config, cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert "llm-judge" in proc.stdout + proc.stderr
    proc = bw("run", config, "--run-id", "nj", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(workspace / "results" / "nj" / "records.jsonl")
    judged = [r for r in records if r["criterion"] == "llm-judge-code-quality"]
    assert judged and all(r["verdict"] == "n/a" and r["output"] == NO_JUDGE for r in judged)
    assert all(r["outcome"] == "pass" for r in records)
    # with no criteria list, the judge criteria are skipped (with why) rather than run
    config.write_text("version: 1\ntask_sources: [tasks/basics.yaml]\nlanguages: [python]\n"
                      "difficulties: [easy]\nllms: [reference]\n")
    proc = bw("run", config, "--run-id", "all", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    summary = yaml.safe_load((workspace / "results" / "all" / "summary.yaml").read_text())
    assert summary["skipped_criteria"]["llm-judge-code-quality"] == NO_JUDGE


@pytest.mark.slow
def test_a_judge_that_fails_makes_an_infra_error_and_the_run_goes_on(tmp_path: Path, bw: Runner) -> None:
    canonical = humaneval_canonical()

    def answer(body: dict[str, Any]) -> Reply:
        if "prompt" in body:
            return Reply.answer(canonical[body["prompt"]])
        return Reply.error(400, "the judge refuses")

    with OpenAIServer(answer=answer, expected_key=KEY) as srv:
        ws = _workspace(tmp_path, bw, srv.base_url, CONFIG)
        proc = bw("run", "configs/he.yaml", "--run-id", "down", cwd=ws, env={"BW_FAKE_KEY": KEY})
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(ws / "results" / "down" / "records.jsonl")
    assert {r["task"] for r in records} == set(EXPECTED)
    assert all(r["outcome"] == "infra_error" for r in records)
    judged = [r for r in records if r["criterion"] == "llm-judge-code-quality"]
    assert all("the judge model fake/judge-1 did not answer" in r["error"] for r in judged)
    assert KEY not in (ws / "results" / "down" / "records.jsonl").read_text()
