"""Import MBPP (Mostly Basic Python Problems, google-research/google-research ``mbpp/``).

Two files, two shapes, both accepted:

* ``mbpp.jsonl`` (``--subset full``, 974 tasks): ``task_id``, ``text``, ``code``, ``test_list``,
  ``test_setup_code``, ``challenge_test_list``;
* ``sanitized-mbpp.json`` (``--subset sanitized``, 427 tasks, a JSON array): ``source_file``,
  ``task_id``, ``prompt``, ``code``, ``test_imports``, ``test_list``.

The Hub copy (``google-research-datasets/mbpp``, configurations ``full`` and ``sanitized``) has
the same fields. Every assert of ``test_list`` is its own public test case (``test-1`` ...) and
is shown in the prompt; every assert of ``challenge_test_list`` is a hidden case
(``challenge-1`` ...). ``test_setup_code`` / ``test_imports`` are the test prelude.

The prompt is the MBPP paper's (the one lm-evaluation-harness uses, zero-shot): "You are an
expert Python programmer, and here is your task: {text} Your code should pass these
tests:\\n\\n{tests}". The paper's splits are by task number: prompt 1-10, test 11-510,
validation 511-600, train 601-974; each task is tagged ``split:<name>`` and ``--map split=``
chooses (``test`` by default, ``all`` for every task).
"""

from __future__ import annotations

import ast
from typing import Any

from benchwright.errors import UserError
from benchwright.importers.base import Importer, ImportRequest, RowProblem
from benchwright.importers.escape import escape_template
from benchwright.importers.rows import HubLocation
from benchwright.task.model import LanguageSpec, Task, TaskBody, TestCase

__all__ = ["MbppImporter", "split_of"]

SPLITS = {"prompt": (1, 10), "test": (11, 510), "validation": (511, 600), "train": (601, 974)}
"""The MBPP paper's splits, as ranges of task numbers (both ends included)."""
ALL = "all"
PROMPT = ("You are an expert Python programmer, and here is your task: {text} "
          "Your code should pass these tests:\n\n{tests}")
"""The MBPP paper's prompt (lm-evaluation-harness's ``mbpp`` task, without its few shots)."""

_SHAPES = {"full": ("text", "test_setup_code"), "sanitized": ("prompt", "test_imports")}
"""Each file's fields for the task's text and the test prelude."""


def split_of(task_number: int) -> str | None:
    """The MBPP split a task number belongs to (None outside 1-974)."""
    return next((name for name, (low, high) in SPLITS.items() if low <= task_number <= high), None)


