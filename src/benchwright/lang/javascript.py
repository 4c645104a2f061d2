"""JavaScript (node) and TypeScript: one ``node`` process per sample runs every test case.

How one sample runs
-------------------
One ``sandbox.run`` starts ``node --experimental-vm-modules --no-warnings
--max-old-space-size=<memory_mb> bw_runner.js`` (the driver, the resource ``jsrunner.js`` next to
this module) with the job on stdin: the solution, the prelude, the test cases with their time
limits, and a random nonce. (``--experimental-vm-modules`` makes node hand every ``import()`` in
the context to the driver, which refuses it with an error of the context; without it node
rejects the import with an error object of the driver's realm: a way out of the context.) The driver opens
``bw_results`` and writes every record there as ``BWR <nonce> {json}`` (the protocol of
:mod:`benchwright.lang.protocol`); nothing is read from stdout.

TypeScript only: the solution, the prelude and each test case are transpiled with
``ts.transpileModule`` (Debian's ``typescript`` package, ``/usr/share/nodejs/typescript``), with
source maps. Usually by a warm transpiler (:mod:`benchwright.lang.transpiler`: one node per
executor thread that keeps the compiler loaded, in a sandbox of its own, running none of the code
it reads), whose results arrive in the job (``transpiled``); otherwise (a thread's first two
samples, a transpiler that failed, ``TypeScriptLanguage(warm_transpiler=False)``) by the driver
itself, which then loads the compiler with a V8 code cache that :class:`TypeScriptLanguage`
makes once per harness process in a sandbox run of its own (no model code in it).
Types are NOT checked (transpile only: a type-checking program costs about half a second a
sample on this machine); syntax errors are. A syntax error in the solution or prelude is a
build error with its line; in a test case, that test's error.

JavaScript only: ``export``/``import`` lines of an ES-module-style solution are rewritten, line
for line, into plain code (``export function f`` -> ``function f``; ``import x from "m"`` ->
``const x = require("m")``); CommonJS (``module.exports = ...``) works as is.

Then the driver makes one ``vm`` context for the sample and runs, each as a ``vm.Script`` with a
file name (so stack traces give lines): the solution and the prelude as top-level scripts (a
throw, a syntax error or a time-out there is a build error), then each test case wrapped as
``async function (assert, require) { { <test> } }``. The test's statements see the solution's
globals, ``assert`` (node's API: ``strictEqual``, ``deepStrictEqual``, ``throws``, ``rejects``...;
its comparisons and messages are node's own ``assert``'s), and what a module's exports held.
A test passes when that function's promise fulfils; an ``AssertionError`` (``code ===
"ERR_ASSERTION"``) is ``fail`` with node's message (user message, then actual/expected);
any other throw is ``error`` (``TypeError: ...``). The line is the innermost stack frame in the
solution, prelude or test (TypeScript: mapped back through the source map), counted in
``TestOutcome.code`` = solution + prelude + test case as written.

Time: every entry into model code is ``Script.runInContext({timeout})`` with the context's own
microtask queue (``microtaskMode: "afterEvaluate"``), so a busy loop -- synchronous or in
promise callbacks -- is stopped at the test's limit and the next test runs. A test that
returns a pending promise is awaited until its limit; its timers (``setTimeout`` & co. are the
driver's, with virtual ids) fire inside ``runInContext`` under the time left; with no timer left
the event loop gets a few short turns (a refused ``import()``, WebAssembly's promises), then a
promise that still has not settled is an error. Timers are cleared between tests. A promise
rejected with no handler changes nothing (node would end the process).

Memory: the sandbox's address-space limit is ``memory_mb + NODE_RESERVE_MB`` (node alone
reserves about 700 MB of address space) and V8's heap is capped at ``memory_mb``. Running out
of heap kills node (V8 cannot recover): that test is an ``error`` ("out of memory") and the
tests after it ``not_run``. A huge ``ArrayBuffer`` fails with a ``RangeError`` (test error).
``memory_mb=0`` sets neither.

Usage: the ``done`` record carries ``process.cpuUsage()`` (user + system, every thread of the
process, TypeScript's loading included) and ``process.resourceUsage().maxRSS``. A process that
died before it has the sandbox's figures instead.

What the context offers
-----------------------
ECMAScript's built-ins, ``console`` (captured per test, ``util.format`` with custom inspectors
off; a failed ``console.assert`` prints like node's and makes the running test ``fail``, the
test going on; tests get a frozen console of their own as a parameter), ``setTimeout``/``setInterval``/``setImmediate`` and their ``clear*``, ``queueMicrotask``,
``performance.now``, ``assert``, ``require`` (only ``assert``, ``node:assert``,
``assert/strict``), ``module``/``exports`` and ``global``. No ``process``, ``Buffer``,
``fs``, network, or other node module. An npm package required (or imported) is noted by the
driver (``{"ev": "needs"}``); a sample that noted one and did not pass gets
``ExecutionResult.unsupported`` (infra_error, never counted), see :func:`unsupported_packages`.

Verdict integrity: what a hostile solution can and cannot do
-----------------------------------------------------------
* It cannot reach the result channel: the context's global object has a null prototype, and no
  object of the driver's realm ever enters it (the bootstrap, compiled inside the context before
  the solution runs, keeps the driver's functions in closures; they take and return primitives,
  and their exceptions are replaced by the context's own errors; ``import()`` is refused with
  an error of the context). So ``process``, ``require('fs')``, ``import('fs')``, file
  descriptors and ``process.exit`` are out of reach; ``this.constructor.constructor`` and
  friends give the context's own ``Function``. Writing ``BWR`` lines to stdout does nothing (the
  console is captured; results go to a file, each line with a nonce).
* A test is a pass only when the bootstrap saw the test function's own promise fulfil; the
  reporting function is reachable only through a closure, records are accepted once per test
  and only for the running test. ``assert`` is frozen and tests get the real one as a parameter
  (a solution that replaces the global ``assert`` changes nothing for them); comparisons run in
  node's ``assert`` in the driver's realm, which the solution cannot patch.
* What it CAN still do: return values that fool a comparison (a ``Proxy`` whose traps lie can
  pass ``deepStrictEqual`` against an expected object it can guess); patch built-ins the test
  code itself calls (``Array.prototype.map`` in ``inputs.map(f)``) to hand the comparison the
  values it guesses are expected; replace the global ``assert`` that the prelude's helpers use
  (only the tests get theirs as a parameter; a solution may declare its own ``const assert``),
  or overwrite the prelude's helpers and other globals the tests call (the prelude runs after
  the solution, but a solution's function called later may reassign them); leave state
  (globals, prototypes) that affects later tests; make tests fail or time out. An error or a
  time-out is never a pass, and a process that dies (heap exhaustion) gives
  ``error``/``not_run``. Tasks that care put their asserts in the test cases, on values the
  solution returned.
* ``vm`` is not a security boundary by node's own word: an escape from the context (a V8 or node
  bug, not a known technique) would give the driver's powers -- ``fs`` and the results file,
  though not the nonce without reading process memory. The sandbox around the process is the
  boundary for the machine; the nonce and the context make forging a verdict hard, not
  impossible.
"""

