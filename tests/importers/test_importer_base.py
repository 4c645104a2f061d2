"""The shared importer machinery: every published file shape gives the same rows, ``--hf`` on a
local copy of a Hub dataset runs the same conversion, and bad requests and files are clear errors
that say where to get the data."""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa  # benchwright[datasets], which scripts/setup installs
import pyarrow.parquet as pq
import pytest

from benchwright.errors import InputError, UserError
from benchwright.importers.base import Importer, ImportRequest
from benchwright.importers.humaneval import HumanEvalImporter, default_data_path
from benchwright.importers.rows import read_rows
from benchwright.registry import registry
from tests.conftest import Runner


def _humaneval_rows(n: int = 3) -> list[dict[str, Any]]:
    with gzip.open(default_data_path(), "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f][:n]


def _dump(source: Any) -> str:
    return json.dumps(source.model_dump(mode="json"), sort_keys=True)


def _shapes(tmp: Path, rows: list[dict[str, Any]]) -> dict[str, Path]:
    """The same rows as JSON Lines, gzipped JSON Lines, a JSON array and Parquet."""
    lines = "".join(json.dumps(r) + "\n" for r in rows)
    paths = {"jsonl": tmp / "d.jsonl", "gz": tmp / "d.jsonl.gz", "json": tmp / "d.json",
             "parquet": tmp / "d.parquet", "gz-named-jsonl": tmp / "e.jsonl"}
    paths["jsonl"].write_text(lines, encoding="utf-8")
    paths["gz"].write_bytes(gzip.compress(lines.encode()))
    paths["gz-named-jsonl"].write_bytes(gzip.compress(lines.encode()))
    paths["json"].write_text(json.dumps(rows, indent=2), encoding="utf-8")
    pq.write_table(pa.Table.from_pylist(rows), paths["parquet"])
    return paths


def test_every_published_file_shape_gives_the_same_task_source(tmp_path: Path) -> None:
    rows = _humaneval_rows()
    importer = HumanEvalImporter()
    sources = {shape: _dump(importer.load(ImportRequest(data=path)))
               for shape, path in _shapes(tmp_path, rows).items()}
    assert len(set(sources.values())) == 1, sources.keys()
    assert [t.name for t in importer.load(ImportRequest(data=tmp_path / "d.parquet")).tasks] == [
        "HumanEval/0", "HumanEval/1", "HumanEval/2"]


def test_hf_on_a_local_copy_of_the_hub_files_runs_the_same_conversion(tmp_path: Path) -> None:
    rows = _humaneval_rows()
    hub = tmp_path / "hub" / "data"
    hub.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), hub / "test-00000-of-00001.parquet")
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    importer = HumanEvalImporter()
    from_hub = importer.load(ImportRequest(hf=True, hf_path=str(tmp_path / "hub")))
    from_file = importer.load(ImportRequest(data=tmp_path / "d.jsonl"))
    assert _dump(from_hub) == _dump(from_file)


def test_offline_hf_fails_at_once_and_names_where_to_download(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens: the Hub is unreachable
    started = time.monotonic()
    with pytest.raises(UserError) as caught:
        HumanEvalImporter().load(ImportRequest(hf=True))
    assert time.monotonic() - started < 30  # no minute of retries before the answer
    text = str(caught.value)
    assert "openai/openai_humaneval" in text and "cannot be reached" in text
    assert "HumanEval.jsonl.gz" in text and "github.com/openai/human-eval" in text and "--data" in text


def test_a_missing_file_names_the_download_location(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        HumanEvalImporter().load(ImportRequest(data=tmp_path / "HumanEval.jsonl.gz"))
    problem = caught.value.problems[0]
    assert problem.message == "data file not found" and "github.com/openai/human-eval" in problem.hint


def test_a_fifo_or_folder_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    for bad in (fifo, tmp_path):
        with pytest.raises(InputError, match="not a regular file"):
            read_rows(bad)


def test_bad_rows_are_all_reported_with_their_place(tmp_path: Path) -> None:
    good = json.dumps(_humaneval_rows(1)[0])
    path = tmp_path / "d.jsonl"
    path.write_text(f'{good}\n[1, 2]\n{{"task_id": "x"}}\nnot json\n{good}\n')
    with pytest.raises(InputError) as caught:
        HumanEvalImporter().load(ImportRequest(data=path))
    problems = caught.value.problems
    assert [p.line for p in problems] == [2, 3, 4, 5]
    assert "expected a JSON object" in problems[0].message
    assert "missing prompt" in problems[1].message and "github.com/openai/human-eval" in problems[1].hint
    assert "not valid JSON" in problems[2].message
    assert "repeats line 1" in problems[3].message


class _TwoLanguages(Importer):
    name = "two"
    dataset = "Two"
    download = "https://example.org/two"
    file_name = "two_{language}.jsonl"
    languages = {"py": "python", "js": "javascript"}
    subsets = ("small", "big")

    def task(self, row: dict[str, Any], request: ImportRequest) -> None:
        return None


@pytest.mark.parametrize(("request_", "message"), [
    (ImportRequest(), "choose a language with --language (py|js)"),
    (ImportRequest(language="ruby"), "no language 'ruby' (choose from py, js)"),
    (ImportRequest(language="py", subset="huge"), "no subset 'huge' (choose from small, big)"),
    (ImportRequest(language="py", options={"x": "1"}), "takes no --map options"),
    (ImportRequest(language="py", data=Path("a"), hf=True), "not both"),
    (ImportRequest(language="py"), "download two_py.jsonl from https://example.org/two"),
])
def test_bad_requests_say_what_to_change(request_: ImportRequest, message: str) -> None:
    with pytest.raises(UserError) as caught:
        _TwoLanguages().load(request_)
    assert message in str(caught.value)


def test_benchwright_names_of_languages_are_accepted_too() -> None:
    checked = _TwoLanguages().check(ImportRequest(language="javascript"))
    assert checked.language == "js" and _TwoLanguages().language(checked) == "javascript"


def test_importers_are_registry_plugins_listed_by_the_cli(bw: Runner) -> None:
    assert {"humaneval", "humaneval-x", "jsonl"} <= set(registry.names("importer"))
    proc = bw("list", "importers")
    assert proc.returncode == 0, proc.stderr
    for name in ("humaneval", "humaneval-x", "jsonl", "openai/openai_humaneval"):
        assert name in proc.stdout


def test_import_through_the_cli_and_its_errors(bw: Runner, tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist(_humaneval_rows(2)), path)
    out = tmp_path / "he.yaml"
    proc = bw("import", "humaneval", path, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "wrote 2 tasks" in proc.stderr and out.is_file()
    assert bw("validate", out).returncode == 0
    nope = bw("import", "humaneval-z", "--out", out)
    assert nope.returncode == 2 and "did you mean 'humaneval-x'" in nope.stderr
    no_out = bw("import", "humaneval", path)
    assert no_out.returncode == 2 and "--out" in no_out.stderr
    no_lang = bw("import", "humaneval-x", path, "--out", out)
    assert no_lang.returncode == 2 and "--language" in no_lang.stderr
