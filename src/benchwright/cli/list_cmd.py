"""``benchwright list [KIND]``: the installed plug-ins of every kind the registry knows.

A kind is named by the registry's own name for it (``sandbox``), its plural (``sandboxes``) or,
for a two-word kind, its first word (``agent`` and ``agents`` for ``agent-preset``): a kind added
to the registry is listed and accepted without a change here."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from benchwright.cli import agents_cmd
from benchwright.cli.tables import never_cut
from benchwright.errors import UserError
from benchwright.registry import KINDS, Kind, Plugin, registry

out = Console(soft_wrap=True)

IRREGULAR_PLURALS: dict[str, str] = {"criterion": "criteria"}
"""Plurals that do not follow English's regular endings."""


def plural(word: str) -> str:
    """The English plural of a kind's name: criterion -> criteria, sandbox -> sandboxes."""
    if word in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[word]
    return word + ("es" if word.endswith(("s", "x", "ch", "sh")) else "s")


def kind_names(kind: Kind) -> list[str]:
    """Every name ``benchwright list`` accepts for ``kind``, the plural (shown in help) first."""
    names = [plural(kind), kind]
    head = kind.split("-")[0]
    if head != kind:  # agent-preset: also 'agent' and 'agents'
        names += [plural(head), head]
    return names


def aliases() -> dict[str, Kind]:
    """Each accepted name of a kind, mapped to the registry's kind."""
    return {name: kind for kind in KINDS for name in kind_names(kind)}


def shown_kinds() -> str:
    """The kinds as help and errors name them: 'criteria, providers, ... or agent-presets'."""
    names = [kind_names(k)[0] for k in KINDS]
    return ", ".join(names[:-1]) + " or " + names[-1]


def resolve(name: str) -> Kind:
    """The registry's kind for a name the user typed, or a :class:`UserError` listing the kinds."""
    known = aliases()
    kind = known.get(name.strip().lower())
    if kind is None:
        raise UserError(f"benchwright list {name!r}: no such kind of plug-in; list one of "
                        f"{shown_kinds()} (singular works too), or all with 'benchwright list'")
    return kind


def list_plugins(
    kind: Annotated[str | None, typer.Argument(
        metavar="[KIND]", help=f"One of {shown_kinds()} (singular works too); default: all.")] = None,
) -> None:
    """List installed plug-ins."""
    if kind is None:
        out.print(plugins_table(list(KINDS)))
    else:
        wanted = resolve(kind)
        out.print(DETAILED.get(wanted, lambda: plugins_table([wanted]))())
    if registry.failures:
        out.print(failures_table())


def origin(plugin: Plugin) -> str:
    """Where a plug-in comes from, and whose it replaced (``add(..., override=True)``)."""
    return plugin.origin + (f" (overrides {plugin.overrides})" if plugin.overrides else "")


def failures_table() -> Table:
    """The plug-in packages whose entry point failed, each left out whole."""
    table = Table("package", "entry point", "error", title="plug-in packages left out",
                  caption="their plug-ins are not installed; every other package's are", style="red")
    for failure in registry.failures:
        table.add_row(escape(failure.package), escape(failure.entry_point), escape(failure.error))
    return never_cut(table, out.width)


def plugins_table(kinds: list[Kind]) -> Table:
    """Kind, name, description and module of each plug-in of ``kinds``."""
    table = Table("kind", "name", "description", "from")
    for k in kinds:
        for p in registry.plugins(k):  # third parties' text is shown as written, never as markup
            table.add_row(escape(k), escape(p.name), escape(p.description), escape(origin(p)))
    return never_cut(table, out.width)  # wrapped, never cut: names are copied from here


def criteria_table() -> Table:
    """Each criterion with its unit, languages, tool and whether this machine has the tool."""

    table = Table(title="criteria", caption="what each measures and how it is scored: "
                  "docs/criteria.md")
    table.add_column("criterion")
    for column in ("unit", "better", "languages", "tool", "state", "from"):
        table.add_column(column)
    for p in registry.plugins("criterion"):
        criterion = registry.create("criterion", p.name)
        why = criterion.missing()
        table.add_row(escape(p.name), escape(criterion.unit or "-"),
                      "higher" if criterion.higher_is_better else "lower",
                      escape(", ".join(criterion.languages) or "any"), escape(criterion.tool),
                      "[green]ready[/green]" if why is None else f"[red]missing[/red]: {escape(why)}",
                      escape(origin(p) if p.overrides else p.origin.split(".")[0]))
    return never_cut(table, out.width)  # wrapped, never cut: names are copied from here


def languages_table() -> Table:
    """Each language with its code fences, its toolchain and whether this machine has it."""

    table = Table(title="languages")
    for column in ("language", "fences", "toolchain", "install", "from"):
        table.add_column(column)
    for p in registry.plugins("language"):
        lang = registry.create("language", p.name)
        why = lang.missing()
        if why is None:
            versions = lang.toolchain()
            state = "[green]ready[/green] " + escape(", ".join(f"{k} {v}" for k, v in versions.items()))
        else:
            state = f"[red]missing[/red]: {escape(why)}"
        table.add_row(escape(p.name), escape(" ".join(lang.fence_names)), state,
                      escape(lang.install_hint) if why is not None else "", escape(origin(p)))
    return never_cut(table, out.width)  # wrapped, never cut: names are copied from here


def importers_table() -> Table:
    """Each importer with its dataset, languages, subsets and where its data comes from."""
    from benchwright.importers.base import ImportRequest

    table = Table(title="importers", caption="benchwright import NAME --data FILE (or --hf): "
                  "docs/datasets.md")
    for column in ("importer", "dataset", "languages", "subsets", "file / hub"):
        table.add_column(column)
    for p in registry.plugins("importer"):
        importer = registry.create("importer", p.name)
        hub = importer.hub(ImportRequest(language=importer.default_language
                                         or next(iter(importer.languages), None)))
        shown = importer.file_name.replace("{", "<").replace("}", ">")  # a placeholder, not a name
        where = "\n".join(w for w in (shown, hub.path if hub else "") if w) or "-"
        subsets = list(importer.subsets)
        if len(subsets) > 8:  # LiveCodeBench's windows: the page lists them all
            subsets = [*subsets[:7], f"+{len(subsets) - 7} more"]
        package = p.origin.split(".")[0]
        source = "" if package == "benchwright" and not p.overrides else f" [from {origin(p)}]"
        table.add_row(escape(p.name), escape(importer.dataset + source),
                      escape(" ".join(importer.languages)), escape(" ".join(subsets)),
                      escape(where))
    return never_cut(table, out.width)  # wrapped, never cut: names are copied from here


def _agents_table() -> Any:
    return agents_cmd.table()


DETAILED: dict[Kind, Callable[[], Any]] = {
    "criterion": criteria_table,
    "language": languages_table,
    "importer": importers_table,
    "agent-preset": _agents_table,
}
"""Kinds with a table of their own (what each needs, whether this machine has it); every other
kind is listed by :func:`plugins_table`."""
