"""Import any JSONL file (optionally gzipped) of coding problems as a task source.

A :class:`JsonlMapping` names the JSON keys to read from each line. Prompts and test code are
escaped (as are test preludes) so that benchwright's template rendering gives them back unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchwright.errors import UserError
from benchwright.importers.base import Importer, ImportRequest, RowProblem
from benchwright.importers.escape import escape_template
from benchwright.task.model import LanguageSpec, Task, TaskBody, TaskSource, TestCase

__all__ = ["JsonlImporter", "JsonlMapping", "import_jsonl"]


class JsonlMapping(BaseModel):
    """Which JSON key of a line holds which task field. Fields left ``None`` are not read."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Key of the task name (required in every line).")
    prompt: str = Field(description="Key of the prompt (required in every line).")
    language: str | None = Field(
        default=None, description="Key of the language; lines without it use `language_value`."
    )
    language_value: str = Field(default="python", description="The language, as a literal.")
    tests: str | None = Field(
        default=None,
        description="Key of the hidden tests: a list of code strings or {name?, code} objects, "
        "or one string of test code.",
    )
    public_tests: str | None = Field(default=None, description="Key of the public tests.")
    test_prelude: str | None = Field(default=None, description="Key of code run before tests.")
    entry_point: str | None = Field(default=None, description="Key of the function name.")
    golden: str | None = Field(default=None, description="Key of the canonical solution.")
    golden_is_continuation: bool = Field(
        default=False,
        description="The golden solution continues the prompt (HumanEval style): prepend it.",
    )
    difficulty: str | None = Field(default=None, description="Key of the difficulty label.")
    area: str | None = Field(default=None, description="Key of the area label.")
    tags: str | None = Field(default=None, description="Key of the tags (list or comma string).")
    mode: Literal["instruct", "complete"] = Field(
        default="instruct", description="`complete`: the prompt is code to continue."
    )
    source: str | None = Field(default=None, description="Key of each task's source label.")
    source_name: str | None = Field(
        default=None, description="Name of the task source, and the tasks' default source label."
    )
    name_prefix: str = Field(default="", description="Prepended to every task name.")


class _LineError(Exception):
    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, str) and not value.strip())


def _text(row: dict[str, Any], key: str | None) -> str | None:
    if key is None or not _present(row.get(key)):
        return None
    value = row[key]
    if isinstance(value, (dict, list)):
        raise _LineError(f"key {key!r} must be text, not {type(value).__name__}")
    return str(value)


def _escaped(text: str | None) -> str | None:
    return None if text is None else escape_template(text)


def _tests(row: dict[str, Any], key: str | None) -> list[TestCase]:
    if key is None or not _present(row.get(key)):
        return []
    value = row[key]
    items = value if isinstance(value, list) else [value]
    cases: list[TestCase] = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            if item.strip():
                cases.append(TestCase(code=escape_template(item)))
        elif isinstance(item, dict) and isinstance(item.get("code"), str):
            name = item.get("name")
            cases.append(
                TestCase(
                    name=None if name is None else str(name),
                    code=escape_template(item["code"]),
                )
            )
        else:
            raise _LineError(
                f"{key}[{index}] is not test code",
                hint="tests are code strings or objects with a 'code' string and an optional 'name'",
            )
    return cases


def _tags(row: dict[str, Any], key: str | None) -> list[str]:
    if key is None or not _present(row.get(key)):
        return []
    value = row[key]
    if isinstance(value, list):
        return [str(v) for v in value if v is not None]
    return [t.strip() for t in str(value).split(",") if t.strip()]


def _task(row: dict[str, Any], mapping: JsonlMapping) -> Task:
    missing = [k for k in (mapping.name, mapping.prompt) if not _present(row.get(k))]
    if missing:
        raise _LineError(
            "missing " + ", ".join(repr(k) for k in missing),
            hint="check the key names in the mapping, or fix the line",
        )
    prompt = str(row[mapping.prompt])
    language = _text(row, mapping.language) or mapping.language_value
    spec = LanguageSpec(
        description=escape_template(prompt),
        entry_point=_text(row, mapping.entry_point),
        public_tests=_tests(row, mapping.public_tests),
        hidden_tests=_tests(row, mapping.tests),
        test_prelude=_escaped(_text(row, mapping.test_prelude)),
    )
    golden = _text(row, mapping.golden)
    if golden is not None and mapping.golden_is_continuation:
        golden = prompt + golden
    return Task(
        name=mapping.name_prefix + str(row[mapping.name]),
        difficulty=_text(row, mapping.difficulty),
        area=_text(row, mapping.area),
        source=_text(row, mapping.source) or mapping.source_name,
        languages=[language],
        mode=mapping.mode,
        tags=_tags(row, mapping.tags),
        task=TaskBody(common_prompt="", languages_specific={language: spec}),
        golden_solution={} if golden is None else {language: golden},
    )


class JsonlImporter(Importer):
    """Any JSON Lines file of coding problems, with a field mapping (--map KEY=FIELD)."""

    name = "jsonl"
    dataset = "a JSON Lines file of your own"
    download = "your own file"
    option_keys = tuple(JsonlMapping.model_fields)

    @staticmethod
    def mapping(request: ImportRequest) -> JsonlMapping:
        """The field mapping of ``--map`` options.

        Raises:
            UserError: the mapping lacks ``name`` or ``prompt`` or has a bad value.
        """
        try:
            return JsonlMapping.model_validate(request.options)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise UserError(f"bad --map: {where}: {first['msg']} (write KEY=FIELD, e.g. "
                            "--map name=task_id --map prompt=text)") from None

    def task(self, row: dict[str, Any], request: ImportRequest) -> Task:
        try:
            return _task(row, self.mapping(request))
        except _LineError as exc:
            raise RowProblem(exc.message, exc.hint) from None

    def source_name(self, request: ImportRequest) -> str | None:  # type: ignore[override]
        return self.mapping(request).source_name

    def description(self, request: ImportRequest) -> str | None:  # type: ignore[override]
        return None

    def load(self, request: ImportRequest) -> TaskSource:
        self.mapping(request)  # a bad mapping is reported before the file is read
        source = super().load(request)
        return source


def import_jsonl(path: Path, mapping: JsonlMapping) -> TaskSource:
    """Read one task per non-blank line of ``path`` (``.jsonl`` or gzipped).

    Raises:
        InputError: the file cannot be read, or some lines are not JSON objects, lack the name
            or prompt, hold malformed values or repeat a task name; every bad line is listed.
    """
    options = mapping.model_dump(exclude_defaults=True)
    return JsonlImporter().load(ImportRequest(data=Path(path), options=options))


IMPORTERS = (JsonlImporter,)
