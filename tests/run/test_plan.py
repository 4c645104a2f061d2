"""``build_plan``: filters, counts, samples, criteria, and located template errors."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from benchwright import yamldoc
from benchwright.config.model import ExecConfig, ModelSpec
from benchwright.config.settings import Settings
from benchwright.errors import InputError
from benchwright.run.plan import build_plan, execution_id
from benchwright.task.load import LoadedSource
from benchwright.task.model import TaskSource

TASKS = """\
version: 1
name: demo
tasks:
  - name: add
    difficulty: easy
    area: math
    languages: [python, java]
    tags: [arith, core]
    release_date: 2024-06-01
    task:
      common_prompt: Write ${solution.function_name} in ${language}.
      languages_specific:
        python:
          hidden_tests:
            - code: assert add(1, 2) == 3
        java:
          hidden_tests:
            - code: "assert Solution.add(1, 2) == 3;"
    golden_solution:
      python: |
        def add(a, b):
            return a + b
  - name: concat
    difficulty: medium
    area: strings
    languages: [python]
    tags: [core]
    release_date: 2023-01-15
    available_criteria: [unit-test]
    task:
      common_prompt: Concatenate.
      languages_specific:
        python:
          hidden_tests:
            - code: assert concat('a', 'b') == 'ab'
  - name: sort
    difficulty: hard
    area: algorithms
    languages: [python]
    task:
      common_prompt: Sort.
      languages_specific:
        python:
          hidden_tests:
            - code: assert srt([2, 1]) == [1, 2]
  - name: untested
    difficulty: easy
    area: math
    languages: [python]
    release_date: 2025-01-01
    task:
      common_prompt: No tests here.
