"""The one reader of a run's JSONL files: a line that cannot be read is skipped and counted with
its place, never a traceback; repair moves such lines aside and the samples they held run again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchwright.errors import InfraError
from benchwright.results import jsonl
from benchwright.results.folder import (
    GENERATIONS_FILE,
    RECORDS_FILE,
    STATUS_FILE,
    SUMMARY_FILE,
    RunFolder,
)
from benchwright.results.jsonl import SkippedLines, read_lines
from benchwright.results.record import Generation, Record
from benchwright.results.summary import summarize_folder


def records(eid: str, outcome: str, n: int, task: str = "t", model: str = "m") -> list[Record]:
    return [Record(run_id="r1", execution_id=eid, task_source="src", task=task, language="python",
                   model=model, sample=0, criterion="unit-test", executor="unit-test",
                   score=1.0 if outcome == "pass" else 0.0, outcome=outcome,
                   test_case=f"case-{i}" if i < n - 1 else None)
            for i in range(n)]


def generation(eid: str, task: str = "t") -> Generation:
    return Generation(run_id="r1", execution_id=eid, task_source="src", task=task, language="python",
                      model="m", provider="reference", sample=0, raw="x", code="x")


@pytest.fixture
def folder(tmp_path: Path) -> RunFolder:
    f = RunFolder.create(tmp_path / "r1", {"run_id": "r1", "config": {}})
    f.append_records(records("a", "pass", 3, task="ta"))
    f.append_records(records("b", "fail", 3, task="tb"))
    f.append_records(records("c", "pass", 2, task="tc"))
    return f


def lines_of(folder: RunFolder, name: str = RECORDS_FILE) -> list[bytes]:
    return (folder.path / name).read_bytes().splitlines(keepends=True)


def write_lines(folder: RunFolder, lines: list[bytes], name: str = RECORDS_FILE) -> None:
    (folder.path / name).write_bytes(b"".join(lines))


def test_a_byte_that_is_not_utf8_skips_its_line_with_the_place_and_names_its_sample(folder: RunFolder) -> None:
    lines = lines_of(folder)
    lines[4] = lines[4].replace(b'"task":"tb"', b'"task":"t\xffb"')  # the second record of b
    write_lines(folder, lines)
    skipped = SkippedLines()
    got = list(folder.records(skipped))
    assert len(got) == 7
    assert skipped.count == 1
    (bad,) = skipped.lines
    assert (bad.file, bad.line, bad.execution_id) == (RECORDS_FILE, 5, "b")
    assert bad.reason.startswith("not UTF-8")
    assert "records.jsonl:5: not UTF-8" in skipped.message()


@pytest.mark.parametrize(("line", "reason"), [
    (b'{"run_id": "r1", "execution_id": "b", "tas\n', "not JSON"),
    (b"[1, 2, 3]\n", "not a record: a JSON value that is not an object"),
    (b'"just a string"\n', "not a record"),
    (b'{"hello": "world"}\n', "not a record: run_id: Field required"),
    (b'{"run_id":"r1","execution_id":"b","task_source":"s","task":"t","language":"python","model":"m",'
     b'"sample":"three","criterion":"c","executor":"e"}\n', "not a record: sample:"),
    (b"\x00\x00\x00\x00\n", "not JSON"),
])
def test_a_line_that_is_not_a_record_is_skipped_with_why(folder: RunFolder, line: bytes, reason: str) -> None:
    lines = lines_of(folder)
    lines[3] = line
    write_lines(folder, lines)
    skipped = SkippedLines()
    assert len(list(folder.records(skipped))) == 7
    assert [(b.line, b.reason.startswith(reason)) for b in skipped.lines] == [(4, True)], skipped
    assert "hello" not in skipped.message() and "world" not in skipped.message()  # never the content


def test_a_torn_last_line_is_skipped_and_counted(folder: RunFolder) -> None:
    with (folder.path / RECORDS_FILE).open("ab") as f:
        f.write(records("d", "pass", 1)[0].model_dump_json().encode()[:40])
    skipped = SkippedLines()
    assert len(list(folder.records(skipped))) == 8
    (bad,) = skipped.lines
    assert bad.line == 9 and bad.reason.startswith("torn") and bad.execution_id == "d"


def test_a_line_over_the_cap_is_skipped_chunk_by_chunk(folder: RunFolder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jsonl, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(jsonl, "_CHUNK", 100)
    lines = lines_of(folder)
    lines.insert(2, b"x" * 50_000 + b"\n")
    write_lines(folder, lines)
    skipped = SkippedLines()
    assert len(list(folder.records(skipped))) == 8
    assert [(b.line, b.reason) for b in skipped.lines] == [(3, "longer than 1000 bytes")]


def test_blank_lines_are_ignored_and_many_bad_lines_counted_with_the_first_listed(folder: RunFolder) -> None:
    lines = lines_of(folder)
    write_lines(folder, [*lines, b"\n", *[b"garbage\n"] * 50])
    skipped = SkippedLines()
    assert len(list(folder.records(skipped))) == 8
    assert skipped.count == 50 and len(skipped.lines) == jsonl.LISTED
    assert skipped.lines[0].line == 10
    assert "and 30 more" in skipped.message()


def test_the_run_files_are_never_read_through_a_symlink(folder: RunFolder, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text('{"run_id": "r1"}\n')
    target = folder.path / RECORDS_FILE
    target.unlink()
    target.symlink_to(secret)
    with pytest.raises(InfraError, match="symlink"):
        list(folder.records())
    status = folder.path / STATUS_FILE
    status.symlink_to(secret)
    with pytest.raises(InfraError, match="symlink"):
        folder.status()


def test_a_fifo_in_place_of_a_file_is_refused_not_waited_on(folder: RunFolder) -> None:
    target = folder.path / RECORDS_FILE
    target.unlink()
    os.mkfifo(target)
    with pytest.raises(InfraError, match="not a regular file"):
        list(folder.records())


def test_repair_moves_unreadable_lines_aside_and_drops_their_samples(folder: RunFolder) -> None:
    lines = lines_of(folder)
    lines[4] = lines[4].replace(b'"task":"tb"', b'"task":"t\xffb"')
    lines[6] = b"[1]\n"  # the first record of c: no execution id to read
    write_lines(folder, lines)
    skipped = SkippedLines()
    assert folder.repair(skipped=skipped) == {"a": "pass"}
    assert skipped.count == 2
    assert [r.execution_id for r in folder.records()] == ["a"] * 3
    aside = (folder.path / (RECORDS_FILE + ".unreadable")).read_bytes().splitlines(keepends=True)
    assert aside == [lines[4], lines[6]]  # nothing is lost
    skipped_again = SkippedLines()
    assert len(list(folder.records(skipped_again))) == 3 and not skipped_again


def test_repair_takes_unreadable_generation_lines_aside_and_keeps_the_rest(folder: RunFolder) -> None:
    for eid in ("a", "b", "c"):
        folder.append_generation(generation(eid))
    lines = lines_of(folder, GENERATIONS_FILE)
    lines[1] = lines[1].replace(b'"raw":"x"', b'"raw":"\xfe"')
    write_lines(folder, [*lines, lines[2][:30]], GENERATIONS_FILE)  # and a torn last line
    skipped = SkippedLines()
    assert set(folder.generations(skipped=skipped)) == {"a", "c"}
    assert skipped.count == 2
    repaired = SkippedLines()
    folder.repair(skipped=repaired)
    assert {(b.file, b.line) for b in repaired.lines} == {(GENERATIONS_FILE, 2), (GENERATIONS_FILE, 4)}
    assert lines_of(folder, GENERATIONS_FILE) == [lines[0], lines[2]]
    assert (folder.path / (GENERATIONS_FILE + ".unreadable")).read_bytes() == lines[1] + lines[2][:30] + b"\n"


def test_a_summary_counts_a_damaged_sample_as_not_scored(folder: RunFolder) -> None:
    lines = lines_of(folder)
    lines[1] = lines[1][:20] + b"\xff" + lines[1][21:]  # a record of a (pass), inside run_id
    write_lines(folder, lines)
    summary = summarize_folder(folder)
    m = summary["by_model"]["m"]
    assert m["samples"] == 3
    assert m["outcomes"] == {"pass": 1, "fail": 1, "error": 0, "untested": 0, "infra_error": 1}
    assert m["criteria"]["unit-test"]["n"] == 2 and m["criteria"]["unit-test"]["mean"] == 0.5
    assert m["unreadable"] == 1
    assert m["unreadable_samples"] == [{"task_source": "src", "task": "ta", "language": "python", "sample": 0}]
    assert summary["skipped_lines"]["count"] == 1 and summary["skipped_lines"]["samples"] == 1
    assert summary["skipped_lines"]["lines"][0]["line"] == 2


def test_a_sample_whose_only_line_is_lost_is_found_through_its_generation(tmp_path: Path) -> None:
    folder = RunFolder.create(tmp_path / "r1", {"run_id": "r1", "config": {}})
    folder.append_records(records("a", "pass", 2, task="ta"))
    folder.append_records(records("b", "fail", 1, task="tb"))
    folder.append_generation(generation("b", task="tb"))
    lines = lines_of(folder)
    lines[2] = b"{" + lines[2][1:40] + b"\xff" + lines[2][41:]  # b's only record
    write_lines(folder, lines)
    summary = summarize_folder(folder)
    m = summary["by_model"]["m"]
    assert m["outcomes"]["infra_error"] == 1 and m["outcomes"]["fail"] == 0
    assert m["unreadable_samples"][0]["task"] == "tb"


def test_an_intact_folder_reads_as_before(folder: RunFolder) -> None:
    summary = summarize_folder(folder)
    assert "skipped_lines" not in summary and "unreadable" not in summary["by_model"]["m"]
    assert summary["by_model"]["m"]["outcomes"] == {"pass": 2, "fail": 1, "error": 0, "untested": 0, "infra_error": 0}


@pytest.mark.parametrize("content", [b"state: \xff\n", b"a: [\n", b"- 1\n", b""])
@pytest.mark.parametrize("name", [STATUS_FILE, SUMMARY_FILE, "run.yaml", "limits.yaml"])
def test_a_damaged_yaml_file_is_an_infra_error_naming_it(folder: RunFolder, name: str, content: bytes) -> None:
    (folder.path / name).write_bytes(content)
    read = {STATUS_FILE: folder.status, SUMMARY_FILE: folder.summary, "run.yaml": folder.manifest,
            "limits.yaml": folder.limits}[name]
    with pytest.raises(InfraError) as info:
        read()
    assert str(folder.path / name) in str(info.value) and "damaged" in str(info.value)


def test_read_lines_of_a_missing_file_is_empty(tmp_path: Path) -> None:
    assert list(read_lines(tmp_path / "nope.jsonl", json.loads)) == []


def test_a_doubled_or_reordered_block_is_not_whole_and_runs_again(folder: RunFolder) -> None:
    lines = lines_of(folder)
    lines.insert(4, lines[4])  # b's second record twice
    lines[7], lines[8] = lines[8], lines[7]  # c's two records swapped
    write_lines(folder, lines)
    assert folder.scan().damaged() == {"b", "c"}
    assert folder.repair() == {"a": "pass"}


def test_a_hostile_record_count_costs_nothing(folder: RunFolder) -> None:
    record = records("z", "pass", 1)[0]
    record.record_index, record.record_count = 10**12, 10**12 + 1
    with (folder.path / RECORDS_FILE).open("ab") as f:
        f.write(record.model_dump_json().encode() + b"\n")
    assert "z" in folder.scan().damaged()
    assert folder.repair() == {"a": "pass", "b": "fail", "c": "pass"}


def test_a_string_utf8_cannot_hold_is_written_with_a_replacement_not_a_crash(tmp_path: Path) -> None:
    folder = RunFolder.create(tmp_path / "r1", {"run_id": "r1", "config": {}})
    [record] = records("s", "fail", 1)
    record.output, record.details = "printed \ud800 here", {"why \udc80": ["\udfff"]}
    folder.append_records([record])
    gen = generation("s")
    gen.raw = "answer \ud83d"
    folder.append_generation(gen)
    skipped = SkippedLines()
    [back] = folder.records(skipped)
    assert back.output == "printed \ufffd\ufffd\ufffd here" and not skipped
    assert back.details == {"why \ufffd\ufffd\ufffd": ["\ufffd\ufffd\ufffd"]}
    assert folder.generations()["s"].raw == "answer \ufffd\ufffd\ufffd"
