"""What a plug-in author needs, in one place: the base class of every kind the registry knows,
the values they take and return, the registry itself and the errors to raise.

A plug-in package exposes an entry point in the ``benchwright.plugins`` group whose target takes
the :class:`Registry` and registers factories, e.g.::

    from benchwright.plugin import Criterion, Measurement, Registry

    class LineCount(Criterion):
        name = "line-count"
        unit = "lines"
        higher_is_better = False

        def evaluate(self, ctx):
            return [Measurement(score=float(len(ctx.code.splitlines())))]

    def register(reg: Registry) -> None:
        reg.add("criterion", "line-count", LineCount)

An agent preset also gets what it builds a turn from and gives back (:class:`AgentContext`,
:class:`ModelRoute`, :class:`Package`, :class:`Converted`, :func:`step`).

A factory must make an instance of its kind's base class (``registry.create`` checks it); a name
already registered needs ``override=True``. Local servers that speak the OpenAI and Anthropic
protocols, to test a provider without a paid API, are in :mod:`benchwright.testing`.
"""

from __future__ import annotations

from benchwright.agents.preset import (
    AgentContext,
    AgentPreset,
    Converted,
    HomeReader,
    ModelRoute,
    Package,
    Wire,
    step,
)
from benchwright.agents.scenario import ScorerBase
from benchwright.agents.scorer import Scorer, ScorerContext, ScorerResult
from benchwright.criteria.base import Criterion, Measurement, SampleContext
from benchwright.errors import BenchwrightError, InfraError, PluginError, UserError
from benchwright.importers.base import Importer, ImportRequest
from benchwright.lang.base import ExecutionResult, Language, TestOutcome, TestSpec
from benchwright.model.base import Answer, GenerationRequest, Provider, ProviderError
from benchwright.registry import KINDS, Kind, Plugin, PluginFailure, Registry, registry
from benchwright.results.compare import ComparisonResult
from benchwright.results.folder import RunFolder
from benchwright.results.formats import CompareFormat, ExportFormat, ReportFormat
from benchwright.results.jsonl import SkippedLines
from benchwright.results.record import Generation, Record
from benchwright.run.executor import Executor
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits, Session

__all__ = [
    "KINDS",
    "AgentContext",
    "AgentPreset",
    "Answer",
    "BenchwrightError",
    "CompareFormat",
    "ComparisonResult",
    "Converted",
    "Criterion",
    "ExecutionResult",
    "Executor",
    "ExportFormat",
    "Generation",
    "GenerationRequest",
    "HomeReader",
    "ImportRequest",
    "Importer",
    "InfraError",
    "Kind",
    "Language",
    "Measurement",
    "ModelRoute",
    "Package",
    "Plugin",
    "PluginError",
    "PluginFailure",
    "ProcessResult",
    "Provider",
    "ProviderError",
    "Record",
    "Registry",
    "ReportFormat",
    "RunFolder",
    "SampleContext",
    "Sandbox",
    "SandboxLimits",
    "Scorer",
    "ScorerBase",
    "ScorerContext",
    "ScorerResult",
    "Session",
    "SkippedLines",
    "TestOutcome",
    "TestSpec",
    "UserError",
    "Wire",
    "registry",
    "step",
]
