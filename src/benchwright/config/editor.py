"""The edits a form makes to an execution config or a scenario, on the YAML text itself.

Every change is applied to the round-trip tree (ruamel), so comments, key order and flow or
block style survive: the web UI's forms edit a file the way a person would, and what they save
is validated like any other text. Nothing here draws a page.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark, YAMLError
from ruamel.yaml.tokens import CommentToken

from benchwright import yamldoc

LIST_FILTERS = ("difficulties", "areas", "languages")
"""The config's filters a form edits as lists of names."""
COMMON_SCORER_FIELDS = ("name", "required", "type")
"""The fields every scorer type has."""


# -- the YAML text, round-trip ---------------------------------------------------------------


def load_rt(text: str) -> Any:
    """The round-trip tree of ``text`` (a mapping for the documents edited here).

    Raises:
        ValueError: the text is not YAML, or not a mapping.
    """
    y = YAML(typ="rt")
    y.preserve_quotes = True
    try:
        data = y.load(io.StringIO(text))
    except YAMLError as e:
        raise ValueError(f"invalid YAML: {e}") from None
    if not isinstance(data, CommentedMap):
        raise ValueError("the document must be a mapping (key: value lines)")
    return data


def dump_rt(data: Any) -> str:
    return yamldoc.dump_text(data)


def edit_text(text: str, change: Callable[[Any], None]) -> str:
    """``text`` with ``change`` applied to its round-trip tree: comments survive."""
    doc = load_rt(text)
    change(doc)
    return dump_rt(doc)


def _replace_items(seq: CommentedSeq, values: list[Any]) -> None:
    """Replace the items of ``seq`` in place; an empty ``[]`` stays a flow list."""
    if not seq and seq.fa.flow_style() is None:
        seq.fa.set_flow_style()
    del seq[:]
    seq.extend(values)


def _append(seq: CommentedSeq, item: Any) -> None:
    """Append ``item`` to ``seq``; the comment lines that followed the old last item (they
    belong to the next key of the document) move after the new one."""
    holder: Any = None
    where: tuple[Any, int] | None = None
    if seq:
        last = seq[-1]
        if isinstance(last, CommentedMap) and last and not last.fa.flow_style():
            holder, where = last.ca.items, (list(last)[-1], 2)
        else:
            holder, where = seq.ca.items, (len(seq) - 1, 0)
    seq.append(item)
    if holder is None or where is None:
        return
    key, slot = where
    entry = holder.get(key)
    token = entry[slot] if entry else None
    if token is None or "\n" not in token.value:
        return
    head, rest = token.value.split("\n", 1)
    if not rest:
        return
    if head.strip():
        token.value = head + "\n"
    else:
        entry[slot] = None
    moved = "\n" + rest
    if isinstance(item, CommentedMap) and item and not item.fa.flow_style():
        item.ca.items[list(item)[-1]] = [None, None, CommentToken(moved, CommentMark(0), None), None]
    else:
        seq.ca.items[len(seq) - 1] = [CommentToken(moved, CommentMark(0), None), None, None, None]


def _flow_seq(values: list[Any]) -> CommentedSeq:
    seq = CommentedSeq(values)
    seq.fa.set_flow_style()
    return seq


# -- execution configs -----------------------------------------------------------------------


def get_list(doc: Any, key: str) -> list[str]:
    value = doc.get(key)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def set_list(doc: Any, key: str, values: list[str]) -> None:
    """Replace a list of strings in place (its style and comments stay)."""
    current = doc.get(key)
    if isinstance(current, CommentedSeq):
        _replace_items(current, values)
    else:
        doc[key] = _flow_seq(list(values))


def toggles(doc: Any, key: str) -> dict[str, bool]:
    """The ``{name: enabled}`` of ``parameters`` or ``criteria`` in any of the accepted forms
    (``[{name, enabled}]``, ``[name]``, ``{name: bool}``)."""
    value = doc.get(key)
    if isinstance(value, dict):
        return {str(k): bool(v) if v is not None else True for k, v in value.items()}
    if isinstance(value, str):
        value = [value]
    out: dict[str, bool] = {}
    for item in value or []:
        if isinstance(item, str):
            out[item] = True
        elif isinstance(item, dict) and "name" in item:
            out[str(item["name"])] = bool(item.get("enabled", True))
    return out