"""


def source(text: str = TASKS, file: str = "tasks/demo.yaml") -> LoadedSource:
    text = textwrap.dedent(text)
    doc = yamldoc.parse_text(text, file)
    return LoadedSource(path=Path(file), doc=doc, source=TaskSource.model_validate(doc.data),
                        sha256="0" * 64)


def config(**fields: Any) -> ExecConfig:
    data: dict[str, Any] = {"version": 1, "llms": ["reference"]}
    data.update(fields)
    return ExecConfig.model_validate(data)


def plan_for(cfg: ExecConfig, *sources: LoadedSource):
    return build_plan(cfg, "configs/c.yaml", list(sources) or [source()], Settings())


def keys(plan) -> set[tuple[str, str]]:
    return {(u.task.name, u.language) for u in plan.units}


def test_everything_without_filters():
    plan = plan_for(config())
    assert keys(plan) == {("add", "python"), ("add", "java"), ("concat", "python"),
                          ("sort", "python"), ("untested", "python")}
    c = plan.counts["demo"]
    assert (c.tasks, c.filtered_out, c.total) == (4, 0, 5)


def test_filter_by_difficulties():
    plan = plan_for(config(difficulties=["easy"]))
    assert {u.task.name for u in plan.units} == {"add", "untested"}
    c = plan.counts["demo"]
    assert (c.tasks, c.filtered_out, c.total) == (4, 2, 3)


def test_filter_by_areas():
    plan = plan_for(config(areas=["strings", "algorithms"]))
    assert {u.task.name for u in plan.units} == {"concat", "sort"}
    assert plan.counts["demo"].filtered_out == 2


def test_filter_by_languages():
    plan = plan_for(config(languages=["java"]))
    assert keys(plan) == {("add", "java")}
    c = plan.counts["demo"]
    assert (c.tasks, c.filtered_out, c.total) == (4, 3, 1)


def test_filter_by_tags():
    plan = plan_for(config(tags=["arith"]))
    assert {u.task.name for u in plan.units} == {"add"}
    plan = plan_for(config(tags=["core", "nothing"]))
    assert {u.task.name for u in plan.units} == {"add", "concat"}


def test_filter_released_after():
    plan = plan_for(config(released_after="2024-01-01"))
    # 'sort' has no release date: it cannot be shown to be after the date
    assert {u.task.name for u in plan.units} == {"add", "untested"}
    assert plan.counts["demo"].filtered_out == 2


def test_filters_combine():
    plan = plan_for(config(difficulties=["easy", "medium"], areas=["math"], languages=["python"]))
    assert keys(plan) == {("add", "python"), ("untested", "python")}


def test_per_model_cutoff():
    cfg = config(llms=[{"id": "reference", "name": "old", "cutoff": "2023-06-01"},
                       {"id": "reference", "name": "new", "cutoff": "2024-12-31"},
                       {"id": "reference", "name": "all"}])
    plan = plan_for(cfg)
    by_model: dict[str, set[str]] = {}
    for u in plan.units:
        by_model.setdefault(u.model.label, set()).add(u.task.name)
    assert by_model["old"] == {"add", "untested"}
    assert by_model["new"] == {"untested"}
    assert by_model["all"] == {"add", "concat", "sort", "untested"}
    c = plan.counts["demo"]
    assert c.tasks == 4
    assert c.filtered_out == 0  # every task has at least one model
    assert c.total == len(plan.units) == 3 + 1 + 5


def test_cutoff_that_excludes_a_task_for_every_model_counts_as_filtered():
    cfg = config(llms=[{"id": "reference", "cutoff": "2024-12-31"}])
    plan = plan_for(cfg)
    assert {u.task.name for u in plan.units} == {"untested"}
    c = plan.counts["demo"]
    assert (c.tasks, c.filtered_out, c.total) == (4, 3, 1)


def test_samples_give_distinct_deterministic_ids():
    plan = plan_for(config(samples=3, languages=["python"], difficulties=["easy"]))
    units = [u for u in plan.units if u.task.name == "add"]
    assert [u.sample for u in units] == [0, 1, 2]
    ids = [u.execution_id for u in plan.units]
    assert len(ids) == len(set(ids)) == 6
    again = plan_for(config(samples=3, languages=["python"], difficulties=["easy"]))
    assert [u.execution_id for u in again.units] == ids
    assert units[1].execution_id == execution_id("demo", "add", "python", "reference", 1)
    assert plan.counts["demo"].total == 6


def test_execution_ids_differ_by_every_part():
    base = execution_id("s", "t", "python", "m", 0)
    others = [
        execution_id("s2", "t", "python", "m", 0),
        execution_id("s", "t2", "python", "m", 0),
        execution_id("s", "t", "java", "m", 0),
        execution_id("s", "t", "python", "m2", 0),
        execution_id("s", "t", "python", "m", 1),
    ]
    assert len({base, *others}) == 6


def test_two_models_get_different_ids():
    cfg = config(llms=[{"id": "reference", "name": "a"}, {"id": "reference", "name": "b"}],
                 languages=["python"], difficulties=["hard"])
    plan = plan_for(cfg)
    assert len(plan.units) == 2
    assert plan.units[0].execution_id != plan.units[1].execution_id


def test_units_carry_rendered_prompt_and_tests():
    plan = plan_for(config(languages=["python"], difficulties=["easy"]))
    unit = next(u for u in plan.units if u.task.name == "add")
    assert unit.rendered.prompt == "Write add in python."
    assert [t.code for t in unit.rendered.tests] == ["assert add(1, 2) == 3"]
    assert unit.golden == "def add(a, b):\n    return a + b\n"
    assert unit.messages() == [{"role": "user", "content": "Write add in python."}]
    assert unit.resolved.provider == "reference"
    assert unit.task_source == "demo"


def test_criteria_restricted_by_available_criteria():
    plan = plan_for(config(criteria=[{"name": "unit-test"}, {"name": "cpu-usage"},
                                     {"name": "token-count"}]))
    assert plan.criteria == ["unit-test", "cpu-usage", "token-count"]
    by_task = {(u.task.name, u.language): u.criteria for u in plan.units}
    assert by_task[("concat", "python")] == ("unit-test",)
    assert by_task[("add", "python")] == ("unit-test", "cpu-usage", "token-count")
    # a task with no tests: unit-test still compiles or loads the code (untested or error); the
    # other executing criteria do not apply
    assert by_task[("untested", "python")] == ("unit-test", "token-count")


def test_disabled_criteria_are_not_used():
    plan = plan_for(config(criteria=[{"name": "unit-test", "enabled": True},
                                     {"name": "cpu-usage", "enabled": False}]))
    assert plan.criteria == ["unit-test"]
    assert all("cpu-usage" not in u.criteria for u in plan.units)


def test_no_criteria_means_every_installed_one():
    plan = plan_for(config())
    assert {"unit-test", "cpu-usage", "ram-usage", "token-count"} <= set(plan.criteria)


def test_a_disabled_criterion_is_not_run():
    plan = plan_for(config(criteria=[{"name": "unit-test"}, {"name": "java-pmd", "enabled": False}]))
    assert plan.criteria == ["unit-test"]
    assert plan.skipped_criteria == {}
    assert plan.units and all("java-pmd" not in u.criteria for u in plan.units)


def test_unknown_criterion_is_input_error_with_hint():
    cfg = config(criteria=[{"name": "unit-test"}, {"name": "unit-tset"}])
    with pytest.raises(InputError) as info:
        plan_for(cfg)
    (problem,) = info.value.problems
    assert problem.file == "configs/c.yaml"
    assert problem.path == "criteria[1].name"
    assert "unit-tset" in problem.message
    assert "did you mean 'unit-test'" in problem.message


def test_no_models_is_input_error():
    with pytest.raises(InputError) as info:
        build_plan(config(llms=[]), "configs/c.yaml", [source()], Settings())
    assert info.value.problems[0].path == "llms"


def test_unresolvable_model_is_input_error():
    with pytest.raises(InputError) as info:
        plan_for(config(llms=["reference", "nowhere/model-x"]))
    (problem,) = info.value.problems
    assert problem.path == "llms[1]"
    assert "nowhere" in problem.message


def test_models_argument_overrides_config():
    plan = build_plan(config(languages=["java"]), "configs/c.yaml", [source()], Settings(),
                      models=[ModelSpec(id="reference", name="override")])
    assert [u.model.label for u in plan.units] == ["override"]


def test_counts_per_source():
    other = source("""\
        name: other
        tasks:
          - name: x
            difficulty: easy
            languages: [python]
            task:
              common_prompt: X
          - name: y
            difficulty: hard
            languages: [python]
            task:
              common_prompt: Y
    """, file="tasks/other.yaml")
    plan = plan_for(config(difficulties=["easy"]), source(), other)
    assert set(plan.counts) == {"demo", "other"}
    o = plan.counts["other"]
    assert (o.tasks, o.filtered_out, o.total) == (2, 1, 1)


BROKEN = """\
version: 1
tasks:
  - name: fine
    languages: [python]
    task:
      common_prompt: ok
  - name: broken
    languages: [python]
    task:
      common_prompt: ok
      languages_specific:
        python:
          hidden_tests:
            - code: assert f() == 1
            - code: |
                x = 1
                assert f() == ${undefined_thing}
