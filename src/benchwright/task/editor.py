"""The edits the task editor makes to a task source, on the YAML text itself.

A task's fields (:data:`Fields`) are read from its model and written back round-trip (ruamel):
only the edited task's lines are emitted again, so the comments and layout of the rest of the
file stay byte-for-byte as they were; adding, copying and deleting a task work the same way.
Every result is parsed again and checked before it is returned. Nothing here draws a page.
"""

from __future__ import annotations

import datetime as dt
import io
from typing import Any, cast

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)

from benchwright import yamldoc
from benchwright.errors import InputError
from benchwright.task.model import Task, TaskSource, TestCase

BASIC = ("name", "type", "difficulty", "area", "source")
"""Task-level text fields (an empty one is removed from the file)."""
LISTS = ("tags", "listed_languages", "available_parameters", "available_criteria")
"""Task-level lists, edited as comma-separated text (``listed_languages`` is ``languages``)."""
LIST_KEYS = {"listed_languages": "languages"}
LANG_TEXT = ("entry_point", "test_prelude", "solution_header", "completion_suffix")
"""Per-language text fields besides the description."""
DEFAULT_DESCRIPTION = "${common_prompt}"

Fields = dict[str, Any]
"""A task's editable fields: the :data:`BASIC` texts, ``mode``, ``release_date`` and
``time_limit_s`` (as text), the :data:`LISTS`, ``common_prompt``, ``llm_judge_prompt`` and
``languages``: language -> {description, the :data:`LANG_TEXT` fields, stop (list),
public_tests, hidden_tests ([{name, code, stdin, stdout}]; stdin and stdout None for a code
case), golden}."""



# -- editing a task's YAML ---------------------------------------------------------------------


def _number(value: float | None) -> str:
    return "" if value is None else format(value, "g")


def _test_fields(test: TestCase) -> dict[str, Any]:
    return {"name": test.name or "", "code": test.code, "stdin": test.stdin, "stdout": test.stdout}


def _language_fields(task: Task, lang: str) -> dict[str, Any]:
    spec = task.spec(lang)
    return {
        "description": spec.description,
        **{k: getattr(spec, k) or "" for k in LANG_TEXT},
        "stop": list(spec.stop),
        "public_tests": [_test_fields(t) for t in spec.public_tests],
        "hidden_tests": [_test_fields(t) for t in spec.hidden_tests],
        "golden": task.golden_solution.get(lang, ""),
    }


def task_fields(task: Task) -> Fields:
    """The editable fields of ``task`` as the editor shows them."""
    langs = {lang: _language_fields(task, lang) for lang in task.code_languages()}
    return {**{k: getattr(task, k) or "" for k in BASIC}, "mode": task.mode,
            "release_date": task.release_date.isoformat() if task.release_date else "",
            "time_limit_s": _number(task.time_limit_s),
            "tags": list(task.tags), "listed_languages": list(task.languages),
            "available_parameters": list(task.available_parameters or []),
            "available_criteria": list(task.available_criteria or []),
            "common_prompt": task.task.common_prompt, "llm_judge_prompt": task.llm_judge_prompt or "",
            "languages": langs}


def split_list(text: str) -> list[str]:
    """A comma-separated list as typed in a field."""
    return [v.strip() for v in text.split(",") if v.strip()]


def unique_name(names: list[str], base: str) -> str:
    """``base``, or ``base-2``, ``base-3``... : the first not in ``names``."""
    taken = set(names)
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def _yaml() -> YAML:
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096  # never re-fold a long line of the edited task
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def _scalar(old: Any, new: str) -> Any:
    if "\n" in new:
        return LiteralScalarString(new)
    if isinstance(old, (SingleQuotedScalarString, DoubleQuotedScalarString)):
        return type(old)(new)
    return new


def _set(node: CommentedMap, key: str, new: Any, default: Any = None) -> None:
    """Set ``node[key]`` to ``new`` only when the value changes (an unchanged value keeps its
    exact form); an empty value (or the default) removes an existing key or adds nothing."""
    old = node.get(key)
    if isinstance(new, str):
        if new == (old if isinstance(old, str) else None):
            return
        if new == "" or (key not in node and new == default):
            node.pop(key, None)
            return
        node[key] = _scalar(old, new)
    elif isinstance(new, list):
        if old is None and not new:
            return
        if isinstance(old, list) and [str(v) for v in old] == [str(v) for v in new]:
            return
        if isinstance(old, str) and [v.strip() for v in old.split(",") if v.strip()] == new:
            return
        if not new:
            node.pop(key, None)
            return
        seq = CommentedSeq(new)
        if not isinstance(old, CommentedSeq) or old.fa.flow_style():
            seq.fa.set_flow_style()
        node[key] = seq


