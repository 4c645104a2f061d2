"""Rust: ``rustc`` builds one test program per sample; every test case runs in its own process.

Test cases
----------
A test case is Rust statements, the body of a function that returns ``()``, typically
``assert_eq!(collapse_runs("aaabcc"), "a3bc2");`` or ``assert!(x > 0, "why");``. The optional
prelude is Rust items (``use`` lines, helper functions) shared by the tests. Tests see the
solution's items (``use super::*``), including private ones.

How one sample runs
-------------------
The work folder gets ``main.rs``:

* the solution verbatim, from line 1 (a top-level ``fn main`` is renamed ``bw_solution_main``
  in place, so line numbers stay);
* ``mod bw_tests { use super::*; <prelude> pub fn bw_test_<i>() { <test i> } ... }``;
* ``fn main`` and the driver (the resource ``rustdriver.rs``, a module that names only
  fully qualified ``std`` paths).

One sandbox call runs ``nativerunner.py`` (its docstring has the protocol), which builds with
``rustc --edition 2021 -C opt-level=0 -C debug-assertions=on -C overflow-checks=on
--cap-lints allow`` (and :data:`RUSTC_FLAGS`; Debian's ``/usr/bin/rustc``; no cargo, no crates;
lints never fail a build; integer overflow panics, as under ``cargo test``) and runs
``./bwtests <i>`` once per test. The driver reads the runner's token from stdin, runs test
``i`` under ``catch_unwind`` with a panic hook that keeps the first panic's message and location,
and writes its verdict with the token on fd 3.
A panic at an ``assert!``/``assert_eq!``/``assert_ne!`` (or ``debug_assert*``) is ``fail``, as is a
``panic!``/``unreachable!`` written in a test or the prelude; any other panic (an ``unwrap``, an
index out of bounds in the solution...) is ``error``; a crash (stack overflow, SIGSEGV, an
allocation failure) is ``error`` with the process's own explanation.

Crates: a build whose every error is an unknown crate (``use of undeclared crate or module
`md5```) sets ``ExecutionResult.unsupported`` (see :func:`missing_crates`): the sample is
infra_error, never counted; ``std``'s module names and builds with other errors are excluded.

Lines: a test's ``code`` is the solution, then an excerpt of ``main.rs`` (the module's first
lines, the prelude and that test's function); the panic's ``main.rs`` line is mapped into it.
A compile error is a ``build_error`` with the line of the first error (in the solution, or in the
test's excerpt when that test broke the build).

Limits
------
The sandbox gets ``memory_mb=0`` (rustc reserves much address space); each test process gets
``RLIMIT_DATA = limits.memory_mb`` (heap: an allocation beyond it aborts the test) and a
256 MiB stack (``RLIMIT_STACK``: deep recursion on the main thread). rustc gets
``RLIMIT_DATA`` 2 GiB. Compile time dominates a sample: about 0.25-0.5 s for a small solution
(the example task ``collapse-runs``: build 0.24-0.34 s, its 7 tests 7-10 ms of CPU).

What a hostile solution can still do
------------------------------------
It cannot forge a pass by exiting early (``std::process::exit(0)``), crashing, printing ``BWR``
lines (the result lines carry a nonce only the runner knows, and the tests' stdout is a pipe to
the runner) or writing to fd 3 (the verdict needs the per-test token, and a clean exit after it).
Code that would run before ``main`` (and could take the token from stdin first) or replace a
symbol the driver uses is refused before the build, as a build error: ``#[link_section]``
(``.init_array``), ``#[no_mangle]``, ``#[export_name]``, ``global_asm!``, outside comments and
strings. What remains: code written against this driver can find its test's token in its own
process's memory (``unsafe`` pointers, or ``/proc/self/mem`` in safe code) and write a pass on fd
3; that forges the verdict of every test whose process runs that code, each test having its own
process and token. A pass of a solution that mentions ``/proc/self`` is flagged ``suspicious``.
It cannot read or write the runner through ``/proc`` (non-dumpable) under bwrap and unshare (under
the rlimit fallback as root it can), and leftovers of a test's process group are killed after it.
"""

from __future__ import annotations

import dataclasses
import re
from importlib import resources
from typing import Any