"""


def test_template_error_names_file_path_and_line():
    with pytest.raises(InputError) as info:
        plan_for(config(), source(BROKEN, file="tasks/broken.yaml"))
    (problem,) = info.value.problems
    assert problem.file == "tasks/broken.yaml"
    assert problem.path == "tasks[1].task.languages_specific.python.hidden_tests[1].code"
    assert "undefined_thing" in problem.message
    # line 15 holds 'code: |'; the failing template line is its second: line 17
    assert problem.line == 17
    assert problem.hint
    text = str(info.value)
    assert "tasks/broken.yaml:17" in text


INLINE = """\
version: 1
tasks:
  - name: broken
    languages: [python]
    task:
      common_prompt: ok
      languages_specific:
        python:
          hidden_tests:
            - code: assert f() == 1
            - code: assert f() == ${undefined_thing}
"""


def test_inline_template_error_points_at_its_own_line():
    with pytest.raises(InputError) as info:
        plan_for(config(), source(INLINE, file="tasks/inline.yaml"))
    (problem,) = info.value.problems
    assert problem.path == "tasks[0].task.languages_specific.python.hidden_tests[1].code"
    assert INLINE.splitlines()[10].strip() == "- code: assert f() == ${undefined_thing}"
    assert problem.line == 11  # the line that holds the template, not the one after it


def test_template_error_in_prompt_is_located():
    text = """\
        tasks:
          - name: t
            languages: [python]
            task:
              common_prompt: "Write ${ nope.x } now"
    """
    with pytest.raises(InputError) as info:
        plan_for(config(), source(text, file="tasks/p.yaml"))
    (problem,) = info.value.problems
    assert problem.file == "tasks/p.yaml"
    assert problem.path == "tasks[0].task.common_prompt"
    assert problem.line is not None


def test_all_template_errors_are_reported_at_once():
    text = """\
        tasks:
          - name: a
            languages: [python]
            task:
              common_prompt: "${ one }"
          - name: b
            languages: [python]
            task:
              common_prompt: "${ two }"
    """
    with pytest.raises(InputError) as info:
        plan_for(config(), source(text, file="tasks/two.yaml"))
    paths = [p.path for p in info.value.problems]
    assert paths == ["tasks[0].task.common_prompt", "tasks[1].task.common_prompt"]


def test_filtered_out_task_with_template_error_is_not_rendered():
    text = BROKEN.replace("  - name: fine\n", "  - name: fine\n    difficulty: easy\n")
    text = text.replace("  - name: broken\n", "  - name: broken\n    difficulty: hard\n")
    plan = plan_for(config(difficulties=["easy"]), source(text, file="tasks/b.yaml"))
    assert {u.task.name for u in plan.units} == {"fine"}
    c = plan.counts["b"]
    assert (c.tasks, c.filtered_out, c.total) == (2, 1, 1)