def _child(node: CommentedMap, key: str) -> CommentedMap:
    if not isinstance(node.get(key), CommentedMap):
        node[key] = CommentedMap()
    return cast(CommentedMap, node[key])


def _set_exact(node: CommentedMap, key: str, new: str | None) -> None:
    """Set ``node[key]`` to ``new`` (an empty text too: a stdin may be empty); None removes it."""
    old = node.get(key)
    if new is None:
        node.pop(key, None)
    elif not (isinstance(old, str) and old == new):
        node[key] = _scalar(old, new)


def _parse_date(text: str) -> Any:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        return text  # kept as written: validation says what is wrong with it


def _parse_number(text: str) -> Any:
    try:
        number = float(text)
    except ValueError:
        return text
    return int(number) if number.is_integer() and "." not in text else number


def _set_typed(node: CommentedMap, key: str, text: str) -> None:
    """Set a date or a number from its text; an unchanged value keeps its exact form."""
    old = node.get(key)
    new = (_parse_date if key == "release_date" else _parse_number)(text.strip())
    if old is not None and (str(old) == text.strip() or (type(old) is not bool and old == new)):
        return
    if not text.strip():
        node.pop(key, None)
        return
    node[key] = new


def _test_item(test: dict[str, Any]) -> CommentedMap:
    item = CommentedMap()
    if test.get("name"):
        item["name"] = test["name"]
    if test.get("stdin") is not None or test.get("stdout") is not None:
        item["stdin"] = _scalar(None, test.get("stdin") or "")
        item["stdout"] = _scalar(None, test.get("stdout") or "")
    else:
        item["code"] = _scalar(None, test.get("code") or "")
    return item


def _tests(spec: CommentedMap, key: str, tests: list[dict[str, Any]]) -> None:
    old = spec.get(key)
    if not isinstance(old, CommentedSeq):
        if not tests:
            return
        old = CommentedSeq()
        spec[key] = old
    for i, test in enumerate(tests):
        if i >= len(old) or not isinstance(old[i], CommentedMap):
            if i >= len(old):
                old.append(_test_item(test))
            else:
                old[i] = _test_item(test)
            continue
        _set(old[i], "name", test.get("name") or "")
        stdio = test.get("stdin") is not None or test.get("stdout") is not None
        _set(old[i], "code", "" if stdio else test.get("code") or "")
        _set_exact(old[i], "stdin", (test.get("stdin") or "") if stdio else None)
        _set_exact(old[i], "stdout", (test.get("stdout") or "") if stdio else None)
        if "name" in old[i] and next(iter(old[i])) != "name":  # a name added: keep it first
            for k in [k for k in old[i] if k != "name"]:
                old[i].move_to_end(k)
    del old[len(tests):]
    if not tests:
        spec.pop(key, None)


def _language(task: CommentedMap, lang: str, spec_fields: dict[str, Any]) -> None:
    body = _child(task, "task")
    specific = body.get("languages_specific")
    if not isinstance(specific, CommentedMap):
        body["languages_specific"] = specific = CommentedMap()
    spec = specific.get(lang)
    if not isinstance(spec, CommentedMap):
        specific[lang] = spec = CommentedMap()
    _set(spec, "description", spec_fields.get("description", DEFAULT_DESCRIPTION), DEFAULT_DESCRIPTION)
    for key in LANG_TEXT:
        if key in spec_fields:
            _set(spec, key, spec_fields[key] or "")
    if "stop" in spec_fields:
        _set(spec, "stop", list(spec_fields["stop"]))
    for key in ("public_tests", "hidden_tests"):
        if key in spec_fields:
            _tests(spec, key, list(spec_fields[key]))
    if "golden" in spec_fields:
        golden = task.get("golden_solution")
        if not isinstance(golden, CommentedMap):
            if not spec_fields["golden"]:
                return
            task["golden_solution"] = golden = CommentedMap()
        _set(golden, lang, spec_fields["golden"])


def _apply(task: CommentedMap, fields: Fields) -> None:
    for k in BASIC:
        if k in fields:
            _set(task, k, fields[k])
    if "mode" in fields:
        _set(task, "mode", fields["mode"] or "instruct", "instruct")
    for k in ("release_date", "time_limit_s"):
        if k in fields:
            _set_typed(task, k, str(fields[k] or ""))
    for k in LISTS:
        if k in fields:
            _set(task, LIST_KEYS.get(k, k), list(fields[k] or []))
    body = task.get("task")
    if "common_prompt" in fields and (isinstance(body, CommentedMap) or fields["common_prompt"]):
        _set(_child(task, "task"), "common_prompt", fields["common_prompt"])
    if "llm_judge_prompt" in fields:
        _set(task, "llm_judge_prompt", fields["llm_judge_prompt"] or "")
    langs: dict[str, Any] = fields.get("languages") or {}
    for lang, spec_fields in langs.items():
        _language(task, lang, spec_fields)


