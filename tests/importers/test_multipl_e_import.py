"""The multipl-e importer: MultiPL-E's rows (as .jsonl, .parquet and the Hub's layout) into tasks
with one test case per check, in each of the eight languages benchwright runs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from benchwright.errors import InputError, UserError
from benchwright.importers.base import ImportRequest
from benchwright.importers.multipl_e import LANGUAGES, MultiPLEImporter
from benchwright.importers.multipl_e_split import block_statements
from benchwright.task.model import Task, TaskSource
from tests.conftest import FIXTURES, Runner

DATA = FIXTURES / "multipl-e"

CHECK_LINE = {
    "cpp": re.compile(r"^\s*assert\(.*\);$"), "java": re.compile(r"^\s*assert\(.*\);$"),
    "js": re.compile(r"^\s*assert\.deepEqual\(.*\);$"), "ts": re.compile(r"^\s*assert\.deepEqual\(.*\);$"),
    "go": re.compile(r"^\s*\{ actual: .*, expected: .* \},$"), "rs": re.compile(r"^\s*assert_eq!\(.*\);$"),
    "sh": re.compile(r"^\s*\[\[ .* \]\]$"), "py": re.compile(r"^\s*assert .*$"),
}
"""A line of MultiPL-E's tests that is one check, per language."""


def _rows(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines()]


def _load(data: Path, language: str, subset: str | None = None, **kw: Any) -> TaskSource:
    return MultiPLEImporter().load(ImportRequest(data=data, language=language, subset=subset, **kw))


