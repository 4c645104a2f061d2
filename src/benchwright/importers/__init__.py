"""Importers: turn public benchmarks and plain JSONL files into task sources."""

from __future__ import annotations

from benchwright.importers.escape import escape_template
from benchwright.importers.humaneval import import_humaneval
from benchwright.importers.jsonl import JsonlMapping, import_jsonl

__all__ = ["JsonlMapping", "escape_template", "import_humaneval", "import_jsonl"]