from __future__ import annotations

import dataclasses
import json
import re
import secrets
import threading
from importlib import resources
from pathlib import Path
from typing import Any

from benchwright.errors import InfraError
from benchwright.lang.base import ExecutionResult, Language, TestSpec
from benchwright.lang.mutate import Mutant, brace_mutants, find_body
from benchwright.lang.protocol import collect, death, parse_lines
from benchwright.lang.toolchain import missing_tools, need_tool, tool_version
from benchwright.lang.transpiler import TranspileServer
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits
from benchwright.sandbox.servers import COLD_USES, ThreadServers

__all__ = [
    "JavaScriptLanguage",
    "TypeScriptLanguage",
    "find_typescript",
    "infer_entry_point",
    "unsupported_packages",
    "wall_limit_s",
]

RUNNER_FILE = "bw_runner.js"
RESULTS_FILE = "bw_results"
TS_CACHE_FILE = "bw_ts.cache"
TRANSPILER_HEAP_MB = 512
"""V8's heap of the warm TypeScript transpiler."""

NODE_RESERVE_MB = 1024
"""Address space on top of ``memory_mb``: node reserves about 700 MB before it runs anything."""
START_ALLOWANCE_S = 10.0
"""Wall seconds for starting node and, for TypeScript, loading the compiler and transpiling."""
PER_TEST_SLACK_S = 0.5
"""Wall seconds per test case on top of its own limit (compiling it, clearing its timers)."""
OUTPUT_CAP_BYTES = 4096
"""Console output kept per test case."""
MIN_THREADS = 64
"""RLIMIT_NPROC counts threads: node runs about a dozen, plus one watchdog per timed call."""
TS_DIRS = (
    "/usr/share/nodejs/typescript",
    "/usr/lib/nodejs/typescript",
    "/usr/lib/node_modules/typescript",
    "/usr/local/lib/node_modules/typescript",
)
"""Where Debian (and npm, globally) put the ``typescript`` package; the sandboxes show ``/usr``."""

