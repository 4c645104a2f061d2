"""The scenario format: a workspace recipe, the scorers, and the tasks an agent is given
(docs/formats.md has its reference).

The field rules are enforced here, so that ``benchwright validate`` reports a
violation like any other config error (file, line, place): ``command`` timeout 1-3600 s,
non-negative ``limit``, non-empty pattern and path lists, a relative ``file_exists`` path with
no parent traversal.
"""

from __future__ import annotations

import functools
import posixpath
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializeAsAny,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from benchwright import yamldoc
from benchwright.agents import repo as repo_forms
from benchwright.errors import InputError, Problem
from benchwright.problems import validate
from benchwright.registry import registry


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


def _relative(path: str) -> str:
    """A path inside the workspace: relative, no ``..``."""
    if not path or path.startswith("/") or ".." in path.replace("\\", "/").split("/"):
        raise ValueError(f"{path!r} must be a relative path inside the workspace, with no '..'")
    return posixpath.normpath(path)


NonEmptyPatterns = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]
ExactPaths = Annotated[list[Annotated[str, Field(min_length=1)]], Field(min_length=1)]


class ScorerBase(Strict):
    """What every scorer type's entry has; a type adds ``type: Literal["its-name"]`` and its fields
    (a plug-in's model subclasses this and is its scorer's ``spec``)."""

    type: str = Field(description="the scorer's type (`benchwright list scorers`)")
    name: str | None = Field(default=None, description="a label; the record's criterion (else the type)")
    required: bool | None = Field(default=None, description="gates the workspace verdict (default per type)")

    @property
    def label(self) -> str:
        return self.name or str(getattr(self, "type", "scorer"))

    def is_required(self) -> bool:
        """Whether a failure fails the workspace verdict: the field, else the type's default."""
        return self.required if self.required is not None else self.default_required

    default_required: ClassVar[bool] = True
    """Whether a scorer of this type gates the verdict when ``required`` is not given."""


class CommandScorer(ScorerBase):
    """The command exits non-zero (the primary test command is usually one)."""

    type: Literal["command"] = Field(description="`command`")
    command: str = Field(min_length=1, description="a shell command run in the agent's workspace")
    timeout_s: int = Field(default=900, ge=1, le=3600, description="seconds it may run")


class AllowedPaths(ScorerBase):
    """A changed file is outside the allowed globs."""

    type: Literal["allowed_paths"] = Field(description="`allowed_paths`")
    patterns: NonEmptyPatterns = Field(description="globs a changed file may match")


class ForbidPaths(ScorerBase):
    """A changed file matches a forbidden glob."""

    type: Literal["forbid_paths"] = Field(description="`forbid_paths`")
    patterns: NonEmptyPatterns = Field(description="globs no changed file may match")


class MaxFilesChanged(ScorerBase):
    """More files changed than the limit."""

    type: Literal["max_files_changed"] = Field(description="`max_files_changed`")
    limit: int = Field(ge=0, description="the most files the agent may change")


class ForbidSecrets(ScorerBase):
    """A secret-like string appears in the diff (a tripwire, not a scanner)."""

    type: Literal["forbid_secrets"] = Field(description="`forbid_secrets`")


class FileExists(ScorerBase):
    """A required relative path is missing after the run."""

    type: Literal["file_exists"] = Field(description="`file_exists`")
    path: str = Field(min_length=1, description="a path relative to the workspace")

    @field_validator("path")
    @classmethod
    def _inside(cls, value: str) -> str:
        return _relative(value)


class TestsUnmodified(ScorerBase):
    """A graded test file was edited."""

    __test__ = False
    type: Literal["tests_unmodified"] = Field(description="`tests_unmodified`")
    paths: ExactPaths = Field(description="the graded test files (relative paths)")


class BaselineUnmodified(ScorerBase):
    """A baseline or scaffolding file was edited."""

    type: Literal["baseline_unmodified"] = Field(description="`baseline_unmodified`")
    paths: ExactPaths = Field(description="the files the agent must leave as they were")


class NoNewSkips(ScorerBase):
    """Net new skip or xfail markers in test files (advisory by default)."""

    type: Literal["no_new_skips"] = Field(description="`no_new_skips`")
    test_globset: list[str] | None = Field(default=None, description=(
        "globs of the test files (default: the usual test file names)"))
    default_required: ClassVar[bool] = False


