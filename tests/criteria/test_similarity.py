"""``similarity-chrf`` (sacrebleu) and ``codebleu``: the golden solution itself scores 1, a
paraphrase (renamed variables) more than a different algorithm, in Python and Java; a completion
is compared without the prompt both texts share; a task without a golden solution is ``n/a``
with the reason; and a real run with the ``reference`` model records both, with their units,
beside ``complexity``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from benchwright.config.model import Limits
from benchwright.criteria.base import Criterion, Measurement, SampleContext
from benchwright.criteria.similarity import CodeBleu, SimilarityChrf, codebleu, comparison
from benchwright.registry import registry
from benchwright.results.record import Generation
from benchwright.sandbox.rlimit import RlimitSandbox
from benchwright.task.model import LanguageSpec, Task, TaskBody
from benchwright.task.render import render_task
from tests.conftest import Runner, only_run, read_jsonl

GOLDEN = {
    "python": (
        "def count_vowels(text):\n"
        "    count = 0\n"
        "    for ch in text.lower():\n"
        "        if ch in \"aeiou\":\n"
        "            count += 1\n"
        "    return count\n"),
    "java": (
        "public class Solution {\n"
        "    public static int countVowels(String text) {\n"
        "        int count = 0;\n"
        "        for (char ch : text.toLowerCase().toCharArray()) {\n"
        "            if (\"aeiou\".indexOf(ch) >= 0) {\n"
        "                count++;\n"
        "            }\n"
        "        }\n"
        "        return count;\n"
        "    }\n"
        "}\n"),
}

# the golden solution with other names
PARAPHRASE = {
    "python": (
        "def count_vowels(s):\n"
        "    total = 0\n"
        "    for c in s.lower():\n"
        "        if c in \"aeiou\":\n"
        "            total += 1\n"
        "    return total\n"),
    "java": (
        "public class Solution {\n"
        "    public static int countVowels(String s) {\n"
        "        int total = 0;\n"
        "        for (char c : s.toLowerCase().toCharArray()) {\n"
        "            if (\"aeiou\".indexOf(c) >= 0) {\n"
        "                total++;\n"
        "            }\n"
        "        }\n"
        "        return total;\n"
        "    }\n"
        "}\n"),
}

# a correct solution by another algorithm
FAR = {
    "python": (
        "import re\n\n\n"
        "def count_vowels(text):\n"
        "    return len(re.findall(r\"[aeiouAEIOU]\", text))\n"),
    "java": (
        "import java.util.regex.Matcher;\n"
        "import java.util.regex.Pattern;\n\n"
        "public class Solution {\n"
        "    public static int countVowels(String text) {\n"
        "        Matcher m = Pattern.compile(\"(?i)[aeiou]\").matcher(text);\n"
        "        int n = 0;\n"
        "        while (m.find()) n++;\n"
        "        return n;\n"
        "    }\n"
        "}\n"),
}


def _context(task: Task, language: str, code: str) -> SampleContext:
    gen = Generation(run_id="r", execution_id="e", task_source="s", task=task.name,
                     language=language, model="m", provider="p", sample=0, code=code)
    return SampleContext(task=task, language=language, rendered=render_task(task, language, {}),
                         generation=gen, code=code, lang=None, sandbox=RlimitSandbox(),
                         limits=Limits())


def _measure(criterion: Criterion, language: str, code: str,
             golden: dict[str, str] | None = None) -> Measurement:
    task = Task(name="count-vowels", languages=[language],
                golden_solution=GOLDEN if golden is None else golden)
    [m] = criterion.evaluate(_context(task, language, code))
    assert m.unit in (None, "score")
    return m


def _score(criterion: Criterion, language: str, code: str) -> float:
    m = _measure(criterion, language, code)
    assert m.score is not None and m.verdict is None, m
    return m.score


def test_both_are_registered_with_unit_direction_tool_and_languages() -> None:
    chrf = registry.create("criterion", "similarity-chrf")
    cb = registry.create("criterion", "codebleu")
    assert isinstance(chrf, SimilarityChrf) and isinstance(cb, CodeBleu)
    for criterion in (chrf, cb):
        assert (criterion.unit, criterion.higher_is_better) == ("score", True)
        assert criterion.missing() is None
    assert chrf.tool.startswith("sacrebleu 2.") and cb.tool.startswith("codebleu 0.")
    assert chrf.languages == ()  # characters: any language
    assert set(cb.languages) == {"python", "java", "javascript", "c", "cpp", "go", "rust"}
    task = Task(name="t", languages=["bash", "python"], golden_solution={"bash": "echo 1"})
    assert not cb.applies(task, "bash", render_task(task, "bash", {}))
    assert cb.applies(task, "python", render_task(task, "python", {}))
    assert chrf.applies(task, "bash", render_task(task, "bash", {}))


@pytest.mark.parametrize("language", ["python", "java"])
@pytest.mark.parametrize("criterion", [SimilarityChrf(), CodeBleu()], ids=lambda c: c.name)
def test_the_golden_solution_scores_1_and_a_paraphrase_more_than_another_algorithm(
        criterion: Criterion, language: str) -> None:
    same = _score(criterion, language, GOLDEN[language])
    # whitespace around the code does not count (an answer's fence, a trailing newline)
    padded = _score(criterion, language, "\n" + GOLDEN[language].rstrip() + "\n\n")
    paraphrase = _score(criterion, language, PARAPHRASE[language])
    far = _score(criterion, language, FAR[language])
    assert same == pytest.approx(1.0) and padded == pytest.approx(1.0)
    assert 0.0 < far < paraphrase < same
    assert paraphrase - far > 0.15, (paraphrase, far)
    assert far < 0.5, far


def test_codebleu_details_carry_its_four_components() -> None:
    m = _measure(CodeBleu(), "python", FAR["python"])
    d = m.details
    assert d is not None
    parts = [d["ngram_match"], d["weighted_ngram_match"], d["syntax_match"], d["dataflow_match"]]
    assert all(0.0 <= p <= 1.0 for p in parts), d
    assert m.score == pytest.approx(sum(parts) / 4)
    assert d["weights"] == [0.25] * 4 and d["basis"] == "whole"
    assert m.output is not None and m.output.startswith("CodeBLEU ") and "syntax" in m.output


def test_codebleu_leaves_out_the_data_flow_when_the_golden_solution_has_none() -> None:
    # no variable is assigned or read: the data-flow match has nothing to count, and the
    # library would score it 1 (or 0); here it is left out and the rest is reweighted
    golden, other = "def f():\n    return 1\n", "def f():\n    return 2\n"
    result = codebleu(other, golden, "python")
    assert result.dataflow is None
    assert result.score == pytest.approx((result.ngram + result.weighted_ngram + result.syntax) / 3)
    m = _measure(CodeBleu(), "python", other, golden={"python": golden})
    assert m.details is not None and m.details["dataflow_match"] is None
    assert m.output is not None and "data flow n/a" in m.output


@pytest.mark.parametrize("criterion", [SimilarityChrf(), CodeBleu()], ids=lambda c: c.name)
def test_a_task_without_a_golden_solution_in_the_language_is_not_applicable(
        criterion: Criterion) -> None:
    m = _measure(criterion, "java", GOLDEN["java"], golden={"python": GOLDEN["python"]})
    assert m.score is None and m.verdict == "n/a"
    assert m.output is not None
    assert "no golden solution in java" in m.output and "golden_solution.java" in m.output


PROMPT = (
    "def count_vowels(text: str) -> int:\n"
    '    """Count the vowels (a, e, i, o, u, either case) in text.\n\n'
    "    >>> count_vowels('Hello World')\n"
    "    3\n"
    "    >>> count_vowels('rhythm')\n"
    "    0\n"
    "    >>> count_vowels('AEIOU and sometimes y')\n"
    "    8\n"
    '    """\n')
