"""A run folder with a torn, non-UTF-8 or foreign line, or a damaged YAML file: every command
reads what it can, says which lines it skipped (file:line) and counts their samples as not
scored, or stops with exit 3 naming the file; never a traceback, never exit 1 (the code of a
missed threshold)."""

from __future__ import annotations

import collections
import csv
import io
import json
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Runner, read_jsonl, run_cli

N_TASKS = 6
SAMPLES = 2


def _workspace(root: Path) -> Path:
    """Python tasks answered by the reference model; every third golden is wrong, so a run has
    passes and failures to count."""
    ws = root / "ws"
    (ws / "tasks").mkdir(parents=True)
    (ws / "configs").mkdir()
    (ws / "benchwright.yaml").write_text("version: 1\n")
    tasks = ["version: 1\nname: small\ntasks:\n"]
    for i in range(N_TASKS):
        op = "-" if i % 3 == 0 else "+"
        tasks.append(
            f"  - name: t{i}\n    languages: [python]\n"
            f"    task:\n      common_prompt: add\n      languages_specific:\n        python:\n"
            f"          hidden_tests:\n"
            f"            - code: assert f({i}, 1) == {i + 1}\n"
            f"            - code: assert f(0, 0) == 0\n"
            f"    golden_solution:\n      python: |\n        def f(a, b):\n            return a {op} b\n")
    (ws / "tasks" / "small.yaml").write_text("".join(tasks))
    (ws / "configs" / "c.yaml").write_text(
        f"version: 1\ntask_sources: [tasks/small.yaml]\nllms: [reference]\nsamples: {SAMPLES}\n"
        "criteria: [unit-test, token-count]\n")
    return ws


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with one finished run, ``clean`` (made once for the module)."""
    ws = _workspace(tmp_path_factory.mktemp("broken"))
    proc = run_cli("run", "configs/c.yaml", "--run-id", "clean", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    return ws


@pytest.fixture
def ws(made: Path, tmp_path: Path) -> Path:
    """A copy of the module's workspace, to damage."""
    copy = tmp_path / "ws"
    shutil.copytree(made, copy, symlinks=True)
    return copy


def damaged(ws: Path, change: Callable[[list[bytes]], None], name: str = "records.jsonl",
            keep_summary: bool = False) -> Path:
    """The run ``damaged``: a copy of ``clean`` with ``change`` applied to the lines of ``name``
    (and, unless ``keep_summary``, no summary.yaml: a run that stopped before its end)."""
    run = ws / "results" / "damaged"
    shutil.copytree(ws / "results" / "clean", run)
    if not keep_summary:
        (run / "summary.yaml").unlink()
    lines = (run / name).read_bytes().splitlines(keepends=True)
    change(lines)
    (run / name).write_bytes(b"".join(lines))
    return run


def outcomes(records: list[dict[str, Any]]) -> dict[str, str]:
    return {r["execution_id"]: r["outcome"] for r in records}


def expected_without(clean: list[dict[str, Any]], lost: set[str]) -> dict[str, Any]:
    """What a summary must say once the samples ``lost`` are not scored: their outcome counts
    as infra_error, and the unit-test mean is over the others."""
    per = outcomes(clean)
    counts = collections.Counter(o for e, o in per.items() if e not in lost)
    scored = [e for e in per if e not in lost]
    passed = sum(per[e] == "pass" for e in scored)
    return {"outcomes": {"pass": counts["pass"], "fail": counts["fail"], "error": counts["error"],
                         "untested": counts["untested"], "infra_error": len(lost)},
            "samples": len(per), "n": len(scored), "mean": passed / len(scored)}


def clean_ok(proc: Any) -> None:
    """Exit 0, no traceback."""
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, (proc.returncode, proc.stderr)


def every_command(ws: Path, bw: Runner, where: str) -> dict[str, Any]:
    """Run report, export and compare (every format), and status, on ``damaged``: each exits 0
    with no traceback and warns naming ``where`` (file:line). Returns their outputs."""
    out: dict[str, Any] = {}
    for fmt in ("table", "json", "markdown", "csv"):
        proc = bw("report", "damaged", "--format", fmt, cwd=ws)
        clean_ok(proc)
        assert where in proc.stderr and "skipped" in proc.stderr, proc.stderr
        out[f"report-{fmt}"] = proc.stdout
    for fmt in ("json", "csv", "junit", "markdown"):
        proc = bw("export", "damaged", "--format", fmt, *(["--per", "record"] if fmt == "csv" else []), cwd=ws)
        clean_ok(proc)
        assert where in proc.stderr, proc.stderr
        out[f"export-{fmt}"] = proc.stdout
    for fmt in ("table", "json", "markdown"):
        proc = bw("compare", "clean", "damaged", "--format", fmt, cwd=ws)
        clean_ok(proc)
        assert where in proc.stderr, proc.stderr
        out[f"compare-{fmt}"] = proc.stdout
    for args in (("status", "damaged"), ("status",)):
        clean_ok(bw(*args, cwd=ws))
    return out