def _dump(data: Any) -> str:
    buf = io.StringIO()
    _yaml().dump(data, buf)
    return buf.getvalue()


def _indent(text: str, by: int) -> str:
    if by <= 0:
        return text
    return "".join((" " * by + line) if line.strip() else line for line in text.splitlines(keepends=True))


def edit_task(text: str, file: str, index: int, fields: Fields) -> str:
    """``text`` (a task source) with task ``index`` given ``fields``; only that task's lines
    are written anew, the rest of the text is kept as it is.

    Raises:
        InputError: ``text`` is not YAML or has no task ``index``.
    """
    doc = yamldoc.parse_text(text, file)
    root = _yaml().load(text)
    tasks = root.get("tasks") if isinstance(root, CommentedMap) else None
    if not isinstance(tasks, CommentedSeq) or not 0 <= index < len(tasks) or \
            not isinstance(tasks[index], CommentedMap):
        raise InputError([doc.problem(("tasks",), f"no task {index} to edit", hint="reload the file")])
    task = tasks[index]
    _apply(task, fields)
    # what the file must mean afterwards: the same document with this task as emitted; the
    # other tasks are not dumped and parsed again (a long source took a third of a second)
    after = list(doc.data["tasks"])
    after[index] = yamldoc.parse_text(_dump(CommentedSeq([task])), file).data[0]
    expected = {**doc.data, "tasks": after}
    if expected == doc.data:
        return text  # nothing changed: not even the task's lines are written anew
    try:
        spliced = _splice(text, root, tasks, index)
        if yamldoc.parse_text(spliced, file).data == expected:
            return spliced
    except (InputError, KeyError, IndexError, TypeError, AttributeError, ValueError):
        pass
    return _dump(root)  # the spliced lines would not mean it: the whole document re-emitted


def _bounds(lines: list[str], root: CommentedMap, tasks: CommentedSeq, index: int) -> tuple[int, int]:
    """The first line of task ``index`` (its ``- ``) and the line after its block (0-based)."""
    start = tasks.lc.item(index)[0]
    if index + 1 < len(tasks):
        end = tasks.lc.item(index + 1)[0]
    else:
        keys = list(root)
        after = keys[keys.index("tasks") + 1:]
        end = root.lc.key(after[0])[0] if after else len(lines)
    return start, end


def _block(task: CommentedMap, dash: int) -> str:
    """``task`` as one item of the tasks list, its ``-`` at column ``dash``."""
    single = CommentedMap()
    single["tasks"] = CommentedSeq([task])
    block = _dump(single).split("\n", 1)[1]
    made = len(block) - len(block.lstrip(" "))
    block = _indent(block, dash - made)
    return block if block.endswith("\n") else block + "\n"


def _splice(text: str, root: CommentedMap, tasks: CommentedSeq, index: int) -> str:
    lines = text.splitlines(keepends=True)
    start, end = _bounds(lines, root, tasks, index)
    block = _block(tasks[index], lines[start].index("-"))
    if end >= len(lines):
        block = block.rstrip("\n") + ("\n" if text.endswith("\n") else "")
    return "".join(lines[:start]) + block + "".join(lines[end:])


def _load_tasks(text: str, file: str) -> tuple[yamldoc.Document, CommentedMap, CommentedSeq]:
    """The document, its round-trip root and its tasks list (block style).

    Raises:
        InputError: ``text`` is not YAML or has no tasks list to edit.
    """
    doc = yamldoc.parse_text(text, file)
    root = _yaml().load(text)
    tasks = root.get("tasks") if isinstance(root, CommentedMap) else None
    if isinstance(root, CommentedMap) and tasks is None:
        root["tasks"] = tasks = CommentedSeq()
    if not isinstance(tasks, CommentedSeq):
        raise InputError([doc.problem(("tasks",), "the file has no list of tasks to edit",
                                      hint="write 'tasks:' followed by '- name: ...' items")])
    return doc, root, tasks


def _meaning(text: str, file: str) -> Any:
    data = yamldoc.parse_text(text, file).data
    if isinstance(data, dict) and data.get("tasks") is None:
        data = {**data, "tasks": []}
    return data


