"""Form editors of the web UI: an execution config and a scenario's scorers, each beside its YAML.

Every form change is applied to the YAML text round-trip (ruamel), so comments, key order and
flow or block style survive; saving writes that text through :meth:`Service.write_file`, which
validates it exactly as ``benchwright validate`` does. The helpers below work on the round-trip
tree and have no UI in them.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark, YAMLError
from ruamel.yaml.tokens import CommentToken

from benchwright import yamldoc
from benchwright.agents.scenario import ScorerBase, installed_scorer_models
from benchwright.errors import InputError, Problem, UserError
from benchwright.server.service import Conflict, FileKind, Service
from benchwright.server.ui.access import Access
from benchwright.server.ui.layout import denied, frame, problem
from benchwright.server.ui.text import testid

LIST_FILTERS = ("difficulties", "areas", "languages")
COMMON_SCORER_FIELDS = ("name", "required", "type")


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


@functools.cache
def scorer_models() -> dict[str, type[ScorerBase]]:
    """Each installed scorer type's pydantic model (built-ins' and plug-ins')."""
    return installed_scorer_models()


def scorer_fields(kind: str) -> list[str]:
    """The fields a scorer type has beside name, type and required (e.g. command, timeout_s)."""
    model = scorer_models().get(kind)
    return [] if model is None else [f for f in model.model_fields if f not in COMMON_SCORER_FIELDS]


def default_required(kind: str) -> bool:
    model = scorer_models().get(kind)
    return True if model is None else model.default_required


def field_kind(kind: str, field: str) -> str:
    """How a field is edited: ``list``, ``int`` or ``text``."""
    annotation = str(scorer_models()[kind].model_fields[field].annotation)
    if "list" in annotation:
        return "list"
    if "int" in annotation:
        return "int"
    return "text"


def scorers(doc: Any) -> list[Any]:
    value = doc.get("scorers")
    return list(value) if isinstance(value, list) else []


def is_required(scorer: Any) -> bool:
    """The scorer's ``required``, else its type's default."""
    value = scorer.get("required") if isinstance(scorer, dict) else None
    return bool(value) if value is not None else default_required(str(scorer.get("type", "")))


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
    del doc["scorers"][index]


def set_scorer_type(doc: Any, index: int, kind: str) -> None:
    """Change a scorer's type, dropping the fields the new type does not have."""
    item = doc["scorers"][index]
    keep = set(scorer_fields(kind)) | set(COMMON_SCORER_FIELDS)
    for key in [k for k in item if k not in keep]:
        del item[key]
    item["type"] = kind


def set_scorer_field(doc: Any, index: int, field: str, value: Any) -> None:
    """Set (or, with None or an empty text, remove) one field of a scorer."""
    item = doc["scorers"][index]
    if value is None or value == "":
        item.pop(field, None)
    elif field == "required" and value == default_required(str(item.get("type", ""))):
        item.pop(field, None)  # the type's default: no need to write it
    elif isinstance(value, list):
        current = item.get(field)
        if isinstance(current, CommentedSeq):
            _replace_items(current, value)
        else:
            item[field] = _flow_seq(list(value))
    else:
        item[field] = value


# -- the pages -------------------------------------------------------------------------------


def _number(value: float | None) -> int | float | None:
    if value is None:
        return None
    return int(value) if float(value).is_integer() else value


