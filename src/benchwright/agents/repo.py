"""Where a scenario's workspace comes from (``workspace.repo``), and which forms are accepted.

* A remote git repository: ``https://``, ``http://``, ``ssh://`` and ``git://`` URLs, and the scp-like
  ``user@host:path``; cloned as given.
* A ``file://`` URL or a local folder (relative to the scenario file): confined like every path
  a file names (:mod:`benchwright.workspace.confine`), then cloned (a URL, or a folder with a
  ``ref``) or copied.
* Anything else is refused as a config error: another transport (``ext::``, ``fd::``, ``ftp://``...),
  a leading ``-`` (git would read an option such as ``--upload-pack=``), whitespace or control
  characters in a URL.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal
from urllib.parse import quote, unquote

from benchwright.workspace.confine import Confinement

Form = Literal["remote", "file", "local"]

_REMOTE = re.compile(r"(?:https?|ssh|git)://(?:[A-Za-z0-9_][^@/\s]*@)?[A-Za-z0-9\[][^/\s]*(?:/\S*)?")
"""A URL whose user and host cannot be read as an option (``ssh://-oProxyCommand=...``)."""
_SCP = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._~+-]*@[A-Za-z0-9][A-Za-z0-9.-]*:\S+")
_FILE = re.compile(r"file://(?:localhost)?(/.*)", re.S)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*(?:://|::)")
ACCEPTED = "https://, http://, ssh://, git:// or user@host:path URL, a file:// URL, or a folder of the workspace"


def form(repo: str) -> Form:
    """How ``repo`` is reached.

    Raises:
        ValueError: a form that is refused (the message says which are accepted).
    """
    if not repo.isprintable():
        raise ValueError(f"{repo!r} holds control characters: give an {ACCEPTED}")
    if repo.startswith("-"):
        raise ValueError(f"{repo!r} starts with '-', which git would read as an option: give an {ACCEPTED}")
    if _REMOTE.fullmatch(repo) or _SCP.fullmatch(repo):
        return "remote"
    if _FILE.fullmatch(repo):
        return "file"
    if _SCHEME.match(repo) or "://" in repo:
        raise ValueError(f"{repo!r} is not a repository benchwright reaches: give an {ACCEPTED}")
    return "local"


def local_path(repo: str, base: Path) -> Path:
    """The folder a ``file://`` URL or a local ``repo`` names (a local one from ``base``)."""
    found = _FILE.fullmatch(repo)
    return Path(unquote(found.group(1))) if found else base / repo


def locate(repo: str, *, base: Path, confinement: Confinement, file: Path | str, field: str,
           line: int | None = None) -> str:
    """``repo`` as the agent workspace reads it: a remote URL unchanged, a ``file://`` URL or a
    local folder confined and resolved (a URL stays a URL, a folder becomes absolute).

    Raises:
        ValueError: a refused form.
        PathRefused: a file URL or folder outside the workspace and the allowed folders.
    """
    kind = form(repo)
    if kind == "remote":
        return repo
    named = local_path(repo, base) if kind == "file" else repo
    path = confinement.path(named, base=base, field=field, file=file, line=line)
    return "file://" + quote(str(path)) if kind == "file" else str(path)
