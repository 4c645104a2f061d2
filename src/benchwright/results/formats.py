"""The formats results are written in, three plug-in kinds of the registry:

* ``export-format``: a whole run (its manifest, summary and records) as one text, for CI and
  other tools (``benchwright export --format NAME``);
* ``report-format``: a run's summary, the model x criterion table (``benchwright report
  --format NAME``);
* ``compare-format``: the comparison of two runs (``benchwright compare --format NAME``).

benchwright's own formats register the same way a third-party package's do; ``benchwright list
export-formats`` (``report-formats``, ``compare-formats``) shows what is installed. A format
that also draws for a terminal (``table``) gives :meth:`ReportFormat.renderables`; the command
line then shows those, in colour, instead of the text.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from rich.console import RenderableType

    from benchwright.results.compare import ComparisonResult
    from benchwright.results.folder import RunFolder
    from benchwright.results.jsonl import SkippedLines

__all__ = ["CompareFormat", "ExportFormat", "ReportFormat"]


class ExportFormat(abc.ABC):
    """A whole run as one text (a file for CI, a spreadsheet, another tool)."""

    name: ClassVar[str]
    """What ``--format`` names it by (its registry name)."""
    suffix: ClassVar[str] = ".txt"
    """The file name ending a user would give it (``.json``, ``.xml``...)."""

    @abc.abstractmethod
    def export(self, folder: RunFolder, skipped: SkippedLines) -> str:
        """The run in ``folder`` in this format; lines of ``records.jsonl`` that could not be
        read are added to ``skipped`` (the caller warns about them)."""


class ReportFormat(abc.ABC):
    """A run's summary (``summary.yaml``: every model x criterion mean with its interval)."""

    name: ClassVar[str]
    """What ``--format`` names it by (its registry name)."""

    @abc.abstractmethod
    def report(self, summary: dict[str, Any], *, power: bool = False,
               width: int | None = None) -> str:
        """The summary as text; ``power`` adds the power estimate where the format shows
        tables; ``width``: columns for a plain-text layout."""

    def renderables(self, summary: dict[str, Any], *, power: bool = False
                    ) -> Sequence[RenderableType] | None:
        """What a terminal shows instead of :meth:`report` (rich tables), or None."""
        return None


class CompareFormat(abc.ABC):
    """The comparison of two runs (per model and criterion, and the tasks that flipped)."""

    name: ClassVar[str]
    """What ``--format`` names it by (its registry name)."""

    @abc.abstractmethod
    def compare(self, result: ComparisonResult, *, width: int | None = None) -> str:
        """The comparison as text; ``width``: columns for a plain-text layout."""

    def renderables(self, result: ComparisonResult) -> Sequence[RenderableType] | None:
        """What a terminal shows instead of :meth:`compare` (rich tables), or None."""
        return None
