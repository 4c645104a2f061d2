"""One registry for every kind of plug-in.

Built-ins register exactly as third-party packages do: a package exposes an entry point in the
``benchwright.plugins`` group whose target is a callable taking the :class:`Registry`; that
callable registers factories with :meth:`Registry.add`. ``benchwright list`` shows them all.
"""

from __future__ import annotations

import difflib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Literal

from benchwright.errors import PluginNotFound

Kind = Literal["criterion", "provider", "language", "sandbox", "scorer", "executor", "importer",
               "agent-preset"]
KINDS: tuple[Kind, ...] = ("criterion", "provider", "language", "sandbox", "scorer", "executor",
                           "agent-preset",
                           "importer")

@dataclass(frozen=True)
class Plugin:
    kind: Kind
    name: str
    factory: Callable[..., Any]
    description: str
    origin: str


class Registry:
    def __init__(self) -> None:
        self._items: dict[tuple[Kind, str], Plugin] = {}
        self._loaded = False
        self._loading = threading.RLock()
        self._busy = False

    def add(self, kind: Kind, name: str, factory: Callable[..., Any], description: str = "") -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown plug-in kind {kind!r}")
        origin = getattr(factory, "__module__", "?")
        if not description:
            lines = (factory.__doc__ or "").strip().splitlines()
            description = lines[0] if lines else ""
        self._items[(kind, name)] = Plugin(kind, name, factory, description, origin)

    def _ensure_loaded(self) -> None:
        """Load the plug-ins once; a thread that asks meanwhile (the server's threads) waits
        for them instead of finding none."""
        if self._loaded:
            return
        with self._loading:
            if self._loaded or self._busy:  # busy: a plug-in of this thread asks while it registers
                return
            self._busy = True
            try:
                for ep in entry_points(group="benchwright.plugins"):
                    ep.load()(self)
            finally:
                self._loaded, self._busy = True, False

    def get(self, kind: Kind, name: str) -> Plugin:
        self._ensure_loaded()
        try:
            return self._items[(kind, name)]
        except KeyError:
            names = self.names(kind)
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(names) or 'none'}"
            raise PluginNotFound(f"no {kind} named {name!r} is installed ({hint})") from None

    def has(self, kind: Kind, name: str) -> bool:
        self._ensure_loaded()
        return (kind, name) in self._items

    def create(self, kind: Kind, name: str, /, **kwargs: Any) -> Any:
        """Call the factory of ``kind``/``name`` with ``kwargs`` (its configuration)."""
        return self.get(kind, name).factory(**kwargs)

    def names(self, kind: Kind) -> list[str]:
        self._ensure_loaded()
        return sorted(n for (k, n) in self._items if k == kind)

    def plugins(self, kind: Kind) -> list[Plugin]:
        self._ensure_loaded()
        return [self._items[(kind, n)] for n in self.names(kind)]


registry = Registry()
"""The process-wide registry."""

