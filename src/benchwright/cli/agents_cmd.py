"""``benchwright agents install NAME`` and ``benchwright agents list`` (also ``benchwright list
agents``): the agent CLIs of the presets and where they are installed.

The functions are registered on ``agents_app`` in :mod:`benchwright.cli.app`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from benchwright.agents.preset import AgentPreset
from benchwright.errors import UserError

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def _preset(name: str) -> AgentPreset:
    from benchwright.registry import registry

    if not registry.has("agent-preset", name):
        known = ", ".join(registry.names("agent-preset")) or "none"
        raise UserError(f"no agent preset named {name!r} (known: {known})")
    made = registry.create("agent-preset", name)
    if not isinstance(made, AgentPreset):
        raise UserError(f"the agent-preset plug-in {name!r} does not make an AgentPreset")
    return made


def install(
    name: Annotated[str, typer.Argument(help="The preset: 'benchwright agents list' shows them.")],
    version: Annotated[str | None, typer.Option("--version", help="Install this version instead of the pinned one.")] = None,
    tools: Annotated[Path | None, typer.Option("--tools", help="The tools folder (default: $BENCHWRIGHT_AGENT_TOOLS, "
                                               "/usr/local/lib/benchwright-tools/agents as root, else "
                                               "~/.local/share/benchwright/agents).")] = None,
) -> None:
    """Install a preset's agent CLI into the tools folder the sandbox shows read-only."""
    from benchwright.agents.tools import install as do_install
    from benchwright.agents.tools import tool_folder

    preset = _preset(name)
    package = preset.package
    wanted = version or package.version
    err.print(f"installing {escape(package.name)} {escape(wanted)} ({package.ecosystem}) "
              f"into {escape(str(tool_folder(name, tools)))}")
    with err.status(f"{package.ecosystem} install {escape(package.name)}") as status:
        def on_line(line: str) -> None:
            status.update(escape(line[:120]))
        record = do_install(preset, version=version, root=tools, on_line=on_line)
    out.print(f"installed {escape(record.package)} {escape(record.version)} for preset "
              f"{escape(record.preset)}: {escape(record.program)}")


def list_agents(
    tools: Annotated[Path | None, typer.Option("--tools", help="The tools folder to look in.")] = None,
) -> None:
    """List the agent presets, their pinned packages and what is installed."""
    out.print(table(tools))


def table(tools: Path | None = None) -> Any:
    from rich.table import Table

    from benchwright.agents.tools import installed
    from benchwright.cli.tables import never_cut
    from benchwright.registry import registry

    result = Table("preset", "CLI", "package", "wire", "installed", "program", "note", title="agent presets",
                   caption="install one with: benchwright agents install NAME")
    for plugin in registry.plugins("agent-preset"):
        preset = _preset(plugin.name)
        package = preset.package
        record = installed(plugin.name, tools)
        pinned = f"{package.name}@{package.version}"
        result.add_row(escape(plugin.name), escape(preset.title), escape(pinned), escape(preset.wire),
                       escape(record.version) if record else "[yellow]not installed[/yellow]",
                       escape(record.program) if record else "", escape(package.note))
    return never_cut(result, out.width)  # wrapped, never cut: names are copied from here
