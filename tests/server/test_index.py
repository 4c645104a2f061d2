"""The server's per-run index of records.jsonl and generations.jsonl: what the service gives
from it is exactly what reading the run folder's files line by line gives, while the file grows,
is torn, damaged, replaced or made a symlink."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser

from benchwright.errors import InfraError, InputError
from benchwright.results.folder import RunFolder
from benchwright.results.jsonl import SkippedLines
from benchwright.results.record import Generation, Record
from benchwright.server.service import Service
from benchwright.workspace.workspace import Workspace, init_workspace
from tests.server.conftest import serving, shot

RUN = "idx"


def _batch(n: int, *, fail: bool = False, judge: str | None = None) -> list[Record]:
    base: dict[str, Any] = dict(run_id=RUN, execution_id=f"e{n:03d}", task_source="src", task=f"t{n % 5}",
                                language=("python", "agent")[n % 2], model=("m-a", "m-b", "m-c")[n % 3],
                                sample=n % 2, outcome="fail" if fail else "pass")
    out = [Record(**base, criterion="unit-test", executor="UnitTest", test_case=f"c{i}", unit="success",
                  score=float(i % 2) if fail else 1.0, verdict="fail" if fail and i % 2 == 0 else "pass",
                  code=f"assert f({i})\n", output="x" * (n % 4), difficulty=("easy", None)[n % 2])
           for i in range(3)]
    out.append(Record(**base, criterion="cpu-usage", executor="Cpu", score=None if n % 4 == 0 else n * 1.5,
                      unit="ms", extra_key=n))
    if judge is not None:
        out.append(Record(**base, criterion="judge", executor="Judge", verdict=judge, score=1.0, unit="score"))
    return out


@pytest.fixture
def run(tmp_path: Path) -> tuple[Service, RunFolder]:
    ws = tmp_path / "ws"
    init_workspace(ws)
    folder = RunFolder.create(ws / "results" / RUN, {"run_id": RUN, "config": {}, "task_sources": []})
    for n in range(12):
        folder.append_records(_batch(n, fail=n % 3 == 0, judge=("pass", "fail")[(n // 2) % 2] if n % 2 else None))
        folder.append_generation(Generation(run_id=RUN, execution_id=f"e{n:03d}", task_source="src",
                                            task=f"t{n % 5}", language="python", model="m", provider="p",
                                            sample=0, prompt=f"prompt {n}", code=f"code {n}"))
    return Service(Workspace.open(ws)), folder


def _records_file(folder: RunFolder) -> Path:
    return folder.path / "records.jsonl"


def _damage(folder: RunFolder) -> None:
    """A line that is not UTF-8, one not JSON, one not a record, a blank line, and more records after."""
    with _records_file(folder).open("ab") as f:
        f.write(b'{"run_id":"idx","execution_id":"e900","task":"\xff"}\n')
        f.write(b"{not json\n")
        f.write(b"[1, 2]\n")
        f.write(b"\n")
    folder.append_records(_batch(20, judge="pass"))


def _tear(folder: RunFolder) -> bytes:
    """A last line cut short, as a kill leaves it; returns the rest of that line."""
    line = Record(run_id=RUN, execution_id="e077", task_source="src", task="t9", language="python",
                  model="m-a", sample=0, criterion="unit-test", executor="UnitTest").model_dump_json() + "\n"
    data = line.encode()
    with _records_file(folder).open("ab") as f:
        f.write(data[:60])
    return data[60:]


# -- what reading the file line by line gives (the service's behaviour before the index) ----------


def _old_records(folder: RunFolder, filters: dict[str, str | None], offset: int, limit: int,
                 skipped: SkippedLines) -> tuple[int, list[dict[str, Any]]]:
    wanted = {k: v for k, v in filters.items() if v is not None}
    total, page = 0, []
    for rec in folder.records(skipped):
        if any(str(getattr(rec, k, None)) != v for k, v in wanted.items()):
            continue
        if offset <= total < offset + limit:
            page.append(rec.model_dump(mode="json"))
        total += 1
    return total, page


def _old_explore(folders: list[RunFolder], filters: dict[str, str | None], sort: str | None, descending: bool,
                 offset: int, limit: int, skipped: SkippedLines) -> tuple[int, list[dict[str, Any]]]:
    wanted = {k: v for k, v in filters.items() if v}
    matched: list[dict[str, Any]] = []
    for folder in folders:
        records = [r.model_dump(mode="json") for r in folder.records(skipped)]
        judged = {r["execution_id"]: r.get("verdict") for r in records if r.get("criterion") == "judge"}
        matched += [{**r, "run": folder.run_id, "judge_verdict": judged.get(r["execution_id"])}
                    for r in records if all(str(r.get(k)) == v for k, v in wanted.items())]
    if sort:
        present = [r for r in matched if r.get(sort) is not None]
        present.sort(key=lambda r: (isinstance(r[sort], str), r[sort]), reverse=descending)
        matched = present + [r for r in matched if r.get(sort) is None]
    return len(matched), matched[offset:offset + limit]


def _same_records(service: Service, folder: RunFolder) -> None:
    """Every filter, page and the skipped lines: as reading the file gives them."""
    for filters, offset, limit in [({}, 0, 100), ({}, 5, 7), ({"model": "m-b"}, 0, 100), ({"model": "m-b"}, 3, 2),
                                   ({"criterion": "unit-test", "verdict": "fail"}, 0, 50), ({"sample": "1"}, 0, 100),
                                   ({"score": "1.0"}, 0, 100), ({"score": "None"}, 0, 100), ({"extra_key": "4"}, 0, 9),
                                   ({"task": "nowhere"}, 0, 10), ({"model": None, "task": "t1"}, 1, 100)]:
        old_skipped, new_skipped = SkippedLines(), SkippedLines()
        want = _old_records(folder, filters, offset, limit, old_skipped)
        assert service.records(RUN, filters=filters, offset=offset, limit=limit, skipped=new_skipped) == want, filters
        assert new_skipped == old_skipped


def _same_explore(service: Service, folders: list[RunFolder]) -> None:
    ids = [f.run_id for f in folders]
    for filters, sort, descending, offset, limit in [
            ({}, None, False, 0, 100), ({}, "score", True, 2, 9), ({}, "score", False, 0, 200),
            ({"criterion": "unit-test"}, "model", False, 0, 100), ({"language": "agent"}, "judge_verdict", True, 0, 100),
            ({}, "run", True, 10, 20), ({"verdict": "fail", "model": "m-a"}, "test_case", False, 0, 100),
            ({"extra_key": "3"}, None, False, 0, 10), ({}, "extra_key", True, 0, 100), ({"task": ""}, "difficulty", False, 0, 100)]:
        old_skipped, new_skipped = SkippedLines(), SkippedLines()
        want = _old_explore(folders, filters, sort, descending, offset, limit, old_skipped)
        got = service.explore(ids, filters=filters, sort=sort, descending=descending, offset=offset, limit=limit,
                              skipped=new_skipped)
        assert got == want, (filters, sort, descending)
        assert new_skipped == old_skipped


def _old_sample(folder: RunFolder, eid: str) -> tuple[list[dict[str, Any]], Any, SkippedLines]:
    skipped = SkippedLines()
    records = [r.model_dump(mode="json") for r in folder.records(skipped) if r.execution_id == eid]
    gen = folder.generations(only={eid}, skipped=skipped).get(eid)
    return records, gen.model_dump(mode="json") if gen is not None else None, skipped


def _same_sample(service: Service, folder: RunFolder, eid: str) -> None:
    records, generation, skipped = _old_sample(folder, eid)
    got = service.sample(RUN, eid)
    assert (got["records"], got["generation"]) == (records, generation)
    assert got.get("skipped_lines") == (skipped.model_dump(mode="json", exclude_none=True) if skipped else None)


# -- the tests -----------------------------------------------------------------------------------


def test_filters_sorting_paging_and_samples_are_what_reading_the_file_gives(run: tuple[Service, RunFolder]) -> None:
    service, folder = run
    other = RunFolder.create(folder.path.parent / "idx-2", {"run_id": "idx-2", "config": {}, "task_sources": []})
    for n in range(5, 9):
        other.append_records([r.model_copy(update={"run_id": "idx-2"}) for r in _batch(n, judge="fail")])
    _same_records(service, folder)
    _same_explore(service, [folder, other])
    _same_explore(service, [other, folder, other])
    for eid in ("e000", "e005", "e011", "nobody"):
        if eid != "nobody":
            _same_sample(service, folder, eid)
    assert service.records(RUN, filters={})[0] == 12 * 4 + 6


def test_damaged_and_torn_lines_are_skipped_and_counted_as_before(run: tuple[Service, RunFolder]) -> None:
    service, folder = run
    service.records(RUN, filters={})  # the index is made before the damage: it must notice it
    _damage(folder)
    rest = _tear(folder)
    _same_records(service, folder)
    _same_explore(service, [folder])
    _same_sample(service, folder, "e020")
    skipped = SkippedLines()
    service.records(RUN, filters={}, skipped=skipped)
    assert skipped.count == 4 and "torn" in skipped.lines[-1].reason and skipped.lines[-1].execution_id == "e077"
    with _records_file(folder).open("ab") as f:  # the writer finishes the line: it is a record now
        f.write(rest)
    _same_records(service, folder)
    skipped = SkippedLines()
    total, _ = service.records(RUN, filters={"execution_id": "e077"}, skipped=skipped)
    assert total == 1 and skipped.count == 3


def test_a_growing_file_is_read_on_from_where_the_index_stopped(run: tuple[Service, RunFolder]) -> None:
    service, folder = run
    assert service.records(RUN, filters={"model": "m-a"})[0] == 18
    index = service.indexes._records[folder.path]
    rows = index.rows
    for n in range(30, 33):
        folder.append_records(_batch(n))
    assert service.records(RUN, filters={"model": "m-a"})[0] == 18 + 4
    assert index.rows is rows and len(rows) == 12 * 4 + 6 + 3 * 4  # read on, not made again
    _same_records(service, folder)
    _same_sample(service, folder, "e031")
    assert service.samples(RUN)[-1] == {"execution_id": "e032", "task_source": "src", "task": "t2",
                                        "language": "python", "model": "m-c", "sample": 0, "outcome": "pass"}


def test_a_replaced_or_rewritten_file_makes_the_index_again(run: tuple[Service, RunFolder]) -> None:
    service, folder = run
    service.records(RUN, filters={})
    path = _records_file(folder)
    lines = path.read_bytes().splitlines(keepends=True)
    tmp = path.with_name("records.jsonl.repair")
    tmp.write_bytes(b"".join(lines[8:]))  # as a repair does: a new file renamed over the old one
    os.replace(tmp, path)
    _same_records(service, folder)
    assert service.records(RUN, filters={})[0] == len(lines) - 8
    longer = b"".join(lines[:4] + lines[5:] + lines[:3])  # rewritten in place, longer, not only appended
    with path.open("r+b") as f:
        f.write(longer)
    _same_records(service, folder)
    _same_explore(service, [folder])
    path.write_bytes(b"")
    assert service.records(RUN, filters={}) == (0, [])
    path.unlink()
    assert service.records(RUN, filters={}) == (0, []) and service.samples(RUN) == []


def test_a_records_file_made_a_symlink_is_refused_as_before(run: tuple[Service, RunFolder], tmp_path: Path) -> None:
    service, folder = run
    service.records(RUN, filters={})
    path = _records_file(folder)
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(outside)
    for call in (lambda: service.records(RUN, filters={}), lambda: service.explore([RUN], filters={}),
                 lambda: service.sample(RUN, "e001"), lambda: service.samples(RUN)):
        with pytest.raises(InfraError, match="symlink"):
            call()


def test_samples_list_each_sample_once_with_its_gates(run: tuple[Service, RunFolder]) -> None:
    service, _ = run
    samples = service.samples(RUN)
    assert [s["execution_id"] for s in samples] == [f"e{n:03d}" for n in range(12)]
    assert samples[1]["judge"] == "PASS" and samples[3]["judge"] == "FAIL" and "judge" not in samples[0]
    assert samples[0]["outcome"] == "fail" and samples[1]["outcome"] == "pass"


def test_a_summary_is_read_again_when_its_file_changes(run: tuple[Service, RunFolder]) -> None:
    service, folder = run
    made = service.summary(RUN)  # no summary.yaml: computed from the records
    assert made["models"] and "skipped_lines" not in made
    made["models"] = "changed by a caller"
    assert service.summary(RUN)["models"] != "changed by a caller"
    _damage(folder)
    assert service.summary(RUN)["skipped_lines"]["count"] == 3
    folder.write_summary({"models": ["written"]})
    assert service.summary(RUN) == {"models": ["written"]}
    (folder.path / "summary.yaml").write_text("models: [again, longer]\n")
    assert service.summary(RUN) == {"models": ["again", "longer"]}


def test_a_task_source_is_parsed_again_only_when_it_changes(run: tuple[Service, RunFolder]) -> None:
    service, _ = run
    rel = "tasks/mine.yaml"
    path = service.ws.root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("version: 1\nname: mine\ntasks:\n  - name: one\n    languages: [python]\n"
                    "    task: {common_prompt: say one}\n")
    got, first = service.task_source(rel)
    assert [t.name for t in first.tasks] == ["one"] and got.path == rel
    assert service.task_source(rel)[1] is first  # the same version: not parsed again
    path.write_text(path.read_text().replace("name: one", "name: two"))
    assert [t.name for t in service.task_source(rel)[1].tasks] == ["two"]
    path.write_text("tasks: [unclosed\n")
    with pytest.raises(InputError, match="invalid YAML"):
        service.task_source(rel)


def test_listing_the_runs_makes_their_indexes_in_the_background(run: tuple[Service, RunFolder]) -> None:
    service, folder = run
    assert [r["run_id"] for r in service.runs()] == [RUN]
    warming = service.indexes._warming
    assert warming is not None
    warming.join(timeout=60)
    index = service.indexes._records[folder.path]
    assert len(index.rows) == 12 * 4 + 6 and folder.path in service.indexes._generations
    rows = index.rows
    assert service.records(RUN, filters={"model": "m-b"})[0] == 18 and index.rows is rows  # used as made


@pytest.mark.slow
def test_a_served_run_that_grows_shows_its_new_records_and_its_torn_line(run: tuple[Service, RunFolder],
                                                                        browser: Browser) -> None:
    """Through a real `benchwright serve`: its index follows records.jsonl between requests."""
    _, folder = run
    workspace = folder.path.parents[1]
    with serving(workspace) as (base, _proc):
        def records() -> dict[str, Any]:
            got = httpx.get(f"{base}/api/runs/{RUN}/records", params={"limit": 1000, "model": "m-a"}, timeout=60)
            assert got.status_code == 200, got.text
            body: dict[str, Any] = got.json()
            return body

        assert records()["total"] == 18 and records()["skipped_lines"] is None
        for n in range(30, 34):
            folder.append_records(_batch(n))
        rest = _tear(folder)
        body = records()
        assert body["total"] == 18 + 8 and body["skipped_lines"]["count"] == 1
        assert body["skipped_lines"]["lines"][0]["reason"].startswith("torn")
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{base}/ui/explorer?run={RUN}")
        page.wait_for_selector("[data-testid=explorer] tbody tr")
        page.wait_for_selector("text=/of 70 records/")
        shot(page, "index-explorer-growing-run")
        with _records_file(folder).open("ab") as f:
            f.write(rest)
        body = records()
        assert body["total"] == 18 + 8 + 1 and body["skipped_lines"] is None
        page.goto(f"{base}/ui/sample/{RUN}/e077")
        page.wait_for_selector("[data-testid=record-unit-test-sample]")
        sample = httpx.get(f"{base}/api/runs/{RUN}/records", params={"limit": 1000}, timeout=60).json()
        assert sample["total"] == 12 * 4 + 6 + 4 * 4 + 1
        page.close()
