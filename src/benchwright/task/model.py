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

    name: str | None = None
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
    public_tests: TestList = Field(default_factory=list)
    hidden_tests: TestList = Field(default_factory=list)
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
    common_prompt: str = ""
    languages_specific: dict[str, LanguageSpec] = Field(default_factory=dict)

    @field_validator("languages_specific", mode="before")
    @classmethod
    def _none_specs(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: ({} if v is None else v) for k, v in value.items()}
        return value


class Task(Strict):
    """One problem: prompts per language, tests, golden solutions, metadata."""

    name: str = Field(min_length=1)
    type: str | None = None
    difficulty: str | None = None
    area: str | None = None
    source: str | None = None
    languages: StrList = Field(default_factory=list)
    available_parameters: StrList | None = None
    available_criteria: StrList | None = None
    mode: Literal["instruct", "complete"] = "instruct"
    release_date: dt.date | None = None
    tags: StrList = Field(default_factory=list)
    time_limit_s: float | None = Field(default=None, gt=0)
    task: TaskBody = Field(default_factory=TaskBody)
    golden_solution: dict[str, str] = Field(default_factory=dict)
    llm_judge_prompt: str | None = None

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

    version: Version = 1
    name: str | None = None
    description: str | None = None
    tasks: Annotated[list[Task], BeforeValidator(_listish)] = Field(default_factory=list)