from benchwright.errors import InfraError
from benchwright.lang.artifact import Artifacts, made_in_sandbox
from benchwright.lang.base import ExecutionResult, Language, TestSpec
from benchwright.lang.buildcache import BuildCache
from benchwright.lang.mutate import Mutant, brace_mutants, find_body
from benchwright.lang.native import (
    Plan,
    SourceMap,
    blank,
    build_failure,
    flag_suspicious,
    rejected,
    run_plan,
    usage_extra,
)
from benchwright.lang.protocol import collect
from benchwright.lang.toolchain import missing_tools, need_tool, tool_version
from benchwright.sandbox.base import Sandbox, SandboxLimits

INSTALL_HINT = "apt-get install rustc"
SOURCE = "main.rs"
BINARY = "bwtests"
STACK_MB = 256
DRIVER = resources.files("benchwright.lang").joinpath("rustdriver.rs").read_text()
DRIVER_CRATE = "bw_driver"
DRIVER_SOURCE = DRIVER[DRIVER.index("mod bw_driver {") + len("mod bw_driver {"):DRIVER.rindex("}")]
"""The driver as a crate of its own (the module's body), compiled once per sandbox into
:data:`DRIVER_LIB` and linked into every sample (``--extern``)."""
DRIVER_LIB = f"lib{DRIVER_CRATE}.rlib"
DRIVER_LIB_MAX_BYTES = 16 * 1024 * 1024

EDITION = ("--edition", "2021")
CODE_FLAGS = (
    "-C", "opt-level=0",
    "-C", "debug-assertions=on",
    "-C", "overflow-checks=on",
    "-C", "codegen-units=1",
    "-C", "strip=debuginfo",
    "-C", "prefer-dynamic",
    "--cap-lints", "allow",
    "--color", "never",
)
"""How every crate of a sample is compiled (the test program and the driver's crate alike)."""
RUSTC_FLAGS = (
    *EDITION,
    "--crate-type", "bin",
    "--crate-name", BINARY,
    *CODE_FLAGS,
    "-o", BINARY,
)
"""Compile time dominates a sample, so no optimisation: measured with rustc 1.63 on this machine
(a 30-line solution with 2 tests plus the driver; medians), opt-level 0 about 0.5 s wall and 0.4
s CPU, opt-level 1 or 2 about 1.0 s and 0.9 s. ``strip=debuginfo`` keeps the program at 0.2 MB
instead of 12 MB (linking std's debug info costs 0.2 s); ``prefer-dynamic`` links Debian's
``libstd-*.so`` (in the system library folder, part of rustc's dependencies) instead of copying
std into the program. Panic locations do not need debug info.
"""

_MAIN = re.compile(r"(?m)^((?:pub(?:\([^)]*\))?\s+)?fn\s+)main(\s*\()")
_FN = re.compile(r"(?m)^(?P<indent>[ \t]*)(?P<pub>pub(?:\([^)]*\)\s*)?\s+)?(?:(?:const|async|unsafe|extern\s+\"[^\"]*\")\s+)*fn\s+(?P<name>[A-Za-z_]\w*)")
_ERROR = re.compile(
    r"(?m)^error(?:\[E\d+\])?: .*\n(?:.*\n)??\s*--> (?P<file>[^:\n]+):(?P<line>\d+):(?P<col>\d+)"
)
_LITERALS = re.compile(
    r"//[^\n]*|/\*.*?\*/|r(?P<hashes>#*)\".*?\"(?P=hashes)|b?\"(?:[^\"\\]|\\.)*\""
    r"|b?'(?:[^'\\\n]|\\.)'",
    re.S,
)
_FORBIDDEN = re.compile(r"\b(link_section|no_mangle|export_name|global_asm)\b")
_UNREPRODUCIBLE = re.compile(
    r"\b(?:include|include_str|include_bytes|env|option_env|asm|global_asm)\s*!|#\s*\[\s*path\b")
"""What makes a program not follow from its source (anywhere in it, comments too): a file read
at compile time, the compiler's environment, assembly (``.incbin``), a module's ``#[path]``.
Such a sample is compiled every time; no program of it is kept."""
_ERROR_HEAD = re.compile(r"(?m)^error(?:\[(E\d+)\])?: (.*)$")
_NO_CRATE = re.compile(r"use of undeclared crate or module `(\w+)`|unresolved import `(\w+)`"
                       r"|can't find crate for `(\w+)`|no external crate `(\w+)`")
