"""``benchwright cache stats`` and ``benchwright cache clear``: the generation cache of a workspace.

The functions are registered on ``cache_app`` in :mod:`benchwright.cli.app`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from benchwright.errors import UserError
from benchwright.workspace import Workspace

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

WorkspaceOpt = Annotated[
    Path | None,
    typer.Option("--workspace", "-w", help="Workspace folder (default: nearest with benchwright.yaml)."),
]


def _human_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def _human_ms(ms: float) -> str:
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    if seconds < 3600:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def stats(
    fmt: Annotated[str, typer.Option("--format", "-f", help="table or json.")] = "table",
    workspace: WorkspaceOpt = None,
) -> None:
    """Entries, size on disk and time saved, per provider and model."""
    from benchwright.model.cache import CacheStats, GenerationCache, cache_path

    if fmt not in ("table", "json"):
        raise UserError(f"--format {fmt!r}: use table or json")
    path = cache_path(Workspace.open(workspace).state)
    if path.is_file():
        cache = GenerationCache(path)
        try:
            result = cache.stats()
        finally:
            cache.close()
    else:
        result = CacheStats(path=path, entries=0, size_bytes=0, latency_ms=0.0, cost_usd=0.0)
    if fmt == "json":
        sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n")
        return
    from rich.table import Table
    from rich.text import Text

    from benchwright.cli.tables import never_cut

    out.print(f"generation cache: {path}", markup=False, highlight=False)
    noun = "entry" if result.entries == 1 else "entries"
    out.print(f"{result.entries} {noun}, {_human_bytes(result.size_bytes)} on disk, "
              f"{_human_ms(result.latency_ms)} of generation and ${result.cost_usd:.4f} saved per reuse")
    if result.models:
        table = Table("provider", "model", "entries", "latency saved", "cost saved", "newest")
        for m in result.models:
            table.add_row(Text(m.provider), Text(m.model), str(m.entries), _human_ms(m.latency_ms),
                          f"${m.cost_usd:.4f}", Text(m.newest or ""))  # names as text, never markup
        out.print(never_cut(table, out.width))


def clear(
    provider: Annotated[str | None, typer.Option(help="Only this provider's entries (its name in benchwright.yaml).")] = None,
    model: Annotated[str | None, typer.Option(help="Only this model's entries (the name after 'provider/').")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    workspace: WorkspaceOpt = None,
) -> None:
    """Remove cached generations (all of them, or those of a provider and/or model)."""
    from benchwright.model.cache import GenerationCache, cache_path

    path = cache_path(Workspace.open(workspace).state)
    what = " and ".join(f"{k} {v!r}" for k, v in (("provider", provider), ("model", model)) if v is not None)
    scope = f"the cached generations of {what}" if what else "every cached generation"
    if not path.is_file():
        out.print(f"nothing to clear: no cache at {path}", markup=False, highlight=False)
        return
    if not yes:
        if sys.stdin is None or not sys.stdin.isatty():
            raise UserError(f"refusing to remove {scope} from {path} without confirmation "
                            "(no terminal to ask on): pass --yes")
        if not typer.confirm(f"remove {scope} from {path}?", default=False):
            err.print("nothing removed")
            raise typer.Exit(1)
    try:
        cache = GenerationCache(path)
    except UserError:
        if what:
            raise
        # an unusable file can only be thrown away
        for suffix in ("", "-wal", "-shm"):
            (path.parent / (path.name + suffix)).unlink(missing_ok=True)
        out.print(f"deleted the unusable cache file {path}", markup=False, highlight=False)
        return
    try:
        removed = cache.clear(provider=provider, model=model)
    finally:
        cache.close()
    out.print(f"removed {removed} cached generation(s) from {path}", markup=False, highlight=False)
