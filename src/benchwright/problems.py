"""Turning pydantic validation errors into located :class:`Problem` values."""

from __future__ import annotations

import difflib
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from benchwright.errors import Problem
from benchwright.yamldoc import Document

M = TypeVar("M", bound=BaseModel)


def _field_names(model: type[BaseModel], seen: set[type[BaseModel]] | None = None) -> set[str]:
    """Every field name and alias in ``model`` and the models nested in it."""
    seen = seen if seen is not None else set()
    if model in seen:
        return set()
    seen.add(model)
    names: set[str] = set()
    for name, field in model.model_fields.items():
        names.add(field.alias or name)
        for arg in _nested(field.annotation):
            names |= _field_names(arg, seen)
    return names


def _nested(annotation: Any) -> list[type[BaseModel]]:
    out: list[type[BaseModel]] = []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        out.append(annotation)
    for arg in getattr(annotation, "__args__", ()) or ():
        out.extend(_nested(arg))
    meta = getattr(annotation, "__origin__", None)
    if meta is not None and isinstance(meta, type) and issubclass(meta, BaseModel):
        out.append(meta)
    return out


def _hint(err: Any, known: set[str]) -> str:
    kind = err["type"]
    loc = err["loc"]
    if kind == "extra_forbidden":
        close = difflib.get_close_matches(str(loc[-1]), sorted(known), n=1)
        return f"did you mean {close[0]!r}?" if close else "remove the key or check its indentation"
    if kind == "missing":
        return f"add '{loc[-1]}:'"
    if kind.endswith("_type") or kind.endswith("_parsing"):
        return "check the value's type"
    return ""


def validate(doc: Document, model: type[M]) -> tuple[M | None, list[Problem]]:
    """Validate ``doc.data`` as ``model``; problems carry the file, line and document path."""
    try:
        return model.model_validate(doc.data), []
    except ValidationError as e:
        known = _field_names(model)
        problems = []
        for err in e.errors():
            loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
            msg = err["msg"]
            if err["type"] == "extra_forbidden":
                msg = f"unknown key '{loc[-1]}'"
            elif "input" in err and err["type"] not in ("missing",) and not isinstance(err["input"], (dict, list)):
                msg = f"{msg} (got {err['input']!r})"
            problems.append(doc.problem(loc, msg, hint=_hint(err, known)))
        return None, problems
