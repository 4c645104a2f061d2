"""Rendering a task for one language and one set of parameter values."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from benchwright import yamldoc
from benchwright.task.model import Task, TaskSource
from benchwright.task.render import (
    RenderFailure,
    entry_point,
    render_judge_prompt,
    render_task,
    task_parameters,
)
from benchwright.task.template import TemplateFailure

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "thesis"


def load_tasks(text: str) -> list[Task]:
    doc = yamldoc.parse_text(textwrap.dedent(text), "x.yaml")
    return TaskSource.model_validate(doc.data).tasks


def one_task(text: str) -> Task:
    (task,) = load_tasks(text)
    return task


SIMILAR = """\
version: 1
tasks:
  - name: mbpp/2
    difficulty: easy
    area: math
    languages: [python]
    available_parameters: [all-tests-public, all-tests-hidden]
    task:
      common_prompt: |
        Write a function in ${language} named ${solution.function_name}.
        {% if not parameters['all-tests-hidden'] %}Here are the tests:
        ${public_tests}
        {% endif %}{% if parameters['all-tests-public'] %}And more:
        ${hidden_tests}
        {% endif %}
      languages_specific:
        python:
          description: "${common_prompt}Answer in ${language}."
          public_tests:
            - code: assert set(${solution.function_name}((3, 4), (4, 5))) == {4}
          hidden_tests:
            - name: overlap-two
              code: assert set(${solution.function_name}((1, 2, 3), (3, 2))) == {2, 3}
            - code: assert ${solution.function_name}((), ()) == ()
    golden_solution:
      python: |
        def _norm(x):
            return set(x)

        def similar_elements(a, b):
            return tuple(_norm(a) & _norm(b))
"""


def test_tests_are_rendered_into_prompt_as_code():
    task = one_task(SIMILAR)
    r = render_task(task, "python", {"all-tests-public": True})
    assert r.entry_point == "similar_elements"
    assert "Write a function in python named similar_elements." in r.prompt
    assert "assert set(similar_elements((3, 4), (4, 5))) == {4}" in r.prompt
    assert "assert set(similar_elements((1, 2, 3), (3, 2))) == {2, 3}" in r.prompt
    assert "assert similar_elements((), ()) == ()" in r.prompt
    assert "${" not in r.prompt and "{%" not in r.prompt
    assert r.prompt.endswith("Answer in python.")


def test_tests_are_rendered_with_names_and_hidden_flags():
    task = one_task(SIMILAR)
    r = render_task(task, "python", {})
    assert [(t.name, t.hidden) for t in r.tests] == [
        ("public-1", False), ("overlap-two", True), ("hidden-2", True),
    ]
    assert r.tests[0].code == "assert set(similar_elements((3, 4), (4, 5))) == {4}"
    assert r.tests[2].code == "assert similar_elements((), ()) == ()"


def test_parameter_switches_prompt_parts():
    task = one_task(SIMILAR)
    hidden = render_task(task, "python", {"all-tests-hidden": True})
    assert "assert" not in hidden.prompt
    assert "Here are the tests" not in hidden.prompt
    public_only = render_task(task, "python", {})
    assert "Here are the tests" in public_only.prompt
    assert "similar_elements((3, 4), (4, 5))" in public_only.prompt
    assert "similar_elements((1, 2, 3), (3, 2))" not in public_only.prompt  # hidden stays hidden


def test_available_parameters_restrict_what_the_task_sees():
    task = one_task("""\
        tasks:
          - name: t
            available_parameters: [a]
            task:
              common_prompt: "A={% if parameters['a'] %}1{% else %}0{% endif %} B={% if parameters['b'] %}1{% else %}0{% endif %}"
              languages_specific:
                python: {}
    """)
    r = render_task(task, "python", {"a": True, "b": True})
    assert r.prompt == "A=1 B=0"
    assert r.parameters == {"a": True}
    assert task_parameters(task, {"a": True, "b": True}) == {"a": True}
    assert task_parameters(task, {"b": True})["b"] is False


def test_without_available_parameters_every_parameter_applies():
    task = one_task("""\
        tasks:
          - name: t
            task:
              common_prompt: "B={% if parameters['b'] %}1{% else %}0{% endif %}"
              languages_specific:
                python: {}
    """)
    r = render_task(task, "python", {"a": False, "b": True})
    assert r.prompt == "B=1"
    assert r.parameters == {"a": False, "b": True}


def test_tests_can_depend_on_parameters():
    task = one_task("""\
        tasks:
          - name: t
            task:
              languages_specific:
                python:
                  hidden_tests:
                    - code: "assert f() == {% if parameters['strict'] %}1{% else %}2{% endif %}"
            golden_solution:
              python: "def f():\\n    return 1\\n"
    """)
    assert render_task(task, "python", {"strict": True}).tests[0].code == "assert f() == 1"
    assert render_task(task, "python", {}).tests[0].code == "assert f() == 2"


def test_entry_point_given_wins_over_golden():
    task = one_task("""\
        tasks:
          - name: t
            task:
              common_prompt: "call ${solution.function_name}"
              languages_specific:
                python:
                  entry_point: explicit_name
            golden_solution:
              python: "def inferred_name():\\n    pass\\n"
    """)
    r = render_task(task, "python", {})
    assert r.entry_point == "explicit_name"
    assert r.prompt == "call explicit_name"


def test_entry_point_inferred_from_python_golden():
    task = one_task(SIMILAR)
    assert entry_point(task, "python") == "similar_elements"


JAVA_TASK = """\
tasks:
  - name: j
    languages: [java, python]
    task:
      common_prompt: "Implement ${solution.function_name} in ${language}."
      languages_specific:
        java:
          public_tests:
            - code: "assert Solution.${solution.function_name}(1) == 2;"
        python:
          public_tests:
            - code: "assert ${solution.function_name}(1) == 2"
    golden_solution:
      java: |
        import java.util.*;

        public class Solution {
            private static int helper(int x) { return x; }

            public int notStatic(int x) { return x; }

            public static int increment(int x) {
                return helper(x) + 1;
            }

            public static void main(String[] args) {}
        }
      python: |
        def increment_py(x):
            return x + 1
