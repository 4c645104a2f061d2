"""A task made concrete for one language and one set of parameter values."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchwright.lang.base import TestSpec
from benchwright.registry import registry
from benchwright.task.model import Task, TestCase
from benchwright.task.template import Parameters, TemplateFailure, render


@dataclass(frozen=True)
class RenderFailure(Exception):
    """A template of the task failed; ``where`` is the path inside the task."""

    where: tuple[str | int, ...]
    failure: TemplateFailure

    def __str__(self) -> str:
        return str(self.failure)


@dataclass(frozen=True)
class RenderedTask:
    prompt: str
    entry_point: str | None
    tests: list[TestSpec]
    prelude: str | None
    parameters: dict[str, bool]
    header: str | None = None
    """The task's ``solution_header``: code placed before the solution when it runs."""


def task_parameters(task: Task, enabled: dict[str, bool]) -> Parameters:
    """The parameter values a task sees: a parameter applies only if the task offers it."""
    params = Parameters()
    for name, value in enabled.items():
        if task.available_parameters is None or name in task.available_parameters:
            params[name] = value
    return params


def entry_point(task: Task, language: str) -> str | None:
    spec = task.spec(language)
    if spec.entry_point:
        return spec.entry_point
    golden = task.golden_solution.get(language)
    if golden and registry.has("language", language):
        inferred: str | None = registry.create("language", language).infer_entry_point(golden)
        return inferred
    return None


def _render(text: str, ctx: dict[str, Any], where: tuple[str | int, ...]) -> str:
    try:
        return render(text, ctx)
    except TemplateFailure as e:
        raise RenderFailure(where, e) from None


def _tests(cases: list[TestCase], kind: str, ctx: dict[str, Any], language: str) -> list[TestSpec]:
    out = []
    for i, case in enumerate(cases):
        where = ("task", "languages_specific", language, f"{kind}_tests", i, "code")
        code = _render(case.code, ctx, where) if case.code else ""
        out.append(TestSpec(name=case.name or f"{kind}-{i + 1}", code=code, hidden=kind == "hidden",
                            unsplit=case.unsplit, stdin=case.stdin, expected_stdout=case.stdout))
    return out


def shown(test: TestSpec) -> str:
    """A test case as prompts show it (``${public_tests}``): its code, or for a stdin/stdout
    case its input and expected output."""
    if not test.is_stdio:
        return test.code
    return f"Input:\n{test.stdin}\nExpected output:\n{test.expected_stdout}"


def render_task(task: Task, language: str, parameters: dict[str, bool]) -> RenderedTask:
    """Render prompts and tests of ``task`` for ``language``.

    Raises:
        RenderFailure: a template failed (its place in the task is in ``where``).
    """
    spec = task.spec(language)
    params = task_parameters(task, parameters)
    ep = entry_point(task, language)
    ctx: dict[str, Any] = {
        "language": language,
        "parameters": params,
        "solution": {"function_name": ep if ep is not None else "solution"},
        "task": {
            "name": task.name, "difficulty": task.difficulty, "area": task.area,
            "type": task.type, "source": task.source, "tags": list(task.tags),
        },
    }
    public = _tests(spec.public_tests, "public", ctx, language)
    hidden = _tests(spec.hidden_tests, "hidden", ctx, language)
    ctx["public_tests"] = "\n".join(shown(t) for t in public)
    ctx["hidden_tests"] = "\n".join(shown(t) for t in hidden)
    ctx["common_prompt"] = _render(task.task.common_prompt, ctx, ("task", "common_prompt"))
    prompt = _render(spec.description, ctx, ("task", "languages_specific", language, "description"))
    prelude = None
    if spec.test_prelude:
        prelude = _render(spec.test_prelude, ctx, ("task", "languages_specific", language, "test_prelude"))
    header = None
    if spec.solution_header:
        header = _render(spec.solution_header, ctx,
                         ("task", "languages_specific", language, "solution_header"))
    return RenderedTask(prompt, ep, public + hidden, prelude, dict(params), header)


def render_judge_prompt(task: Task, language: str, parameters: dict[str, bool], prompt: str,
                        solution_code: str) -> str | None:
    if not task.llm_judge_prompt:
        return None
    ctx: dict[str, Any] = {
        "language": language,
        "parameters": task_parameters(task, parameters),
        "prompt": prompt,
        "solution_code": solution_code,
        "solution": {"function_name": entry_point(task, language) or "solution"},
        "task": {"name": task.name, "difficulty": task.difficulty, "area": task.area},
    }
    return _render(task.llm_judge_prompt, ctx, ("llm_judge_prompt",))