STD_MODULES = frozenset(["alloc", "any", "arch", "array", "ascii", "backtrace", "borrow", "boxed", "cell", "char", "clone", "cmp", "collections", "convert", "default", "env", "error", "f32", "f64", "ffi", "fmt", "fs", "future", "hash", "hint", "i8", "i16", "i32", "i64", "i128", "io", "isize", "iter", "marker", "mem", "net", "num", "ops", "option", "os", "panic", "path", "pin", "prelude", "primitive", "process", "ptr", "rc", "result", "slice", "str", "string", "sync", "task", "thread", "time", "u8", "u16", "u32", "u64", "u128", "usize", "vec", "core", "std"])
"""``std``'s modules: ``collections::HashMap`` without ``std::`` is the code's mistake, not a crate."""
_ASSERT = re.compile(r"(?:debug_)?assert(?:_eq|_ne)?\s*!")
_EXPLICIT = re.compile(r"(?:panic|unreachable|todo|unimplemented)\s*!")


def rename_main(solution: str) -> str:
    """A top-level ``fn main`` becomes ``fn bw_solution_main`` (same line)."""
    return _MAIN.sub(r"\1bw_solution_main\2", solution)


def forbidden(solution: str) -> tuple[str, int] | None:
    """The first attribute or macro that places code before ``main`` or replaces a symbol the
    driver uses (``#[link_section]``, ``#[no_mangle]``, ``#[export_name]``, ``global_asm!``),
    outside comments and strings, with its line; None when there is none."""
    m = _FORBIDDEN.search(blank(solution, _LITERALS))
    if m is None:
        return None
    return m.group(1), solution.count("\n", 0, m.start()) + 1


def generate(solution: str, tests: list[TestSpec], prelude: str | None, *,
             driver_crate: bool = False) -> tuple[str, SourceMap]:
    """``main.rs`` and where its lines come from. ``driver_crate``: ``main`` calls the driver's
    crate (``::bw_driver``: an extern crate, never a module of the solution's) instead of the
    driver module appended to the file."""
    source = rename_main(solution)
    if not source.endswith("\n"):
        source += "\n"
    header = ["mod bw_tests {", "use super::*;"]
    if prelude:
        header += prelude.rstrip("\n").split("\n")
    line = source.count("\n") + len(header) + 1
    functions: list[tuple[int, list[str]]] = []
    for i, test in enumerate(tests):
        body = [("    " + ln) if ln.strip() else "" for ln in test.code.rstrip("\n").split("\n")]
        lines = [f"pub fn bw_test_{i}() {{", *body, "}"]
        functions.append((line, lines))
        line += len(lines)
    footer = ["}"]
    table = ", ".join(f"bw_tests::bw_test_{i}" for i in range(len(tests)))
    text = (
        source
        + "".join(ln + "\n" for ln in header)
        + "".join(ln + "\n" for _, lines in functions for ln in lines)
        + "".join(ln + "\n" for ln in footer)
        + f"\nfn main() {{\n    {'::' if driver_crate else ''}bw_driver::main(&[{table}]);\n}}\n"
        + ("" if driver_crate else "\n" + DRIVER)
    )
    smap = SourceMap(SOURCE, source, SOURCE, header, functions, footer)
    return text, smap


def entry_point(code: str) -> str | None:
    """The first public top-level function, else the first top-level one, else the first
    method (``impl Solution { pub fn ... }``); never ``main``."""
    found = [(m.group("indent"), bool(m.group("pub")), m.group("name")) for m in _FN.finditer(code)]
    found = [f for f in found if f[2] != "main"]
    for pick in (
        lambda f: not f[0] and f[1],
        lambda f: not f[0],
        lambda f: f[1],
        lambda f: True,
    ):
        for f in found:
            if pick(f):
                return f[2]
    return None


