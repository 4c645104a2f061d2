"""The package layout holds: no import cycle between benchwright's packages, every package in the
layer order ``pyproject.toml`` gives import-linter and the README draws, and the web UI reaching
behaviour only through the service layer."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "benchwright"

UI = "benchwright.server.ui"
UI_MAY_IMPORT = (
    "benchwright.server.ui",  # its own pages and widgets
    "benchwright.server.service",  # every behaviour the UI shows
    "benchwright.server.auth",  # the roles a token has
    "benchwright.config",  # the config and settings models, and the forms' YAML edits
    "benchwright.task.model",  # the task source's models
    "benchwright.task.editor",  # the task editor's YAML edits
    "benchwright.results",  # the record, summary and comparison models
    "benchwright.run.progress",  # a run's progress file
    "benchwright.errors",
)
"""What a module of the web UI may import (the rule the README's Layout states)."""


def _layers() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    [contract] = [c for c in config["contracts"] if c["type"] == "layers"]
    return [[name.strip() for name in re.split(r"[:|]", layer)] for layer in contract["layers"]]


def _top_level() -> set[str]:
    """Every package and module directly under ``benchwright``."""
    names = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    names |= {p.stem for p in SRC.glob("*.py") if p.stem not in ("__init__", "__main__")}
    return names


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("benchwright", exclude_type_checking_imports=True)


def test_the_layer_contract_holds() -> None:
    done = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 kept, 0 broken" in done.stdout


def test_every_package_has_its_place_in_the_layers_and_the_readme() -> None:
    named = [name for layer in _layers() for name in layer]
    assert sorted(named) == sorted(set(named)), "a name is in two layers"
    assert set(named) == _top_level(), "pyproject.toml's layers must name every package and module"
    layout = (ROOT / "README.md").read_text().split("## Layout", 1)[1].split("\n## ", 1)[0]
    for package in sorted(p for p in _top_level() if (SRC / p).is_dir()):
        assert f"`{package}/`" in layout, f"the README's Layout does not name {package}/"


def test_no_cycle_between_packages(graph: grimp.ImportGraph) -> None:
    packages = sorted(p for p in _top_level() if (SRC / p).is_dir())
    found = []
    for a in packages:
        for b in packages:
            if a < b and graph.chain_exists(f"benchwright.{a}", f"benchwright.{b}", as_packages=True) \
                    and graph.chain_exists(f"benchwright.{b}", f"benchwright.{a}", as_packages=True):
                found.append((a, b))
    assert found == []


def test_the_web_ui_imports_only_the_service_layer_and_the_models(graph: grimp.ImportGraph) -> None:
    ui_modules = [m for m in graph.modules if m == UI or m.startswith(UI + ".")]
    assert len(ui_modules) > 10
    outside = []
    for module in sorted(ui_modules):
        for imported in graph.find_modules_directly_imported_by(module):
            if not imported.startswith("benchwright"):
                continue
            if not any(imported == allowed or imported.startswith(allowed + ".") for allowed in UI_MAY_IMPORT):
                [detail, *_] = graph.get_import_details(importer=module, imported=imported)
                outside.append(f"{module}:{detail['line_number']} imports {imported}")
    assert outside == []


def test_the_architecture_page_names_every_agents_module_and_its_glossary_resolves() -> None:
    page = (ROOT / "docs" / "architecture.md").read_text()
    table = page.split("## Agents, module by module", 1)[1].split("\n## ", 1)[0]
    for module in sorted((SRC / "agents").glob("*.py")):
        if module.stem != "__init__":
            assert f"`{module.name}`" in table, f"docs/architecture.md does not say what agents/{module.name} holds"
    glossary = page.split("## Glossary", 1)[1]
    rows = [line for line in glossary.splitlines() if line.startswith("| ") and not line.startswith("| word")]
    words = [row.split("|")[1].strip() for row in rows]
    assert len(words) == len(set(words)) > 20
    for row in rows:
        for ref in re.findall(r"`([a-z_]+(?:\.[A-Za-z_]+)+)`", row.split("|")[3]):
            assert _resolves(ref), f"the glossary names {ref}, which is not in the code"


def _resolves(ref: str) -> bool:
    """Whether ``benchwright.<ref>`` is a module, or an attribute of one."""
    import importlib

    parts = ref.split(".")
    for cut in range(len(parts), 0, -1):  # the longest importable module, then its attributes
        try:
            found: object = importlib.import_module("benchwright." + ".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(found, attr):
                return False
            found = getattr(found, attr)
        return True
    return False
