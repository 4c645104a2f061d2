"""The task source format as pydantic models.

The thesis's own forms load as they are: ``version: 1.0``, empty lists written as nothing,
lists written as comma strings, and function names inferred from the golden solution.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator


def _version(value: Any) -> int:
    if value is None:
        return 1
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"version must be 1, not {value!r}") from None
    if number != 1:
        raise ValueError(f"version {value!r} is not supported; this benchwright reads version 1")
    return 1


def _listish(value: Any) -> Any:
    """Accept ``None`` (an empty YAML key) as [] and a single string as a one-item list."""
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list):
        return [v for v in value if v is not None]
    return value


Version = Annotated[int, BeforeValidator(_version)]
StrList = Annotated[list[str], BeforeValidator(_listish)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=False)


class TestCase(Strict):
    """One test case; each is executed and reported on its own."""

    __test__ = False  # not a pytest class

    name: str | None = Field(default=None, description=(
        "The case's name in results (default: the task's name and the case's number)."))
    code: str = Field(default="", description=(
        "The test code; may use ${} templates. Not given for a stdin/stdout case."))
    stdin: str | None = Field(default=None, description=(
        "A stdin/stdout case: the solution runs as a program with this text as its standard "
        "input, and passes when what it prints matches ``stdout`` (line by line, each line "
        "stripped; numbers compared as decimals). Plain text, never a template."))
    stdout: str | None = Field(default=None, description=(
        "The output a stdin/stdout case expects (with ``stdin``). Plain text, never a template."))
    unsplit: str | None = Field(default=None, description=(
        "Set by an importer when this case is a dataset's whole test program, which could not be "
        "split into its checks: why. Each result record of the case repeats it (details.unsplit)."))

    @field_validator("code", mode="before")
    @classmethod
    def _code_text(cls, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> TestCase:
        if self.stdin is None and self.stdout is None:
            if not self.code:
                raise ValueError("a test case needs code (or stdin and stdout)")
        elif self.stdin is None or self.stdout is None:
            raise ValueError("a stdin/stdout test case needs both stdin and stdout")
        elif self.code:
            raise ValueError("a test case is either code or stdin/stdout, not both")
        return self

    @property
    def is_stdio(self) -> bool:
        """Whether this case runs the solution as a program on ``stdin``."""
        return self.stdin is not None


TestList = Annotated[list[TestCase], BeforeValidator(_listish)]


class LanguageSpec(Strict):
    """What a task says for one language."""

    description: str = Field(default="${common_prompt}", description="The prompt for this language.")
    entry_point: str | None = Field(
        default=None, description="Function the tests call; inferred from the golden solution."
    )
    public_tests: TestList = Field(default_factory=list, description=(
        "Test cases the prompt may show (``${public_tests}``); they run with the hidden ones. "
        "A single case may be given without a list."))
    hidden_tests: TestList = Field(default_factory=list, description=(
        "Test cases never shown to the model. A single case may be given without a list."))
    test_prelude: str | None = Field(
        default=None, description="Code run before every test case (imports, helpers)."
    )
    stop: StrList = Field(default_factory=list, description=(
        "Completion tasks asked of a completion API: the sequences that end a continuation of the "
        "prompt. They are sent as stop sequences (the first four) and the continuation is cut at "
        "the first of them, wherever the provider stopped."))
    completion_suffix: str | None = Field(default=None, description=(
        "Completion tasks asked of a completion API: text put after the (cut) continuation to "
        "close what the prompt opened, such as the closing brace a stop sequence removed."))
    solution_header: str | None = Field(default=None, description=(
        "Code placed before the solution and run with it (the imports a dataset's own harness "
        "gives every solution, such as LiveCodeBench's ``from typing import *``); the code shown "
        "for each test case includes it."))


class TaskBody(Strict):
    """The prompts and tests of a task."""

    common_prompt: str = Field(default="", description=(
        "The prompt shared by every language (a template: ``${solution.function_name}``, "
        "``${public_tests}``, ``{% if parameters[...] %}``)."))
    languages_specific: dict[str, LanguageSpec] = Field(default_factory=dict, description=(
        "Per language: its prompt, entry point, tests and prelude."))

    @field_validator("languages_specific", mode="before")
    @classmethod
    def _none_specs(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ({} if v is None else v) for k, v in value.items()}
        return value


class Task(Strict):
    """One problem: prompts per language, tests, golden solutions, metadata."""

    name: str = Field(min_length=1, description="The task's name, unique in its source.")
    type: str | None = Field(default=None, description="What kind of task (free text: `function`...).")
    difficulty: str | None = Field(default=None, description=(
        "A difficulty label (`easy`, `medium`, `hard`...): an execution config can keep only "
        "some, and results are summed by it."))
    area: str | None = Field(default=None, description=(
        "A subject label (`math`, `strings`...): filtered and summed like ``difficulty``."))
    source: str | None = Field(default=None, description=(
        "Where the task comes from (a dataset and its id, for imported tasks)."))
    languages: StrList = Field(default_factory=list, description=(
        "The languages it is offered in (default: those of ``task.languages_specific``)."))
    available_parameters: StrList | None = Field(default=None, description=(
        "The prompt parameters this task's templates use (`all-tests-hidden`...); an execution "
        "config's ``parameters`` applies only those (null: every one)."))
    available_criteria: StrList | None = Field(default=None, description=(
        "The criteria that may measure this task (null: every one the config turns on)."))
    mode: Literal["instruct", "complete"] = Field(default="instruct", description=(
        "`instruct`: the model is asked for a solution; `complete`: it continues the prompt "
        "(a completion task), and the continuation is the solution."))
    release_date: dt.date | None = Field(default=None, description=(
        "When the task was published: a model with a ``cutoff`` gets only the tasks published "
        "after it (what its training could not have seen)."))
    tags: StrList = Field(default_factory=list, description=(
        "Free labels; an execution config can keep only tasks with some."))
    time_limit_s: float | None = Field(default=None, gt=0, description=(
        "Seconds each test case of this task may run (default: the config's limits)."))
    task: TaskBody = Field(default_factory=TaskBody, description="The prompts and tests.")
    golden_solution: dict[str, str] = Field(default_factory=dict, description=(
        "Per language, a correct solution: the ``reference`` model answers with it, and "
        "`benchwright validate --golden` checks that it passes the task's tests."))
    llm_judge_prompt: str | None = Field(default=None, description=(
        "The question the LLM judge is asked about a sample of this task (a template; default: "
        "benchwright's own)."))

    @field_validator("golden_solution", mode="before")
    @classmethod
    def _golden_none(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("name", mode="before")
    @classmethod
    def _name_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value

    def code_languages(self) -> list[str]:
        """The languages the task is offered in (its ``languages``, else its specific prompts)."""
        return list(self.languages) or list(self.task.languages_specific)

    def spec(self, language: str) -> LanguageSpec:
        return self.task.languages_specific.get(language) or LanguageSpec()


class TaskSource(Strict):
    """A YAML file of tasks."""

    version: Version = Field(default=1, description="The format's version: 1.")
    name: str | None = Field(default=None, description="The source's name (default: its file's).")
    description: str | None = Field(default=None, description="What the tasks are, for people.")
    tasks: Annotated[list[Task], BeforeValidator(_listish)] = Field(
        default_factory=list, description="The tasks.")
