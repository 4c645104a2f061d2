"""docs/formats.md is the reference of the files benchwright writes: its tables are exactly what
the models that read and write them say, every key has a description, and a record's ``format``
lets an older line read and a newer one be refused by name."""

from __future__ import annotations

import json
from pathlib import Path

from benchwright.reference import MARKER, model_of, rewrite, undocumented
from benchwright.results.record import RECORD_FORMAT, Generation, Record
from benchwright.run.folder import RunFolder
from benchwright.run.jsonl import SkippedLines

PAGE = Path(__file__).resolve().parents[1] / "docs" / "formats.md"
BASE = {"run_id": "r1", "execution_id": "e1", "task_source": "tasks/basics.yaml", "task": "add",
        "language": "python", "model": "reference", "sample": 0, "criterion": "unit-test",
        "executor": "UnitTest", "score": 1.0, "verdict": "pass"}


def test_the_page_is_what_the_models_say_and_every_key_is_described() -> None:
    text = PAGE.read_text(encoding="utf-8")
    named = [m.group(2) for m in MARKER.finditer(text)]
    assert {"benchwright.results.record:Record", "benchwright.results.record:Generation",
            "benchwright.run.folder:Manifest", "benchwright.config.model:ExecConfig",
            "benchwright.config.settings:Settings"} <= set(named)
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
