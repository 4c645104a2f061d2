"""MBPP, HumanEval+, MBPP+ and CRUXEval imported from their fixture files (the published formats)
and run end to end with the reference model: every golden solution passes every test case, each
case reported on its own record; a broken solution fails exactly the cases it should."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.conftest import FIXTURES, Runner, only_run, read_jsonl


def _import_and_run(tmp_path: Path, bw: Runner, *args: str | Path,
                    edit: dict[str, Callable[[str], str]] | None = None) -> tuple[Path, list[dict[str, Any]]]:
    """Import with ``args`` into a fresh workspace, optionally change golden solutions (task ->
    a function of the golden), run the reference model; the task source and the per-test-case
    records."""
    ws = tmp_path / "ws"
    (ws / "configs").mkdir(parents=True)
    (ws / "benchwright.yaml").write_text("version: 1\n")
    out = ws / "tasks" / "imported.yaml"
    proc = bw("import", *args, "--out", out)
    assert proc.returncode == 0, proc.stderr
    if edit:
        yaml = YAML()
        data = yaml.load(out.read_text())
        for task in data["tasks"]:
            if task["name"] in edit:
                task["golden_solution"]["python"] = edit[task["name"]](task["golden_solution"]["python"])
        with out.open("w") as f:
            yaml.dump(data, f)
    (ws / "configs" / "c.yaml").write_text(
        "version: 1\ntask_sources: [tasks/imported.yaml]\ncriteria: [unit-test]\nllms: [reference]\n")
    proc = bw("run", "configs/c.yaml", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    records = [r for r in read_jsonl(only_run(ws) / "records.jsonl")
               if r["criterion"] == "unit-test" and r["test_case"] is not None]
    return out, records


def _cases(records: list[dict[str, Any]]) -> dict[tuple[str, str], str]:
    return {(r["task"], r["test_case"]): r["verdict"] for r in records}


def _expected_cases(source: Path) -> set[tuple[str, str]]:
    data = YAML(typ="safe").load(source.read_text())
    out = set()
    for task in data["tasks"]:
        spec = task["task"]["languages_specific"]["python"]
        for key in ("public_tests", "hidden_tests"):
            out |= {(task["name"], t["name"]) for t in spec.get(key) or []}
    return out


def test_mbpp_golden_solutions_pass_every_assert(tmp_path: Path, bw: Runner) -> None:
    source, records = _import_and_run(tmp_path, bw, "mbpp", FIXTURES / "mbpp" / "mbpp.jsonl",
                                      "--map", "split=all")
    cases = _cases(records)
    assert set(cases) == _expected_cases(source)
    assert ("Mbpp/11", "challenge-2") in cases and ("Mbpp/513", "test-3") in cases
    assert set(cases.values()) == {"pass"}


def test_mbpp_a_wrong_solution_fails_only_the_asserts_it_gets_wrong(tmp_path: Path, bw: Runner) -> None:
    wrong = "def remove_Occ(s, ch):\n    return s.replace(ch, '', 1)\n"  # only the first one
    _, records = _import_and_run(tmp_path, bw, "mbpp", FIXTURES / "mbpp" / "mbpp.jsonl",
                                 edit={"Mbpp/11": lambda _: wrong})
    cases = {k[1]: v for k, v in _cases(records).items() if k[0] == "Mbpp/11"}
    assert cases == {"test-1": "fail", "test-2": "fail", "test-3": "fail",
                     "challenge-1": "fail", "challenge-2": "pass"}


def test_humaneval_plus_golden_solutions_pass_every_input(tmp_path: Path, bw: Runner) -> None:
    source, records = _import_and_run(tmp_path, bw, "humaneval-plus",
                                      FIXTURES / "evalplus" / "HumanEvalPlus.jsonl.gz")
    cases = _cases(records)
    assert set(cases) == _expected_cases(source)
    assert {("HumanEval/0", "base-6"), ("HumanEval/0", "plus-4"), ("HumanEval/32", "plus-3"),
            ("HumanEval/139", "plus-2")} <= set(cases)
    assert set(cases.values()) == {"pass"}


def test_humaneval_plus_catches_what_the_base_tests_miss(tmp_path: Path, bw: Runner) -> None:
    # right on HumanEval's own inputs (all below 8), wrong beyond them
    table = "    return {1: 1, 4: 288, 5: 34560, 7: 125411328000}.get(n, 0)\n"
    _, records = _import_and_run(tmp_path, bw, "humaneval-plus",
                                 FIXTURES / "evalplus" / "HumanEvalPlus.jsonl.gz",
                                 edit={"HumanEval/139": lambda _: _prompt("HumanEval/139") + table})
    cases = {k[1]: v for k, v in _cases(records).items() if k[0] == "HumanEval/139"}
    assert {k for k, v in cases.items() if v == "pass"} == {"base-0", "base-1", "base-2", "base-3"}
    assert {k for k, v in cases.items() if v == "fail"} == {"plus-0", "plus-1", "plus-2"}


def _prompt(task: str) -> str:
    import gzip
    import json

    with gzip.open(FIXTURES / "evalplus" / "HumanEvalPlus.jsonl.gz", "rt") as f:
        return next(r["prompt"] for r in map(json.loads, f) if r["task_id"] == task)


def test_mbpp_plus_golden_solutions_pass_every_input(tmp_path: Path, bw: Runner) -> None:
    source, records = _import_and_run(tmp_path, bw, "mbpp-plus",
                                      FIXTURES / "evalplus" / "MbppPlus.jsonl.gz")
    cases = _cases(records)
    assert set(cases) == _expected_cases(source)
    assert ("Mbpp/106", "plus-1") in cases and ("Mbpp/16", "plus-0") in cases
    assert set(cases.values()) == {"pass"}


@pytest.mark.parametrize("subset", ["output", "input"])
def test_cruxeval_dataset_answers_pass(tmp_path: Path, bw: Runner, subset: str) -> None:
    source, records = _import_and_run(tmp_path, bw, "cruxeval",
                                      FIXTURES / "cruxeval" / "cruxeval.jsonl", "--subset", subset)
    cases = _cases(records)
    assert set(cases) == _expected_cases(source)
    assert len({t for t, _ in cases}) == 6
    assert set(cases.values()) == {"pass"}


def test_cruxeval_a_wrong_prediction_fails_its_assertion(tmp_path: Path, bw: Runner) -> None:
    def wrong(golden: str) -> str:
        assert golden.endswith("== 'bcksrutq'\n")
        return golden.replace("'bcksrutq'", "'qbcksrut'")

    _, records = _import_and_run(tmp_path, bw, "cruxeval", FIXTURES / "cruxeval" / "cruxeval.jsonl",
                                 edit={"sample_3": wrong})
    cases = _cases(records)
    assert {k[1]: v for k, v in cases.items() if k[0] == "sample_3"} == {
        "asserts": "pass", "assertion": "fail"}
    assert {v for k, v in cases.items() if k[0] != "sample_3"} == {"pass"}
