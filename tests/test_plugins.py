"""Plug-ins: built-ins and third-party packages register through the same entry point."""

from __future__ import annotations

import json
import re
import typing
from importlib.metadata import entry_points
from pathlib import Path

import pytest

import benchwright
from benchwright.errors import PluginError, PluginNotFound
from benchwright.registry import BASES, KINDS, PluginFailure, Registry, base_class, registry
from tests.conftest import Runner, only_run, read_jsonl

PLUGIN = '''
from benchwright.criteria.base import Criterion, Measurement


class LineCount(Criterion):
    """Lines of the extracted code."""

    name = "line-count"
    unit = "lines"
    higher_is_better = False

    def evaluate(self, ctx):
        return [Measurement(score=float(len(ctx.code.splitlines())))]


def register(reg):
    reg.add("criterion", "line-count", LineCount)
'''


def test_public_names_are_pinned() -> None:
    assert sorted(benchwright.__all__) == sorted([
        "BenchwrightError", "InfraError", "InputError", "MissingDependency", "PluginNotFound",
        "Problem", "Registry", "UserError", "__version__", "registry",
    ])
    for name in benchwright.__all__:
        assert hasattr(benchwright, name)


PLUGIN_API = ["KINDS", "AgentContext", "AgentPreset", "Answer", "BenchwrightError", "Criterion",
              "ExecutionResult", "Executor", "Generation", "GenerationRequest", "ImportRequest",
              "Importer", "InfraError", "Kind", "Language", "Measurement", "Plugin", "PluginError",
              "PluginFailure", "ProcessResult", "Provider", "ProviderError", "Record", "Registry",
              "SampleContext", "Sandbox", "SandboxLimits", "Scorer", "ScorerBase", "ScorerContext",
              "ScorerResult", "Session", "TestOutcome", "TestSpec", "UserError", "registry",
              "CompareFormat", "ComparisonResult", "ExportFormat", "ReportFormat", "RunFolder",
              "SkippedLines", "Converted", "HomeReader", "ModelRoute", "Package", "Wire", "step"]
TESTING_API = ["AnswerFn", "AnthropicServer", "FakeServer", "OpenAIServer", "RecordedRequest", "Reply",
               "ScriptedModel", "ScriptedServer"]


def test_the_plugin_api_is_pinned_and_holds_every_kinds_base_class() -> None:
    """``benchwright.plugin`` is what a plug-in author imports: a fresh interpreter imports it on
    its own, it exports exactly these names, and the base class of every kind is among them."""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", "import benchwright.plugin as p; print(len(p.__all__))"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    import benchwright.plugin as api
    assert sorted(api.__all__) == sorted(PLUGIN_API)
    exported = {getattr(api, name) for name in api.__all__ if isinstance(getattr(api, name), type)}
    assert {base_class(kind) for kind in KINDS} <= exported
    assert api.registry is registry
    import benchwright.testing as testing  # the stand-in servers a plug-in's tests run against

    assert sorted(testing.__all__) == sorted(TESTING_API)
    assert all(hasattr(testing, name) for name in TESTING_API)


def test_builtins_come_through_the_entry_point() -> None:
    (ep,) = [e for e in entry_points(group="benchwright.plugins") if e.name == "builtins"]
    assert ep.value == "benchwright.builtins:register"
    assert {"unit-test", "cpu-usage", "ram-usage", "token-count"} <= set(registry.names("criterion"))
    assert {"python", "java"} <= set(registry.names("language"))
    assert "reference" in registry.names("provider")
    assert "rlimit" in registry.names("sandbox")


def install(site: Path, package: str, module: str, code: str | None, target: str) -> None:
    """A plug-in package on ``site`` (a folder for PYTHONPATH), as pip would leave it: its module
    (none when ``code`` is None) and a dist-info naming ``target`` as its entry point."""
    if code is not None:
        (site / module).mkdir(parents=True)
        (site / module / "__init__.py").write_text(code)
    dist = site / f"{module}-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[benchwright.plugins]\n{module} = {target}\n")