"""


def test_entry_point_inferred_from_java_golden():
    task = one_task(JAVA_TASK)
    r = render_task(task, "java", {})
    assert r.entry_point == "increment"
    assert r.prompt == "Implement increment in java."
    assert r.tests[0].code == "assert Solution.increment(1) == 2;"
    # per language: python has its own golden solution
    py = render_task(task, "python", {})
    assert py.entry_point == "increment_py"
    assert py.tests[0].code == "assert increment_py(1) == 2"


def test_no_entry_point_falls_back_to_solution():
    task = one_task("""\
        tasks:
          - name: t
            task:
              common_prompt: "call ${solution.function_name}"
              languages_specific:
                python: {}
    """)
    r = render_task(task, "python", {})
    assert r.entry_point is None
    assert r.prompt == "call solution"


def test_task_metadata_and_prelude_are_rendered():
    task = one_task("""\
        tasks:
          - name: meta
            difficulty: hard
            area: strings
            tags: [x, y]
            task:
              common_prompt: "${task.name}/${task.difficulty}/${task.area}/${task.tags | join(',')}"
              languages_specific:
                python:
                  test_prelude: "def check_${solution.function_name}():\\n    return True\\n"
                  entry_point: solve
    """)
    r = render_task(task, "python", {})
    assert r.prompt == "meta/hard/strings/x,y"
    assert r.prelude == "def check_solve():\n    return True\n"


def test_render_failure_points_at_failing_hidden_test():
    task = one_task("""\
        tasks:
          - name: t
            task:
              languages_specific:
                python:
                  hidden_tests:
                    - code: assert f() == 1
                    - code: |
                        x = 1
                        assert f() == ${undefined_thing}
    """)
    with pytest.raises(RenderFailure) as info:
        render_task(task, "python", {})
    err = info.value
    assert err.where == ("task", "languages_specific", "python", "hidden_tests", 1, "code")
    assert isinstance(err.failure, TemplateFailure)
    assert err.failure.line == 2
    assert "undefined_thing" in str(err)


def test_render_failure_points_at_public_test():
    task = one_task("""\
        tasks:
          - name: t
            task:
              languages_specific:
                python:
                  public_tests:
                    - code: "assert f() == ${ {% }"
    """)
    with pytest.raises(RenderFailure) as info:
        render_task(task, "python", {})
    assert info.value.where == ("task", "languages_specific", "python", "public_tests", 0, "code")


def test_render_failure_points_at_common_prompt_and_description():
    task = one_task("""\
        tasks:
          - name: t
            task:
              common_prompt: "hello ${nobody}"
              languages_specific:
                python: {}
    """)
    with pytest.raises(RenderFailure) as info:
        render_task(task, "python", {})
    assert info.value.where == ("task", "common_prompt")

    task = one_task("""\
        tasks:
          - name: t
            task:
              common_prompt: fine
              languages_specific:
                python:
                  description: "${common_prompt} ${ ''.__class__ }"
    """)
    with pytest.raises(RenderFailure) as info:
        render_task(task, "python", {})
    assert info.value.where == ("task", "languages_specific", "python", "description")
    assert "unsafe" in str(info.value)


def test_render_failure_points_at_prelude():
    task = one_task("""\
        tasks:
          - name: t
            task:
              languages_specific:
                python:
                  test_prelude: "import os\\n${oops}\\n"
    """)
    with pytest.raises(RenderFailure) as info:
        render_task(task, "python", {})
    assert info.value.where == ("task", "languages_specific", "python", "test_prelude")
    assert info.value.failure.line == 2


def test_judge_prompt():
    task = one_task("""\
        tasks:
          - name: t
            task:
              languages_specific:
                python: {}
            golden_solution:
              python: "def f():\\n    pass\\n"
            llm_judge_prompt: "Task: ${prompt}\\nCode: ${solution_code}\\nFn: ${solution.function_name}"
    """)
    text = render_judge_prompt(task, "python", {}, prompt="do it", solution_code="def f(): ...")
    assert text == "Task: do it\nCode: def f(): ...\nFn: f"
    no_judge = one_task("tasks:\n  - name: u\n")
    assert render_judge_prompt(no_judge, "python", {}, prompt="p", solution_code="c") is None


def test_thesis_task_source_renders():
    doc = yamldoc.load(FIXTURES / "mbbp-sanitized-sample-1.yaml")
    source = TaskSource.model_validate(doc.data)
    task = source.tasks[0]
    r = render_task(task, "python", {"all-tests-hidden": True, "use-llm-judge": True})
    assert r.entry_point == "similar_elements"
    assert r.prompt.startswith("Write a function to find the shared elements")
    assert len(r.tests) == 3
    assert all(t.hidden for t in r.tests)
    assert all("similar_elements(" in t.code for t in r.tests)