def check_figures(out: dict[str, Any], clean: list[dict[str, Any]], lost: set[str], where: str) -> None:
    """The summary counts the samples ``lost`` as not scored, and every output says so."""
    want = expected_without(clean, lost)
    summary = json.loads(out["report-json"])
    m = summary["by_model"]["reference"]
    assert m["outcomes"] == want["outcomes"]
    assert m["samples"] == want["samples"]
    assert m["criteria"]["unit-test"]["n"] == want["n"]
    assert m["criteria"]["unit-test"]["mean"] == pytest.approx(want["mean"])
    assert m["unreadable"] == len(lost)
    assert summary["skipped_lines"]["count"] >= 1 and summary["skipped_lines"]["samples"] == len(lost)
    file, line = where.split(":")
    assert {"file": file, "line": int(line)}.items() <= summary["skipped_lines"]["lines"][0].items()
    for text in (out["report-table"], out["report-markdown"], out["export-markdown"]):
        assert where in text and "not scored" in text
    exported = json.loads(out["export-json"])
    assert exported["skipped_lines"]["lines"][0]["line"] == int(line)
    assert exported["summary"]["by_model"]["reference"]["outcomes"] == want["outcomes"]
    # the records of the readable lines are all there, the unreadable one is not
    assert len(exported["records"]) == len(clean) - 1
    assert len(list(csv.DictReader(io.StringIO(out["export-csv"])))) == len(clean) - 1
    junit = ET.fromstring(out["export-junit"])
    unreadable = [c for c in junit.iter("testcase") if c.find("error") is not None
                  and c.find("error").get("type") == "unreadable"]  # type: ignore[union-attr]
    assert len(unreadable) == len(lost) + 1  # each sample, and the lines themselves
    assert int(junit.get("errors") or 0) >= len(lost) + 1
    compared = json.loads(out["compare-json"])
    assert compared["skipped_lines"]["b"]["lines"][0]["line"] == int(line)
    assert compared["regressions"] == [] and compared["fixes"] == []


def resume_repairs(ws: Path, bw: Runner, where: str, clean: list[dict[str, Any]]) -> None:
    """``run --resume`` names the line, keeps it aside, runs its sample again: the records end
    as the unbroken run's."""
    proc = bw("run", "--resume", "damaged", cwd=ws)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert where in proc.stderr and "run again" in proc.stderr, proc.stderr
    run = ws / "results" / "damaged"
    assert list(run.glob("*.unreadable")), "the unreadable line was not kept"
    got = read_jsonl(run / "records.jsonl")
    key = lambda r: (r["execution_id"], r["criterion"], r["test_case"], r["status"], r["outcome"])  # noqa: E731
    assert collections.Counter(map(key, got)) == collections.Counter(map(key, clean))
    summary = json.loads(bw("report", "damaged", "--format", "json", cwd=ws).stdout)
    assert "skipped_lines" not in summary
    assert summary["by_model"]["reference"]["outcomes"]["infra_error"] == 0
    report = bw("report", "damaged", cwd=ws)
    clean_ok(report)
    assert report.stderr == ""


def sample_line(lines: list[bytes], index: int = 0) -> int:
    """The number (from 0) of a line in the middle of a failing sample's block."""
    failing = [i for i, raw in enumerate(lines) if b'"outcome":"fail"' in raw and b'"record_index":1,' in raw]
    return failing[index]


def test_a_byte_that_is_not_utf8_in_a_middle_line(ws: Path, bw: Runner) -> None:
    clean = read_jsonl(ws / "results" / "clean" / "records.jsonl")
    at: dict[str, Any] = {}

    def change(lines: list[bytes]) -> None:
        i = sample_line(lines)
        at["eid"] = json.loads(lines[i])["execution_id"]
        at["line"] = i + 1
        lines[i] = lines[i].replace(b'"language":"python"', b'"language":"pyth\xffn"')

    damaged(ws, change)
    where = f"records.jsonl:{at['line']}"
    out = every_command(ws, bw, where)
    check_figures(out, clean, {at["eid"]}, where)
    assert "not UTF-8" in out["report-table"]
    resume_repairs(ws, bw, where, clean)


