"""Workspace settings (``benchwright.yaml``): providers and defaults. Never secrets."""

from __future__ import annotations

import fnmatch
import functools
import importlib.util
import json
import re
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator


class Price(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0, description="USD per million prompt tokens.")
    output: float = Field(ge=0, description="USD per million answer tokens.")


class ProviderSettings(BaseModel):
    """One named provider. ``api_key_env`` is the *name* of an environment variable."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(min_length=1, description="The provider plug-in (`benchwright list "
                      "providers`): openai-compatible, anthropic, hf...")
    base_url: str | None = Field(default=None, description="The service's address (default: the "
                                 "type's own).")
    api_key_env: str | None = Field(
        default=None, description="Name of the environment variable holding the key (never the key).")
    concurrency: int = Field(default=16, ge=1, le=1024, description="Requests in flight at once.")
    rpm: float | None = Field(default=None, gt=0, description="Requests per minute at most.")
    timeout_s: float = Field(default=120, gt=0, description="One attempt's time limit.")
    max_retries: int = Field(default=6, ge=0, le=50, description="Retries of a failed request "
                             "(rate limits, server errors, timeouts).")
    backoff_s: float = Field(default=1.0, ge=0, description="First retry delay; doubles each time.")
    max_backoff_s: float = Field(default=60.0, ge=0, description="The longest retry delay.")
    prices: dict[str, Price] = Field(default_factory=dict, description="Model name -> price.")


@functools.cache
def _codecarbon_data(name: str) -> dict[str, Any] | None:
    """A data file of codecarbon's (``data/private_infra/NAME``), read without importing it;
    None when codecarbon is not installed."""
    spec = importlib.util.find_spec("codecarbon")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "private_infra" / name
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


_REGIONS = {"USA": "2023/usa_emissions.json", "CAN": "2023/canada_energy_mix.json"}


class EnergyFigure(BaseModel):
    """What generating with one model takes, in Wh per thousand tokens (for ``energy``)."""

    model_config = ConfigDict(extra="forbid")

    wh_per_1k_tokens: float | None = Field(
        default=None, ge=0, description="Wh per 1000 tokens, prompt and completion alike.")
    wh_per_1k_input: float | None = Field(default=None, ge=0, description="Wh per 1000 prompt tokens.")
    wh_per_1k_output: float | None = Field(default=None, ge=0, description="Wh per 1000 completion tokens.")

    @model_validator(mode="after")
    def _complete(self) -> EnergyFigure:
        if self.wh_per_1k_tokens is None and (self.wh_per_1k_input is None or self.wh_per_1k_output is None):
            raise ValueError("give wh_per_1k_tokens, or both wh_per_1k_input and wh_per_1k_output")
        return self

    def rates(self) -> tuple[float, float]:
        """Wh per 1000 prompt tokens and per 1000 completion tokens."""
        both = self.wh_per_1k_tokens
        tin = self.wh_per_1k_input if self.wh_per_1k_input is not None else both
        tout = self.wh_per_1k_output if self.wh_per_1k_output is not None else both
        assert tin is not None and tout is not None  # the validator saw to it
        return tin, tout


class EnergySettings(BaseModel):
    """``energy:``: where the run's computer is, and what generation takes per model."""

    model_config = ConfigDict(extra="forbid")

    country: str | None = Field(
        default=None, description="ISO 3166-1 alpha-3 code of the country the run's computer is in "
        "(DEU, FRA, USA...); none: the world average carbon intensity.")
    region: str | None = Field(
        default=None, description="A US state or Canadian province (with country USA or CAN).")
    carbon_intensity: float | None = Field(
        default=None, gt=0, description="gCO2e per kWh; overrides the country's figure.")
    cpu_watts: float | None = Field(
        default=None, gt=0, description="The CPU's power at full load, all cores together "
        "(default: codecarbon's figure for this CPU).")
    models: dict[str, EnergyFigure] = Field(
        default_factory=dict, description="Model id or glob (openai/gpt-4o, gpt-4o*) -> its figure.")

    @field_validator("country")
    @classmethod
    def _country(cls, value: str | None) -> str | None:
        if value is None:
            return None
        code = value.strip().upper()
        if not re.fullmatch(r"[A-Z]{3}", code):
            raise ValueError(f"{value!r} is not an ISO 3166-1 alpha-3 country code (DEU, FRA, USA...)")
        known = _codecarbon_data("global_energy_mix.json")
        if known is not None and code not in known:
            raise ValueError(f"codecarbon has no carbon intensity for country {code!r}: use an ISO "
                             "3166-1 alpha-3 code it knows (DEU, FRA, USA...), or leave country out "
                             "and give energy.carbon_intensity")
        return code

    @model_validator(mode="after")
    def _region(self) -> EnergySettings:
        if self.region is None:
            return self
        self.region = self.region.strip().lower()
        if self.country not in _REGIONS:
            raise ValueError("energy.region names a US state or Canadian province: it needs "
                             "country USA or CAN")
        known = _codecarbon_data(_REGIONS[self.country])
        if known is not None and self.region not in known:
            some = ", ".join(k for k in list(known) if not k.startswith("_"))[:200]
            raise ValueError(f"codecarbon has no data for region {self.region!r} of {self.country} "
                             f"(it knows: {some}...)")
        return self

    def figure(self, model: str) -> tuple[str, EnergyFigure] | None:
        """The figure for ``model`` and the key that gave it: an exact id first (as the price
        table matches: ``openai/gpt-4o-2024-08-06``, ``gpt-4o-2024-08-06``, ``gpt-4o``), then
        the first glob, in file order, that matches the id or its name after the provider."""
        from benchwright.config.prices import model_names

        for name in model_names(model):
            if name in self.models:
                return name, self.models[name]
        bare = model.rsplit("/", 1)[-1]
        for key, figure in self.models.items():
            if any(c in key for c in "*?[") and (fnmatch.fnmatchcase(model, key)
                                                 or fnmatch.fnmatchcase(bare, key)):
                return key, figure
        return None