BODY = ("    count = 0\n    for ch in text.lower():\n        if ch in \"aeiou\":\n"
        "            count += 1\n    return count\n")
OTHER_BODY = '    return len(re.findall(r"[aeiouAEIOU]", text))\n'


@pytest.mark.parametrize("criterion", [SimilarityChrf(), CodeBleu()], ids=lambda c: c.name)
def test_a_completion_is_compared_without_the_prompt_both_share(criterion: Criterion) -> None:
    task = Task(name="count-vowels", languages=["python"], mode="complete",
                task=TaskBody(languages_specific={"python": LanguageSpec(description=PROMPT)}),
                golden_solution={"python": PROMPT + BODY})
    [same] = criterion.evaluate(_context(task, "python", PROMPT + BODY))
    [other] = criterion.evaluate(_context(task, "python", PROMPT + OTHER_BODY))
    assert same.score == pytest.approx(1.0)
    assert other.score is not None and other.score < 0.4, other
    assert other.details is not None and other.details["basis"] == "continuation"
    assert other.details["hypothesis_chars"] == len(OTHER_BODY)
    # with the prompt the two texts would look alike
    whole = comparison(PROMPT + OTHER_BODY, PROMPT + BODY, None)
    assert whole.basis == "whole"
    if isinstance(criterion, SimilarityChrf):
        from benchwright.criteria.similarity import chrf

        assert chrf(whole.hypothesis, whole.reference) > other.score + 0.3
    # an answer that rewrote the function (a chat answer) is compared whole
    rewritten = "import re\n\n" + PROMPT.split("\n")[0] + "\n" + OTHER_BODY
    [m] = criterion.evaluate(_context(task, "python", rewritten))
    assert m.details is not None and m.details["basis"] == "whole"