def register_forms(service: Service, access: Access | None = None) -> None:
    """Define the ``/config`` and ``/scenario`` form pages (relative to the UI's mount); with
    ``access`` (``serve --auth``), reading needs a viewer's token and saving an editor's."""
    from nicegui import run, ui

    from benchwright.registry import registry

    class Editor:
        """The YAML beside a form: form changes edit the text; save writes it."""

        def __init__(self, path: str, kind: FileKind, text: str, tag: str) -> None:
            self.path, self.kind, self.etag = path, kind, tag
            self.code = ui.codemirror(text, language="YAML").classes("w-full h-[70vh] border") \
                .props('data-testid="yaml"')
            self.problems: ui.column | None = None

        def doc(self) -> Any:
            return load_rt(self.code.value)

        async def change(self, change: Callable[[Any], None]) -> None:
            try:
                self.code.value = edit_text(self.code.value, change)
            except ValueError as e:
                self.show_text(f"{self.path}: {e} (fix the YAML, then reload the form)")
                return
            await self.check()

        def show(self, found: list[Problem], saved: bool = False) -> None:
            assert self.problems is not None
            self.problems.clear()
            with self.problems:
                if saved:
                    ui.label("saved").classes("text-green-700").props('data-testid="saved"')
                else:
                    errors = sum(p.severity == "error" for p in found)
                    ui.label(f"checked: {errors} error(s), {len(found) - errors} warning(s)") \
                        .classes("text-sm text-slate-500").props('data-testid="checked"')
                for p in found:
                    ui.label(p.render()).props('data-testid="problem"') \
                        .classes("text-red-700" if p.severity == "error" else "text-amber-700")

        def show_text(self, message: str) -> None:
            assert self.problems is not None
            self.problems.clear()
            with self.problems:
                problem(message)

        async def check(self) -> None:
            self.show(await run.io_bound(service.check_text, self.path, self.code.value, self.kind) or [])

        async def save(self) -> None:
            if access is not None and not access.allows("editor"):
                self.show_text("your token may read, not write (an editor's token is needed)")
                return
            try:
                done = await run.io_bound(service.write_file, self.path, self.code.value, self.kind, self.etag)
            except InputError as e:
                self.show(list(e.problems))
                return
            except Conflict as e:
                self.show_text(f"412 Precondition Failed: {e}")
                return
            if done is None:  # the process is shutting down
                return
            written, warnings = done
            self.etag = written.etag
            self.show(warnings, saved=True)

        def buttons(self, refresh: Callable[[], None]) -> None:
            with ui.row():
                ui.button("Validate", on_click=self.check).props('data-testid="validate"')
                ui.button("Save", on_click=self.save).props('data-testid="save"')
                ui.button("Reload form from YAML", on_click=refresh).props('flat data-testid="reload"')
            self.problems = ui.column().classes("w-full").props('data-testid="problems"')

    def laid_out(path: str, kind: FileKind, split: int,
                 refresh: Callable[[], None]) -> tuple[Editor, Any] | None:
        """A form page's two halves: the YAML editor on the right, its buttons and an empty
        form column (for ``refresh`` to fill) on the left; None, with the problem shown, when
        the file cannot be read."""
        try:
            got = service.read_file(path, kind)
        except UserError as e:
            problem(str(e))
            return None
        with ui.splitter(value=split).classes("w-full") as halves:
            with halves.after:
                editor = Editor(path, kind, got.text, got.etag)
            with halves.before, ui.column().classes("w-full pr-4 gap-2"):
                editor.buttons(refresh)
                form = ui.column().classes("w-full gap-2")
        return editor, form

    @ui.page("/config")
    def config_page(path: str) -> None:
        if denied(access, f"Config {path}"):
            return
        with frame(f"Config {path}", access):
            laid = laid_out(path, "config", 45, lambda: build())
            if laid is None:
                return
            editor, form = laid
            known = registry.names("criterion")

            def build() -> None:
                form.clear()
                try:
                    doc = editor.doc()
                except ValueError as e:
                    with form:
                        problem(str(e))
                    return
                with form:
                    ui.label("Filters").classes("text-lg font-medium")
                    for key in LIST_FILTERS:
                        testid(ui.input_chips(key, value=get_list(doc, key), new_value_mode="add-unique",
                                              on_change=lambda e, k=key: editor.change(
                                                  lambda d: set_list(d, k, [str(v) for v in e.value or []])))
                               .classes("w-full"), f"filter-{key}")
                    params = toggles(doc, "parameters")
                    if params:
                        ui.label("Parameters").classes("text-lg font-medium")
                        for name, on in params.items():
                            testid(ui.switch(name, value=on, on_change=lambda e, n=name: editor.change(
                                lambda d: set_toggle(d, "parameters", n, bool(e.value)))), f"parameter-{name}")
                    ui.label("Criteria").classes("text-lg font-medium")
                    enabled = toggles(doc, "criteria")
                    with ui.grid(columns=2).classes("w-full gap-0"):
                        for name in sorted(set(known) | set(enabled)):
                            testid(ui.switch(name, value=enabled.get(name, False),
                                             on_change=lambda e, n=name: editor.change(
                                                 lambda d: set_toggle(d, "criteria", n, bool(e.value)))),
                                   f"criterion-{name}")
                    ui.label("Models").classes("text-lg font-medium")
                    for mid in model_ids(doc):
                        with ui.row().classes("items-center gap-2"):
                            testid(ui.label(mid), f"model-{mid}")

                            async def drop(m: str = mid) -> None:
                                await editor.change(lambda d: remove_model(d, m))
                                build()

                            testid(ui.button(icon="delete", on_click=drop).props("flat dense"),
                                   f"remove-model-{mid}")
                    with ui.row().classes("items-center gap-2"):
                        new = ui.input("provider/model").props('data-testid="new-model"')

                        async def add() -> None:
                            if new.value and new.value.strip():
                                await editor.change(lambda d: add_model(d, new.value.strip()))
                                build()

                        ui.button("Add model", on_click=add).props('data-testid="add-model"')
                    ui.number("samples", value=doc.get("samples", 1), min=1, precision=0,
                              on_change=lambda e: editor.change(lambda d: set_scalar(d, "samples", _number(e.value)))) \
                        .props('data-testid="samples"')

            build()

    @ui.page("/scenario")
    def scenario_page(path: str) -> None:
        if denied(access, f"Scenario {path}"):
            return
        with frame(f"Scenario {path}", access):
            laid = laid_out(path, "scenario", 55, lambda: build())
            if laid is None:
                return
            editor, form = laid
            types = registry.names("scorer")

            def build() -> None:
                form.clear()
                try:
                    items = scorers(editor.doc())
                except ValueError as e:
                    with form:
                        problem(str(e))
                    return
                with form:
                    ui.label("Scorers").classes("text-lg font-medium")
                    for i, item in enumerate(items):
                        row(i, item if isinstance(item, dict) else {})
                    with ui.row().classes("items-center gap-2"):
                        kind = ui.select(types, value="command", label="new scorer type") \
                            .classes("w-64").props('data-testid="new-scorer-type"')

                        async def add() -> None:
                            await editor.change(lambda d: add_scorer(d, str(kind.value)))
                            build()

                        ui.button("Add scorer", on_click=add).props('data-testid="add-scorer"')

            def row(i: int, item: dict[str, Any]) -> None:
                kind = str(item.get("type", ""))

                def setter(field: str, convert: Callable[[Any], Any] = lambda v: v) -> Callable[[Any], Any]:
                    return lambda e: editor.change(lambda d: set_scorer_field(d, i, field, convert(e.value)))

                with testid(ui.card().classes("w-full"), f"scorer-{i}"), \
                        ui.row().classes("w-full items-center gap-2"):
                    testid(ui.input("name", value=str(item.get("name") or ""), on_change=setter("name"))
                           .classes("w-32"), f"scorer-{i}-name")

                    async def retype(e: Any) -> None:
                        await editor.change(lambda d: set_scorer_type(d, i, str(e.value)))
                        build()

                    testid(ui.select(types, value=kind if kind in types else None, label="type", on_change=retype)
                           .classes("w-52"), f"scorer-{i}-type")
                    for field in scorer_fields(kind):
                        how = field_kind(kind, field)
                        tag = f"scorer-{i}-{field}"
                        current = item.get(field)
                        if how == "list":
                            testid(ui.input_chips(field, value=[str(v) for v in current or []],
                                                  new_value_mode="add-unique",
                                                  on_change=setter(field, lambda v: [str(x) for x in v or []] or None))
                                   .classes("min-w-64"), tag)
                        elif how == "int":
                            testid(ui.number(field, value=current if isinstance(current, (int, float)) else None,
                                             precision=0, on_change=setter(field, _number)).classes("w-28"), tag)
                        else:
                            testid(ui.input(field, value=str(current or ""), on_change=setter(field))
                                   .classes("grow min-w-64"), tag)
                    testid(ui.switch("required", value=is_required(item), on_change=setter("required", bool)),
                           f"scorer-{i}-required")

                    async def drop() -> None:
                        await editor.change(lambda d: remove_scorer(d, i))
                        build()

                    testid(ui.button(icon="delete", on_click=drop).props("flat dense"), f"scorer-{i}-remove")

            build()
