"""The run folder: append-only JSONL and its repair after a kill."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwright.errors import UserError
from benchwright.results.folder import GENERATIONS_FILE, RECORDS_FILE, RUN_FILE, RunFolder
from benchwright.results.record import Generation, Record


def make_records(eid: str, outcome: str, n: int, task: str = "t") -> list[Record]:
    return [
        Record(run_id="r1", execution_id=eid, task_source="src", task=task, language="python",
               model="m", sample=0, criterion="unit-test", executor="unit-test",
               score=1.0 if outcome == "pass" else 0.0, outcome=outcome,
               test_case=f"case-{i}" if i < n - 1 else None)
        for i in range(n)
    ]


def make_generation(eid: str, code: str = "def f(): pass\n") -> Generation:
    return Generation(run_id="r1", execution_id=eid, task_source="src", task="t", language="python",
                      model="m", provider="reference", sample=0, raw=code, code=code)


@pytest.fixture
def folder(tmp_path: Path) -> RunFolder:
    return RunFolder.create(tmp_path / "run-1", {"run_id": "run-1", "config": {"samples": 1}})


def record_lines(folder: RunFolder) -> list[str]:
    return (folder.path / RECORDS_FILE).read_text(encoding="utf-8").splitlines()


def test_create_makes_files(folder):
    assert folder.run_id == "run-1"
    assert (folder.path / RUN_FILE).is_file()
    assert (folder.path / RECORDS_FILE).read_bytes() == b""
    assert (folder.path / GENERATIONS_FILE).read_bytes() == b""
    assert folder.manifest() == {"run_id": "run-1", "config": {"samples": 1}}


def test_create_refuses_existing_folder(folder):
    with pytest.raises(UserError):
        RunFolder.create(folder.path, {})


def test_append_sets_index_and_count(folder):
    folder.append_records(make_records("a", "pass", 3))
    rows = [json.loads(line) for line in record_lines(folder)]
    assert [(r["record_index"], r["record_count"]) for r in rows] == [(0, 3), (1, 3), (2, 3)]
    assert [r.execution_id for r in folder.records()] == ["a", "a", "a"]


def test_repair_drops_torn_line_and_cut_short_sample(folder):
    folder.append_records(make_records("a", "pass", 3))
    folder.append_records(make_records("b", "fail", 2))
    # a third sample was being written when the run was killed: half its lines, then a torn one
    third = make_records("c", "pass", 4)
    for i, r in enumerate(third):
        r.record_index, r.record_count = i, len(third)
    lines = [r.model_dump_json() for r in third]
    path = folder.path / RECORDS_FILE
    with path.open("ab") as f:
        f.write((lines[0] + "\n" + lines[1] + "\n").encode())
        f.write(lines[2][: len(lines[2]) // 2].encode())  # torn: no newline
    assert len(list(folder.records())) == 3 + 2 + 2  # the torn line is invisible to readers

    outcomes = folder.repair()
    assert outcomes == {"a": "pass", "b": "fail"}
    kept = list(folder.records())
    assert [r.execution_id for r in kept] == ["a"] * 3 + ["b"] * 2
    assert len(record_lines(folder)) == 5
    assert path.read_bytes().endswith(b"\n")
    assert [r.record_index for r in kept] == [0, 1, 2, 0, 1]

    # the cut sample runs again and its block is whole now
    folder.append_records(make_records("c", "pass", 4))
    assert folder.repair() == {"a": "pass", "b": "fail", "c": "pass"}
    assert [r.execution_id for r in folder.records()] == ["a"] * 3 + ["b"] * 2 + ["c"] * 4


def test_repair_of_intact_file_changes_nothing(folder):
    folder.append_records(make_records("a", "pass", 2))
    folder.append_records(make_records("b", "error", 1))
    path = folder.path / RECORDS_FILE
    before = path.read_bytes()
    inode = path.stat().st_ino
    assert folder.repair() == {"a": "pass", "b": "error"}
    assert path.read_bytes() == before
    assert path.stat().st_ino == inode  # not even rewritten


def test_repair_drops_cut_short_sample_without_torn_line(folder):
    folder.append_records(make_records("a", "pass", 2))
    third = make_records("c", "fail", 3)
    for i, r in enumerate(third):
        r.record_index, r.record_count = i, 3
    with (folder.path / RECORDS_FILE).open("ab") as f:
        f.write((third[0].model_dump_json() + "\n").encode())
    assert folder.repair() == {"a": "pass"}
    assert [r.execution_id for r in folder.records()] == ["a", "a"]


def test_repair_drop_removes_given_samples(folder):
    folder.append_records(make_records("a", "pass", 2))
    folder.append_records(make_records("b", "infra_error", 1))
    folder.append_records(make_records("c", "fail", 3))
    outcomes = folder.repair(drop={"b"})
    assert outcomes == {"a": "pass", "c": "fail"}
    assert [r.execution_id for r in folder.records()] == ["a", "a", "c", "c", "c"]
    assert "\"b\"" not in (folder.path / RECORDS_FILE).read_text()


def test_repair_drop_and_torn_together(folder):
    folder.append_records(make_records("a", "pass", 1))
    folder.append_records(make_records("b", "pass", 1))
    with (folder.path / RECORDS_FILE).open("ab") as f:
        f.write(b'{"run_id": "r1", "execution_id": "d"')
    assert folder.repair(drop={"a"}) == {"b": "pass"}
    assert [r.execution_id for r in folder.records()] == ["b"]


def test_repair_of_missing_or_empty_file(tmp_path):
    f = RunFolder.create(tmp_path / "r", {})
    assert f.repair() == {}
    (f.path / RECORDS_FILE).unlink()
    assert f.repair() == {}


def test_generations_skip_torn_line(folder):
    folder.append_generation(make_generation("a"))
    folder.append_generation(make_generation("b", "def g(): pass\n"))
    line = make_generation("c").model_dump_json()
    with (folder.path / GENERATIONS_FILE).open("ab") as f:
        f.write(line[: len(line) // 2].encode())
    gens = folder.generations()
    assert set(gens) == {"a", "b"}
    assert gens["b"].code == "def g(): pass\n"
    assert gens["a"].provider == "reference"


def test_generations_skip_garbage_line(folder):
    folder.append_generation(make_generation("a"))
    with (folder.path / GENERATIONS_FILE).open("ab") as f:
        f.write(b"not json at all\n")
    folder.append_generation(make_generation("b"))
    assert set(folder.generations()) == {"a", "b"}


def test_status_and_summary_roundtrip(folder):
    assert folder.status() == {}
    assert folder.summary() is None
    folder.write_status({"state": "running", "sources": {"src": {"total": 3, "completed": 1}}},
                        force=True)
    assert folder.status()["sources"]["src"]["completed"] == 1
    folder.write_summary({"run_id": "run-1", "models": ["m"]})
    assert folder.summary() == {"run_id": "run-1", "models": ["m"]}

