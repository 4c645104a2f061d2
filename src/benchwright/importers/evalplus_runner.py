"""Runs inside the sandbox, never in the harness: a dataset's canonical solution on its inputs.

Standard library only, started as ``python -E -S evalplus_runner.py`` next to ``pyliteral.py``.
The job (JSON on stdin): ``code`` (the canonical program), ``entry_point``, ``inputs`` (each the
source text of an argument list, written by the harness from parsed JSON), ``not_none``
(EvalPlus's "output is not None" oracle). For each input, as EvalPlus's ``trusted_exec`` does,
the function is called on a deep copy of the arguments and timed; one JSON line per input is
written to ``out.jsonl``: ``value`` (the output as literal source text, or null when it is not
plain data), ``floats`` (EvalPlus's ``is_floats``), ``s`` (seconds) or ``error``.
"""

from __future__ import annotations

import copy
import io
import json
import sys
import time

from pyliteral import NotLiteral, is_floats, to_source  # type: ignore[import-not-found]


def main() -> None:
    """Read the job, run every input, write ``out.jsonl``."""
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
    job = json.loads(sys.stdin.read())
    out = open("out.jsonl", "w", encoding="utf-8")  # noqa: SIM115 - closed at the end
    real_stdout = sys.stdout
    sys.stdout = sys.stderr = io.StringIO()  # what the solution prints is not ours to keep
    namespace: dict[str, object] = {"__name__": "canonical"}
    try:
        exec(compile(job["code"], "<canonical>", "exec"), namespace)
        function = namespace[job["entry_point"]]
    except BaseException as exc:  # the canonical program itself is broken
        out.write(json.dumps({"setup_error": f"{type(exc).__name__}: {exc}"[:500]}) + "\n")
        out.close()
        return
    for text in job["inputs"]:
        sys.stdout = sys.stderr = io.StringIO()
        record: dict[str, object] = {}
        try:
            args = eval(text, {"__builtins__": {"float": float, "complex": complex, "set": set,
                                                "frozenset": frozenset}})
            start = time.perf_counter()
            value = function(*copy.deepcopy(args))  # type: ignore[operator]
            record["s"] = time.perf_counter() - start
            if job.get("not_none"):
                value = value is not None
            record["floats"] = is_floats(value)
            try:
                record["value"] = to_source(value)
            except NotLiteral as exc:
                record["value"] = None
                record["why"] = str(exc)
        except BaseException as exc:
            record = {"error": f"{type(exc).__name__}: {exc}"[:500]}
        out.write(json.dumps(record) + "\n")
    sys.stdout = real_stdout
    out.close()


if __name__ == "__main__":
    main()