class RustLanguage(Language):
    """Rust 2021 with Debian's ``rustc`` (and ``cc`` to link); the standard library only."""

    name = "rust"
    fence_names = ("rust", "rs")
    file_extension = ".rs"
    install_hint = INSTALL_HINT

    def infer_entry_point(self, code: str) -> str | None:
        return entry_point(code)

    scaffolding = (
        (r"#\[\s*cfg\s*\(\s*test\s*\)\s*\]",
         "`#[cfg(test)]` (a test case is the body of a function the driver calls, built without "
         "--test: this code is compiled out)"),
        (r"^\s*(?:pub\s+)?mod\s+tests?\b", "a `mod tests` module (nothing calls its functions)"),
        (r"#\[\s*test\s*\]", "a `#[test]` function (nothing calls it: write the asserts as the test case)"),
    )

    def mutants(self, solution: str, entry_point: str) -> list[Mutant]:
        """``return Default::default();`` (``return;`` when the function returns nothing) and
        ``panic!`` as the first statement of the entry point's body."""
        signature = rf"\bfn\s+{re.escape(entry_point)}\s*(?:<[^>{{]*>)?\s*\("
        body = find_body(solution, signature)
        if body is None:
            return []
        statements = [("panics", 'panic!("benchwright mutant");')]
        returns = body.between.split("where")[0].strip()
        if not returns:
            statements.insert(0, ("returns ()", "return;"))
        elif returns.startswith("->") and not re.search(r"\b(impl|dyn)\b|^->\s*!", returns):
            statements.insert(0, ("returns Default::default()", "return Default::default();"))
        return brace_mutants(solution, signature, statements)

    def __init__(self, driver_crate: bool = True, build_cache: bool = True) -> None:
        self.driver_crate = driver_crate
        """Link the driver compiled once per sandbox (:data:`DRIVER_LIB`) into each sample
        (False: each sample compiles the driver again, the per-sample baseline)."""
        self._libs = Artifacts()
        self.builds: BuildCache | None = BuildCache() if build_cache else None
        """Test programs of earlier samples, for a later sample with the same build (None:
        every sample is compiled, the per-sample baseline)."""

    def close(self) -> None:
        self._libs.clear()
        if self.builds is not None:
            self.builds.clear()

    def _driver_lib(self, sandbox: Sandbox, rustc: str) -> bytes | None:
        """The driver's crate, compiled in a sandbox call of its own (no model code in it) the
        first time this sandbox needs it; None when it does not build (samples then compile
        the driver themselves)."""
        argv = [rustc, *EDITION, "--crate-type", "rlib", "--crate-name", DRIVER_CRATE, *CODE_FLAGS,
                "-o", DRIVER_LIB, "bw_driver.rs"]
        return self._libs.get((sandbox.name, id(sandbox), rustc), lambda: made_in_sandbox(
            sandbox, argv, {"bw_driver.rs": DRIVER_SOURCE.encode()}, DRIVER_LIB,
            max_bytes=DRIVER_LIB_MAX_BYTES, env={"TMPDIR": "."}))

    def toolchain(self) -> dict[str, str]:
        rustc = need_tool("rustc", language=self.name, hint=INSTALL_HINT)
        return {"rustc": tool_version((rustc, "--version"), hint=INSTALL_HINT, prefix="rustc ")}

    def missing(self) -> str | None:
        return missing_tools(("rustc", "cc"), language=self.name, hint=INSTALL_HINT)

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
        rustc = need_tool("rustc", language=self.name, hint=INSTALL_HINT)
        need_tool("cc", language=self.name, hint=INSTALL_HINT)
        lib = self._driver_lib(sandbox, rustc) if self.driver_crate else None
        text, smap = generate(solution, tests, prelude, driver_crate=lib is not None)
        bad = forbidden(solution)
        if bad is not None:
            return rejected(tests, smap.code, f"main.rs:{bad[1]}: `{bad[0]}` is not allowed in a "
                            "solution: it can run code before main or replace the test driver's "
                            "symbols (and so forge results)", bad[1])
        files = {SOURCE: text.encode()}
        extern: list[str] = []
        if lib is not None:
            files[DRIVER_LIB] = lib
            extern = ["--extern", f"{DRIVER_CRATE}={DRIVER_LIB}"]
        plan = Plan(
            files=files,
            build=[{"argv": [rustc, *RUSTC_FLAGS, *extern, SOURCE], "env": {"TMPDIR": "{work}/.tmp"}}],
            program=BINARY,
            key_parts=None if _UNREPRODUCIBLE.search(text) else (),
            run_argv=[f"./{BINARY}"],
            run_env={"RUST_BACKTRACE": "0"},
            data_mb=max(0, limits.memory_mb),
            stack_mb=STACK_MB,
            location=r"(main\.rs):(\d+):\d+",
            crash_markers=("thread '", "fatal runtime error", "memory allocation of"),
            dirs=(".tmp",),
        )
        proc, records = run_plan(sandbox, plan, tests, limits=limits,
                                 test_timeout_s=test_timeout_s, language=self.name,
                                 builds=self.builds)
        head = records[0] if records else {}
        if head.get("build") in ("error", "timeout"):
            log = str(head.get("message") or "").strip() or f"rustc {head.get('death') or 'failed'}"
            return _build_error(tests, proc, log, smap,
                                timed_out=head.get("build") == "timeout")
        records = flag_suspicious([_judge(rec, smap, text) for rec in records], solution)
        result = collect(tests, records, proc, smap.code)
        result.extra.update(usage_extra(records))
        return result