NODE_HINT = "apt-get install nodejs"
TS_HINT = "apt-get install nodejs node-typescript"

_RUNNER = resources.files("benchwright.lang").joinpath("jsrunner.js").read_bytes()
_TS_CACHE_LOCK = threading.Lock()
_TS_CACHES: dict[tuple[str, str, tuple[str, ...]], bytes | None] = {}
"""V8 code caches of the TypeScript compiler, by (node, typescript folder, node flags); shared
by every instance in this process."""
_NAME = r"[A-Za-z_$][\w$]*"


def find_typescript() -> str | None:
    """The folder of the ``typescript`` package under /usr, or None."""
    for folder in TS_DIRS:
        if (Path(folder) / "package.json").is_file():
            return folder
    return None


def wall_limit_s(limits: SandboxLimits, timeouts: list[float], load_s: float) -> float:
    """The sandbox's wall limit for a sample: start-up, loading, every test's own limit."""
    return max(
        limits.wall_s,
        START_ALLOWANCE_S + load_s + sum(t + PER_TEST_SLACK_S for t in timeouts),
    )


def infer_entry_point(code: str) -> str | None:
    """The function a test would call: the first exported one, else the first top-level
    function whose name does not start with ``_``, else the first one."""
    found: list[tuple[int, str, bool]] = []
    patterns = (
        rf"^(export\s+(?:default\s+)?)?(?:async\s+)?function\s*\*?\s*({_NAME})",
        rf"^(export\s+)?(?:const|let|var)\s+({_NAME})\s*(?::[^=\n]+)?=\s*(?:async\s+)?"
        rf"(?:function\b|\([^()]*\)\s*(?::[^=\n]+)?=>|{_NAME}\s*=>)",
    )
    for pattern in patterns:
        for m in re.finditer(pattern, code, flags=re.M):
            found.append((m.start(), m.group(2), bool(m.group(1))))
    found.sort()
    exported = set(re.findall(rf"^(?:module\.)?exports\.({_NAME})\s*=", code, flags=re.M))
    for listing in re.findall(r"^module\.exports\s*=\s*\{([^}]*)\}", code, flags=re.M):
        for part in listing.split(","):
            key = part.split(":")[0].strip()
            if re.fullmatch(_NAME, key):
                exported.add(key)
    named = re.search(rf"^module\.exports\s*=\s*(?:async\s+)?function\s*\*?\s*({_NAME})", code, flags=re.M)
    if named:
        return named.group(1)
    default = re.search(rf"^(?:module\.exports|export\s+default)\s*=?\s*({_NAME})\s*;?\s*$", code, flags=re.M)
    if default and any(name == default.group(1) for _, name, _ in found):
        return default.group(1)
    names = [name for _, name, _ in found]
    for _, name, is_export in found:
        if is_export or name in exported:
            return name
    public = [n for n in names if not n.startswith("_")]
    chosen = public or names
    return chosen[0] if chosen else None


def _ts_version(folder: str) -> str:
    try:
        data = json.loads((Path(folder) / "package.json").read_text())
    except (OSError, ValueError) as e:
        raise InfraError(f"typescript at {folder} is unreadable: {e} ({TS_HINT})") from e
    return str(data.get("version", "?"))


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _tail(text: str, limit: int = 800) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def _death_reason(proc: ProcessResult, memory_mb: int) -> str:
    stderr = proc.stderr.decode("utf-8", "replace")
    if "heap out of memory" in stderr or "Reached heap limit" in stderr or "Allocation failed" in stderr:
        return f"node ran out of memory (heap limit {memory_mb} MB)" if memory_mb else "node ran out of memory"
    if "Fatal process out of memory" in stderr or "OOM" in stderr:
        return "node ran out of memory (address-space limit)"
    detail = _tail(stderr, 400)
    return f"node died: {death(proc)}" + (f": {detail}" if detail else "")


