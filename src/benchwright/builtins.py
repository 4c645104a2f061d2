"""Registers benchwright's own plug-ins, through the same entry point third parties use."""

from __future__ import annotations

from benchwright.registry import Registry

CRITERIA_MODULES = (
    "unit_test", "usage", "generation", "python_analysis", "coverage", "java_analysis",
    "complexity", "similarity", "judge", "energy", "sonarqube",
)
"""The modules of :mod:`benchwright.criteria` whose ``CRITERIA`` are benchwright's own."""

IMPORTER_MODULES = ("humaneval", "humaneval_x", "jsonl", "mbpp", "evalplus", "cruxeval",
                    "multipl_e", "livecodebench", "apps", "humaneval_rust")
"""The modules of :mod:`benchwright.importers` whose ``IMPORTERS`` are benchwright's own."""


def register(reg: Registry) -> None:
    import importlib

    from benchwright.agents.presets import PRESETS
    from benchwright.agents.scorers import SCORERS
    from benchwright.lang.bash import BashLanguage
    from benchwright.lang.c import CLanguage, CppLanguage
    from benchwright.lang.golang import GoLanguage
    from benchwright.lang.java import JavaLanguage
    from benchwright.lang.javascript import JavaScriptLanguage, TypeScriptLanguage
    from benchwright.lang.python import PythonLanguage
    from benchwright.lang.rust import RustLanguage
    from benchwright.model.anthropic_provider import AnthropicProvider
    from benchwright.model.hf import HFProvider
    from benchwright.model.openai_compat import OpenAICompatibleProvider
    from benchwright.model.reference import ReferenceProvider
    from benchwright.model.replay import ReplayProvider
    from benchwright.results.compare import COMPARE_FORMATS
    from benchwright.results.export import EXPORT_FORMATS
    from benchwright.results.report import REPORT_FORMATS
    from benchwright.run.executor import LocalExecutor
    from benchwright.sandbox.bwrap import BwrapSandbox
    from benchwright.sandbox.rlimit import RlimitSandbox
    from benchwright.sandbox.unshare import UnshareSandbox

    for module in CRITERIA_MODULES:
        for criterion in importlib.import_module(f"benchwright.criteria.{module}").CRITERIA:
            reg.add("criterion", criterion.name, criterion)
    for module in IMPORTER_MODULES:
        for importer in importlib.import_module(f"benchwright.importers.{module}").IMPORTERS:
            reg.add("importer", importer.name, importer)
    reg.add("language", "python", PythonLanguage)
    reg.add("language", "java", JavaLanguage)
    for language in (JavaScriptLanguage, TypeScriptLanguage, CLanguage, CppLanguage, RustLanguage,
                     GoLanguage, BashLanguage):
        reg.add("language", language.name, language)
    reg.add("provider", "hf", HFProvider)
    reg.add("provider", "reference", ReferenceProvider)
    reg.add("provider", "openai-compatible", OpenAICompatibleProvider)
    reg.add("provider", "anthropic", AnthropicProvider)
    reg.add("provider", "replay", ReplayProvider)
    reg.add("sandbox", "bwrap", BwrapSandbox)
    reg.add("sandbox", "unshare", UnshareSandbox)
    reg.add("sandbox", "rlimit", RlimitSandbox)
    for preset in PRESETS:
        reg.add("agent-preset", preset.name, preset)
    for export_format in EXPORT_FORMATS:
        reg.add("export-format", export_format.name, export_format)
    for report_format in REPORT_FORMATS:
        reg.add("report-format", report_format.name, report_format)
    for compare_format in COMPARE_FORMATS:
        reg.add("compare-format", compare_format.name, compare_format)
    for scorer in SCORERS:
        reg.add("scorer", scorer.type, scorer)
    reg.add("executor", "local", LocalExecutor, "this machine: a process per core, asyncio for generation")
    reg.add("executor", "ray", _ray_executor, "a Ray cluster's workers (needs benchwright[ray])")


def _ray_executor(options: object = None) -> object:
    """Imported when asked for: Ray is an optional extra."""
    from benchwright.run.cluster import RayExecutor
    from benchwright.run.executor import ExecutorOptions

    return RayExecutor(options if isinstance(options, ExecutorOptions) else None)