def _judge(rec: dict[str, Any], smap: SourceMap, text: str) -> dict[str, Any]:
    """A runner record with its line mapped to the test's code and a panic classified."""
    index = rec.get("i")
    if not isinstance(index, int) or index >= len(smap.functions) or rec.get("status") == "pass":
        return rec
    file_line = rec.get("line")
    file_line = file_line if isinstance(file_line, int) and not isinstance(file_line, bool) else None
    file = str(rec.get("file") or "")
    out = dict(rec)
    out["line"] = smap.line(index, file, file_line)
    if rec.get("kind") == "panic" and rec.get("status") == "error" and file_line is not None \
            and file.rsplit("/", 1)[-1] == SOURCE:
        lines = text.splitlines()
        col = rec.get("col")
        at = lines[file_line - 1] if 0 < file_line <= len(lines) else ""
        at = at[col - 1:] if isinstance(col, int) and 0 < col <= len(at) else at.lstrip()
        in_solution = file_line <= smap.solution.count("\n")
        if _ASSERT.match(at) or (not in_solution and _EXPLICIT.match(at)):
            out["status"] = "fail"
    return out


def missing_crates(log: str) -> list[str]:
    """The crates a failed build needed, when every error of ``log`` is an unknown crate
    (``use of undeclared crate or module `rand```, ``unresolved import `regex```): the sandbox
    has std only. Empty when any other error is there, or the name is one of std's modules."""
    heads = _ERROR_HEAD.findall(log)
    errors = [text for _, text in heads if not text.startswith(("aborting due to", "could not compile"))]
    crates: list[str] = []
    for text in errors:
        m = _NO_CRATE.search(text)
        name = next((g for g in m.groups() if g), None) if m else None
        if name is None or name in STD_MODULES:
            return []
        if name not in crates:
            crates.append(name)
    return crates


def _build_error(tests: list[TestSpec], proc: Any, log: str, smap: SourceMap, *,
                 timed_out: bool) -> ExecutionResult:
    if "linker `cc` not found" in log or "could not exec the linker" in log:
        raise InfraError(f"rust: rustc cannot link: {log.strip()[:2000]} (`{INSTALL_HINT}`)")
    crates = [] if timed_out else missing_crates(log)
    errors = [(m.group("file"), int(m.group("line"))) for m in _ERROR.finditer(log)]
    message = log.strip() or "rustc failed"

    def line(i: int) -> int | None:
        for file, file_line in errors:
            mapped = smap.line(i, file, file_line)
            if mapped is not None:
                return mapped
        return None

    result = build_failure(tests, proc, message, smap.code, line,
                           status="timeout" if timed_out else "error")
    if crates:
        listed = ", ".join(f"'{c}'" for c in crates)
        return dataclasses.replace(result, unsupported=(
            f"needs the crate{'s' if len(crates) > 1 else ''} {listed}, which benchwright's sandbox "
            "does not offer (rustc and the standard library only)"), needs=tuple(crates))
    return result
