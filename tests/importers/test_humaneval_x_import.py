"""The humaneval-x importer in Python, C++ and Java, on the first five tasks of each published
file (tests/fixtures/humaneval-x, unchanged) and on rows written here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from benchwright.errors import InputError, UserError
from benchwright.importers.base import ImportRequest
from benchwright.importers.humaneval import split_check
from benchwright.importers.humaneval_x import HumanEvalXImporter
from benchwright.importers.humaneval_x_cpp import split_program as split_cpp
from benchwright.importers.humaneval_x_java import split_program as split_java
from benchwright.importers.statements import needed, split_statements
from benchwright.task.model import TaskSource

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "humaneval-x"
LANGUAGES = {"python": "python", "cpp": "cpp", "java": "java"}


def _load(language: str, data: Path | None = None) -> TaskSource:
    path = data or FIXTURES / f"humaneval_{language}_first5.jsonl"
    return HumanEvalXImporter().load(ImportRequest(data=path, language=language))


def _rows(language: str) -> list[dict[str, Any]]:
    path = FIXTURES / f"humaneval_{language}_first5.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _render(template: str) -> str:
    env = ImmutableSandboxedEnvironment(variable_start_string="${", variable_end_string="}",
                                        undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    return env.from_string(template).render()


def _write(tmp_path: Path, rows: list[dict[str, Any]]) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_every_row_is_a_completion_task_with_its_prompt_and_golden(language: str) -> None:
    source = _load(language)
    rows = _rows(language)
    assert source.name == f"humaneval-x-{language}"
    assert [t.name for t in source.tasks] == [r["task_id"] for r in rows]
    for task, row in zip(source.tasks, rows, strict=True):
        spec = task.spec(language)
        assert task.mode == "complete" and task.type == "completion"
        assert task.languages == [language] and task.source == "THUDM/humaneval-x"
        assert _render(spec.description) == row["prompt"]
        assert task.golden_solution[language] == row["prompt"] + row["canonical_solution"]
        assert spec.entry_point and spec.entry_point in row["declaration"]
        assert spec.hidden_tests and not spec.public_tests
        assert all(c.unsplit is None for c in spec.hidden_tests)
    again = TaskSource.model_validate(source.model_dump(mode="json", exclude_none=True))
    assert again == source


def test_python_asserts_are_cases_and_check_is_not_called_in_the_prelude() -> None:
    task = _load("python").tasks[0]
    spec = task.spec("python")
    assert spec.entry_point == "has_close_elements"
    assert [c.name for c in spec.hidden_tests] == [f"assert-{n}" for n in range(1, 8)]
    assert spec.hidden_tests[1].code == (
        "assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.05) == False")
    assert spec.test_prelude is not None
    assert "METADATA" in spec.test_prelude and "check(" not in spec.test_prelude


def test_cpp_asserts_are_cases_with_the_declarations_they_use() -> None:
    tasks = {t.name: t.spec("cpp") for t in _load("cpp").tasks}
    first = tasks["CPP/0"]
    assert first.entry_point == "has_close_elements"
    assert [c.name for c in first.hidden_tests] == [f"assert-{n}" for n in range(1, 8)]
    assert first.hidden_tests[0].code == (
        "vector<float> a={1.0, 2.0, 3.9, 4.0, 5.0, 2.2};\nassert (has_close_elements(a, 0.3)==true);")
    assert first.hidden_tests[2].code == (
        "assert (has_close_elements({1.0, 2.0, 5.9, 4.0, 5.0}, 0.95) == true);")
    assert first.test_prelude is None
    helpers = tasks["CPP/1"].test_prelude or ""
    assert helpers.startswith("bool issame(vector<string> a,vector<string>b){")
    assert "assert.h" not in helpers and "NDEBUG" not in helpers


def test_java_list_elements_are_cases_with_the_solution_object() -> None:
    spec = _load("java").tasks[0].spec("java")
    assert spec.entry_point == "hasCloseElements"
    assert [c.name for c in spec.hidden_tests] == [f"check-{n}" for n in range(1, 8)]
    assert spec.hidden_tests[1].code == (
        "Solution s = new Solution();\n"
        "assert !s.hasCloseElements(new ArrayList<>(Arrays.asList(1.0, 2.0, 3.9, 4.0, 5.0, 2.2)), 0.05);")
    assert spec.test_prelude == "import java.util.*;\nimport java.lang.*;"


def test_a_cpp_loop_with_an_assert_is_one_case_after_what_it_needs() -> None:
    prelude, cases = split_cpp(
        "#undef NDEBUG\n#include<assert.h>\nint main(){\n    double solution;\n    int unused = 3;\n"
        "    for (int i=0;i<10;i++)\n    {\n        solution = f(i);\n        assert (solution > 0);\n"
        "    }\n    assert (f(2) == 4);\n}\n")
    assert prelude == ""
    assert [c.code for c in cases] == [
        "double solution;\nfor (int i=0;i<10;i++)\n{\n    solution = f(i);\n    assert (solution > 0);\n}",
        "assert (f(2) == 4);",
    ]


def test_a_variable_changed_between_asserts_is_changed_in_the_later_case() -> None:
    _, cases = split_cpp("int main(){\n  vector<int> v={1};\n  assert (f(v)==1);\n"
                         "  v.push_back(2);\n  assert (f(v)==2);\n  return 0;\n}\n")
    assert [c.code for c in cases] == [
        "vector<int> v={1};\nassert (f(v)==1);",
        "vector<int> v={1};\nv.push_back(2);\nassert (f(v)==2);",
    ]


def test_a_cpp_program_without_main_or_asserts_is_one_unsplit_case() -> None:
    _, cases = split_cpp("void helper(){}\n")
    assert len(cases) == 1 and cases[0].unsplit and "main" in cases[0].unsplit
    _, cases = split_cpp("int main(){\n  if (f(1) != 2) abort();\n  return 0;\n}\n")
    assert [c.code for c in cases] == ["if (f(1) != 2) abort();"]
    assert cases[0].unsplit and "no assert" in cases[0].unsplit


def test_java_checks_beside_the_list_keep_their_order_and_helpers_go_to_the_prelude() -> None:
    prelude, cases = split_java(
        "public class Main {\n    static Random rand = new Random(42);\n"
        "    public static void main(String[] args) throws Exception {\n"
        "        Solution s = new Solution();\n"
        "        Map<String, Integer> m = new HashMap<>();\n        m.put(\"a\", 1);\n"
        "        List<Boolean> correct = Arrays.asList(\n"
        "                s.f(m) == 1,\n                !s.g(\"x, y\")\n        );\n"
        "        if (correct.contains(false)) {\n            throw new AssertionError();\n        }\n"
        "        for (int i = 0; i < 3; i++) {\n            int x = rand.nextInt(9), y = x;\n"
        "            if (s.h(x) != y) {\n                throw new AssertionError();\n            }\n"
        "        }\n    }\n}\n", ["import java.util.*;", "import java.security.*;"])
    assert prelude == "import java.util.*;\nimport java.security.*;\nstatic Random rand = new Random(42);"
    assert [c.name for c in cases] == ["check-1", "check-2", "check-3"]
    assert cases[0].code == ('Solution s = new Solution();\nMap<String, Integer> m = new HashMap<>();\n'
                             'm.put("a", 1);\nassert s.f(m) == 1;')
    assert cases[1].code == 'Solution s = new Solution();\nassert !s.g("x, y");'
    assert cases[2].code.startswith("Solution s = new Solution();\nfor (int i = 0; i < 3; i++) {")


def test_a_java_list_nobody_checks_is_not_split_into_asserts() -> None:
    _, cases = split_java(
        "public class Main {\n  public static void main(String[] args) {\n"
        "    List<Boolean> correct = Arrays.asList(true, false);\n    System.out.println(correct);\n"
        "  }\n}\n", [])
    assert len(cases) == 1 and cases[0].unsplit and "no check" in cases[0].unsplit


def test_statements_and_what_a_check_needs() -> None:
    statements = split_statements(
        '  int a = 1, b = 2;\n  string s = "};{";\n  if (a) { b = 3; } else b = 4;\n'
        "  do { a++; } while (a < 3);\n  auto f = [](int x){ return x; };\n  assert (f(b) == s.size());\n")
    assert [s.text.split("\n")[0] for s in statements] == [
        "int a = 1, b = 2;", 'string s = "};{";', "if (a) { b = 3; } else b = 4;",
        "do { a++; } while (a < 3);", "auto f = [](int x){ return x; };",
        "assert (f(b) == s.size());"]
    assert statements[0].declares == {"a", "b"}
    assert not statements[2].declares
    # the loop changes `a` after the `if` read it: the assert's `b` does not depend on it
    kept = needed(statements[:-1], statements[-1])
    assert kept == [statements[k] for k in (0, 1, 2, 4)]


def test_hostile_python_test_is_parsed_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    row = _rows("python")[0] | {
        "test": f"open({str(marker)!r}, 'w').write('x')\n\ndef check(f):\n    assert f([], 0.1) == False\n"
                f"\ncheck(__import__('os').system('touch {marker}'))\n"}
    source = _load("python", _write(tmp_path, [row]))
    assert not marker.exists()
    spec = source.tasks[0].spec("python")
    assert spec.test_prelude and "open(" in spec.test_prelude and "system" not in spec.test_prelude


def test_bad_rows_are_located_errors(tmp_path: Path) -> None:
    good = _rows("cpp")[0]
    rows = [good | {"declaration": "#include<stdio.h>\n"}, good | {"task_id": "CPP/x", "test": 3}]
    with pytest.raises(InputError) as err:
        _load("cpp", _write(tmp_path, rows))
    text = "\n".join(p.render() for p in err.value.problems)
    assert "rows.jsonl:1: error: line 1: declaration defines no function to complete" in text
    assert "rows.jsonl:2: error: line 2: test is int, not text" in text


def test_rust_is_not_on_the_hub() -> None:
    with pytest.raises(UserError, match="not on the Hugging Face Hub"):
        HumanEvalXImporter().load(ImportRequest(hf=True, language="rust"))


def test_hf_reads_the_hubs_parquet_export(tmp_path: Path) -> None:
    import datasets  # noqa: F401  (--hf reads through it; a missing install fails, never skips)
    import pyarrow as pa  # benchwright[datasets]: scripts/setup installs it
    import pyarrow.parquet as pq
    rows = _rows("java")
    folder = tmp_path / "humaneval-x"
    (folder / "java" / "test").mkdir(parents=True)
    # the export's columns (the Hub copy has no `text`)
    columns = ("task_id", "prompt", "declaration", "canonical_solution", "test", "example_test")
    pq.write_table(pa.table({k: [r[k] for r in rows] for k in columns}),
                   folder / "java" / "test" / "0000.parquet")
    hub = HumanEvalXImporter().load(ImportRequest(hf_path=str(folder), language="java"))
    assert hub.tasks == _load("java").tasks




def test_python_loops_and_setup_after_the_first_assert_are_split_too() -> None:
    source = (
        "def check(add):\n    import random\n\n    assert add(0, 1) == 1\n"
        "    lst = [1, 2]\n    assert add(*lst) == 3\n"
        "    for i in range(100):\n        x = random.randint(0, 9)\n        assert add(x, 0) == x\n"
        "\ncheck(add)\n")
    tests = split_check(source, "add", finest=True)
    assert tests.split
    assert [c.code for c in tests.cases] == [
        "assert add(0, 1) == 1",
        "lst = [1, 2]\nassert add(*lst) == 3",
        "lst = [1, 2]\nfor i in range(100):\n    x = random.randint(0, 9)\n    assert add(x, 0) == x",
    ]
    assert tests.prelude == "candidate = add\nimport random\n"
    assert not split_check(source, "add").split  # HumanEval's own importer keeps one case


def test_a_huge_main_is_one_case_not_a_quadratic_split() -> None:
    _, cases = split_cpp("int main(){\n" + "  x = f(x); assert (x);\n" * 1001 + "}\n")
    assert len(cases) == 1 and cases[0].unsplit and "more than 2000 statements" in cases[0].unsplit
