"""One registry for every kind of plug-in.

Built-ins register exactly as third-party packages do: a package exposes an entry point in the
``benchwright.plugins`` group whose target is a callable taking the :class:`Registry`; that
callable registers factories with :meth:`Registry.add`. ``benchwright list`` shows them all.

* **Typed per kind.** :meth:`Registry.create` returns the kind's base class (a
  :class:`~benchwright.lang.base.Language` for ``"language"``, ...) to the type checker, and
  checks at run time that the factory made one: a plug-in whose factory makes anything else is
  an error naming it and its module, not an ``AttributeError`` deep in a run.
* **No silent replacement.** A second registration of a kind and name is refused unless the
  later one passes ``override=True``; the plug-in then records whose it replaced, and
  ``benchwright list`` shows it. benchwright's own entry point loads first, the others in the
  order of their package names, so which one wins does not depend on the file system.
* **A broken package is left out, alone.** A package whose entry point cannot be loaded, or
  whose callable raises (a conflict included), is recorded as one :class:`PluginFailure` naming
  the package and the error, and nothing it registered is kept; every other package's plug-ins
  load and work. The failures are written once to the log (standard error on the command line),
  shown by ``benchwright list`` and named in the error for a plug-in that cannot be found.
"""

from __future__ import annotations

import difflib
import importlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import TYPE_CHECKING, Any, Literal, overload

from benchwright.errors import PluginError, PluginNotFound

if TYPE_CHECKING:
    from benchwright.agents.preset import AgentPreset
    from benchwright.agents.scorer import Scorer
    from benchwright.criteria.base import Criterion
    from benchwright.importers.base import Importer
    from benchwright.lang.base import Language
    from benchwright.model.base import Provider
    from benchwright.results.formats import CompareFormat, ExportFormat, ReportFormat
    from benchwright.run.executor import Executor
    from benchwright.sandbox.base import Sandbox

log = logging.getLogger(__name__)

Kind = Literal["criterion", "provider", "language", "sandbox", "scorer", "executor", "importer",
               "agent-preset", "export-format", "report-format", "compare-format"]
KINDS: tuple[Kind, ...] = ("criterion", "provider", "language", "sandbox", "scorer", "executor",
                           "agent-preset", "importer", "export-format", "report-format",
                           "compare-format")

BASES: dict[Kind, str] = {
    "criterion": "benchwright.criteria.base:Criterion",
    "provider": "benchwright.model.base:Provider",
    "language": "benchwright.lang.base:Language",
    "sandbox": "benchwright.sandbox.base:Sandbox",
    "scorer": "benchwright.agents.scorer:Scorer",
    "executor": "benchwright.run.executor:Executor",
    "importer": "benchwright.importers.base:Importer",
    "agent-preset": "benchwright.agents.preset:AgentPreset",
    "export-format": "benchwright.results.formats:ExportFormat",
    "report-format": "benchwright.results.formats:ReportFormat",
    "compare-format": "benchwright.results.formats:CompareFormat",
}
"""The base class a plug-in of each kind subclasses (``module:Class``): what :meth:`Registry.create`
returns and checks. Named, not imported, here: the registry sits below every package that
registers into it."""

GROUP = "benchwright.plugins"
"""The entry-point group plug-in packages register through."""
OWN_DISTRIBUTION = "benchwright"


@dataclass(frozen=True)
class Plugin:
    """One registered factory."""

    kind: Kind
    name: str
    factory: Callable[..., Any]
    description: str
    origin: str
    """The module of the factory."""
    overrides: str | None = None
    """The origin of the plug-in this one replaced (``add(..., override=True)``), if any."""


@dataclass(frozen=True)
class PluginFailure:
    """A plug-in package whose entry point failed: what ``benchwright list`` shows of it."""

    package: str
    """The distribution that declares the entry point (``bw-lines``), or ``?``."""
    entry_point: str
    """``name = module:function`` as the package declares it."""
    error: str
    """What went wrong: the exception's type and message."""

    def __str__(self) -> str:
        return (f"plug-in package {self.package!r} (entry point {self.entry_point!r}) failed to load "
                f"and is left out: {self.error}")


