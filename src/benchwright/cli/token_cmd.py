"""``benchwright token create|list|revoke``: the access tokens of ``benchwright serve --auth``.

The functions are registered on ``token_app`` in :mod:`benchwright.cli.app`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from benchwright.errors import MissingDependency, UserError
from benchwright.workspace import Workspace

if TYPE_CHECKING:
    from benchwright.server.auth import TokenStore

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

WorkspaceOpt = Annotated[
    Path | None,
    typer.Option("--workspace", "-w", help="Workspace folder (default: nearest with benchwright.yaml)."),
]


def _store(workspace: Path | None) -> TokenStore:
    try:
        from benchwright.server.auth import TokenStore
    except ImportError as e:
        raise MissingDependency(f"tokens need the serve extra ({e.name} is missing): "
                                "pip install 'benchwright[serve]'") from None
    return TokenStore(Workspace.open(workspace))


def create(
    role: Annotated[str, typer.Option(help="viewer (read), editor (also edit and launch) or admin "
                                           "(also manage tokens).")],
    name: Annotated[str | None, typer.Option(help="A note saying whose or what for.")] = None,
    workspace: WorkspaceOpt = None,
) -> None:
    """Make a token for 'benchwright serve --auth'; it is printed once and never again."""
    from benchwright.server.auth import check_role

    store = _store(workspace)
    token, info = store.create(check_role(role), name)
    sys.stdout.write(token + "\n")
    label = f" ({info.name})" if info.name else ""
    err.print(f"{info.role} token {info.id}{label} saved (hashed) in {store.path}",
              markup=False, highlight=False)
    err.print("warning: this is the only time the token is shown; keep it now "
              "(a lost token can only be revoked and replaced)", style="yellow", highlight=False)


def list_tokens(
    fmt: Annotated[str, typer.Option("--format", "-f", help="table or json.")] = "table",
    workspace: WorkspaceOpt = None,
) -> None:
    """The tokens of the workspace: id, role, name, when made (never the token)."""
    if fmt not in ("table", "json"):
        raise UserError(f"--format {fmt!r}: use table or json")
    store = _store(workspace)
    tokens = store.list()
    if fmt == "json":
        sys.stdout.write(json.dumps([t.model_dump() for t in tokens], indent=2) + "\n")
        return
    if not tokens:
        out.print(f"no tokens in {store.path} (make one with 'benchwright token create --role viewer')",
                  markup=False, highlight=False)
        return
    from rich.table import Table
    from rich.text import Text

    from benchwright.cli.tables import never_cut

    table = Table("id", "role", "name", "created")
    for t in tokens:
        table.add_row(Text(t.id), Text(t.role), Text(t.name or ""), Text(t.created))  # as text, never markup
    out.print(never_cut(table, out.width))


def revoke(
    token_id: Annotated[str, typer.Argument(metavar="ID", help="The token's id (see 'benchwright token list').")],
    workspace: WorkspaceOpt = None,
) -> None:
    """Revoke a token: it stops working at once, also in a running server."""
    store = _store(workspace)
    if not store.revoke(token_id):
        raise UserError(f"no token {token_id!r} in {store.path} (see 'benchwright token list')")
    out.print(f"revoked token {token_id}", markup=False, highlight=False)