class AssertionsNotWeakened(ScorerBase):
    """Assertions net-removed from test files (advisory by default)."""

    type: Literal["assertions_not_weakened"] = Field(description="`assertions_not_weakened`")
    test_globset: list[str] | None = Field(default=None, description=(
        "globs of the test files (default: the usual test file names)"))
    default_required: ClassVar[bool] = False


class LlmJudgeNote(ScorerBase):
    """A rubric note for the judge; advisory only (``required`` only changes what the judge reads)."""

    type: Literal["llm_judge"] = Field(description="`llm_judge`")
    rubric: str = Field(min_length=1, description="what the judge checks, in its words")
    default_required: ClassVar[bool] = False


def scorer_model(kind: str) -> type[ScorerBase]:
    """The scenario model of scorer type ``kind``: the ``spec`` of the scorer registered under
    kind ``scorer`` with that name (a built-in or a plug-in's).

    Raises:
        ValueError: no scorer of that type is installed, or it declares no model.
    """
    if not registry.has("scorer", kind):
        raise ValueError(f"unknown scorer type {kind!r}; installed: {', '.join(registry.names('scorer'))}")
    model = getattr(registry.get("scorer", kind).factory, "spec", None)
    if not (isinstance(model, type) and issubclass(model, ScorerBase)):
        raise ValueError(f"the scorer type {kind!r} ({registry.get('scorer', kind).origin}) declares no "
                         "'spec' model (a subclass of benchwright.agents.scenario.ScorerBase)")
    return model


def _scorer(entry: Any) -> Any:
    """One entry of ``scorers:``, validated by the model of its ``type``."""
    if isinstance(entry, ScorerBase) or not isinstance(entry, dict):
        return entry  # a model already, or not a mapping: the field's own check says so
    kind = entry.get("type")
    if not isinstance(kind, str):
        raise ValueError(f"a scorer needs a 'type', one of: {', '.join(registry.names('scorer'))}")
    model = scorer_model(kind)
    try:
        return model.model_validate(entry)
    except ValidationError as e:
        raise ValueError("; ".join(
            f"{'.'.join(str(part) for part in err['loc']) or kind}: {err['msg']}" for err in e.errors())) from None


ScorerSpec = Annotated[SerializeAsAny[ScorerBase], BeforeValidator(_scorer)]
"""A scorer of any installed type (see :func:`scorer_model`): built-in or a plug-in's."""


class WorkspaceRecipe(Strict):
    """Where the agent works: a folder (or a git repository at ``ref``), set up, then committed
    as the baseline; ``hidden`` files are absent while the agent works."""

    repo: str = Field(min_length=1, description="a folder (relative to the scenario file) or a file:// "
                      "URL, inside the workspace or an allowed folder; or a https://, http://, ssh://, git:// "
                      "or user@host:path git URL")
    ref: str | None = Field(default=None, min_length=1,
                            description="a git ref to check out (repo is a git repository)")
    setup: list[str] = Field(default_factory=list, description="shell commands run before the baseline")
    hidden: list[str] = Field(default_factory=list, description="files absent while the agent works")
    setup_timeout_s: int = Field(default=900, ge=1, le=3600,
                                 description="seconds the setup commands may take in all")

    @field_validator("hidden")
    @classmethod
    def _inside(cls, value: list[str]) -> list[str]:
        return [_relative(v) for v in value]

    @field_validator("repo")
    @classmethod
    def _repo(cls, value: str) -> str:
        repo_forms.form(value)  # a refused form is a ValueError: a config error at its line
        return value

    @field_validator("ref")
    @classmethod
    def _ref(cls, value: str | None) -> str | None:
        if value is not None and value.startswith("-"):
            raise ValueError(f"{value!r} starts with '-', which git would read as an option: name a "
                             "branch, tag or commit")
        return value


class AgentTask(Strict):
    """One thing an agent is asked: a prompt, or the turns of a session."""

    name: str = Field(min_length=1, description="the task's name, unique in its scenario")
    prompt: str | None = Field(default=None, description="what the agent is asked (or `turns`)")
    turns: list[Annotated[str, Field(min_length=1)]] | None = Field(default=None, description=(
        "the messages of a session, one after another (or `prompt`)"))
    expected_outcome: Literal["completion", "refusal"] = Field(default="completion", description=(
        "`completion`: the agent should do it; `refusal`: it should decline (a harmful ask)"))
    judge_notes: str | None = Field(default=None, description="what the judge should look for")

    @model_validator(mode="after")
    def _asked(self) -> AgentTask:
        if (self.prompt is None) == (self.turns is None):
            raise ValueError("give a task either `prompt` or `turns` (a non-empty list)")
        if self.turns is not None and not self.turns:
            raise ValueError("`turns` must not be empty")
        return self

    def messages(self) -> list[str]:
        return [self.prompt] if self.prompt is not None else list(self.turns or [])


