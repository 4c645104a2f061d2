"""The execution config format as pydantic models."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from benchwright.task.model import StrList, Version, _listish


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class Toggle(Strict):
    """A parameter or criterion switched on or off (the thesis's ``{name, enabled}``)."""

    name: str = Field(min_length=1, description="The parameter's or criterion's name.")
    enabled: bool = Field(default=True, description="Whether it is on.")


def _toggles(value: Any) -> Any:
    """Accept ``[{name, enabled}]``, ``[name]`` and ``{name: bool}``."""
    value = _listish(value)
    if isinstance(value, dict):
        return [{"name": k, "enabled": bool(v) if v is not None else True} for k, v in value.items()]
    if isinstance(value, list):
        return [{"name": v} if isinstance(v, str) else v for v in value]
    return value


Toggles = Annotated[list[Toggle], BeforeValidator(_toggles)]


class ModelSpec(Strict):
    """A model under test with its own settings."""

    id: str = Field(min_length=1, description="provider/model, or a bare id for the default provider")
    name: str | None = Field(default=None, description="Label in reports (defaults to id).")
    temperature: float | None = Field(default=None, ge=0, le=2,
                                      description="Sampling temperature (unset: the service's).")
    max_tokens: int | None = Field(default=None, gt=0, description="Most tokens of an answer.")
    top_p: float | None = Field(default=None, gt=0, le=1, description="Nucleus sampling's top p.")
    stop: list[str] | None = Field(default=None, description="Strings that end an answer.")
    seed: int | None = Field(default=None, description="The service's sampling seed, where it has one.")
    system_prompt: str | None = Field(default=None, description="A system message sent first.")
    api: Literal["auto", "chat", "completion"] = Field(
        default="auto",
        description="auto: chat for instruct tasks, the completion API for completion tasks; "
        "chat: always chat (completion tasks become 'complete this code'); completion: always "
        "the completion API (instruct prompts are sent as plain text).")
    cutoff: dt.date | None = Field(
        default=None, description="Training cut-off: only tasks released after it are scored."
    )

    @property
    def label(self) -> str:
        return self.name or self.id

    def request_params(self) -> dict[str, Any]:
        """What is sent to the service besides the messages (the system prompt is a message)."""
        return self.model_dump(exclude_none=True, include={"temperature", "max_tokens", "top_p", "stop", "seed"})


def _models(value: Any) -> Any:
    value = _listish(value)
    if isinstance(value, list):
        return [{"id": v} if isinstance(v, str) else v for v in value]
    return value


class Limits(Strict):
    """Limits on running generated code. Time limits work per test case, and per sample."""

    test_timeout_s: float = Field(
        default=10.0, gt=0, le=3600,
        description="Seconds one test case may take: the ceiling of every test's time limit "
        "(a task's own time_limit_s replaces it for that task).")
    sample_timeout_s: float | None = Field(
        default=None, gt=0, le=86_400,
        description="Wall seconds one sample's whole execution may take (building it, starting "
        "its interpreter or JVM and every test case); a test still running then is a timeout. "
        "Default: none of its own; each language derives a backstop from the test limits.")
    golden_factor: float | None = Field(
        default=None, ge=1, le=1000,
        description="Derive each test case's limit from the golden solution's measured time: "
        "min(ceiling, max(golden_floor_s, golden_factor x golden time)), as EvalPlus does. "
        "Measured once at the start of a run and kept in its limits.yaml (a resumed run reuses "
        "it). A task without a golden solution, or whose golden fails, keeps the ceiling. "
        "Unset: off.")
    golden_floor_s: float = Field(
        default=1.0, gt=0, le=3600,
        description="The smallest limit golden_factor derives (seconds): tests of a few "
        "microseconds must not time out on a busy machine.")
    memory_mb: int = Field(default=1024, ge=32, description="Memory one sample's processes may "
                           "use (MiB; a JVM's heap is sized from it).")
    output_bytes: int = Field(default=64 * 1024, ge=1024, description="Output kept of one "
                              "sample's run (bytes; the rest is cut and marked).")
    concurrency: int | None = Field(default=None, ge=1, description="Parallel executions (default: cores).")


class AgentSpec(Strict):
    """A coding agent under test: a preset (a known agent CLI), an external command, or the
    built-in loop over a model."""

    name: str = Field(default="", description="the agent's label in results (default: "
                                             "`preset:model`)")
    preset: str | None = Field(default=None, min_length=1,
                               description="a known agent CLI (`benchwright list agents`), installed "
                                           "with `benchwright agents install NAME`")
    command: str | None = Field(default=None, min_length=1,
                                description="a shell command run in the workspace (sandboxed)")
    builtin: bool = Field(default=False, description="the built-in agent loop over `model`")
    model: str | None = Field(default=None, description="provider/model the agent works with: the "
                                                        "built-in loop's, or the one a preset or a "
                                                        "command reaches through benchwright's "
                                                        "loopback model endpoint")
    options: dict[str, Any] = Field(default_factory=dict,
                                    description="preset-specific options (docs/agents/<preset>.md)")
    timeout_s: int = Field(default=900, ge=1, le=86_400, description="wall seconds for the agent's whole run")
    max_steps: int = Field(default=30, ge=1, le=10_000, description="built-in agent: tool calls in all")
    max_tokens: int = Field(default=200_000, ge=1, description=(
        "prompt + completion tokens in all: the built-in agent's limit (default 200000); for an "
        "agent with `model:` a budget only when set (its requests then fail once it is spent)"))
    network: bool | None = Field(default=None, description=(
        "the agent may reach the network; default: no for a preset or an agent with `model:` "
        "(it reaches its model through benchwright's endpoint), yes for a bare command"))
    pass_env: StrList = Field(default_factory=list,
                              description="environment variables handed to a command agent (its API key)")
    files: StrList = Field(default_factory=list,
                           description="files (relative to the workspace) a command agent finds in "
                                       "$BENCHWRIGHT_AGENT_DIR, e.g. its own script")
    mounts: StrList = Field(default_factory=list,
                            description="host folders (inside the workspace or a folder the admin "
                                        "allows) shown read-only to the agent at the same path")

    @model_validator(mode="after")
    def _kind(self) -> AgentSpec:
        kinds = [k for k, on in (("preset", self.preset is not None), ("command", self.command is not None),
                                 ("builtin", self.builtin)) if on]
        if len(kinds) != 1:
            raise ValueError("an agent has exactly one of `preset:` (a known agent CLI, with `model:`), "
                             "`command:` (an external agent) or `builtin: true` with `model:` (the "
                             "built-in loop)" + (f"; this one has {' and '.join(kinds)}" if kinds else ""))
        if (self.builtin or self.preset is not None) and not self.model:
            raise ValueError(f"the {'built-in agent' if self.builtin else f'preset {self.preset!r}'} "
                             "needs `model: provider/model`")
        if not self.name:
            if self.preset is None:
                raise ValueError("an agent needs `name:` (its label in results)")
            self.name = f"{self.preset}:{self.model}"
        return self

    @property
    def proxied(self) -> bool:
        """It reaches its model through benchwright's loopback endpoint (a preset, or a command
        with ``model:``)."""
        return not self.builtin and self.model is not None

    @property
    def grants_network(self) -> bool:
        """Whether its sandbox shares the host's network."""
        return self.network if self.network is not None else not self.proxied


class ExecConfig(Strict):
    """Which tasks, parameters, criteria and models a run uses."""

    version: Version = Field(default=1, description="The format's version (1).")
    name: str | None = Field(default=None, description="A label for the run (default: the file's name).")
    task_sources: StrList = Field(default_factory=list, description="Task source files, relative "
                                  "to the workspace.")
    difficulties: StrList = Field(default_factory=list, description="Keep only tasks of these "
                                  "difficulties (empty: all).")
    areas: StrList = Field(default_factory=list, description="Keep only tasks of these areas "
                           "(empty: all).")
    languages: StrList = Field(default_factory=list, description="Run only these languages "
                               "(empty: every language a task has).")
    tags: StrList = Field(default_factory=list, description="Keep only tasks with one of these tags "
                          "(empty: all).")
    released_after: dt.date | None = Field(default=None, description="Keep only tasks released "
                                           "after this date (contamination).")
    parameters: Toggles = Field(default_factory=list, description="Prompt parameters the task "
                                "templates read (`{name, enabled}`, a list of names, or "
                                "`{name: bool}`).")
    criteria: Toggles = Field(default_factory=list, description="Criteria to measure "
                              "(`benchwright list criteria`), in the same shapes as parameters.")
    llm_judge: str | None = Field(default=None, alias="llm-judge", description="provider/model "
                                  "of the judge of the llm-judge-* criteria.")
    llms: Annotated[list[ModelSpec], BeforeValidator(_models)] = Field(
        default_factory=list, description="Models under test: ids (provider/model) or objects "
        "with their settings.")
    scenarios: StrList = Field(default_factory=list, description="coding-agent scenario files")
    agents: list[AgentSpec] = Field(default_factory=list, description="coding agents under test")
    samples: int = Field(default=1, ge=1, le=10_000, description="Samples per task, language and "
                         "model (pass@k needs k of them).")
    cache: bool | Literal["refresh"] = Field(
        default=True, description="Reuse cached answers (true), ask again without reading the "
        "cache (false), or ask again and replace what is cached (refresh).")
    limits: Limits = Field(default_factory=Limits, description="Limits on running generated code.")
    thresholds: dict[str, float] = Field(
        default_factory=dict, description="Per criterion (or pass@k) the limit a model must meet: "
        "at least it where higher is better, at most it otherwise; summary.yaml and report say "
        "which model met each.")

    @field_validator("limits", mode="before")
    @classmethod
    def _limits_none(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("thresholds", mode="before")
    @classmethod
    def _thresholds_none(cls, value: Any) -> Any:
        return {} if value is None else value

    def enabled_parameters(self) -> dict[str, bool]:
        return {p.name: p.enabled for p in self.parameters}

    def enabled_criteria(self) -> list[str]:
        return [c.name for c in self.criteria if c.enabled]
