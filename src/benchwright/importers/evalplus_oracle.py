"""Expected outputs of EvalPlus tasks, computed by running the canonical solution in the sandbox.

EvalPlus's files hold test *inputs* only; EvalPlus computes each expected output by running
``prompt + canonical_solution`` on the input (``get_groundtruth``/``trusted_exec``), timing each
call. benchwright does the same at import time, but in its sandbox (the same backend samples run
in, chosen as ``benchwright run`` chooses it): the dataset's code never runs in the harness. The
sandbox writes each output as literal source text (:mod:`.pyliteral`), which the harness reads back
without evaluating it, so the test cases can hold the expected values and the judge process can
compare them without the sample process ever seeing them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchwright.errors import InfraError
from benchwright.importers.pyliteral import NotLiteral, from_source
from benchwright.sandbox.base import Sandbox, SandboxLimits

__all__ = ["Outcome", "ReferenceRunner"]

WALL_S = 600.0
"""The most one task's canonical run may take (all its inputs)."""
MEMORY_MB = 4096
"""EvalPlus's default memory limit (``EVALPLUS_MAX_MEMORY_BYTES``: 4 GiB)."""
OUTPUT_BYTES = 16 * 1024 * 1024
"""Captured output; ``out.jsonl`` may be 16 times that."""

_HERE = Path(__file__).parent


@dataclass(frozen=True)
class Outcome:
    """The canonical solution on one input."""

    source: str | None
    """The output as literal source text; None when it is not plain data (or on error)."""
    value: Any = None
    floats: bool = False
    seconds: float = 0.0
    error: str | None = None
    why: str | None = None
    """Why the output is not plain data."""


class ReferenceRunner:
    """Runs canonical solutions through one sandbox (created on first use)."""

    def __init__(self, sandbox: Sandbox | None = None, sandbox_name: str | None = None) -> None:
        self._sandbox = sandbox
        self._name = sandbox_name
        self._files = {"evalplus_runner.py": (_HERE / "evalplus_runner.py").read_bytes(),
                       "pyliteral.py": (_HERE / "pyliteral.py").read_bytes()}

    @property
    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            from benchwright.sandbox.select import best_sandbox

            self._sandbox = best_sandbox(self._name)
        return self._sandbox

    def run(self, code: str, entry_point: str, inputs: list[str], not_none: bool = False) -> list[Outcome]:
        """The canonical ``code``'s output on each input (argument lists as source text).

        Raises:
            InfraError: the sandbox failed, or the run did not finish (the message says how).
            ValueError: the canonical program itself does not load (the message says why).
        """
        sandbox = self.sandbox
        job = json.dumps({"code": code, "entry_point": entry_point, "inputs": inputs,
                          "not_none": not_none}).encode()
        result = sandbox.run([sandbox.python, "-E", "-S", "evalplus_runner.py"], files=self._files,
                             limits=SandboxLimits(wall_s=WALL_S, memory_mb=MEMORY_MB,
                                                  output_bytes=OUTPUT_BYTES),
                             stdin=job, collect=("out.jsonl",))
        data = result.files.get("out.jsonl", b"")
        try:
            lines = [json.loads(line) for line in data.decode("utf-8", "replace").splitlines()
                     if line.strip()]
        except json.JSONDecodeError as exc:
            raise InfraError(f"the canonical run in the {sandbox.name} sandbox wrote something "
                             f"other than its results: {exc}") from None
        if lines and "setup_error" in lines[0]:
            raise ValueError(f"the canonical solution does not load: {lines[0]['setup_error']}")
        if result.timed_out or len(lines) != len(inputs):
            how = (f"took more than {WALL_S:g} s" if result.timed_out else
                   f"ended after {len(lines)} of {len(inputs)} inputs (exit {result.exit_code}, "
                   f"signal {result.signal}): "
                   + result.stderr.decode("utf-8", "replace").strip()[-300:])
            raise InfraError(f"running the canonical solution in the {sandbox.name} sandbox {how}")
        return [_outcome(line) for line in lines]


def _outcome(line: dict[str, Any]) -> Outcome:
    if "error" in line:
        return Outcome(None, error=str(line["error"]))
    source = line.get("value")
    seconds = float(line.get("s") or 0.0)
    if source is None:
        return Outcome(None, seconds=seconds, why=str(line.get("why") or "not plain data"))
    try:
        value = from_source(str(source))
    except NotLiteral as exc:  # the sandbox wrote something else: treat it as not plain data
        return Outcome(None, seconds=seconds, why=str(exc))
    return Outcome(str(source), value, bool(line.get("floats")), seconds)