def test_a_third_party_criterion_runs_in_the_pipeline(tmp_path: Path, bw: Runner) -> None:
    site = tmp_path / "site"
    install(site, "bw-lines", "bw_lines", PLUGIN, "bw_lines:register")
    env = {"PYTHONPATH": str(site)}

    listed = bw("list", "criteria", env=env)
    assert "line-count" in listed.stdout and "bw_lines" in listed.stdout

    ws = tmp_path / "ws"
    assert bw("init", ws).returncode == 0
    (ws / "configs" / "lines.yaml").write_text(
        "version: 1\ntask_sources: [tasks/basics.yaml]\nlanguages: [python]\nllms: [reference]\n"
        "criteria: [unit-test, line-count]\n")
    proc = bw("run", "configs/lines.yaml", cwd=ws, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "line-count" in proc.stdout
    lines = [r for r in read_jsonl(only_run(ws) / "records.jsonl") if r["criterion"] == "line-count"]
    assert lines and all(r["score"] >= 1 and r["executor"] == "LineCount" for r in lines)

    without = bw("run", "configs/lines.yaml", cwd=ws)
    assert without.returncode == 2 and "line-count" in without.stderr


FORMATS_PLUGIN = '''
from benchwright.plugin import CompareFormat, ExportFormat, ReportFormat


class TapExport(ExportFormat):
    """TAP: one line per record."""

    name = "tap"
    suffix = ".tap"

    def export(self, folder, skipped):
        records = list(folder.records(skipped))
        lines = [f"1..{len(records)}"]
        for i, r in enumerate(records, 1):
            ok = "ok" if r.verdict == "pass" else "not ok"
            lines.append(f"{ok} {i} - {r.task} {r.model} {r.criterion}")
        return "\\n".join(lines) + "\\n"


class CountReport(ReportFormat):
    """How many models and criteria a summary has."""

    name = "count"

    def report(self, summary, *, power=False, width=None):
        return f"models: {len(summary.get('models') or [])}\\n"


class FlipsCompare(CompareFormat):
    """How many tasks flipped."""

    name = "flips"

    def compare(self, result, *, width=None):
        return f"regressions: {len(result.regressions)}, fixes: {len(result.fixes)}\\n"


def register(reg):
    reg.add("export-format", "tap", TapExport)
    reg.add("report-format", "count", CountReport)
    reg.add("compare-format", "flips", FlipsCompare)
'''


def test_third_party_export_report_and_compare_formats_are_listed_and_used(
        tmp_path: Path, bw: Runner) -> None:
    site = tmp_path / "site"
    install(site, "bw-formats", "bw_formats", FORMATS_PLUGIN, "bw_formats:register")
    env = {"PYTHONPATH": str(site)}
    for kind, name in (("export-formats", "tap"), ("report-formats", "count"),
                       ("compare-formats", "flips")):
        listed = bw("list", kind, env=env)
        assert listed.returncode == 0 and name in listed.stdout and "bw_formats" in listed.stdout
        builtin = bw("list", kind)
        assert "json" in builtin.stdout and name not in builtin.stdout
    ws = tmp_path / "ws"
    assert bw("init", ws).returncode == 0
    (ws / "configs" / "one.yaml").write_text(
        "version: 1\ntask_sources: [tasks/basics.yaml]\nlanguages: [python]\nllms: [reference]\n"
        "criteria: [unit-test]\n")
    for _ in range(2):
        assert bw("run", "configs/one.yaml", cwd=ws).returncode == 0
    tap = bw("export", "latest", "--format", "tap", cwd=ws, env=env)
    assert tap.returncode == 0, tap.stderr
    lines = tap.stdout.splitlines()
    assert lines[0].startswith("1..") and int(lines[0][3:]) == len(lines) - 1 > 0
    assert all(re.fullmatch(r"(ok|not ok) \d+ - \S+ reference \S+", line) for line in lines[1:])
    count = bw("report", "latest", "--format", "count", cwd=ws, env=env)
    assert count.returncode == 0 and count.stdout == "models: 1\n", count.stderr
    runs = sorted(p.name for p in (ws / "results").iterdir() if p.is_dir())
    flips = bw("compare", runs[0], runs[1], "--format", "flips", cwd=ws, env=env)
    assert flips.returncode == 0 and flips.stdout == "regressions: 0, fixes: 0\n", flips.stderr
    # without the package: an error naming the installed formats, nothing else written
    missing = bw("export", "latest", "--format", "tap", cwd=ws)
    assert missing.returncode == 2 and "no export-format named 'tap'" in missing.stderr
    assert "json" in missing.stderr and not missing.stdout


BROKEN = PLUGIN.replace("def register(reg):", "def register(reg):\n    reg.add(\"criterion\", \"half-done\", LineCount)\n"
                        "    raise RuntimeError(\"the plug-in's own bug\")")
CLASH = PLUGIN.replace('reg.add("criterion", "line-count", LineCount)', 'reg.add("criterion", "unit-test", LineCount)')
OVERRIDE = PLUGIN.replace('reg.add("criterion", "line-count", LineCount)',
                          'reg.add("criterion", "cpu-usage", LineCount, override=True)')


def test_a_broken_plugin_package_is_left_out_whole_and_named_and_the_others_work(
        tmp_path: Path, bw: Runner, workspace: Path) -> None:
    """A package that raises while registering, one whose module is missing and one that takes a
    built-in's name without override=True: each is one error naming the package (no traceback),
    nothing of it is registered, and every other package's plug-ins still run."""
    site = tmp_path / "site"
    install(site, "bw-lines", "bw_lines", PLUGIN, "bw_lines:register")
    install(site, "bw-broken", "bw_broken", BROKEN, "bw_broken:register")
    install(site, "bw-gone", "bw_gone", None, "bw_gone:register")
    install(site, "bw-clash", "bw_clash", CLASH, "bw_clash:register")
    env = {"PYTHONPATH": str(site), "COLUMNS": "200"}

    listed = bw("list", "criteria", env=env)
    assert listed.returncode == 0, listed.stderr
    assert "Traceback" not in listed.stderr + listed.stdout
    for package, why in (("bw-broken", "RuntimeError: the plug-in's own bug"),
                         ("bw-gone", "ModuleNotFoundError: No module named 'bw_gone'"),
                         ("bw-clash", "criterion 'unit-test' from bw_clash is already registered by "
                                      "benchwright.criteria.unit_test; register it with override=True")):
        [line] = [row for row in listed.stderr.splitlines() if f"{package!r}" in row]
        assert why in line and "left out" in line
        assert package in listed.stdout  # the table of packages left out
    assert "half-done" not in listed.stdout  # what the broken package registered before failing
    assert "line-count" in listed.stdout and "bw_lines" in listed.stdout
    unit = [row for row in listed.stdout.splitlines() if row.startswith("│ unit-test")]
    assert unit and "benchwright" in unit[0] and "bw_clash" not in unit[0]

    (workspace / "configs" / "lines.yaml").write_text(
        "version: 1\ntask_sources: [tasks/basics.yaml]\nlanguages: [python]\nllms: [reference]\n"
        "criteria: [unit-test, line-count]\n")
    proc = bw("run", "configs/lines.yaml", cwd=workspace, env=env)
    assert proc.returncode == 0, proc.stderr
    records = read_jsonl(only_run(workspace) / "records.jsonl")
    assert {r["criterion"] for r in records} >= {"unit-test", "line-count"}
    assert all(r["executor"] != "LineCount" for r in records if r["criterion"] == "unit-test")

    # asking for what the broken package registered before it failed: not installed, and why
    (workspace / "configs" / "half.yaml").write_text(
        "version: 1\ntask_sources: [tasks/basics.yaml]\nlanguages: [python]\nllms: [reference]\n"
        "criteria: [unit-test, half-done]\n")
    asked = bw("run", "configs/half.yaml", cwd=workspace, env=env)
    assert asked.returncode == 2 and "half-done" in asked.stderr
    assert "plug-in package 'bw-broken'" in asked.stderr and "Traceback" not in asked.stderr


def test_an_override_replaces_the_builtin_and_list_says_so(tmp_path: Path, bw: Runner) -> None:
    site = tmp_path / "site"
    install(site, "bw-override", "bw_override", OVERRIDE, "bw_override:register")
    listed = bw("list", env={"PYTHONPATH": str(site), "COLUMNS": "250"})
    assert listed.returncode == 0 and not listed.stderr, listed.stderr
    [row] = [r for r in listed.stdout.splitlines() if "cpu-usage" in r]
    assert "bw_override (overrides benchwright.criteria.usage)" in row


def test_a_second_registration_is_refused_unless_it_overrides() -> None:
    reg = Registry()
    reg._loaded = True  # no entry points: this registry holds only what the test adds
    reg.add("criterion", "x", LineCountLike)
    here = LineCountLike.__module__
    with pytest.raises(PluginError, match=rf"criterion 'x' from {here} is already registered by {here}; "
                                          r"register it with override=True"):
        reg.add("criterion", "x", LineCountLike)
    assert reg.get("criterion", "x").overrides is None
    reg.add("criterion", "x", LineCountLike, override=True)
    assert reg.get("criterion", "x").overrides == here


def test_a_factory_that_makes_the_wrong_kind_is_an_error_naming_it() -> None:
    reg = Registry()
    reg._loaded = True
    reg.add("language", "nope", LineCountLike)
    with pytest.raises(PluginError, match=rf"language 'nope' from {LineCountLike.__module__} made a "
                                          r"LineCountLike, not a Language: its factory must return"):
        reg.create("language", "nope")
    reg.failures.append(PluginFailure("bw-x", "x = bw_x:register", "ImportError: boom"))
    with pytest.raises(PluginNotFound, match=r"no language named 'python'.*plug-in package 'bw-x'"):
        reg.create("language", "python")


def test_create_is_typed_per_kind() -> None:
    """Each kind has an overload of ``create`` that returns its base class (so a caller gets a
    ``Language`` for ``language`` without annotating), and the run-time check uses the same."""
    overloads = typing.get_overloads(Registry.create)
    returned = {}
    for overload in overloads:
        hints = overload.__annotations__
        m = re.fullmatch(r"Literal\[['\"]([\w-]+)['\"]\]", hints["kind"])
        assert m is not None, hints["kind"]
        kind = m.group(1)
        returned[kind] = hints["return"]
    assert set(returned) == set(KINDS)
    for kind in KINDS:
        assert returned[kind] == BASES[kind].partition(":")[2] == base_class(kind).__name__


from benchwright.criteria.base import Criterion, Measurement  # noqa: E402


class LineCountLike(Criterion):
    """A criterion (for the in-process registry tests)."""

    name = "x"

    def evaluate(self, ctx: object) -> list[Measurement]:  # type: ignore[override]
        return []


SCORER_PLUGIN = '''
from typing import Literal

from pydantic import Field

from benchwright.agents.scenario import ScorerBase
from benchwright.agents.scorer import Scorer, ScorerResult


class MaxLines(ScorerBase):
    """A file of at most ``limit`` lines."""

    type: Literal["max_lines"]
    path: str = Field(min_length=1)
    limit: int = Field(ge=1)


class MaxLinesCheck(Scorer):
    """The file has more than ``limit`` lines after the run."""

    type = "max_lines"
    spec = MaxLines  # the model of its entries in a scenario's scorers:

    def score(self, spec, ctx):
        data = ctx.read(spec.path) or b""
        lines = len(data.splitlines())
        ok = lines <= spec.limit
        return ScorerResult("PASS" if ok else "FAIL", 1.0 if ok else 0.0,
                            f"{spec.path}: {lines} lines (limit {spec.limit})", {"lines": lines})


def register(reg):
    reg.add("scorer", "max_lines", MaxLinesCheck)
'''


def test_a_third_party_scorer_is_validated_listed_in_the_schema_and_scores_an_agent_run(
        tmp_path: Path, bw: Runner, workspace: Path) -> None:
    """A scorer type a plug-in package registers is open end to end: a scenario's ``scorers:``
    takes it (its fields checked by its own model, a bad one located at its field), ``list`` and
    ``schema`` show it, and a run of the example agents records its verdict."""
    site = tmp_path / "site"
    install(site, "bw-scorers", "bw_scorers", SCORER_PLUGIN, "bw_scorers:register")
    env = {"PYTHONPATH": str(site), "COLUMNS": "200"}
    assert "max_lines" in bw("list", "scorers", env=env).stdout
    schema = json.loads(bw("schema", "scenario", env=env).stdout)
    assert schema["$defs"]["MaxLines"]["properties"]["limit"]["minimum"] == 1

    scenario = workspace / "scenarios" / "parser-fixes.yaml"
    text = scenario.read_text()
    scenario.write_text(text.replace(
        "scorers:                           # frozen into each run when it starts\n",
        "scorers:                           # frozen into each run when it starts\n"
        "  - {name: short-parser, type: max_lines, path: src/parser.py, limit: 0}\n"))
    bad = bw("validate", "scenarios/parser-fixes.yaml", cwd=workspace, env=env)
    assert bad.returncode == 2 and "scorers[0]" in bad.stderr + bad.stdout
    assert "limit" in bad.stderr + bad.stdout
    without = bw("validate", "scenarios/parser-fixes.yaml", cwd=workspace)  # not installed
    said = without.stderr + without.stdout
    assert without.returncode == 2 and "scorers[0]" in said and "'max_lines'" in said and "'command'" in said

    scenario.write_text(text.replace(
        "scorers:                           # frozen into each run when it starts\n",
        "scorers:                           # frozen into each run when it starts\n"
        "  - {name: short-parser, type: max_lines, path: src/parser.py, limit: 400, required: false}\n"))
    assert bw("validate", "scenarios/parser-fixes.yaml", cwd=workspace, env=env).returncode == 0
    config = workspace / "configs" / "agents.yaml"
    config.write_text(config.read_text().split("  - name: edits-the-test")[0])  # the honest agent alone
    proc = bw("run", "configs/agents.yaml", cwd=workspace, env=env)
    assert proc.returncode == 0, proc.stderr
    records = [r for r in read_jsonl(only_run(workspace) / "records.jsonl") if r["criterion"] == "short-parser"]
    assert records and all(r["verdict"] == "pass" and r["score"] == 1.0 and "lines (limit 400)" in (r["output"] or "") for r in records)


KIT_PLUGIN = '''
from benchwright.agents.presets.aider import Aider
from benchwright.importers.humaneval_x import HumanEvalXImporter
from benchwright.lang.bash import BashLanguage
from benchwright.model.reference import ReferenceProvider
from benchwright.run.executor import LocalExecutor
from benchwright.sandbox.rlimit import RlimitSandbox


class KitShell(BashLanguage):
    """Bash under another name (a third party's language)."""

    name = "kitsh"
    fence_names = ("kitsh",)


class KitSandbox(RlimitSandbox):
    """The rlimit backend under another name."""

    name = "kitbox"


class KitExecutor(LocalExecutor):
    """The local executor under another name."""


class KitProvider(ReferenceProvider):
    """Answers with the golden solution (a third party's provider)."""


class KitImporter(HumanEvalXImporter):
    """HumanEval-X under another name."""

    name = "kit-humaneval-x"


class KitAgent(Aider):
    """Aider under another name."""

    name = "kit-agent"


def register(reg):
    reg.add("language", "kitsh", KitShell)
    reg.add("sandbox", "kitbox", KitSandbox)
    reg.add("executor", "kitexec", KitExecutor)
    reg.add("provider", "kitprov", KitProvider)
    reg.add("importer", "kit-humaneval-x", KitImporter)
    reg.add("agent-preset", "kit-agent", KitAgent)
'''

KIT_TASKS = """\
version: 1
name: kit
tasks:
  - name: double
    languages: [kitsh]
    task:
      common_prompt: Write a ${language} function double that prints twice its argument.
      languages_specific:
        kitsh:
          hidden_tests:
            - name: two
              code: '[ "$(double 2)" = 4 ]'
            - name: three
              code: '[ "$(double 3)" = 6 ]'
    golden_solution:
      kitsh: |
        double() { echo $(( $1 * 2 )); }
"""


def test_a_third_party_language_sandbox_executor_provider_importer_and_agent_work_from_yaml(
        tmp_path: Path, bw: Runner) -> None:
    site = tmp_path / "site"
    install(site, "bw-kit", "bw_kit", KIT_PLUGIN, "bw_kit:register")
    env = {"PYTHONPATH": str(site)}
    listed = bw("list", env=env)
    assert listed.returncode == 0, listed.stderr
    for name in ("kitsh", "kitbox", "kitexec", "kitprov", "kit-humaneval-x", "kit-agent"):
        assert name in listed.stdout, name
    ws = tmp_path / "ws"
    assert bw("init", ws).returncode == 0
    # the importer, through `benchwright import`
    data = Path(__file__).parent / "fixtures" / "humaneval-x" / "humaneval_cpp_first5.jsonl"
    imported = bw("import", "kit-humaneval-x", "--language", "cpp", "--data", data,
                  "--out", ws / "tasks" / "kit-cpp.yaml", env=env)
    assert imported.returncode == 0, imported.stderr
    from benchwright.task.load import load_task_source

    loaded = load_task_source(ws / "tasks" / "kit-cpp.yaml")
    assert [t.name for t in loaded.source.tasks] == [f"CPP/{i}" for i in range(5)]
    # the language, provider, sandbox and executor, named in YAML
    (ws / "tasks" / "kit.yaml").write_text(KIT_TASKS)
    (ws / "benchwright.yaml").write_text("version: 1\nsandbox: kitbox\nexecutor: kitexec\n"
                                         "providers:\n  kit:\n    type: kitprov\n")
    (ws / "configs" / "kit.yaml").write_text(
        "version: 1\ntask_sources: [tasks/kit.yaml]\nlanguages: [kitsh]\nllms: [kit/golden]\n"
        "criteria: [unit-test]\n")
    proc = bw("run", "configs/kit.yaml", cwd=ws, env=env)
    assert proc.returncode == 0, proc.stderr
    run = only_run(ws)
    records = read_jsonl(run / "records.jsonl")
    tests = {r["test_case"]: r["status"] for r in records if r.get("test_case")}
    assert tests == {"two": "pass", "three": "pass"}
    assert {r["language"] for r in records} == {"kitsh"}
    manifest = (run / "run.yaml").read_text()
    assert "backend: kitbox" in manifest and "type: kitprov" in manifest
    # without the package, the same config names what is missing
    without = bw("validate", "configs/kit.yaml", cwd=ws)
    assert without.returncode == 2 and "kitsh" in without.stderr
