"""(being written)"""

from __future__ import annotations

from benchwright.criteria.base import Criterion

CRITERIA: tuple[type[Criterion], ...] = ()
"""The criteria of this module, registered by :mod:`benchwright.builtins`."""
