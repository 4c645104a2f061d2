"""Plug-ins: built-ins and third-party packages register through the same entry point."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import benchwright
from benchwright.registry import registry
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


def test_builtins_come_through_the_entry_point() -> None:
    (ep,) = [e for e in entry_points(group="benchwright.plugins") if e.name == "builtins"]
    assert ep.value == "benchwright.builtins:register"
    assert {"unit-test", "cpu-usage", "ram-usage", "token-count"} <= set(registry.names("criterion"))
    assert {"python", "java"} <= set(registry.names("language"))
    assert "reference" in registry.names("provider")
    assert "rlimit" in registry.names("sandbox")


def test_a_third_party_criterion_runs_in_the_pipeline(tmp_path: Path, bw: Runner) -> None:
    site = tmp_path / "site"
    (site / "bw_lines").mkdir(parents=True)
    (site / "bw_lines" / "__init__.py").write_text(PLUGIN)
    dist = site / "bw_lines-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: bw-lines\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[benchwright.plugins]\nlines = bw_lines:register\n")
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
