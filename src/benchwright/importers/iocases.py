"""Test cases of input/output datasets (LiveCodeBench, APPS): stdin/stdout cases and calls.

A competitive-programming dataset gives each problem pairs of (input, expected output). For a
program that reads standard input, each pair becomes a stdin/stdout :class:`TestCase` (plain
text, never a template). For a function or a LeetCode-style ``class Solution`` method, the
input is its arguments as JSON values and the output the JSON value it must return: each pair
becomes one assert, which benchwright's Python judge compares outside the solution's process.

Dataset text is hostile: JSON is parsed with :mod:`json`, values become Python source with
``repr`` of plain data only, and a pickled field is read by :func:`restricted_loads`, which
refuses every class and function a pickle could name.
"""

from __future__ import annotations

import io
import json
import math
import pickle
from typing import Any

from benchwright.importers.base import RowProblem
from benchwright.importers.escape import escape_template
from benchwright.task.model import TestCase

__all__ = ["MAX_DECODED_BYTES", "call_case", "called_function", "json_field", "literal",
           "restricted_loads", "stdio_case"]

MAX_DECODED_BYTES = 1 << 30
"""The most a compressed field may inflate to (against a decompression bomb)."""


class _NoGlobals(pickle.Unpickler):
    """An unpickler that builds plain data only: every class or function is refused."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"refused: the pickle names {module}.{name}; only plain "
                                     "data is read from a dataset")


def restricted_loads(data: bytes) -> Any:
    """Unpickle ``data`` that may only hold plain values (str, bytes, numbers, lists, dicts...).

    Raises:
        pickle.UnpicklingError: the pickle names a class or function (it would run code), or is
            not a pickle.
    """
    try:
        return _NoGlobals(io.BytesIO(data)).load()
    except pickle.UnpicklingError:
        raise
    except Exception as exc:  # truncated or garbled: EOFError, ValueError, KeyError...
        raise pickle.UnpicklingError(f"not a readable pickle ({type(exc).__name__})") from None


def json_field(row: dict[str, Any], key: str, default: Any = None) -> Any:
    """``row[key]``, a JSON document in a string (or the value itself when it is not a string).

    Raises:
        RowProblem: the field is not valid JSON.
    """
    value = row.get(key)
    if value is None or value == "":
        return default
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise RowProblem(f"{key}: not valid JSON ({exc.msg} at {exc.pos})",
                         hint=f"{key} holds a JSON document in a string") from None


def _plain(value: Any, depth: int = 0) -> bool:
    if depth > 100:
        return False
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_plain(v, depth + 1) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v, depth + 1) for k, v in value.items())
    return False


def literal(value: Any, what: str) -> str:
    """Python source for a JSON value (``true`` -> ``True``, ``null`` -> ``None``).

    Raises:
        RowProblem: the value is not plain JSON data (a NaN or infinity, or nested too deep).
    """
    if not _plain(value):
        raise RowProblem(f"{what}: {str(value)[:80]!r} is not plain JSON data benchwright can "
                         "compare (NaN, infinity, or nested more than 100 deep)")
    return repr(value)


def called_function(value: Any, starter: str, where: str) -> tuple[str | None, bool, str]:
    """What a problem's call-based tests call: the function's name (None: a stdin/stdout
    program), whether it is a method of the starter code's ``class Solution``, and the call
    expression (``Solution().f`` or ``f``).

    Raises:
        RowProblem: the name (from ``where``) is not a Python name.
    """
    func = value or None
    if func is not None and not (isinstance(func, str) and func.isidentifier()):
        raise RowProblem(f"{where}: {str(func)[:40]!r} is not a Python name")
    method = func is not None and "class Solution" in starter
    return func, method, f"Solution().{func}" if method else str(func)


def stdio_case(name: str, stdin: Any, stdout: Any, what: str) -> TestCase:
    """A stdin/stdout case; a list of lines is joined with newlines (as APPS's harness does).

    Raises:
        RowProblem: the input or output is not text.
    """
    texts = []
    for part, value in (("input", stdin), ("output", stdout)):
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = "\n".join(value)
        if not isinstance(value, str):
            raise RowProblem(f"{what}: the {part} is a {type(value).__name__}, not text")
        texts.append(value)
    return TestCase(name=name, stdin=texts[0], stdout=texts[1])


def call_case(name: str, call: str, args: list[Any], expected: str, what: str) -> TestCase:
    """One assert calling ``call`` (``Solution().twoSum``) on ``args`` (JSON values); the
    returned value must satisfy ``expected`` (``== [0, 1]``, or ``in ([3], 3)``)."""
    source = ", ".join(literal(a, f"{what} argument {i + 1}") for i, a in enumerate(args))
    return TestCase(name=name, code=escape_template(f"assert {call}({source}) {expected}"))