def set_toggle(doc: Any, key: str, name: str, enabled: bool) -> None:
    """Switch ``name`` on or off in ``parameters`` or ``criteria``, keeping the form the file uses."""
    value = doc.get(key)
    if isinstance(value, dict):
        value[name] = enabled
        return
    if value is None or isinstance(value, str):
        value = CommentedSeq([value] if isinstance(value, str) else [])
        doc[key] = value
    for i, item in enumerate(value):
        if isinstance(item, dict) and item.get("name") == name:
            item["enabled"] = enabled
            return
        if item == name:
            if not enabled:
                del value[i]
            return
    if not enabled and not any(isinstance(i, dict) for i in value) and value:
        return  # a list of names: absent is off
    if value and all(isinstance(i, str) for i in value):
        _append(value, name)
        return
    item = CommentedMap([("name", name), ("enabled", enabled)])
    if value and isinstance(value[-1], CommentedMap) and value[-1].fa.flow_style():
        item.fa.set_flow_style()
    _append(value, item)


def model_ids(doc: Any) -> list[str]:
    value = doc.get("llms")
    if isinstance(value, str):
        return [value]
    return [str(m.get("id")) if isinstance(m, dict) else str(m) for m in value or []]


def add_model(doc: Any, model_id: str) -> None:
    value = doc.get("llms")
    if model_id in model_ids(doc):
        return
    if isinstance(value, CommentedSeq):
        _append(value, model_id)
    else:
        doc["llms"] = _flow_seq(([value] if isinstance(value, str) else []) + [model_id])


def remove_model(doc: Any, model_id: str) -> None:
    value = doc.get("llms")
    if isinstance(value, str):
        if value == model_id:
            doc["llms"] = _flow_seq([])
        return
    for i, m in enumerate(value or []):
        if (m.get("id") if isinstance(m, dict) else m) == model_id:
            del value[i]
            return


def set_scalar(doc: Any, key: str, value: Any) -> None:
    doc[key] = value


# -- scenarios -------------------------------------------------------------------------------


def scorers(doc: Any) -> list[Any]:
    """The scenario's ``scorers:`` entries (none when it has no list)."""
    value = doc.get("scorers")
    return list(value) if isinstance(value, list) else []


def add_scorer(doc: Any, kind: str) -> None:
    """Append a scorer of type ``kind`` (its fields left for the form to fill)."""
    seq = doc.get("scorers")
    if not isinstance(seq, CommentedSeq):
        seq = CommentedSeq()
        doc["scorers"] = seq
    item = CommentedMap([("type", kind)])
    if not seq or (isinstance(seq[-1], CommentedMap) and seq[-1].fa.flow_style()):
        item.fa.set_flow_style()
    _append(seq, item)


def remove_scorer(doc: Any, index: int) -> None:
    """Drop the scenario's ``index``-th scorer."""
    del doc["scorers"][index]


@dataclass(frozen=True)
class ScorerTypes:
    """The scorer types a scenario form offers, each by the pydantic model that checks its
    entries (the built-ins' and the plug-ins' alike: the caller passes the installed ones)."""

    models: Mapping[str, type[BaseModel]]

    def names(self) -> list[str]:
        """The type names, sorted."""
        return sorted(self.models)

    def fields(self, kind: str) -> list[str]:
        """The fields a type has beside name, type and required (e.g. command, timeout_s)."""
        model = self.models.get(kind)
        return [] if model is None else [f for f in model.model_fields if f not in COMMON_SCORER_FIELDS]

    def default_required(self, kind: str) -> bool:
        """Whether a scorer of type ``kind`` gates the verdict when ``required`` is not written."""
        model = self.models.get(kind)
        return True if model is None else bool(getattr(model, "default_required", True))

    def field_kind(self, kind: str, field: str) -> str:
        """How a field is edited: ``list``, ``int`` or ``text``."""
        annotation = str(self.models[kind].model_fields[field].annotation)
        if "list" in annotation:
            return "list"
        if "int" in annotation:
            return "int"
        return "text"

    def is_required(self, scorer: Any) -> bool:
        """The scorer's ``required``, else its type's default."""
        value = scorer.get("required") if isinstance(scorer, dict) else None
        return bool(value) if value is not None else self.default_required(str(scorer.get("type", "")))

    def set_type(self, doc: Any, index: int, kind: str) -> None:
        """Change a scorer's type, dropping the fields the new type does not have."""
        item = doc["scorers"][index]
        keep = set(self.fields(kind)) | set(COMMON_SCORER_FIELDS)
        for key in [k for k in item if k not in keep]:
            del item[key]
        item["type"] = kind

    def set_field(self, doc: Any, index: int, field: str, value: Any) -> None:
        """Set (or, with None or an empty text, remove) one field of a scorer."""
        item = doc["scorers"][index]
        if value is None or value == "":
            item.pop(field, None)
        elif field == "required" and value == self.default_required(str(item.get("type", ""))):
            item.pop(field, None)  # the type's default: no need to write it
        elif isinstance(value, list):
            current = item.get(field)
            if isinstance(current, CommentedSeq):
                _replace_items(current, value)
            else:
                item[field] = _flow_seq(list(value))
        else:
            item[field] = value