def _lines(text: str) -> str:
    """Windows line ends as ``\\n`` (the full file's code has them; Python reads both alike)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _asserts(row: dict[str, Any], key: str) -> list[str]:
    value = row.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RowProblem(f"{key} is not a list of assert statements (strings)")
    return [_lines(v).strip() for v in value if v.strip()]


def _entry_point(code: str, tests: list[str]) -> str | None:
    """The function the tests call that the golden solution defines (None when unclear)."""
    try:
        defined = {n.name for n in ast.parse(code).body
                   if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    except SyntaxError:
        return None
    for test in tests:
        try:
            tree = ast.parse(test)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in defined:
                return node.func.id
    return None


def _shape(row: dict[str, Any]) -> str:
    shapes = [name for name, (text, _) in _SHAPES.items() if isinstance(row.get(text), str)]
    if len(shapes) != 1:
        raise RowProblem("neither an mbpp.jsonl row (text) nor a sanitized-mbpp.json row (prompt)",
                         hint="each row needs text (mbpp.jsonl) or prompt (sanitized-mbpp.json)")
    return shapes[0]


class MbppImporter(Importer):
    """MBPP: 974 Python tasks (427 sanitized), each assert a test case; the test split by default."""

    name = "mbpp"
    dataset = "MBPP (google-research/google-research, mbpp)"
    download = ("https://github.com/google-research/google-research/tree/master/mbpp "
                "(mbpp.jsonl or sanitized-mbpp.json)")
    file_name = "mbpp.jsonl"
    licence = "CC-BY-4.0"
    subsets = ("full", "sanitized")
    default_subset = "full"
    fields = ("task_id", "code", "test_list")
    option_keys = ("split",)

    def file_for(self, request: ImportRequest) -> str:
        return "sanitized-mbpp.json" if request.subset == "sanitized" else "mbpp.jsonl"

    def check(self, request: ImportRequest) -> ImportRequest:
        """As :meth:`Importer.check`, and the split ``--map split=`` names is one of MBPP's.

        Raises:
            UserError: an unknown split (or what :meth:`Importer.check` refuses).
        """
        request = super().check(request)
        split = str(request.options.get("split") or "test")
        if split != ALL and split not in SPLITS:
            raise UserError(f"import {self.name}: no MBPP split {split!r} "
                            f"(--map split={'|'.join([*SPLITS, ALL])})")
        return request

    def chosen_split(self, request: ImportRequest) -> str:
        """The split ``--map split=`` asks for (``test`` by default)."""
        return str(request.options.get("split") or "test")

    def hub(self, request: ImportRequest) -> HubLocation:
        split = str(request.options.get("split") or "test")
        hub_split = "+".join(("train", "test", "validation", "prompt")) if split == ALL else split
        return HubLocation("google-research-datasets/mbpp", name=request.subset or "full",
                           split=hub_split)

    def source_name(self, request: ImportRequest) -> str:
        split = str(request.options.get("split") or "test")
        return "mbpp" + ("-sanitized" if request.subset == "sanitized" else "") + (
            "" if split == "test" else f"-{split}")

    def task(self, row: dict[str, Any], request: ImportRequest) -> Task | None:
        wanted = self.chosen_split(request)
        shape = _shape(row)
        if shape != (request.subset or "full"):
            raise RowProblem(f"a row of the {shape} file, but --subset is {request.subset}",
                             hint=f"import it with --subset {shape}")
        number = row["task_id"]
        if isinstance(number, bool) or not isinstance(number, int):
            raise RowProblem(f"task_id {number!r} is not a whole number")
        split = split_of(number)
        if wanted != ALL and split != wanted:
            return None
        text_key, prelude_key = _SHAPES[shape]
        code = row["code"]
        if not isinstance(code, str):
            raise RowProblem("code is not text")
        code = _lines(code)
        tests = _asserts(row, "test_list")
        if not tests:
            raise RowProblem("test_list is empty: nothing to test")
        challenge = _asserts(row, "challenge_test_list")
        prelude = row.get(prelude_key) or ""
        if isinstance(prelude, list):
            prelude = "\n".join(str(p) for p in prelude)
        if not isinstance(prelude, str):
            raise RowProblem(f"{prelude_key} is not text")
        prelude = _lines(prelude).strip()
        text = _lines(str(row[text_key])).strip()
        prompt = PROMPT.format(text=text, tests="\n".join(tests))
        spec = LanguageSpec(
            description=escape_template(prompt),
            entry_point=_entry_point(code, tests),
            public_tests=[TestCase(name=f"test-{i + 1}", code=escape_template(t))
                          for i, t in enumerate(tests)],
            hidden_tests=[TestCase(name=f"challenge-{i + 1}", code=escape_template(t))
                          for i, t in enumerate(challenge)],
            test_prelude=escape_template(prelude + "\n") if prelude else None,
        )
        return Task(name=f"Mbpp/{number}", type="function", source="google-research/mbpp",
                    languages=["python"], mode="instruct",
                    tags=[f"split:{split or 'none'}", f"mbpp:{shape}"],
                    task=TaskBody(common_prompt="", languages_specific={"python": spec}),
                    golden_solution={"python": code if code.endswith("\n") else code + "\n"})


IMPORTERS = (MbppImporter,)