def _render(template: str) -> str:
    env = ImmutableSandboxedEnvironment(variable_start_string="${", variable_end_string="}",
                                        undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(template).render()


@pytest.mark.parametrize("own", sorted(LANGUAGES))
@pytest.mark.parametrize("subset", ["humaneval", "mbpp"])
def test_each_check_is_a_case(own: str, subset: str) -> None:
    rows = _rows(f"{subset}-{own}.jsonl")
    source = _load(DATA / f"{subset}-{own}.jsonl", own, subset)
    bw = LANGUAGES[own]
    assert source.name == f"multipl-e-{bw}" + ("" if subset == "humaneval" else "-mbpp")
    assert [t.name for t in source.tasks] == [r["name"] for r in rows]
    for task, row in zip(source.tasks, rows, strict=True):
        spec = task.spec(bw)
        assert task.mode == "complete" and task.languages == [bw] and task.source == "nuprl/MultiPL-E"
        assert task.tags == ["multipl-e", subset] and not task.golden_solution
        checks = [line.strip() for line in row["tests"].splitlines() if CHECK_LINE[own].match(line)]
        assert len(checks) >= 3
        assert [c.name for c in spec.hidden_tests] == [f"assert-{i + 1}" for i in range(len(checks))]
        assert not any(c.unsplit for c in spec.hidden_tests)
        entry = spec.entry_point
        assert entry and entry in row["prompt"]
        for case, check in zip(spec.hidden_tests, checks, strict=True):
            code = _render(case.code)
            if own == "java":  # the class's static method, called from benchwright's test class
                check = check.replace(f"{entry}(", f"Problem.{entry}(")
            if own == "go":
                check = "tc := test" + check.rstrip(",")
            assert check in code.splitlines(), (own, code)
            assert not code.startswith("}")  # what closes the prompt's code is not a test


def test_case_code_per_language() -> None:
    """The code of one case in each language: the check and the candidate binding it needs."""
    first = {own: _load(DATA / f"humaneval-{own}.jsonl", own).tasks[0].spec(LANGUAGES[own])
             for own in LANGUAGES}
    assert first["cpp"].hidden_tests[0].code == (
        "auto candidate = has_close_elements;\nassert(candidate((std::vector<float>({(float)1.0f, (float)2.0f, "
        "(float)3.9f, (float)4.0f, (float)5.0f, (float)2.2f})), (0.3f)) == (true));")
    assert first["rs"].hidden_tests[1].code == (
        "let candidate = has_close_elements;\n"
        "assert_eq!(candidate(vec![1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05), false);")
    assert first["js"].hidden_tests[0].code == (
        "let candidate = has_close_elements;\n"
        "assert.deepEqual(candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3),true);")
    assert first["ts"].hidden_tests[0].code == first["js"].hidden_tests[0].code
    assert first["java"].hidden_tests[0].code.startswith("assert(Problem.hasCloseElements((new ArrayList")
    assert first["go"].hidden_tests[6].code == (
        "candidate := has_close_elements\ntype test struct {\n\tactual   interface{}\n\texpected interface{}\n}\n"
        "tc := test{ actual: candidate([]float64{1.1, 2.2, 3.1, 4.1, 5.1}, 0.5), expected: false }\n"
        'if fmt.Sprintf("%v", tc.actual) != fmt.Sprintf("%v", tc.expected) {\n'
        "\tt.Errorf(\"expected '%s', got '%s'\", tc.expected, tc.actual)\n}")
    assert first["go"].test_prelude == 'import "fmt"\n'
    assert first["sh"].hidden_tests[0].code == '[[ $(candidate "1.0 2.0 3.9 4.0 5.0 2.2" "0.3") = "true" ]]'
    assert first["sh"].test_prelude == 'candidate() {\n    has_close_elements "$@"\n}\n'
    assert first["py"].hidden_tests[0].code == "assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True"
    assert first["py"].test_prelude is not None and "candidate = has_close_elements" in first["py"].test_prelude
    assert "test_check" not in first["py"].test_prelude


@pytest.mark.parametrize("own", sorted(LANGUAGES))
def test_prompts_render_as_published(own: str) -> None:
    """The description is MultiPL-E's prompt, but for what benchwright's separate test files
    make wrong: Go's imports for the tests, Java's org.javatuples import."""
    rows = _rows(f"humaneval-{own}.jsonl")
    for task, row in zip(_load(DATA / f"humaneval-{own}.jsonl", own).tasks, rows, strict=True):
        shown = _render(task.spec(LANGUAGES[own]).description)
        prompt = row["prompt"]
        if own == "go":
            prompt = prompt.replace('import (\n    "testing"\n    "fmt"\n)\n\n', "")
        if own == "java":
            prompt = prompt.replace("import org.javatuples.*;\n", "")
        assert shown == prompt
        assert shown.endswith("{\n") or own == "py"


def test_subsets_and_languages_are_checked(tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text((DATA / "humaneval-rs.jsonl").read_text() + (DATA / "mbpp-rs.jsonl").read_text())
    assert [t.name for t in _load(mixed, "rs").tasks] == [
        "HumanEval_0_has_close_elements", "HumanEval_27_flip_case"]
    assert [t.name for t in _load(mixed, "rust", "mbpp").tasks] == ["mbpp_3_is_not_prime"]
    with pytest.raises(UserError, match="choose a language with --language"):
        _load(mixed, None)  # type: ignore[arg-type]
    with pytest.raises(UserError, match="no language 'kotlin'"):
        _load(mixed, "kotlin")
    with pytest.raises(UserError, match="no subset 'apps'"):
        _load(mixed, "rs", "apps")
    with pytest.raises(InputError) as info:
        _load(DATA / "humaneval-go.jsonl", "rs")
    problem = info.value.problems[0]
    assert problem.path == "line 1" and "'go_test.go', not 'rs'" in problem.message
    assert problem.hint == "import it with --language go"


def test_parquet_and_jsonl_give_the_same_tasks(tmp_path: Path) -> None:
    import pyarrow as pa  # benchwright[datasets]: scripts/setup installs it
    import pyarrow.parquet as pq

    rows = _rows("humaneval-java.jsonl")
    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert _load(path, "java") == _load(DATA / "humaneval-java.jsonl", "java")


def _hub_folder(root: Path) -> Path:
    """A local copy of the Hub repository's layout: README.md with the configurations (as
    ``push_to_hub(config_name=...)`` writes it) and ``<config>/test-00000-of-00001.parquet``."""
    import pyarrow as pa  # benchwright[datasets]: scripts/setup installs it
    import pyarrow.parquet as pq

    configs = []
    for subset in ("humaneval", "mbpp"):
        for own in ("cpp", "go"):
            config = f"{subset}-{own}"
            (root / config).mkdir(parents=True)
            pq.write_table(pa.Table.from_pylist(_rows(f"{config}.jsonl")),
                           root / config / "test-00000-of-00001.parquet")
            configs.append(f"- config_name: {config}\n  data_files:\n  - split: test\n"
                           f"    path: {config}/test-*\n")
    (root / "README.md").write_text("---\nconfigs:\n" + "".join(configs) + "---\n")
    return root


def test_hub_layout_through_hf_path(tmp_path: Path, bw: Runner) -> None:
    import datasets  # noqa: F401  (--hf reads through it; a missing install fails, never skips)
    hub = _hub_folder(tmp_path / "hub")
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf"), "HF_DATASETS_CACHE": str(tmp_path / "hf")}
    out = tmp_path / "go.yaml"
    proc = bw("import", "multipl-e", "--hf", "--hf-path", hub, "--language", "go", "--subset", "mbpp",
              "--out", out, env=env)
    assert proc.returncode == 0, proc.stderr
    from ruamel.yaml import YAML

    data = YAML(typ="safe").load(out.read_text())
    assert data["name"] == "multipl-e-go-mbpp"
    assert [t["name"] for t in data["tasks"]] == ["mbpp_3_is_not_prime"]
    from_file = _load(DATA / "mbpp-go.jsonl", "go", "mbpp")
    assert TaskSource.model_validate(data).tasks == from_file.tasks
    proc = bw("import", "multipl-e", "--hf-path", hub, "--language", "cpp", "--out", tmp_path / "c.yaml", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "wrote 2 tasks" in proc.stderr


def test_unsplit_program_is_one_case_that_says_why(tmp_path: Path) -> None:
    row = _rows("humaneval-cpp.jsonl")[0]
    row["tests"] = row["tests"].replace("    assert(candidate", "    long x = 1;\n    assert(candidate", 1)
    row["tests"] = row["tests"].replace(
        "(0.05f)) == (false));\n", "(0.05f)) == (false));\n    printf(\"%ld\\n\", x);\n", 1)
    path = tmp_path / "odd.jsonl"
    path.write_text(json.dumps(row) + "\n")
    spec = _load(path, "cpp").tasks[0].spec("cpp")
    [case] = spec.hidden_tests
    assert case.unsplit == "the test function has statements other than checks after its first check"
    assert case.code.startswith("auto candidate = has_close_elements;\nlong x = 1;\nassert(")
    assert case.code.count("assert(") == 7


def test_java_tasks_needing_javatuples_are_left_out_and_named(tmp_path: Path) -> None:
    rows = _rows("humaneval-java.jsonl")
    tuple_row = dict(rows[1], name="HumanEval_155_even_odd_count",
                     prompt=rows[1]["prompt"].replace("public static String flipCase(String string)",
                                                      "public static Pair<Long, Long> evenOddCount(long num)"),
                     tests="    }\n    public static void main(String[] args) {\n"
                           "    assert(evenOddCount((7l)).equals((Pair.with(0l, 1l))));\n    }\n\n}\n")
    path = tmp_path / "java.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [rows[0], tuple_row]))
    source = _load(path, "java")
    assert [t.name for t in source.tasks] == ["HumanEval_0_has_close_elements"]
    assert source.description is not None
    assert "left out 1 task(s)" in source.description
    assert "HumanEval_155_even_odd_count (needs org.javatuples)" in source.description


def test_bad_rows_are_located_errors(tmp_path: Path) -> None:
    rows = _rows("humaneval-go.jsonl")
    broken = dict(rows[0], tests=rows[0]["tests"].replace("tests := []test{", "cases := []test{"))
    missing = {k: v for k, v in rows[1].items() if k != "tests"}
    path = tmp_path / "go.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [broken, missing]))
    with pytest.raises(InputError) as info:
        _load(path, "go")
    first, second = info.value.problems
    assert first.file == str(path) and first.path == "line 1"
    assert "no 'tests := []test{...}' table" in first.message
    assert second.path == "line 2" and "missing tests" in second.message


def test_hostile_rows_run_nothing_and_render_literally(tmp_path: Path) -> None:
    """Dataset text is data: no test program is executed at import, and template syntax in a
    prompt or a check comes out of rendering unchanged."""
    marker = tmp_path / "pwned"
    row = _rows("humaneval-py.jsonl")[0]
    row["tests"] = (f"import os\nos.system('touch {marker}')\n" + row["tests"]).replace(
        "def test_check():", f"def test_check():\n    open('{marker}', 'w')\n", 1)
    row["prompt"] = row["prompt"].replace("given threshold.", "given ${threshold} {% raw %}{{x}}{# c #}")
    row["tests"] = row["tests"].replace("0.3) == True", "0.3) == ('${x}' != '')", 1)
    path = tmp_path / "py.jsonl"
    path.write_text(json.dumps(row) + "\n")
    task: Task = _load(path, "py").tasks[0]
    assert not marker.exists()
    spec = task.spec("python")
    assert _render(spec.description) == row["prompt"]
    assert _render(spec.hidden_tests[0].code) == "assert candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == ('${x}' != '')"
    assert spec.test_prelude is not None and "os.system" in _render(spec.test_prelude)


def test_block_statements_respects_strings_and_comments() -> None:
    body = '  assert(f("a;b") == 1); // c; d\n  assert(g(\'}\') == 2);\n  /* x; */ assert(h({1, 2}));\n'
    assert block_statements(body) == ['assert(f("a;b") == 1); // c; d', "assert(g('}') == 2);",
                                      "/* x; */ assert(h({1, 2}));"]
    assert block_statements('assert(f("unterminated);') is None
    assert block_statements("assert(f(1));\n  trailing") is None


def test_listed_and_validated(tmp_path: Path, bw: Runner) -> None:
    proc = bw("list", "importers")
    assert proc.returncode == 0 and "multipl-e" in proc.stdout
    out = tmp_path / "ts.yaml"
    proc = bw("import", "multipl-e", DATA / "humaneval-ts.jsonl", "--language", "typescript", "--out", out)
    assert proc.returncode == 0, proc.stderr
    proc = bw("validate", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize(("own", "suffix"), [
    ("cpp", "\n}\n"), ("rs", "\n}\n"), ("sh", "\n}\n"), ("java", "\n    }\n}\n"),
    ("go", None), ("js", None), ("ts", None), ("py", None)])
def test_stop_tokens_and_the_closing_text_travel_with_the_task(own: str, suffix: str | None) -> None:
    """A completion model is stopped by MultiPL-E's stop tokens; what MultiPL-E's test program
    closes before its tests (and Java's class after them) is put after the continuation."""
    row = _rows(f"humaneval-{own}.jsonl")[0]
    task = _load(DATA / f"humaneval-{own}.jsonl", own).tasks[0]
    spec = task.spec(LANGUAGES[own])
    assert spec.stop == row["stop_tokens"]
    assert spec.completion_suffix == suffix
