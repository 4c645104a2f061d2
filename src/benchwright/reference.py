"""The field tables of ``docs/formats.md``, made from the pydantic models that read and write
each file, so that the reference cannot drift from the code.

In the page, a table sits between ``<!-- fields: module:Model -->`` and ``<!-- end fields -->``;
``python -m benchwright.reference docs/formats.md`` writes every such table again from its
model, and a test fails when the page differs from what this module makes or a field of a
model has no description.
"""

from __future__ import annotations

import importlib
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

__all__ = ["field_table", "model_of", "rewrite", "undocumented"]

MARKER = re.compile(r"(<!-- fields: ([\w.]+:\w+) -->\n)(.*?)(<!-- end fields -->)", re.S)


def model_of(path: str) -> type[BaseModel]:
    """The model a marker names (``module:Model``)."""
    module, _, name = path.partition(":")
    model = getattr(importlib.import_module(module), name)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise TypeError(f"{path} is not a pydantic model")
    return model


def _type(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type(args[0])
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in args)
    if origin in (typing.Union, types.UnionType):
        return " \\| ".join(_type(a) for a in args if a is not type(None)) + (
            " \\| null" if type(None) in args else "")
    if origin in (list, tuple, set, frozenset):
        return f"list of {_type(args[0])}" if args else "list"
    if origin is dict:
        return f"map of {_type(args[1])}" if len(args) == 2 else "map"
    if isinstance(annotation, type):
        return {"str": "string", "int": "integer", "float": "number", "bool": "boolean",
                "Path": "path", "date": "date (YYYY-MM-DD)"}.get(annotation.__name__,
                                                                annotation.__name__)
    return str(annotation).replace("typing.", "")


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    if field.default is PydanticUndefined:  # a default factory: an empty list or map
        return "empty"
    value = field.default
    if value is None:
        return "`null`"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, str):
        return f'`"{value}"`'
    return f"`{value!r}`"


def field_table(model: type[BaseModel]) -> str:
    """The Markdown table of ``model``'s fields: key, type, default, description."""
    rows = ["| key | type | default | meaning |", "| --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        key = field.alias or name
        text = " ".join((field.description or "").split()).replace("|", "\\|")
        rows.append(f"| `{key}` | {_type(field.annotation)} | {_default(field)} | {text} |")
    return "\n".join(rows) + "\n"


def undocumented(model: type[BaseModel]) -> list[str]:
    """The fields of ``model`` without a description."""
    return [f"{model.__name__}.{name}" for name, field in model.model_fields.items()
            if not (field.description or "").strip()]


def rewrite(text: str) -> str:
    """``text`` with every marked table made again from its model."""
    return MARKER.sub(lambda m: m.group(1) + field_table(model_of(m.group(2))) + m.group(4), text)


def main(argv: list[str]) -> int:
    for name in argv[1:]:
        path = Path(name)
        path.write_text(rewrite(path.read_text(encoding="utf-8")), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
