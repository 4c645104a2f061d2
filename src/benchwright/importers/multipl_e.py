"""Import MultiPL-E (nuprl/MultiPL-E): HumanEval and MBPP translated into many languages, as
completion tasks in the languages benchwright runs.

Each row of a MultiPL-E configuration (``humaneval-cpp``, ``mbpp-rs``, ...) has ``name``
(``HumanEval_0_has_close_elements``), ``language`` (MultiPL-E's: ``cpp``, ``go_test.go``,
``java``, ``js``, ``py``, ``rs``, ``sh``, ``ts``), ``prompt`` (code to continue: a signature and
its doc comment, left open), ``doctests``, ``original``, ``prompt_terminology``, ``tests`` (a test
program MultiPL-E appends to ``prompt + completion``) and ``stop_tokens``. There are no golden
solutions. :mod:`benchwright.importers.multipl_e_split` turns each test program into one test
case per check.
"""

from __future__ import annotations

import re
from typing import Any

from benchwright.importers.base import Importer, ImportRequest, RowProblem
from benchwright.importers.escape import escape_template
from benchwright.importers.multipl_e_split import TestsProblem, split_program, uses_javatuples
from benchwright.importers.rows import HubLocation
from benchwright.task.model import LanguageSpec, Task, TaskBody, TestCase

__all__ = ["LANGUAGES", "MultiPLEImporter"]

SOURCE = "nuprl/MultiPL-E"
HUB_ID = "nuprl/MultiPL-E"

LANGUAGES = {"cpp": "cpp", "go": "go", "java": "java", "js": "javascript", "py": "python",
             "rs": "rust", "sh": "bash", "ts": "typescript"}
"""MultiPL-E's names of the languages benchwright runs, each with benchwright's."""

ROW_LANGUAGE = {"go": "go_test.go"}
"""The ``language`` field of a row where it is not the configuration's name."""

SUBSET_PREFIX = {"humaneval": "HumanEval_", "mbpp": "mbpp_"}
"""How each subset's task names start."""


def _text(row: dict[str, Any], key: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        raise RowProblem(f"field {key!r} is not a non-empty string",
                         hint="is this a MultiPL-E row (name, language, prompt, tests, ...)?")
    return value


class MultiPLEImporter(Importer):
    """MultiPL-E: HumanEval and MBPP in C++, Go, Java, JavaScript, Python, Rust, Bash and
    TypeScript; completion tasks, each check of the tests its own case."""

    name = "multipl-e"
    dataset = "MultiPL-E (nuprl/MultiPL-E)"
    download = ("https://huggingface.co/datasets/nuprl/MultiPL-E (configuration <subset>-<language>, "
                "file <subset>-<language>/test-00000-of-00001.parquet)")
    file_name = "{subset}-{language}/test-00000-of-00001.parquet"
    licence = ("MIT (the Hub's dataset card); the GitHub repository is BSD-3-Clause with a clause "
               "forbidding its use as training data")
    languages = LANGUAGES
    subsets = ("humaneval", "mbpp")
    default_subset = "humaneval"
    fields = ("name", "language", "prompt", "tests")

    def __init__(self) -> None:
        self.left_out: list[str] = []
        """Tasks of the last import that benchwright cannot run, with why."""

    def hub(self, request: ImportRequest) -> HubLocation:
        return HubLocation(HUB_ID, name=f"{request.subset or self.default_subset}-{request.language}",
                           split="test")

    def task(self, row: dict[str, Any], request: ImportRequest) -> Task | None:
        own = request.language or ""
        subset = request.subset or self.default_subset or ""
        name = _text(row, "name")
        if not name.startswith(SUBSET_PREFIX.get(subset, "")):
            return None
        expected = ROW_LANGUAGE.get(own, own)
        if row.get("language") != expected:
            mine = {ROW_LANGUAGE.get(k, k): k for k in LANGUAGES}.get(str(row.get("language")))
            raise RowProblem(f"a row in MultiPL-E's {row.get('language')!r}, not {expected!r}",
                             hint=f"import it with --language {mine}" if mine else
                             "benchwright runs " + ", ".join(LANGUAGES))
        prompt, tests = _text(row, "prompt"), _text(row, "tests")
        if own == "java" and uses_javatuples(prompt, tests):
            self.left_out.append(f"{name} (needs org.javatuples)")
            return None
        try:
            split = split_program(own, prompt, tests)
        except TestsProblem as exc:
            raise RowProblem(f"tests: {exc}", hint="the tests are not a MultiPL-E test program "
                             "of the shape its translator writes for this language") from None
        bw = LANGUAGES[own]
        spec = LanguageSpec(
            description=escape_template(split.description if split.description is not None else prompt),
            entry_point=split.entry_point,
            hidden_tests=[TestCase(name=c.name, code=escape_template(c.code), unsplit=c.unsplit)
                          for c in split.cases],
            test_prelude=escape_template(split.prelude) if split.prelude else None,
            stop=[str(t) for t in row.get("stop_tokens") or [] if t],
            completion_suffix=completion_suffix(own, tests) or None,
        )
        return Task(name=name, type="completion", source=SOURCE, languages=[bw], mode="complete",
                    tags=["multipl-e", subset], task=TaskBody(languages_specific={bw: spec}))

    def description(self, request: ImportRequest) -> str:
        text = super().description(request)
        if self.left_out:
            text += (f"; left out {len(self.left_out)} task(s) benchwright cannot run: "
                     + ", ".join(self.left_out))
        return text


_LEADING_CLOSE = re.compile(r"[ \t\n]*\}[ \t]*\n?")
CLASS_CLOSE = {"java": "}\n"}
"""What MultiPL-E's tests close after their test function, by language (Java's class)."""


def completion_suffix(language: str, tests: str) -> str:
    """What MultiPL-E's test program closes before its tests (the function the prompt opened,
    whose closing brace the stop sequences cut off) and, for Java, after them (the class): put
    after a continuation (MultiPL-E puts a newline between completion and tests), it makes
    ``prompt + continuation`` the program MultiPL-E runs, less its tests."""
    lead = _LEADING_CLOSE.match(tests)  # MultiPL-E runs prompt + completion + "\n" + tests
    return "\n" + lead.group(0) + CLASS_CLOSE.get(language, "") if lead else ""


IMPORTERS = (MultiPLEImporter,)