def test_a_torn_last_line(ws: Path, bw: Runner) -> None:
    clean = read_jsonl(ws / "results" / "clean" / "records.jsonl")
    lost = {clean[-1]["execution_id"]}

    def change(lines: list[bytes]) -> None:
        lines[-1] = lines[-1][: len(lines[-1]) // 2]

    run = damaged(ws, change)
    where = f"records.jsonl:{len(clean)}"
    out = every_command(ws, bw, where)
    check_figures(out, clean, lost, where)
    assert "torn" in out["report-table"]
    assert not (run / "records.jsonl").read_bytes().endswith(b"\n")
    resume_repairs(ws, bw, where, clean)


def test_a_line_of_valid_json_that_is_not_a_record(ws: Path, bw: Runner) -> None:
    clean = read_jsonl(ws / "results" / "clean" / "records.jsonl")
    at: dict[str, Any] = {}

    def change(lines: list[bytes]) -> None:
        i = sample_line(lines, 1)
        at["eid"] = json.loads(lines[i])["execution_id"]
        at["line"] = i + 1
        lines[i] = b'{"surprise": ["not", "a", "record"]}\n'

    damaged(ws, change)
    where = f"records.jsonl:{at['line']}"
    out = every_command(ws, bw, where)
    check_figures(out, clean, {at["eid"]}, where)
    assert "surprise" not in out["report-table"]  # the content is never echoed
    resume_repairs(ws, bw, where, clean)


def test_a_finished_run_keeps_its_summary_and_its_exports_say_what_was_skipped(ws: Path, bw: Runner) -> None:
    clean = read_jsonl(ws / "results" / "clean" / "records.jsonl")
    at: dict[str, int] = {}

    def change(lines: list[bytes]) -> None:
        at["line"] = sample_line(lines) + 1
        lines[at["line"] - 1] = lines[at["line"] - 1].replace(b'"task"', b'"ta\xc3sk"')

    damaged(ws, change, keep_summary=True)
    where = f"records.jsonl:{at['line']}"
    report = bw("report", "damaged", "--format", "json", cwd=ws)
    clean_ok(report)  # summary.yaml was written from every record: its figures stand
    assert json.loads(report.stdout)["by_model"] == json.loads(
        bw("report", "clean", "--format", "json", cwd=ws).stdout)["by_model"]
    for fmt in ("json", "csv", "junit"):
        proc = bw("export", "damaged", "--format", fmt, cwd=ws)
        clean_ok(proc)
        assert where in proc.stderr, proc.stderr
    exported = json.loads(bw("export", "damaged", cwd=ws).stdout)
    assert len(exported["records"]) == len(clean) - 1 and exported["skipped_lines"]["count"] == 1


def test_damaged_generations(ws: Path, bw: Runner) -> None:
    """A generation line that is not UTF-8 and a torn last one: readers skip them; a resume
    moves them aside and makes again the generations it needs (the sample whose records are
    also lost here)."""
    clean = read_jsonl(ws / "results" / "clean" / "records.jsonl")
    gens = read_jsonl(ws / "results" / "clean" / "generations.jsonl")
    victim = gens[3]["execution_id"]

    def drop_records(lines: list[bytes]) -> None:
        lines[:] = [raw for raw in lines if json.loads(raw)["execution_id"] != victim]

    run = damaged(ws, drop_records)
    lines = (run / "generations.jsonl").read_bytes().splitlines(keepends=True)
    lines[3] = lines[3].replace(b'"provider":"reference"', b'"provider":"refer\xe9nce"')
    lines[-1] = lines[-1][:25]
    (run / "generations.jsonl").write_bytes(b"".join(lines))

    (ws / "benchwright.yaml").write_text("version: 1\nproviders:\n  old: {type: replay, path: damaged}\n")
    (ws / "configs" / "replay.yaml").write_text(
        "version: 1\ntask_sources: [tasks/small.yaml]\nllms: [old/reference]\ncriteria: [unit-test]\n")
    replay = bw("run", "configs/replay.yaml", cwd=ws)
    assert "Traceback" not in replay.stderr, replay.stderr
    assert replay.returncode == 2 and "generations.jsonl:4: not UTF-8" in replay.stderr, replay.stderr
    (ws / "benchwright.yaml").write_text("version: 1\n")

    proc = bw("run", "--resume", "damaged", cwd=ws)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert "generations.jsonl:4: not UTF-8" in proc.stderr, proc.stderr
    assert f"generations.jsonl:{len(gens)}: torn" in proc.stderr, proc.stderr
    assert (run / "generations.jsonl.unreadable").read_bytes() == lines[3] + lines[-1] + b"\n"
    # the victim's generation was made again; the torn one's sample was whole, so it was not
    after = read_jsonl(run / "generations.jsonl")
    assert sorted(g["execution_id"] for g in after) == sorted(g["execution_id"] for g in gens[:-1])
    assert outcomes(read_jsonl(run / "records.jsonl")) == outcomes(clean)


@pytest.mark.parametrize("content", [b"state: \xff\n", b"taskSourceStatuses: [\n", b"- just a list\n"])
def test_a_damaged_status_file(ws: Path, bw: Runner, content: bytes) -> None:
    run = damaged(ws, lambda lines: None, keep_summary=True)
    (run / "status.yaml").write_bytes(content)
    proc = bw("status", "damaged", cwd=ws)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 3 and f"{run / 'status.yaml'}" in proc.stderr, proc.stderr
    listing = bw("status", cwd=ws)  # the other runs still list; this one says it is damaged
    clean_ok(listing)
    assert "clean" in listing.stdout and "damaged (see the warning)" in listing.stdout
    assert f"{run / 'status.yaml'}" in listing.stderr
    clean_ok(bw("report", "damaged", cwd=ws))
    resumed = bw("run", "--resume", "damaged", cwd=ws)
    clean_ok(resumed)  # a resume writes the status again
    clean_ok(bw("status", "damaged", cwd=ws))


@pytest.mark.parametrize(("content", "unreadable"), [
    (b"run_id: \xff\n", True), (b"config: [\n", True), (b"- a list\n", True),
    (b"run_id: x\n", False),  # a mapping without what a resume needs: only a resume stops
])
def test_a_damaged_run_manifest(ws: Path, bw: Runner, content: bytes, unreadable: bool) -> None:
    run = damaged(ws, lambda lines: None, keep_summary=False)
    (run / "run.yaml").write_bytes(content)
    commands = [("run", "--resume", "damaged")]
    if unreadable:
        commands += [("export", "damaged"), ("report", "damaged")]
    else:
        clean_ok(bw("report", "damaged", cwd=ws))
    for args in commands:
        proc = bw(*args, cwd=ws)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode == 3, (args, proc.returncode, proc.stderr)
        assert f"{run / 'run.yaml'}" in proc.stderr and "damaged" in proc.stderr, proc.stderr


@pytest.mark.parametrize("content", [b"run_id: \xff\n", b"by_model: {\n", b"42\n"])
def test_a_damaged_summary(ws: Path, bw: Runner, content: bytes) -> None:
    run = damaged(ws, lambda lines: None, keep_summary=True)
    (run / "summary.yaml").write_bytes(content)
    for args in (("report", "damaged"), ("export", "damaged"), ("compare", "clean", "damaged")):
        proc = bw(*args, cwd=ws)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode == 3, (args, proc.returncode, proc.stderr)
        assert f"{run / 'summary.yaml'}" in proc.stderr and "--resume damaged" in proc.stderr
    clean_ok(bw("run", "--resume", "damaged", cwd=ws))  # which writes it again
    clean_ok(bw("report", "damaged", cwd=ws))


def test_a_sample_printing_what_utf8_cannot_hold_does_not_stop_the_run(tmp_path: Path, bw: Runner) -> None:
    """A lone surrogate in a sample's output and error (Python passes them through): the run
    finishes, the record holds U+FFFD, every reader reads it."""
    ws = _workspace(tmp_path)
    source = ws / "tasks" / "small.yaml"
    source.write_text(source.read_text().replace(
        "def f(a, b):\n            return a - b",
        "def f(a, b):\n            print(\"\\ud800 out\")\n            raise ValueError(\"\\udc80\")", 1))
    proc = bw("run", "configs/c.yaml", "--run-id", "odd", cwd=ws)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(ws / "results" / "odd" / "records.jsonl")
    odd = [r for r in records if r["task"] == "t0" and r["test_case"]]
    assert odd and all("\ufffd" in (r["output"] or "") + (r["error"] or "") for r in odd)
    assert all(r["outcome"] == "error" for r in odd)
    clean_ok(bw("export", "odd", "--format", "junit", cwd=ws))


def test_an_unexpected_error_is_a_harness_failure_not_a_missed_threshold(
        ws: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Whatever escapes (a bug): exit 3, one line saying so and how to see the traceback."""
    import sys

    from benchwright.cli import app
    from benchwright.results import export

    def broken(*args: object, **kwargs: object) -> str:
        raise RuntimeError("something nobody foresaw")

    monkeypatch.setattr(export, "export", broken)
    monkeypatch.chdir(ws)
    monkeypatch.delenv(app.DEBUG_ENV, raising=False)
    for argv, traceback in ((["benchwright", "export", "clean"], False),
                            (["benchwright", "--debug", "export", "clean"], True)):
        monkeypatch.setattr(sys, "argv", argv)
        with pytest.raises(SystemExit) as info:
            app.main()
        assert info.value.code == 3
        err = capsys.readouterr().err
        assert "RuntimeError: something nobody foresaw" in err and "--debug" in err
        assert ("Traceback" in err) is traceback
