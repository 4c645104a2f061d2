"""Python values as literal source text, and literal source text as values, without ``eval``.

Imported datasets give test inputs and expected outputs as data (JSON, or the ``repr`` of a
value computed in the sandbox). Test code needs them as Python source, and the harness needs
to read back what the sandbox computed; neither may ever evaluate dataset text. So
:func:`to_source` writes only plain data (``None``, booleans, numbers, strings, bytes, lists,
tuples, dicts, sets, frozensets) and :func:`from_source` reads back exactly that grammar from a
syntax tree, refusing everything else (names, attributes, calls other than ``float("inf")``,
``complex(..)``, ``set()`` and ``frozenset(..)``).

Non-finite floats are written ``float("inf")`` / ``float("nan")`` (valid Python wherever the
code runs); integers beyond what Python 3.11 converts to decimal text (4300 digits) are written
in hexadecimal. Standard library only: the same file also runs inside the sandbox.
"""

from __future__ import annotations

import ast
import math
from typing import Any

__all__ = ["NotLiteral", "from_source", "is_floats", "to_source"]

_HEX_BITS = 13000
"""Integers of more bits (about 3900 decimal digits) are written in hexadecimal."""
_MAX_DEPTH = 200


class NotLiteral(ValueError):
    """A value that is not plain data, or text that is not a literal."""


def _float(value: float) -> str:
    if math.isnan(value):
        return 'float("nan")'
    if math.isinf(value):
        return 'float("inf")' if value > 0 else 'float("-inf")'
    return repr(value)


def _int(value: int) -> str:
    if value.bit_length() > _HEX_BITS:
        return ("-" if value < 0 else "") + hex(abs(value))
    return repr(value)


def to_source(value: Any, depth: int = 0) -> str:
    """``value`` as Python source text that evaluates to an equal value of the same types.

    Raises:
        NotLiteral: ``value`` holds something other than plain data (exact builtin types only:
            a subclass may compare differently).
    """
    if depth > _MAX_DEPTH:
        raise NotLiteral("nested too deeply")
    kind = type(value)
    if value is None or kind is bool or kind is str or kind is bytes:
        return repr(value)
    if kind is int:
        return _int(value)
    if kind is float:
        return _float(value)
    if kind is complex:
        return f"complex({_float(value.real)}, {_float(value.imag)})"
    if kind is list:
        return "[" + ", ".join(to_source(v, depth + 1) for v in value) + "]"
    if kind is tuple:
        items = [to_source(v, depth + 1) for v in value]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    if kind is dict:
        return "{" + ", ".join(f"{to_source(k, depth + 1)}: {to_source(v, depth + 1)}"
                               for k, v in value.items()) + "}"
    if kind is set or kind is frozenset:
        items = sorted(to_source(v, depth + 1) for v in value)
        inner = "{" + ", ".join(items) + "}" if items else ""
        return (inner or "set()") if kind is set else f"frozenset({inner})"
    raise NotLiteral(f"a {kind.__name__} is not plain data")


_CALLS = ("float", "complex", "set", "frozenset")


def _number(value: Any) -> bool:
    return type(value) in (int, float, complex)


def _value(node: ast.AST, depth: int) -> Any:
    if depth > _MAX_DEPTH:
        raise NotLiteral("nested too deeply")
    if isinstance(node, ast.Constant) and not isinstance(node.value, type(...)):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _value(node.operand, depth + 1)
        if not _number(operand) or type(operand) is bool:
            raise NotLiteral("a sign before something other than a number")
        return -operand if isinstance(node.op, ast.USub) else +operand
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left, right = _value(node.left, depth + 1), _value(node.right, depth + 1)
        if not (type(left) in (int, float) and type(right) is complex):
            raise NotLiteral("arithmetic other than a complex number")
        return left + right if isinstance(node.op, ast.Add) else left - right
    if isinstance(node, ast.List):
        return [_value(e, depth + 1) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_value(e, depth + 1) for e in node.elts)
    if isinstance(node, ast.Set):
        return {_value(e, depth + 1) for e in node.elts}
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise NotLiteral("a ** in a dict")
        return {_value(k, depth + 1): _value(v, depth + 1)  # type: ignore[arg-type]
                for k, v in zip(node.keys, node.values, strict=True)}
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CALLS
            and not node.keywords):
        args = [_value(a, depth + 1) for a in node.args]
        return _call(node.func.id, args)
    raise NotLiteral(f"{type(node).__name__} is not a literal")


def _call(name: str, args: list[Any]) -> Any:
    if name == "float" and len(args) == 1 and args[0] in ("inf", "-inf", "nan"):
        return float(args[0])
    if name == "complex" and len(args) == 2 and all(type(a) in (int, float) for a in args):
        return complex(args[0], args[1])
    if name in ("set", "frozenset") and len(args) <= 1:
        items = args[0] if args else ()
        if not isinstance(items, (list, tuple, set, frozenset)):
            raise NotLiteral(f"{name}() of something other than items")
        return set(items) if name == "set" else frozenset(items)
    raise NotLiteral(f"{name}() with these arguments is not a literal")


def from_source(text: str) -> Any:
    """The value of literal source text (what :func:`to_source` writes), never evaluated.

    Raises:
        NotLiteral: ``text`` is not such a literal.
    """
    try:
        tree = ast.parse(text.strip(), mode="eval")
        return _value(tree.body, 0)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError) as exc:
        if isinstance(exc, NotLiteral):
            raise
        raise NotLiteral(f"not a literal: {type(exc).__name__}: {exc}"[:300]) from None


def is_floats(value: Any) -> bool:
    """EvalPlus's ``is_floats``: a float, or a non-empty list or tuple of floats only."""
    if isinstance(value, float):
        return True
    if isinstance(value, (list, tuple)) and value:
        return all(isinstance(v, float) for v in value)
    return False
