"""The mbpp importer on rows in both published shapes: splits, names, prelude, escaping, bad and
hostile rows, and the Hub path through a local folder of the dataset's parquet files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from benchwright.errors import InputError, UserError
from benchwright.importers.base import ImportRequest
from benchwright.importers.mbpp import MbppImporter, split_of
from benchwright.task.model import TaskSource
from tests.conftest import FIXTURES

FULL = FIXTURES / "mbpp" / "mbpp.jsonl"
SANITIZED = FIXTURES / "mbpp" / "sanitized-mbpp.json"


def _load(**kwargs: Any) -> TaskSource:
    return MbppImporter().load(ImportRequest(**kwargs))


def _render(text: str) -> str:
    env = ImmutableSandboxedEnvironment(variable_start_string="${", variable_end_string="}",
                                        undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(text).render()


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _write(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "mbpp.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_the_paper_splits_by_task_number() -> None:
    assert [split_of(n) for n in (1, 10, 11, 510, 511, 600, 601, 974, 975)] == [
        "prompt", "prompt", "test", "test", "validation", "validation", "train", "train", None]


def test_full_file_default_is_the_test_split_each_assert_a_case() -> None:
    source = _load(data=FULL)
    assert source.name == "mbpp"
    assert [t.name for t in source.tasks] == ["Mbpp/11", "Mbpp/16", "Mbpp/20"]  # not 2, not 513
    task = source.tasks[0]
    spec = task.spec("python")
    assert task.tags == ["split:test", "mbpp:full"]
    assert [c.name for c in spec.public_tests] == ["test-1", "test-2", "test-3"]
    assert [c.name for c in spec.hidden_tests] == ["challenge-1", "challenge-2"]
    assert spec.public_tests[0].code == 'assert remove_Occ("hello","l") == "heo"'
    assert spec.hidden_tests[1].code == 'assert remove_Occ("","l") == ""'
    assert spec.entry_point == "remove_Occ"
    assert "\r" not in task.golden_solution["python"]  # the file's \r\n line ends
    assert task.golden_solution["python"].startswith("def remove_Occ(s,ch): \n")
    prompt = _render(spec.description)
    assert prompt.startswith("You are an expert Python programmer, and here is your task: Write a "
                             "python function to remove first and last occurrence")
    assert prompt.endswith('these tests:\n\nassert remove_Occ("hello","l") == "heo"\n'
                           'assert remove_Occ("abcda","a") == "bcd"\nassert remove_Occ("PHP","P") == "H"')


def test_every_split_and_all() -> None:
    names = {s: [t.name for t in _load(data=FULL, options={"split": s}).tasks]
             for s in ("prompt", "validation", "all")}
    assert names == {"prompt": ["Mbpp/2"], "validation": ["Mbpp/513"],
                     "all": ["Mbpp/2", "Mbpp/11", "Mbpp/16", "Mbpp/20", "Mbpp/513"]}


def test_a_split_without_rows_is_an_error_not_an_empty_source() -> None:
    with pytest.raises(InputError, match="no MBPP"):  # the fixture has no train row
        _load(data=FULL, options={"split": "train"})


def test_unknown_split_is_refused() -> None:
    with pytest.raises(UserError, match="no MBPP split 'dev'"):
        _load(data=FULL, options={"split": "dev"})


def test_sanitized_json_array_with_test_imports_as_prelude(tmp_path: Path) -> None:
    rows = json.loads(SANITIZED.read_text())
    rows[2]["test_imports"] = ["import math", "from collections import Counter"]
    path = tmp_path / "sanitized-mbpp.json"
    path.write_text(json.dumps(rows, indent=2))
    source = _load(data=path, subset="sanitized", options={"split": "all"})
    assert source.name == "mbpp-sanitized-all"
    assert [t.name for t in source.tasks] == ["Mbpp/2", "Mbpp/11", "Mbpp/56", "Mbpp/61"]
    spec = source.tasks[2].spec("python")
    assert spec.test_prelude == "import math\nfrom collections import Counter\n"
    assert spec.entry_point == "check"  # the function the tests call, not the helper rev()
    assert source.tasks[0].tags == ["split:prompt", "mbpp:sanitized"]
    assert not spec.hidden_tests


def test_a_file_of_the_other_shape_says_which_subset(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        _load(data=SANITIZED, options={"split": "all"})
    text = str(info.value)
    assert "sanitized-mbpp.json:" not in text or "item 0" in text
    assert "a row of the sanitized file, but --subset is full" in text
    assert "--subset sanitized" in text


def test_bad_rows_are_located(tmp_path: Path) -> None:
    rows = _rows(FULL)
    rows[1]["test_list"] = "assert remove_Occ('a', 'a') == ''"  # not a list
    rows[2] = {"task_id": 16, "code": "x = 1"}  # no test_list
    rows[3]["task_id"] = "twenty"
    with pytest.raises(InputError) as info:
        _load(data=_write(tmp_path, rows), options={"split": "all"})
    text = str(info.value)
    assert "mbpp.jsonl:2: error: line 2: test_list is not a list of assert statements" in text
    assert "mbpp.jsonl:3: error: line 3: not a MBPP" in text and "missing test_list" in text
    assert "mbpp.jsonl:4: error: line 4: task_id 'twenty' is not a whole number" in text


def test_hostile_text_is_escaped_and_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    rows = _rows(FULL)[1:2]
    rows[0]["text"] = "Remove ${chars} {% raw %}{{ x }}{# c #}, see {%- endraw %}."
    rows[0]["code"] = f"open({str(marker)!r}, 'w').write('x')\n" + rows[0]["code"]
    rows[0]["test_setup_code"] = f"__import__('os').system('touch {marker}')"
    rows[0]["test_list"][0] = f"assert __import__('pathlib').Path({str(marker)!r}).touch() or True"
    source = _load(data=_write(tmp_path, rows))
    assert not marker.exists()
    spec = source.tasks[0].spec("python")
    assert "Remove ${chars} {% raw %}{{ x }}{# c #}, see {%- endraw %}." in _render(spec.description)
    assert _render(spec.public_tests[0].code) == rows[0]["test_list"][0]
    assert spec.test_prelude is not None
    assert _render(spec.test_prelude) == f"__import__('os').system('touch {marker}')\n"


def test_hub_copy_from_a_local_parquet_folder(tmp_path: Path) -> None:
    import datasets  # noqa: F401  (--hf reads through it; a missing install fails, never skips)
    import pyarrow as pa  # benchwright[datasets]: scripts/setup installs it
    import pyarrow.parquet as pq
    folder = tmp_path / "mbpp-hub"
    rows = _rows(FULL)
    splits = {"test": [r for r in rows if split_of(r["task_id"]) == "test"],
              "prompt": [r for r in rows if split_of(r["task_id"]) == "prompt"],
              "validation": [r for r in rows if split_of(r["task_id"]) == "validation"],
              "train": rows[:1]}
    for split, items in splits.items():
        (folder / "full").mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(items), folder / "full" / f"{split}-00000-of-00001.parquet")
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: full\n  data_files:\n"
        + "".join(f"  - split: {s}\n    path: full/{s}-*\n" for s in splits) + "---\n")
    from_hub = _load(hf=True, hf_path=str(folder))
    from_file = _load(data=FULL)
    assert from_hub.tasks == from_file.tasks
    assert [t.name for t in _load(hf=True, hf_path=str(folder), options={"split": "validation"}).tasks] == [
        "Mbpp/513"]