@pytest.mark.slow
def test_a_run_records_complexity_and_similarity_with_their_units(workspace: Path,
                                                                  bw: Runner) -> None:
    proc = bw("import", "humaneval", "--limit", "3", "--out", workspace / "tasks" / "he.yaml")
    assert proc.returncode == 0, proc.stderr
    (workspace / "configs" / "text.yaml").write_text(
        "version: 1\ntask_sources: [tasks/basics.yaml, tasks/he.yaml]\n"
        "languages: [python, java]\n"
        "criteria: [complexity, similarity-chrf, codebleu]\nllms: [reference]\n")
    proc = bw("run", "configs/text.yaml", "--run-id", "text", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    run = only_run(workspace)
    records = read_jsonl(run / "records.jsonl")
    assert {r["outcome"] for r in records} == {"pass"}, [r for r in records if r["outcome"] != "pass"]
    by: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        by.setdefault(r["criterion"], []).append(r)
    assert set(by) == {"complexity", "similarity-chrf", "codebleu"}
    samples = {(r["task_source"], r["task"], r["language"]) for r in records}
    assert {lang for _s, _t, lang in samples} == {"python", "java"}
    he = {t for s, t, _lang in samples if s != "benchwright-basics"}
    assert he == {"HumanEval/0", "HumanEval/1", "HumanEval/2"}
    for name in ("similarity-chrf", "codebleu", "complexity"):
        assert len(by[name]) == len(samples), name  # one record per sample
    basics = YAML(typ="safe").load(workspace / "tasks" / "basics.yaml")["tasks"]
    basics_completions = {t["name"] for t in basics if t.get("mode") == "complete"}
    assert basics_completions  # the example has a completion task too
    for name in ("similarity-chrf", "codebleu"):
        for r in by[name]:
            # the reference model answers with the golden solution itself
            assert r["unit"] == "score" and r["score"] == pytest.approx(1.0), r
            assert r["test_case"] is None and r["executor"] in ("SimilarityChrf", "CodeBleu")
            details = r["details"]
            completion = r["task"] in he or r["task"] in basics_completions
            assert details["basis"] == ("continuation" if completion else "whole"), r
    for r in by["complexity"]:
        assert r["unit"] == "count" and isinstance(r["score"], float) and r["score"] >= 1, r
        details = r["details"]
        assert details["function_count"] >= 1
        assert r["score"] == max(f["ccn"] for f in details["functions"])
        assert f"line {r['line']}: " in r["output"]
    he0 = next(r for r in by["complexity"] if r["task"] == "HumanEval/0")
    assert he0["details"]["functions"][0]["name"] == "has_close_elements"
    assert he0["score"] == 5  # 1 + two loops + two ifs

    summary = YAML(typ="safe").load(run / "summary.yaml")
    assert summary["units"]["complexity"] == "count"
    assert summary["units"]["similarity-chrf"] == "score"
    assert summary["units"]["codebleu"] == "score"
    report = bw("report", "text", cwd=workspace)
    assert report.returncode == 0, report.stderr
    rows = [line for line in report.stdout.splitlines() if line.startswith("│ ")]
    for name, unit in (("complexity", "count"), ("similarity-chrf", "score"), ("codebleu", "score")):
        row = next((line for line in rows if line.startswith(f"│ {name} ")), None)
        assert row is not None, report.stdout
        assert f"│ {unit} " in row, row
    chrf_row = next(line for line in rows if line.startswith("│ similarity-chrf "))
    assert [c.strip() for c in chrf_row.strip("│").split("│")] == ["similarity-chrf", "score", "1.00"]