class Scenario(Strict):
    """A scenario file: where agents work, what they are asked, and how their work is scored."""

    version: Literal[1] = Field(default=1, description="the format's version: 1")
    name: str = Field(min_length=1, description="the scenario's name")
    description: str | None = Field(default=None, description="what it tests, for people")
    workspace: WorkspaceRecipe | None = Field(default=None, description="none: a ledger scenario (judge only)")
    scorers: list[ScorerSpec] = Field(default_factory=list, description=(
        "the checks run on the workspace after the agent, each an entry with a `type`"))
    judge_repeats: int = Field(default=1, ge=1, le=9, description=(
        "how many times the judge grades each agent's work (the verdict is their majority)"))
    tasks: list[AgentTask] = Field(min_length=1, description="what agents are asked, one run each")


def scenario_model() -> type[Scenario]:
    """:class:`Scenario` with ``scorers:`` a union of the installed scorer types' models: what a
    scenario file is read with, so that a problem in a scorer's field is located at that field
    (``scorers[0].command.timeout_s``) and the schema lists every type's fields."""
    return _scenario_model(tuple(installed_scorer_models().items()))


@functools.cache
def _scenario_model(models: tuple[tuple[str, type[ScorerBase]], ...]) -> type[Scenario]:
    if not models:
        return Scenario
    entry: Any = Annotated[Union[tuple(m for _, m in models)], Field(discriminator="type")]  # noqa: UP007
    shown: type[Scenario] = create_model("Scenario", __base__=Scenario, __doc__=Scenario.__doc__,
                                         scorers=(list[entry], Field(default_factory=list)))
    return shown


def scenario_schema() -> dict[str, Any]:
    """The JSON Schema of a scenario (see :func:`scenario_model`)."""
    return scenario_model().model_json_schema(by_alias=True)


def installed_scorer_models() -> dict[str, type[ScorerBase]]:
    """Each installed scorer type's model (built-ins' and plug-ins'); a type that declares none
    is left out (no scenario can use it)."""
    out: dict[str, type[ScorerBase]] = {}
    for name in registry.names("scorer"):
        try:
            out[name] = scorer_model(name)
        except ValueError:
            continue
    return out


def parse_scenario(path: Path) -> tuple[yamldoc.Document | None, Scenario | None, list[Problem]]:
    """Parse and check a scenario without raising; the problems say what is wrong."""
    try:
        doc = yamldoc.load(path)
    except InputError as e:
        return None, None, list(e.problems)
    if not isinstance(doc.data, dict):
        return doc, None, [doc.problem((), "a scenario must be a mapping with 'workspace:', "
                                       "'scorers:' and 'tasks:'")]
    scenario, problems = validate(doc, scenario_model())
    if scenario is not None:
        problems += _check(doc, scenario)
    return doc, (scenario if not problems else None), problems


def _check(doc: yamldoc.Document, scenario: Scenario) -> list[Problem]:
    problems = []
    seen: dict[str, int] = {}
    for i, task in enumerate(scenario.tasks):
        if task.name in seen:
            problems.append(doc.problem(("tasks", i, "name"), f"duplicate task name {task.name!r} "
                                        f"(first at tasks[{seen[task.name]}])"))
        seen.setdefault(task.name, i)
    if scenario.workspace is None and any(s.type != "llm_judge" for s in scenario.scorers):
        problems.append(doc.problem(("scorers",), "a scenario without a workspace (a ledger "
                                    "scenario) is judged only: it can have llm_judge scorers only",
                                    hint="add a 'workspace:' or remove the mechanical scorers"))
    return problems


def load_scenario(path: Path) -> Scenario:
    """Load a scenario or raise :class:`InputError` listing every problem."""
    _, scenario, problems = parse_scenario(path)
    if scenario is None:
        raise InputError([p for p in problems if p.severity == "error"] or problems)
    return scenario


def frozen(scenario: Scenario) -> dict[str, Any]:
    """The scorers as they were when a run started (``run.yaml``): later edits of the scenario
    do not change how that run is graded."""
    return {"name": scenario.name,
            "scorers": [s.model_dump(mode="json", exclude_none=True) for s in scenario.scorers]}