class _NodeLanguage(Language):
    """What JavaScript and TypeScript share; ``typescript`` picks the flavour."""

    typescript = False
    install_hint = NODE_HINT

    def infer_entry_point(self, code: str) -> str | None:
        return infer_entry_point(code)

    scaffolding = (
        (r"^\s*(?:describe|it|test)\s*\(\s*['\"`]",
         "a `describe`/`it`/`test` block (no test framework runs here: a test case is statements, "
         "and the runner defines none of these)"),
    )
    null_return = "return null;"

    def mutants(self, solution: str, entry_point: str) -> list[Mutant]:
        """The entry function's body starts with ``return null;`` or ``throw new Error(...)``
        (a function declaration, ``name = function (...) {`` or ``name = (...) => {``)."""
        name = re.escape(entry_point)
        statements = [("returns null", self.null_return), ("throws", 'throw new Error("benchwright mutant");')]
        for arrow, signature in ((False, rf"\bfunction\s*\*?\s*{name}\s*(?:<[^>(]*>)?\s*\("),
                                 (False, rf"\b{name}\s*=\s*(?:async\s+)?function\b[^(]*\("),
                                 (True, rf"\b{name}\s*=\s*(?:async\s*)?\(")):
            body = find_body(solution, signature)
            if body is not None and (not arrow or body.between.endswith("=>")):
                return brace_mutants(solution, signature, statements)
        return []

    def toolchain(self) -> dict[str, str]:
        node = need_tool("node", language=self.name, hint=self.install_hint)
        versions = {"node": tool_version((node, "--version"), hint=self.install_hint, prefix="v")}
        if self.typescript:
            folder = find_typescript()
            if folder is None:
                raise InfraError(f"{self.name}: the typescript package is not installed ({self.install_hint})")
            versions["typescript"] = _ts_version(folder)
        return versions

    def missing(self) -> str | None:
        lacking = missing_tools(("node",), language=self.name, hint=self.install_hint)
        if lacking:
            return lacking
        if self.typescript and find_typescript() is None:
            return f"the typescript package is not installed (looked in {', '.join(TS_DIRS)}): {self.install_hint}"
        return None

    # ---- running a sample

    def __init__(self, warm_transpiler: bool = True) -> None:
        self.warm_transpiler = warm_transpiler and self.typescript
        """TypeScript: transpile in a warm node per executor thread (:mod:`.transpiler`) instead
        of loading the compiler in every sample's node (False: the per-sample baseline)."""
        self._transpilers: ThreadServers[TranspileServer] = ThreadServers(self._transpiler,
                                                                          cold_uses=COLD_USES)

    def _transpiler(self, sandbox: Sandbox) -> TranspileServer:
        node = need_tool("node", language=self.name, hint=self.install_hint)
        folder = find_typescript() or TS_DIRS[0]
        flags = (*self._node_flags(0), f"--max-old-space-size={TRANSPILER_HEAP_MB}")
        cache = self._ts_cache(sandbox, node, folder, flags, SandboxLimits(memory_mb=0))
        files = {RUNNER_FILE: _RUNNER, **({TS_CACHE_FILE: cache} if cache else {})}
        return TranspileServer(sandbox, node, flags, RUNNER_FILE, files, folder,
                               TS_CACHE_FILE if cache else None)

    def close(self) -> None:
        self._transpilers.close()

    def _node_flags(self, memory_mb: int) -> tuple[str, ...]:
        # --experimental-vm-modules: node then hands every `import()` in the context to the
        # driver, which refuses it with an error of the context (see jsrunner.js)
        heap = (f"--max-old-space-size={memory_mb}",) if memory_mb > 0 else ()
        return ("--experimental-vm-modules", "--no-warnings", *heap)

    def _sandbox_limits(self, limits: SandboxLimits, wall: float, n_tests: int) -> SandboxLimits:
        per_record = OUTPUT_CAP_BYTES * 2 + 16384
        return SandboxLimits(
            wall_s=wall,
            cpu_s=limits.cpu_s if limits.cpu_s is not None else 2 * wall,
            memory_mb=limits.memory_mb + NODE_RESERVE_MB if limits.memory_mb > 0 else 0,
            # the results file comes back through `collect`, capped at 16x this
            output_bytes=max(limits.output_bytes, per_record * (n_tests + 2) // 16 + 4096),
            file_size_mb=limits.file_size_mb,
            processes=max(limits.processes, MIN_THREADS),
        )

    def run_tests(
        self,
        sandbox: Sandbox,
        solution: str,
        tests: list[TestSpec],
        *,
        prelude: str | None,
        limits: SandboxLimits,
        test_timeout_s: float,
    ) -> ExecutionResult:
        node = need_tool("node", language=self.name, hint=self.install_hint)
        ts_folder: str | None = None
        if self.typescript:
            ts_folder = find_typescript()
            if ts_folder is None:
                raise InfraError(f"{self.name}: the typescript package is not installed "
                                 f"(looked in {', '.join(TS_DIRS)}) (`{self.install_hint}`)")
        setup = _with_newline(solution)
        if prelude:
            setup += _with_newline(prelude)
        if not tests:
            return ExecutionResult([], None)
        memory_mb = max(0, limits.memory_mb)
        flags = self._node_flags(memory_mb)
        timeouts = [t.timeout_s if t.timeout_s is not None else test_timeout_s for t in tests]
        load_s = max(test_timeout_s, 1.0)
        nonce = secrets.token_hex(16)
        job: dict[str, Any] = {
            "language": self.name,
            "nonce": nonce,
            "results": RESULTS_FILE,
            "solution": solution,
            "prelude": prelude or "",
            "tests": [{"code": t.code, "timeout_ms": max(1, round(s * 1000))}
                      for t, s in zip(tests, timeouts, strict=True)],
            "load_timeout_ms": max(1, round(load_s * 1000)),
            "output_cap": OUTPUT_CAP_BYTES,
        }
        files = {RUNNER_FILE: _RUNNER}
        if ts_folder is not None:
            job["key"] = "__bw_" + secrets.token_hex(12)
            server = self._transpilers.get(sandbox) if self.warm_transpiler else None
            done = server.transpile(job) if server is not None else None
            if done is not None:
                job["transpiled"] = done
            else:
                job["typescript"] = {"path": ts_folder}
                cache = self._ts_cache(sandbox, node, ts_folder, flags, limits)
                if cache:
                    files[TS_CACHE_FILE] = cache
                    job["typescript"]["cache"] = TS_CACHE_FILE
        wall = wall_limit_s(limits, timeouts, load_s)
        proc = sandbox.run(
            [node, *flags, RUNNER_FILE],
            files=files,
            limits=self._sandbox_limits(limits, wall, len(tests)),
            stdin=json.dumps(job).encode(),
            collect=(RESULTS_FILE,),
            env={"MALLOC_ARENA_MAX": "2"},
        )
        return _result(tests, proc, nonce, setup, memory_mb, wall)

    def _ts_cache(self, sandbox: Sandbox, node: str, folder: str, flags: tuple[str, ...],
                  limits: SandboxLimits) -> bytes | None:
        """V8's code cache for the TypeScript compiler (node started with ``flags``), made once
        per process in a sandbox run that loads and warms the compiler and runs no model code; None when it
        could not be made (samples then load the compiler without it, ~0.1 s slower)."""
        key = (node, folder, flags)
        with _TS_CACHE_LOCK:
            if key in _TS_CACHES:
                return _TS_CACHES[key]
            nonce = secrets.token_hex(16)
            job = {"language": self.name, "nonce": nonce, "results": RESULTS_FILE,
                   "typescript": {"path": folder, "cache_out": TS_CACHE_FILE}}
            cache: bytes | None = None
            try:
                proc = sandbox.run(
                    [node, *flags, RUNNER_FILE],
                    files={RUNNER_FILE: _RUNNER},
                    limits=SandboxLimits(
                        wall_s=60.0, cpu_s=120.0,
                        memory_mb=limits.memory_mb + NODE_RESERVE_MB if limits.memory_mb > 0 else 0,
                        output_bytes=1 << 20, file_size_mb=max(limits.file_size_mb, 64),
                        processes=max(limits.processes, MIN_THREADS)),
                    stdin=json.dumps(job).encode(),
                    collect=(TS_CACHE_FILE, RESULTS_FILE),
                    env={"MALLOC_ARENA_MAX": "2"},
                )
                records = parse_lines(proc.files.get(RESULTS_FILE, b""), prefix=f"BWR {nonce} ")
                made = any(r.get("ev") == "cache" for r in records)
                data = proc.files.get(TS_CACHE_FILE, b"")
                if made and proc.exit_code == 0 and len(data) > 1024:
                    cache = data
            except InfraError:
                cache = None
            _TS_CACHES[key] = cache
            return cache


def unsupported_packages(names: list[str]) -> str:
    """Why a sample that required npm packages could not be judged here."""
    listed = ", ".join(repr(n) for n in names)
    return (f"needs the npm package{'s' if len(names) > 1 else ''} {listed}, which benchwright's "
            "sandbox does not offer (node's built-in modules only, and of those only 'assert')")


def _result(tests: list[TestSpec], proc: ProcessResult, nonce: str, setup: str, memory_mb: int,
            wall: float) -> ExecutionResult:
    """The outcome of every test from the driver's records (see the module doc)."""
    records = parse_lines(proc.files.get(RESULTS_FILE, b""), prefix=f"BWR {nonce} ")
    events = {str(r["ev"]) for r in records if "ev" in r}
    started = [r["n"] for r in records if r.get("ev") == "start" and isinstance(r.get("n"), int)]
    results = [r for r in records if "ev" not in r]
    has_build = any("build" in r for r in results)
    done = any(r.get("done") for r in results)

    def code(i: int) -> str:
        return setup + _with_newline(tests[i].code)

    if not proc.timed_out and not has_build and "loading" not in events:
        # the driver itself failed before any model code ran: not the model's fault
        stderr = proc.stderr.decode("utf-8", "replace")
        why = "node did not start" if "begin" not in events else "the driver failed before loading the solution"
        raise InfraError(f"{why} ({death(proc)}): {_tail(stderr)}")
    if "loading" in events and not has_build and not proc.timed_out:
        results.insert(0, {"build": "error", "line": None,
                           "message": _death_reason(proc, memory_mb) + " while loading the solution"})
    elif has_build and not done and not proc.timed_out:
        # node died during a test (out of heap, a crash): that test errs, the rest did not run
        last = started[-1] if started else None
        reported = {r.get("i") for r in results}
        for j in range(len(tests)):
            if j in reported:
                continue
            if j == last:
                results.append({"i": j, "status": "error", "line": None,
                                "message": _death_reason(proc, memory_mb) + " during this test"})
            else:
                culprit = f"during test {tests[last].name!r}" if last is not None else "between tests"
                results.append({"i": j, "status": "not_run", "line": None,
                                "message": f"not run: node died {culprit}"})
    result = collect(tests, results, proc, code)
    needed = sorted({str(r["module"]) for r in records if r.get("ev") == "needs" and r.get("module")})
    if needed and (result.build_error is not None or any(t.status != "pass" for t in result.tests)):
        result = dataclasses.replace(result, unsupported=unsupported_packages(needed),
                                     needs=tuple(needed))
    for rec in results:
        if rec.get("done") and isinstance(rec.get("typescript_cache"), str):
            result.extra["typescript_cache"] = rec["typescript_cache"]
    if "cpu_ms" not in result.extra:
        result.extra["cpu_ms"] = proc.cpu_ms
        result.extra["max_rss_bytes"] = proc.max_rss_bytes
    result.extra["wall_limit_s"] = wall
    return result


class JavaScriptLanguage(_NodeLanguage):
    """JavaScript run by node; test cases are statements using node's ``assert``."""

    name = "javascript"
    fence_names = ("javascript", "js", "node", "mjs")
    file_extension = ".js"
    install_hint = NODE_HINT


class TypeScriptLanguage(_NodeLanguage):
    """TypeScript transpiled (not type-checked) by Debian's typescript package, run by node."""

    name = "typescript"
    null_return = "return null as any;"
    fence_names = ("typescript", "ts")
    file_extension = ".ts"
    install_hint = TS_HINT
    typescript = True