class SonarQubeSettings(BaseModel):
    """``sonarqube:``: the user's SonarQube server. Only the *name* of the token's variable."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1, description="The server's base URL (https://sonar.example.com).")
    token_env: str = Field(
        min_length=1, description="Name of the environment variable holding a user token (never the token).")
    scanner: str = Field(
        default="sonar-scanner", min_length=1,
        description="The SonarScanner CLI: a path, or a name on PATH.")
    project_prefix: str = Field(
        default="benchwright", pattern=r"^[A-Za-z0-9_.:-]+$",
        description="Each sample is analysed as project PREFIX-EXECUTION_ID.")
    timeout_s: float = Field(default=300, gt=0, description="Most one sample's analysis may take.")
    poll_s: float = Field(default=1.0, gt=0, description="How often the server's analysis task is polled.")
    delete_projects: bool = Field(
        default=False, description="Delete each sample's project once its findings are read "
        "(needs the Administer permission on it).")

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        if not re.match(r"^https?://[^/\s]+", value):
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        if "@" in value.split("/")[2]:
            raise ValueError("the URL holds credentials: give the token's variable in token_env")
        return value.rstrip("/")

    @field_validator("token_env")
    @classmethod
    def _token_env(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
            raise ValueError("not an environment variable name: give the name of the variable "
                             "that holds the token, never the token")
        return value


class RaySettings(BaseModel):
    """``ray:``: the Ray cluster a run with ``executor: ray`` (or ``--executor ray``) joins."""

    model_config = ConfigDict(extra="forbid")

    address: str | None = Field(
        default=None, description="auto (the cluster this machine belongs to, or RAY_ADDRESS), "
        "ray://HOST:PORT (Ray Client), HOST:PORT; none: start Ray on this machine for the run.")
    max_retries: int = Field(
        default=3, ge=0, le=100,
        description="How often a sample whose worker or node died is run again on another one.")
    in_flight: int | None = Field(
        default=None, ge=1, le=1_000_000,
        description="Samples sent to the cluster and not yet recorded, at most "
        "(default: 4 per CPU of the cluster).")


def _absolute(folder: Path) -> Path:
    if not folder.is_absolute():
        raise ValueError(f"{str(folder)!r} is not an absolute folder: write the whole path "
                         "(e.g. /srv/benchmarks)")
    return folder


def _default_providers() -> dict[str, ProviderSettings]:
    from benchwright.config.providers import DEFAULT_PROVIDERS

    return {k: v.model_copy() for k, v in DEFAULT_PROVIDERS.items()}


class Settings(BaseModel):
    model_config = ConfigDict(extra="allow")

    version: int = Field(default=1, description="The format's version (1).")
    default_provider: str | None = Field(default=None, description="The provider of a model id "
                                         "without `provider/`.")
    providers: dict[str, ProviderSettings] = Field(
        default_factory=lambda: _default_providers(),
        description="Named providers; without this key, the presets (openai, openrouter, mistral, "
        "anthropic, vllm, ollama, llamacpp, lmstudio).")
    sandbox: str | None = Field(default=None, description="Sandbox backend (default: best available).")
    executor: str = Field(
        default="local", min_length=1,
        description="Where samples run: local (this machine's cores) or ray (a Ray cluster, see ray:).")
    ray: RaySettings = Field(default_factory=RaySettings, description="The Ray cluster, for executor: ray.")
    prices: dict[str, Price] = Field(default_factory=dict, description="Model name -> price, for all providers.")
    energy: EnergySettings = Field(
        default_factory=EnergySettings,
        description="For the energy criterion: the country (carbon intensity) and per-model figures.")
    sonarqube: SonarQubeSettings | None = Field(
        default=None, description="A SonarQube server for the sonarqube criterion (none: n/a).")
    allowed_folders: list[Annotated[Path, AfterValidator(_absolute)]] = Field(
        default_factory=list,
        description="Absolute folders outside the workspace that paths inside its YAML files "
        "(task sources, scenarios, agents' files, scenario repositories, replay recordings...) may "
        "lead to. Without it, every such path must resolve inside the workspace; a .benchwright "
        "folder is never allowed.")

    def extra(self) -> dict[str, Any]:
        return dict(self.model_extra or {})
