"""docs/formats.md is the reference of the files benchwright writes: its tables are exactly what
the models that read and write them say, every key has a description, and a record's ``format``
lets an older line read and a newer one be refused by name."""

from __future__ import annotations

import json
from pathlib import Path

from ruamel.yaml import YAML

from benchwright.reference import MARKER, model_of, rewrite, undocumented
from benchwright.results.folder import RunFolder
from benchwright.results.jsonl import SkippedLines
from benchwright.results.record import RECORD_FORMAT, Generation, Record
from benchwright.results.summary import summarize_folder
from benchwright.results.summaryfile import SummaryFile
from tests.conftest import Runner, only_run

PAGE = Path(__file__).resolve().parents[1] / "docs" / "formats.md"
BASE = {"run_id": "r1", "execution_id": "e1", "task_source": "tasks/basics.yaml", "task": "add",
        "language": "python", "model": "reference", "sample": 0, "criterion": "unit-test",
        "executor": "UnitTest", "score": 1.0, "verdict": "pass"}


def test_the_page_is_what_the_models_say_and_every_key_is_described() -> None:
    text = PAGE.read_text(encoding="utf-8")
    named = [m.group(2) for m in MARKER.finditer(text)]
    assert {"benchwright.results.record:Record", "benchwright.results.record:Generation",
            "benchwright.results.folder:Manifest", "benchwright.config.model:ExecConfig",
            "benchwright.config.settings:Settings", "benchwright.task.model:TaskSource",
            "benchwright.task.model:Task", "benchwright.task.model:LanguageSpec",
            "benchwright.task.model:TestCase", "benchwright.agents.scenario:Scenario",
            "benchwright.agents.scenario:WorkspaceRecipe", "benchwright.agents.scenario:AgentTask",
            "benchwright.results.summaryfile:SummaryFile",
            "benchwright.results.summaryfile:ModelSummary"} <= set(named)
    # every built-in scorer type's keys are on the page
    from benchwright.agents.scenario import installed_scorer_models
    assert {f"{m.__module__}:{m.__name__}" for m in installed_scorer_models().values()} <= set(named)
    assert rewrite(text) == text, "run: python -m benchwright.reference docs/formats.md"
    for path in named:
        assert undocumented(model_of(path)) == [], path
    assert "SPEC" not in text


def test_an_older_line_reads_and_a_newer_one_is_refused_by_name(tmp_path: Path) -> None:
    lines = [dict(BASE), dict(BASE, sample=1, format=RECORD_FORMAT),
             dict(BASE, sample=2, format=RECORD_FORMAT + 1, new_key="x")]
    (tmp_path / "records.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    skipped = SkippedLines()
    records = list(RunFolder(tmp_path).records(skipped))
    assert [(r.sample, r.format) for r in records] == [(0, 1), (1, 1)]
    message = skipped.message(tmp_path)
    assert "records.jsonl:3: not a record: format" in message
    assert f"written in record format {RECORD_FORMAT + 1} by a newer benchwright" in message
    assert "upgrade benchwright" in message
    # what this benchwright writes carries its format
    assert json.loads(Record(**BASE).model_dump_json())["format"] == RECORD_FORMAT
    generation = Generation(**{k: BASE[k] for k in ("run_id", "execution_id", "task_source", "task",
                                                    "language", "model", "sample")},
                            provider="reference")
    assert json.loads(generation.model_dump_json())["format"] == RECORD_FORMAT


def test_a_runs_summary_has_only_described_keys(workspace: Path, bw: Runner) -> None:
    """summary.yaml holds only keys that ``SummaryFile`` (the page's tables) describes: a key
    a writer adds without a description fails here. A run with thresholds and time limits from
    the golden solutions, then its summary again after a line of its records was torn."""
    (workspace / "configs" / "doc.yaml").write_text(
        "version: 1\ntask_sources: [tasks/basics.yaml]\nllms: [reference]\nsamples: 2\n"
        "criteria: [unit-test, cpu-usage]\n"
        "limits:\n  golden_factor: 4\n  golden_floor_s: 1.0\n"
        "thresholds:\n  unit-test: 0.8\n  pass@1: 0.5\n  cpu-usage: 100000\n")
    proc = bw("run", "configs/doc.yaml", "--limit", "2", cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    run = only_run(workspace)
    written = YAML(typ="safe").load((run / "summary.yaml").read_text())
    summary = SummaryFile.model_validate(written)
    assert summary.thresholds and summary.time_limits and summary.isolation and summary.executor
    model = summary.by_model["reference"]
    assert model.criteria["unit-test"].test_pass_ratio == 1.0 and model.pass_rate is not None
    records = run / "records.jsonl"
    records.write_text(records.read_text()[:-40])  # the last line torn
    again = SummaryFile.model_validate(summarize_folder(RunFolder(run)))
    assert again.skipped_lines is not None and again.by_model["reference"].unreadable == 1