def _checked(spliced: str, root: CommentedMap, file: str) -> str:
    """``spliced`` when it means what the whole re-emitted ``root`` means, else the latter."""
    whole = _dump(root)
    try:
        return spliced if _meaning(spliced, file) == _meaning(whole, file) else whole
    except InputError:
        return whole


def _task_lines(text: str, root: CommentedMap, tasks: CommentedSeq) -> bool:
    """Whether the tasks list is written as block items whose lines can be cut and pasted."""
    try:
        return bool(len(tasks)) and not tasks.fa.flow_style() and \
            text.splitlines()[tasks.lc.item(0)[0]].lstrip().startswith("-")
    except (AttributeError, KeyError, IndexError, TypeError):
        return False


def insert_task(text: str, file: str, position: int, task: CommentedMap) -> str:
    """``text`` with ``task`` inserted at ``position`` of its tasks; the other lines are kept.

    Raises:
        InputError: ``text`` is not YAML or has no tasks list.
    """
    _, root, tasks = _load_tasks(text, file)
    position = max(0, min(position, len(tasks)))
    can_splice = _task_lines(text, root, tasks)
    lines = text.splitlines(keepends=True)
    if can_splice:
        ref = min(position, len(tasks) - 1)
        start, end = _bounds(lines, root, tasks, ref)
        at = start if position < len(tasks) else end
        dash = lines[start].index("-")
    tasks.insert(position, task)
    if not can_splice:
        return _dump(root)
    if at > 0 and not lines[at - 1].endswith("\n"):
        lines[at - 1] += "\n"
    spliced = "".join(lines[:at]) + _block(task, dash) + "".join(lines[at:])
    return _checked(spliced, root, file)


def delete_task(text: str, file: str, index: int) -> str:
    """``text`` without task ``index``; the other lines are kept.

    Raises:
        InputError: ``text`` is not YAML or has no task ``index``.
    """
    doc, root, tasks = _load_tasks(text, file)
    if not 0 <= index < len(tasks):
        raise InputError([doc.problem(("tasks",), f"no task {index} to delete", hint="reload the file")])
    can_splice = _task_lines(text, root, tasks)
    lines = text.splitlines(keepends=True)
    if can_splice:
        start, end = _bounds(lines, root, tasks, index)
    del tasks[index]
    if not can_splice:
        return _dump(root)
    return _checked("".join(lines[:start]) + "".join(lines[end:]), root, file)


def duplicate_task(text: str, file: str, index: int) -> tuple[str, str]:
    """``text`` with a copy of task ``index`` right after it, under a new unique name; the
    new text and that name.

    Raises:
        InputError: ``text`` is not YAML or has no task ``index``.
    """
    doc, _, tasks = _load_tasks(text, file)
    if not 0 <= index < len(tasks) or not isinstance(tasks[index], CommentedMap):
        raise InputError([doc.problem(("tasks",), f"no task {index} to copy", hint="reload the file")])
    names = [str(t.get("name")) for t in tasks if isinstance(t, CommentedMap)]
    name = unique_name(names, f"{tasks[index].get('name')}-copy")
    copy = _yaml().load(_dump(CommentedSeq([tasks[index]])))[0]
    copy["name"] = name
    return insert_task(text, file, index + 1, copy), name


def new_task(text: str, file: str) -> tuple[str, str]:
    """``text`` with a small valid task (a Python function, a test, its golden solution) at the
    end, under a new unique name; the new text and that name.

    Raises:
        InputError: ``text`` is not YAML or has no tasks list.
    """
    _, _, tasks = _load_tasks(text, file)
    name = unique_name([str(t.get("name")) for t in tasks if isinstance(t, CommentedMap)], "new-task")
    task = _yaml().load(NEW_TASK)
    task["name"] = name
    return insert_task(text, file, len(tasks), task), name


NEW_TASK = """\
name: new-task
difficulty: easy
languages: [python]
task:
  common_prompt: Write a function solve(x) in ${language} that returns x unchanged.
  languages_specific:
    python:
      entry_point: solve
      public_tests:
        - code: assert solve(1) == 1
golden_solution:
  python: |
    def solve(x):
        return x
"""
"""The task "add a task" starts from (under a unique name)."""


def parse_source(text: str, file: str) -> TaskSource:
    """The task source ``text`` (named ``file`` in errors) holds, as the editor shows it after
    an edit or a save.

    Raises:
        InputError: the text is not YAML. pydantic.ValidationError: it is not a task source.
    """
    return TaskSource.model_validate(yamldoc.parse_text(text, file).data)
