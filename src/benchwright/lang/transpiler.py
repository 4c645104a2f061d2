"""A warm TypeScript transpiler: one node process per executor thread, in a sandbox of its own,
that keeps Debian's ``typescript`` package loaded and transpiles each sample's parts.

Loading the TypeScript compiler is most of a TypeScript sample's cost (about 0.2 s of a 0.26 s
sample, even from V8's code cache); transpiling a sample takes a few milliseconds. So the
sample's own node no longer loads it: the harness sends the sample's job (solution, prelude,
test cases and the key of the test scripts' wrapper) to the transpiler (``jsrunner.js
--transpile``), which answers with each part transpiled exactly as the runner would have done
(``transpileJob`` in ``jsrunner.js``: the same function, options and file names), and the job
goes to the sample's node with the parts in ``transpiled``.

The transpiler runs none of the code it reads (``transpileModule`` only parses and prints), so
no sample's code runs where a later sample's is read. Its answers are still checked for shape,
and an answer that is not one (or none within :data:`TRANSPILE_WAIT_S`) closes the server: that
sample transpiles in its own node as before, and the next one starts a new server.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from benchwright.sandbox.base import Sandbox, SandboxLimits
from benchwright.sandbox.servers import SERVER_CPU_S, WarmServer

__all__ = ["TRANSPILE_WAIT_S", "TranspileServer", "valid_part"]

TRANSPILE_WAIT_S = 10.0
"""Wall seconds one sample's transpile may take before the server is given up."""
START_WAIT_S = 60.0
SERVER_HEAP_MB = 512
SERVER_PROCESSES = 64
READY = b"BWT ready"


class TranspileServer(WarmServer):
    """One transpiler in one sandbox session, used by one thread (``flags``: node's, with
    ``--max-old-space-size``; the V8 code cache ``cache`` must have been made with the same)."""

    def __init__(self, sandbox: Sandbox, node: str, flags: tuple[str, ...], runner: str,
                 files: dict[str, bytes], folder: str, cache: str | None) -> None:
        super().__init__(
            sandbox,
            [node, *flags, runner, "--transpile", folder, *([cache] if cache else [])],
            files, ready=READY, what="the TypeScript transpiler", start_wait_s=START_WAIT_S,
            limits=SandboxLimits(wall_s=SERVER_CPU_S, cpu_s=SERVER_CPU_S, memory_mb=0,
                                 processes=SERVER_PROCESSES))

    def transpile(self, job: dict[str, Any]) -> dict[str, Any] | None:
        """``job``'s parts transpiled (``{"solution", "prelude", "tests"}``), or None when the
        server failed (it is closed; the sample transpiles them itself)."""
        nonce = secrets.token_hex(16)
        request = {"nonce": nonce, "key": job["key"], "solution": job["solution"],
                   "prelude": job["prelude"], "tests": [{"code": t["code"]} for t in job["tests"]]}
        line = self.ask(json.dumps(request).encode() + b"\n", TRANSPILE_WAIT_S)
        answer = _parse(line, nonce, len(job["tests"]), bool(job["prelude"])) if line else None
        if answer is None:
            self.close()
        return answer


def valid_part(part: object) -> bool:
    """Whether ``part`` has the shape of one transpiled part (``{js, map, errors}``)."""
    return (isinstance(part, dict) and isinstance(part.get("js"), str)
            and isinstance(part.get("map"), list)
            and all(isinstance(n, int) and not isinstance(n, bool) for n in part["map"])
            and isinstance(part.get("errors"), list)
            and all(isinstance(e, dict) for e in part["errors"]))


def _parse(line: bytes, nonce: str, n_tests: int, prelude: bool) -> dict[str, Any] | None:
    head = f"BWT {nonce} ".encode()
    if not line.startswith(head):
        return None
    try:
        answer = json.loads(line[len(head):])
    except ValueError:
        return None
    done = answer.get("transpiled") if isinstance(answer, dict) else None
    if not isinstance(done, dict):
        return None
    tests = done.get("tests")
    if not valid_part(done.get("solution")) or not isinstance(tests, list) or len(tests) != n_tests \
            or not all(valid_part(t) for t in tests):
        return None
    if (valid_part(done.get("prelude")) if prelude else done.get("prelude") is None) is False:
        return None
    return {"solution": done["solution"], "prelude": done.get("prelude"), "tests": tests}
