"""Model ids to providers: ``provider/model``, or a bare id for the default provider."""

from __future__ import annotations

from dataclasses import dataclass

from benchwright.config.settings import ProviderSettings, Settings
from benchwright.errors import UserError
from benchwright.model.base import Provider
from benchwright.registry import registry

BUILTIN_PROVIDERS: dict[str, ProviderSettings] = {
    "reference": ProviderSettings(type="reference"),
}


@dataclass(frozen=True)
class ResolvedModel:
    id: str
    provider: str
    provider_type: str
    model: str


def providers(settings: Settings) -> dict[str, ProviderSettings]:
    return {**BUILTIN_PROVIDERS, **settings.providers}


def resolve(model_id: str, settings: Settings) -> ResolvedModel:
    """Find the provider of ``model_id``.

    Raises:
        UserError: no provider matches and no default provider is set.
    """
    known = providers(settings)
    head, _, rest = model_id.partition("/")
    if head in known:
        return ResolvedModel(model_id, head, known[head].type, rest)
    default = settings.default_provider
    if default is None:
        raise UserError(
            f"model {model_id!r}: no provider named {head!r} and no default_provider in benchwright.yaml "
            f"(known providers: {', '.join(sorted(known))}; write 'provider/model' or set default_provider)"
        )
    if default not in known:
        raise UserError(f"default_provider {default!r} is not defined under providers: in benchwright.yaml")
    return ResolvedModel(model_id, default, known[default].type, model_id)


def create(resolved: ResolvedModel, settings: Settings) -> Provider:
    """Instantiate the provider plug-in for ``resolved`` (raises PluginNotFound if not installed)."""
    conf = providers(settings)[resolved.provider]
    provider = registry.create("provider", conf.type, name=resolved.provider, settings=conf)
    provider.allowed_folders = tuple(settings.allowed_folders)
    return provider
