"""EvalPlus's MBPP+ input types: JSON has no tuples, sets or complex numbers, so EvalPlus turns
the lists of some tasks back into them (``evalplus.data.mbpp.mbpp_deserialize_inputs``).

The same table, per task number, as functions of one argument list. Each takes plain data
(parsed JSON) and returns plain data; none evaluates anything.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["mbpp_arguments"]

Args = list[Any]


def _tuples(inp: Args) -> Any:
    return [tuple(x) for x in inp]


def _nested_tuples(inp: Args) -> Any:
    return [[tuple(x) for x in xs] for xs in inp]


def _first_tuples(inp: Args) -> Any:
    return [[tuple(x) for x in inp[0]], inp[1]]


def _second_tuple(inp: Args) -> Any:
    return [inp[0], tuple(inp[1])]


def _sets(inp: Args) -> Any:
    # EvalPlus writes {} (an empty dict) for an empty set; kept as it is
    return [[set(x) if isinstance(x, list) and len(x) else {} for x in inp[0]]]


def _float_complex(inp: Args) -> Any:
    return (float(inp[0]), complex(inp[1]))


def _first_tuple(inp: Args) -> Any:
    return [tuple(inp[0]), *inp[1:]]


def _nested_then_tuples(inp: Args) -> Any:
    return [tuple(x) for x in _nested_tuples(inp)]


def _items_then_tuples(inp: Args) -> Any:
    return [tuple(tuple(x) if isinstance(x, list) else x for x in inp[0])]


def _dict_tuples(inp: Args) -> Any:
    return [{k: tuple(v) for k, v in inp[0].items()}, *inp[1:]]


def _complex(inp: Args) -> Any:
    return [complex(inp[0])]


def _all_tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_all_tuples(x) for x in value)
    return value


def _table() -> dict[int, Callable[[Args], Any]]:
    groups: list[tuple[tuple[int, ...], Callable[[Args], Any]]] = [
        ((2, 116, 132, 143, 222, 261, 273, 394, 399, 421, 424, 429, 470, 560, 579, 596, 616, 630,
          726, 740, 744, 809), _tuples),
        ((63, 64, 70, 94, 120, 237, 272, 299, 400, 409, 417, 438, 473, 614, 780), _nested_tuples),
        ((75, 413, 444, 753), _first_tuples),
        ((106, 750), _second_tuple),
        ((115,), _sets),
        ((124,), _float_complex),
        ((250, 405, 446, 617, 720, 763, 808), _first_tuple),
        ((259, 401, 445), _nested_then_tuples),
        ((278,), _items_then_tuples),
        ((307,), _first_tuple),  # tuple(inp[0]), inp[1], inp[2]
        ((722,), _dict_tuples),
        ((252,), _complex),
        ((580, 615, 791), _all_tuples),
    ]
    return {number: convert for numbers, convert in groups for number in numbers}


MBPP_CONVERTERS = _table()
"""Task number -> how its argument lists are turned back into tuples, sets, complex numbers."""


def mbpp_arguments(task_number: int, inp: Args) -> Any:
    """One MBPP+ argument list as EvalPlus passes it to the function.

    Raises:
        TypeError, ValueError, KeyError, IndexError, AttributeError: ``inp`` does not have the
            shape this task's conversion expects.
    """
    convert = MBPP_CONVERTERS.get(task_number)
    return inp if convert is None else convert(inp)