class Registry:
    """Plug-in factories by kind and name, loaded from the entry points on first use."""

    def __init__(self) -> None:
        self._items: dict[tuple[Kind, str], Plugin] = {}
        self._loaded = False
        self._loading = threading.RLock()
        self._busy = False
        self.failures: list[PluginFailure] = []
        """The plug-in packages that failed to load (each is left out whole)."""

    def add(self, kind: Kind, name: str, factory: Callable[..., Any], description: str = "", *,
            override: bool = False) -> None:
        """Register ``factory`` as ``kind``/``name``.

        Raises:
            ValueError: ``kind`` is not one of :data:`KINDS`.
            PluginError: ``name`` is taken and ``override`` is not set.
        """
        if kind not in KINDS:
            raise ValueError(f"unknown plug-in kind {kind!r}")
        origin = getattr(factory, "__module__", "?")
        if not description:
            lines = (factory.__doc__ or "").strip().splitlines()
            description = lines[0] if lines else ""
        earlier = self._items.get((kind, name))
        if earlier is not None and not override:
            raise PluginError(f"{kind} {name!r} from {origin} is already registered by {earlier.origin}; "
                              f"register it with override=True to replace it")
        self._items[(kind, name)] = Plugin(kind, name, factory, description, origin,
                                           earlier.origin if earlier is not None else None)

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
                for ep in sorted(entry_points(group=GROUP), key=_load_order):
                    self._load(ep)
            finally:
                self._loaded, self._busy = True, False

    def _load(self, ep: EntryPoint) -> None:
        """Run one package's entry point; on any failure keep nothing it registered."""
        before = dict(self._items)
        try:
            ep.load()(self)
        except Exception as e:  # a third party's code: whatever it raises leaves it out
            self._items = before
            failure = PluginFailure(_package(ep), f"{ep.name} = {ep.value}", f"{type(e).__name__}: {e}")
            self.failures.append(failure)
            log.error("%s", failure)

    def get(self, kind: Kind, name: str) -> Plugin:
        self._ensure_loaded()
        try:
            return self._items[(kind, name)]
        except KeyError:
            names = self.names(kind)
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(names) or 'none'}"
            broken = "".join(f"; {failure}" for failure in self.failures)
            raise PluginNotFound(f"no {kind} named {name!r} is installed ({hint}){broken}") from None

    def has(self, kind: Kind, name: str) -> bool:
        self._ensure_loaded()
        return (kind, name) in self._items

    @overload
    def create(self, kind: Literal["criterion"], name: str, /, **kwargs: Any) -> Criterion: ...
    @overload
    def create(self, kind: Literal["provider"], name: str, /, **kwargs: Any) -> Provider: ...
    @overload
    def create(self, kind: Literal["language"], name: str, /, **kwargs: Any) -> Language: ...
    @overload
    def create(self, kind: Literal["sandbox"], name: str, /, **kwargs: Any) -> Sandbox: ...
    @overload
    def create(self, kind: Literal["scorer"], name: str, /, **kwargs: Any) -> Scorer: ...
    @overload
    def create(self, kind: Literal["executor"], name: str, /, **kwargs: Any) -> Executor: ...
    @overload
    def create(self, kind: Literal["importer"], name: str, /, **kwargs: Any) -> Importer: ...
    @overload
    def create(self, kind: Literal["agent-preset"], name: str, /, **kwargs: Any) -> AgentPreset: ...
    @overload
    def create(self, kind: Literal["export-format"], name: str, /, **kwargs: Any) -> ExportFormat: ...
    @overload
    def create(self, kind: Literal["report-format"], name: str, /, **kwargs: Any) -> ReportFormat: ...
    @overload
    def create(self, kind: Literal["compare-format"], name: str, /, **kwargs: Any
               ) -> CompareFormat: ...

    def create(self, kind: Kind, name: str, /, **kwargs: Any) -> object:
        """Call the factory of ``kind``/``name`` with ``kwargs`` (its configuration).

        Raises:
            PluginNotFound: nothing is registered under that name.
            PluginError: the factory made something that is not of the kind's base class.
        """
        plugin = self.get(kind, name)
        made = plugin.factory(**kwargs)
        base = base_class(kind)
        if not isinstance(made, base):
            raise PluginError(f"{kind} {name!r} from {plugin.origin} made a {type(made).__name__}, "
                              f"not a {base.__name__}: its factory must return a subclass of "
                              f"{base.__module__}.{base.__name__}")
        return made

    def names(self, kind: Kind) -> list[str]:
        self._ensure_loaded()
        return sorted(n for (k, n) in self._items if k == kind)

    def plugins(self, kind: Kind) -> list[Plugin]:
        self._ensure_loaded()
        return [self._items[(kind, n)] for n in self.names(kind)]


def base_class(kind: Kind) -> type:
    """The base class of ``kind``'s plug-ins (see :data:`BASES`)."""
    module, _, name = BASES[kind].partition(":")
    found: type = getattr(importlib.import_module(module), name)
    return found


def _package(ep: EntryPoint) -> str:
    dist = getattr(ep, "dist", None)
    return str(dist.name) if dist is not None else "?"


def _load_order(ep: EntryPoint) -> tuple[bool, str, str]:
    """benchwright's own entry point first, then the packages by name."""
    package = _package(ep)
    return package != OWN_DISTRIBUTION, package.lower(), ep.name


registry = Registry()
"""The process-wide registry."""
