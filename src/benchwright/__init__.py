"""benchwright: evaluate code-generating LLMs and coding agents from YAML."""

from benchwright.errors import (
    BenchwrightError,
    InfraError,
    InputError,
    MissingDependency,
    PluginNotFound,
    Problem,
    UserError,
)
from benchwright.registry import Registry, registry

__version__ = "0.1.0"

__all__ = [
    "BenchwrightError",
    "InfraError",
    "InputError",
    "MissingDependency",
    "PluginNotFound",
    "Problem",
    "Registry",
    "UserError",
    "__version__",
    "registry",
]
