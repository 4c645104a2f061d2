"""Go: ``go build`` makes one test program per sample; every test case runs in its own process.

Test cases
----------
A test case is Go statements, the body of ``func(t *bwdriver.T)``: ``t`` has the familiar part
of ``testing.T`` (``Errorf``, ``Error``, ``Fatalf``, ``Fatal``, ``Fail``, ``FailNow``,
``Failed``, ``Log``, ``Logf``, ``Helper``) plus ``t.Equal(got, want, msgAndArgs...)`` (deep
equality; a nil slice or map equals an empty one; numbers of different types compare by value).
So either of::

    t.Equal(CollapseRuns("aaabcc"), "a3bc2")
    if got := CollapseRuns("abc"); got != "abc" { t.Errorf("CollapseRuns(%q) = %q", "abc", got) }

The test is ``fail`` when it reported an error, ``error`` when it panicked (the message is
``panic: ...``, the line the innermost frame of the solution or test), ``pass`` when it returned
without either. The optional prelude is Go code shared by the tests (helpers, types, imports).

Imports
-------
The solution is its own file with its own imports (Go's imports are per file), so the model's
imports never clash with the tests'. The tests' file imports what the tests and the prelude use:
the prelude's ``import`` lines that are used (an unused one is dropped: unused imports do not
compile in Go), and a standard package a test names without importing it (``strings.Repeat``,
``sort.Ints``, ``utf8.RuneCountInString``...: see :data:`STD_PACKAGES`).

How one sample runs
-------------------
The work folder gets a module ``bwsample`` (``go.mod``, no dependencies): ``solution.go`` (the
solution: its ``package`` clause made ``package main`` in place or, when it has none,
``package main`` added as line 1; a ``func main()`` renamed ``bwSolutionMain`` in place),
its standard-library imports fixed line for line (:func:`fix_imports`),
``bw_tests.go`` (imports, prelude, ``func bwTest<i>(t *bwdriver.T) { <test i> }``, ``func main``)
and ``bwdriver/driver.go`` (the resource ``godriver.go``). One sandbox call runs
``nativerunner.py`` (its docstring has the protocol), which builds with Debian's ``/usr/bin/go``
(``go build``, modules on, ``GOPROXY=off``, the build cache in the work folder: the standard
library comes precompiled with Debian's Go, so a cold build takes about 0.3-0.5 s) and runs
``./bwtests <i>`` once per test. Package ``bwdriver`` is initialised before package main, so it
takes the runner's token before any init function of the solution runs.

testify: when the tests' file imports ``github.com/stretchr/testify/...``, ``go.mod`` requires that
module and replaces it with the folder ``testify``, which holds benchwright's testify-compatible
``assert`` package (the resource ``gotestify.go``: testify's comparisons and message shapes, see
docs/languages/go.md); nothing is fetched.

Lines: a test's ``code`` is ``solution.go`` as compiled, then a marker line and an excerpt of
``bw_tests.go`` (its header with the imports and the prelude, and that test's function).

Limits
------
The Go runtime reserves about 700 MB of address space at start, so the sandbox gets
``memory_mb=0``; each test process gets ``RLIMIT_DATA = limits.memory_mb + 64`` MiB (what the
heap can really use: beyond it the runtime dies with "out of memory", an ``error``) and
``GOMEMLIMIT = limits.memory_mb`` MiB (the collector works harder before that).

What a hostile solution can still do
------------------------------------
Exiting early (``os.Exit(0)``, in an ``init`` or a test), crashing, printing ``BWR`` lines or
writing to fd 3 is never a pass: the runner's lines carry a nonce no test process sees, and a
test's pass needs its token, which ``bwdriver`` reads before the solution's initialisers run.
Refused before the build, as a build error: ``import "C"`` (cgo: a C constructor runs before any
Go code) and ``//go:linkname`` (reaches ``bwdriver``'s unexported token). What remains: code
written against this driver can find its test's token in its own process's memory (``unsafe``,
``/proc/self/mem``) and write a pass on fd 3; that forges the verdict of every test whose process
runs that code (each test has its own process and token). A pass of a solution that mentions
``/proc/self`` is flagged ``suspicious``. It cannot read or write the runner through ``/proc``
(non-dumpable) under bwrap and unshare (under the rlimit fallback as root it can), and leftovers
of a test's process group are killed after it.
"""

from __future__ import annotations

import hashlib
import re
import shlex
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
from benchwright.lang.toolchain import TOOL_PATH, find_tool, missing_tools, need_tool, tool_version
from benchwright.sandbox.base import ProcessResult, Sandbox, SandboxLimits

INSTALL_HINT = "apt-get install golang-go"
MODULE = "bwsample"
SOLUTION_FILE = "solution.go"
TEST_FILE = "bw_tests.go"
BINARY = "bwtests"
DATA_SLACK_MB = 64
"""RLIMIT_DATA above ``memory_mb``: the Go runtime's own writable mappings (about 45 MB)."""
LDFLAGS = "-ldflags=-s -w"
"""No symbol table and no DWARF in the test program: the link takes about half the time, and
panics still name their files and lines (the runtime keeps its own line table)."""
CACHE_ARCHIVE = "bw_gocache.tar"
"""The warm build cache of benchwright's own packages, unpacked into each sample's GOCACHE."""
CACHE_MAX_BYTES = 64 * 1024 * 1024
DRIVER = resources.files("benchwright.lang").joinpath("godriver.go").read_bytes()
GO_MOD = f"module {MODULE}\n\ngo 1.19\n".encode()
TESTIFY = "github.com/stretchr/testify"
TESTIFY_ASSERT = resources.files("benchwright.lang").joinpath("gotestify.go").read_bytes()
"""benchwright's testify-compatible ``assert`` package: the module ``github.com/stretchr/testify``
is replaced by a folder of the sample holding it, when the tests import it (no network)."""
TESTIFY_MOD = (f"module {TESTIFY}\n\ngo 1.19\n").encode()

BUILD_ENV = {
    "GOCACHE": "{work}/.gocache",
    "GOPATH": "{work}/.gopath",
    "GOTMPDIR": "{work}/.tmp",
    "TMPDIR": "{work}/.tmp",
    "GO111MODULE": "on",
    "GOFLAGS": "-mod=mod",
    "GOPROXY": "off",
    "GOSUMDB": "off",
    "GOWORK": "off",
    "GOTOOLCHAIN": "local",
    "GOTELEMETRY": "off",
}

STD_PACKAGES: dict[str, str] = {
    name: name for name in (
        "bufio", "bytes", "context", "errors", "fmt", "io", "math", "os", "path", "reflect",
        "regexp", "runtime", "sort", "strconv", "strings", "sync", "time", "unicode",
    )
} | {
    "atomic": "sync/atomic", "base64": "encoding/base64", "big": "math/big",
    "binary": "encoding/binary", "bits": "math/bits", "cmplx": "math/cmplx",
    "crc32": "hash/crc32", "csv": "encoding/csv", "debug": "runtime/debug", "fnv": "hash/fnv",
    "filepath": "path/filepath", "heap": "container/heap", "hex": "encoding/hex",
    "json": "encoding/json", "list": "container/list", "md5": "crypto/md5",
    "rand": "math/rand", "ring": "container/ring", "sha1": "crypto/sha1",
    "sha256": "crypto/sha256",
    "utf16": "unicode/utf16", "utf8": "unicode/utf8",
}
"""Standard packages a test or the prelude may use without importing them (name -> path)."""

_PACKAGE = re.compile(r"\A(?P<before>(?:\s|//[^\n]*\n|/\*.*?\*/)*)package[ \t]+(?P<name>\w+)", re.S)
_MAIN = re.compile(r"(?m)^func[ \t]+main([ \t]*\([ \t]*\))")
_FUNC = re.compile(r"(?m)^func[ \t]+(?:\([^)]*\)[ \t]*)?(?P<name>[A-Za-z_]\w*)")
_LITERALS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|`[^`]*`|\'(?:[^\'\\\n]|\\.)*\'', re.S)
_QUALIFIED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)\s*\.\s*[A-Za-z_]")
_IMPORT_SPEC = re.compile(r'^\s*(?P<alias>[\w.]+\s+)?(?P<path>"[^"]+"|`[^`]+`)\s*(?://.*)?$')
_SHORT_DECL = re.compile(r"([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*:=")
_DECL = re.compile(r"\b(?:var|const|type|func)\s+([A-Za-z_]\w*)")
_DIRECTIVE = re.compile(r"(?m)^[ \t]*//go:(linkname|cgo_\w+)\b")
_STRINGS = re.compile(r'//[^\n]*|/\*.*?\*/|`[^`]*`|\'(?:[^\'\\\n]|\\.)*\'', re.S)
"""Comments, raw strings and runes (an import path is a plain string)."""
_CGO = re.compile(r'\bimport\s*(?:\([^)]*?)?(?:[\w.]+\s+)?"C"', re.S)
_ERROR = re.compile(r"(?m)^(?:\./)?(?P<file>[\w./-]*\.go):(?P<line>\d+)(?::(?P<col>\d+))?: ")


def prepare_solution(solution: str) -> str:
    """``solution.go``: the package made ``main`` (added when missing), ``main`` renamed, the
    standard-library imports fixed (:func:`fix_imports`); no line moves."""
    text = solution.lstrip("\ufeff")
    m = _PACKAGE.match(text)
    if m is None:
        text = "package main\n" + text
    elif m.group("name") != "main":
        text = text[: m.start("name")] + "main" + text[m.end("name"):]
    text = _MAIN.sub(r"func bwSolutionMain\1", text)
    text = fix_imports(text)
    return text if text.endswith("\n") else text + "\n"


_STD_PATHS = frozenset(STD_PACKAGES.values())
_IMPORT_LINE = re.compile(r'(?m)^(?P<lead>[ \t]*(?:import[ \t]+)?)(?P<spec>(?:[\w.]+[ \t]+)?"(?P<path>[^"\n]+)")'
                          r'[ \t]*;?[ \t]*(?://[^\n]*)?$')


def fix_imports(source: str) -> str:
    """``source`` with its standard-library imports fixed as ``goimports`` would, line for line:
    an import of a standard package (of :data:`STD_PACKAGES`) the code never uses becomes a
    comment saying so, and a
    standard package the code names without importing (``strings.Repeat``; see
    :data:`STD_PACKAGES`) is imported at the end of the ``package`` line. A model (or a dataset's
    prompt: HumanEval-X's Go prompts import what their solutions do not use, and miss what they
    do) is not judged on import bookkeeping, which Go refuses to compile."""
    head = _PACKAGE.match(source)
    if head is None:
        return source
    blanked = blank(source, _STRINGS)
    blocks = [(m.start(), m.end()) for m in re.finditer(r"(?ms)^import\s*\((.*?)\)", blanked)]
    singles = [(m.start(), m.end()) for m in re.finditer(r'(?m)^import[ \t]+(?:[\w.]+[ \t]+)?"[^"\n]*"', blanked)]
    spans = blocks + singles
    body = "".join(ch if not any(a <= i < b for a, b in spans) else " " for i, ch in enumerate(source)) \
        if spans else source
    used = used_names(body)
    declared = declared_names(body)
    imported: set[str] = set()
    out = source
    for a, b in sorted(spans, reverse=True):
        chunk = out[a:b]
        lines = chunk.split("\n")
        for k, line in enumerate(lines):
            m = _IMPORT_LINE.match(line)
            if m is None:
                continue
            path = m.group("path")
            parts = m.group("spec").split()
            alias = parts[0] if len(parts) == 2 else None
            name = alias or path.rsplit("/", 1)[-1]
            imported.add(name)
            # only the standard packages benchwright knows (never "C": cgo is refused later)
            std = path in _STD_PATHS
            if std and alias not in ("_", ".") and name not in used:
                lead = m.group("lead")
                indent = lead[:len(lead) - len(lead.lstrip())]
                word = "import " if "import" in lead else ""
                lines[k] = f"{indent}// {word}{m.group('spec')}: not used (dropped by benchwright)"
        out = out[:a] + "\n".join(lines) + out[b:]
    missing = sorted(n for n in used - imported - declared if n in STD_PACKAGES)
    if missing:
        end = out.find("\n", head.end())
        end = len(out) if end < 0 else end
        added = "; ".join(f'import "{STD_PACKAGES[n]}"' for n in missing)
        out = out[:end] + f"; {added} // added by benchwright" + out[end:]
    return out


def split_prelude(prelude: str | None) -> tuple[list[tuple[str | None, str]], list[str]]:
    """The prelude's imports ``(alias or None, path)`` and its other lines."""
    imports: list[tuple[str | None, str]] = []
    rest: list[str] = []
    lines = (prelude or "").rstrip("\n").split("\n") if prelude and prelude.strip() else []
    in_block = False
    for line in lines:
        stripped = line.strip()
        if in_block:
            if stripped.startswith(")"):
                in_block = False
            elif (m := _IMPORT_SPEC.match(stripped)) is not None:
                imports.append(_spec(m))
            continue
        if re.match(r"^import\s*\(\s*$", stripped):
            in_block = True
            continue
        m = re.match(r"^import\s+(.*)$", stripped)
        if m is not None and (spec := _IMPORT_SPEC.match(m.group(1))) is not None:
            imports.append(_spec(spec))
            continue
        rest.append(line)
    return imports, rest


def _spec(m: re.Match[str]) -> tuple[str | None, str]:
    alias = m.group("alias").strip() if m.group("alias") else None
    return alias, m.group("path")[1:-1]


def used_names(code: str) -> set[str]:
    """Identifiers used as ``name.Something`` outside comments and literals."""
    return set(_QUALIFIED.findall(_LITERALS.sub(" ", code)))


def declared_names(code: str) -> set[str]:
    """Names the code declares (``x :=``, ``a, b :=``, ``var``, ``const``, ``type``, ``func``):
    a test's local ``list`` or a solution's global ``rand`` is no package to import."""
    text = _LITERALS.sub(" ", code)
    names: set[str] = set()
    for lhs in _SHORT_DECL.findall(text):
        names.update(n.strip() for n in lhs.split(","))
    names.update(_DECL.findall(text))
    return names


def imports_for_tests(prelude_imports: list[tuple[str | None, str]], code: str,
                      solution: str = "") -> list[str]:
    """The import lines of ``bw_tests.go``: used prelude imports, then standard packages the
    code names without importing them (unless the code or the solution declares that name)."""
    names = used_names(code)
    lines: list[str] = []
    taken: set[str] = set()
    for alias, path in prelude_imports:
        name = alias or path.rsplit("/", 1)[-1]
        if alias in ("_", ".") or name in names:
            lines.append(f'{alias} "{path}"' if alias else f'"{path}"')
            taken.add(name)
    for name in sorted(names - taken - declared_names(code + "\n" + solution)):
        if name in STD_PACKAGES:
            lines.append(f'"{STD_PACKAGES[name]}"')
    return lines


def forbidden(solution: str) -> tuple[str, int] | None:
    """The first ``//go:linkname`` (reaches the driver's unexported token) or ``import "C"``
    (cgo: C constructors run before every Go initialiser) of the solution, with its line."""
    found = [(m.start(), f"//go:{m.group(1)}") for m in _DIRECTIVE.finditer(solution)]
    found += [(m.end() - 1, 'import "C"') for m in _CGO.finditer(blank(solution, _STRINGS))]
    if not found:
        return None
    at, what = min(found)
    return what, solution.count("\n", 0, at) + 1


def generate(solution: str, tests: list[TestSpec], prelude: str | None
             ) -> tuple[dict[str, bytes], SourceMap]:
    """The module's files and where the lines of its test file come from."""
    source = prepare_solution(solution)
    imports, rest = split_prelude(prelude)
    code = "\n".join(rest) + "\n" + "\n".join(t.code for t in tests)
    header = ["package main", "", "import (", f'\t"{MODULE}/bwdriver"']
    header += [f"\t{line}" for line in imports_for_tests(imports, code, source)]
    header += [")"]
    if rest:
        header += ["", *rest]
    header += [""]
    line = len(header) + 1
    functions: list[tuple[int, list[str]]] = []
    for i, test in enumerate(tests):
        body = [("\t" + ln) if ln.strip() else "" for ln in test.code.rstrip("\n").split("\n")]
        lines = [f"func bwTest{i}(t *bwdriver.T) {{", *body, "}"]
        functions.append((line, lines))
        line += len(lines)
    table = ", ".join(f"bwTest{i}" for i in range(len(tests)))
    test_file = (
        "".join(ln + "\n" for ln in header)
        + "".join(ln + "\n" for _, lines in functions for ln in lines)
        + f"\nfunc main() {{\n\tbwdriver.Main([]func(*bwdriver.T){{{table}}})\n}}\n"
    )
    files = {
        f"{MODULE}/go.mod": GO_MOD,
        f"{MODULE}/{SOLUTION_FILE}": source.encode(),
        f"{MODULE}/{TEST_FILE}": test_file.encode(),
        f"{MODULE}/bwdriver/driver.go": DRIVER,
    }
    if any(f'"{TESTIFY}/' in line for line in header):
        files[f"{MODULE}/go.mod"] = GO_MOD + (f"\nrequire {TESTIFY} v1.8.0\n\n"
                                              f"replace {TESTIFY} => ./testify\n").encode()
        files[f"{MODULE}/testify/go.mod"] = TESTIFY_MOD
        files[f"{MODULE}/testify/assert/assertions.go"] = TESTIFY_ASSERT
    smap = SourceMap(SOLUTION_FILE, source, TEST_FILE, header, functions, [],
                     marker=f"// ---- {TEST_FILE} (this test case's part) ----")
    return files, smap


def entry_point(code: str) -> str | None:
    """The first exported top-level function (not a method), else the first function; never
    ``main`` or ``init``."""
    names = [m.group("name") for m in _FUNC.finditer(code)
             if not m.group(0).split("func", 1)[1].lstrip().startswith("(")]
    names = [n for n in names if n not in ("main", "init")]
    exported = [n for n in names if n[0].isupper()]
    chosen = exported or names
    return chosen[0] if chosen else None


class GoLanguage(Language):
    """Go with Debian's ``go`` (1.19 on bookworm); the standard library only."""

    name = "go"
    fence_names = ("go", "golang")
    file_extension = ".go"
    install_hint = INSTALL_HINT

    def __init__(self, warm_cache: bool = True, build_cache: bool = True) -> None:
        self.warm_cache = warm_cache
        """Start each sample's build cache from an archive of benchwright's own packages
        (``bwdriver``, testify's ``assert``) compiled once, and link without symbol tables
        (False: every sample compiles them again, the per-sample baseline)."""
        self._caches = Artifacts()
        self.builds: BuildCache | None = BuildCache() if build_cache else None
        """Test programs of earlier samples, for a later sample with the same build (None:
        every sample is built, the per-sample baseline)."""

    def close(self) -> None:
        self._caches.clear()
        if self.builds is not None:
            self.builds.clear()

    def infer_entry_point(self, code: str) -> str | None:
        return entry_point(code)

    scaffolding = (
        (r"^\s*func\s+(?:Test|Benchmark|Example)\w*\s*\(", "a `go test` function (a test case is the "
         "body of a function the driver calls; nothing runs `go test`: write the checks themselves)"),
    )

    def mutants(self, solution: str, entry_point: str) -> list[Mutant]:
        """The entry point's body starts with ``var z T; return z`` (for one unnamed result) or
        ``panic(...)``."""
        signature = rf"\bfunc\s+{re.escape(entry_point)}\s*(?:\[[^\]]*\])?\s*\("
        body = find_body(solution, signature)
        if body is None:
            return []
        statements = [("panics", 'panic("benchwright mutant")')]
        if not body.between:
            statements.insert(0, ("returns", "return"))
        elif not body.between.startswith("("):
            statements.insert(0, ("returns the zero value", f"var bwZero {body.between}; return bwZero"))
        return brace_mutants(solution, signature, statements)

    def toolchain(self) -> dict[str, str]:
        go = need_tool("go", language=self.name, hint=INSTALL_HINT)
        env = (("PATH", TOOL_PATH), ("GOTOOLCHAIN", "local"), ("GOCACHE", "off"),
               ("HOME", "/nonexistent"))
        return {"go": tool_version((go, "version"), hint=INSTALL_HINT, prefix="go version ",
                                   env=env)}

    def missing(self) -> str | None:
        return missing_tools(("go",), language=self.name, hint=INSTALL_HINT)

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
        go = need_tool("go", language=self.name, hint=INSTALL_HINT)
        files, smap = generate(solution, tests, prelude)
        bad = forbidden(smap.solution)
        if bad is not None:
            return rejected(tests, smap.code, f"{SOLUTION_FILE}:{bad[1]}: `{bad[0]}` is not allowed "
                            "in a solution: it can run code before the test driver or reach its "
                            "secrets (and so forge results)", bad[1])
        run_env = {"GOTRACEBACK": "single"}
        if limits.memory_mb > 0:
            run_env["GOMEMLIMIT"] = f"{limits.memory_mb}MiB"
        steps: list[dict[str, Any]] = []
        flags: list[str] = []
        if self.warm_cache:
            flags = [LDFLAGS]
            archive = self._driver_cache(sandbox, go, files)
            tar = find_tool("tar")
            if archive is not None and tar is not None:
                files = {**files, CACHE_ARCHIVE: archive}
                steps.append({"argv": [tar, "-xf", CACHE_ARCHIVE, "-C", ".gocache"], "cwd": None,
                              "env": {}})
        plan = Plan(
            files=files,
            build=[*steps, {
                "argv": [go, "build", "-buildvcs=false", *flags, "-o", f"../{BINARY}", "."],
                "cwd": MODULE,
                "env": BUILD_ENV,
            }],
            program=BINARY,
            # a Go program holds the paths of its sources: the work folder must stay where it is
            key_parts=(sandbox.work_path,) if sandbox.work_path is not None else None,
            run_argv=[f"./{BINARY}"],
            run_env=run_env,
            data_mb=limits.memory_mb + DATA_SLACK_MB if limits.memory_mb > 0 else 0,
            location=rf"({SOLUTION_FILE}|{TEST_FILE}):(\d+)",
            crash_markers=("panic:", "fatal error:", "runtime:"),
            dirs=(".gocache", ".gopath", ".tmp"),
        )
        proc, records = run_plan(sandbox, plan, tests, limits=limits,
                                 test_timeout_s=test_timeout_s, language=self.name,
                                 builds=self.builds)
        head = records[0] if records else {}
        if head.get("build") in ("error", "timeout"):
            return _build_error(tests, proc, str(head.get("message") or ""), smap,
                                timed_out=head.get("build") == "timeout")
        records = flag_suspicious([_mapped(rec, smap) for rec in records], solution)
        result = collect(tests, records, proc, smap.code)
        result.extra.update(usage_extra(records))
        return result

    def _driver_cache(self, sandbox: Sandbox, go: str, files: dict[str, bytes]) -> bytes | None:
        """A build cache holding benchwright's packages of this sample's module (``bwdriver``,
        testify's ``assert`` when used), compiled once per sandbox in a run of its own (no
        model code in it) and kept as a tar archive; None when it could not be made."""
        ours = {name: data for name, data in files.items()
                if name == f"{MODULE}/go.mod" or name.startswith((f"{MODULE}/bwdriver/",
                                                                  f"{MODULE}/testify/"))}
        key = (sandbox.name, id(sandbox), go,
               *(f"{name}\0{hashlib.sha256(data).hexdigest()}" for name, data in sorted(ours.items())))

        def make() -> bytes | None:
            packages = ["./bwdriver"]
            if f"{MODULE}/testify/go.mod" in ours:
                packages.append(f"{TESTIFY}/assert")
            in_work = " ".join(f'{k}="$W/{v.removeprefix("{work}/")}"' for k, v in BUILD_ENV.items()
                               if v.startswith("{work}/"))
            env = {k: v for k, v in BUILD_ENV.items() if "{work}" not in v} | {"PATH": TOOL_PATH}
            build = shlex.join([go, "build", "-buildvcs=false", LDFLAGS, "-o", "/dev/null", *packages])
            script = (f'W="$PWD"; export {in_work}; mkdir -p .gocache .gopath .tmp && cd {MODULE} && '
                      f"{build} && cd .. && tar -cf {CACHE_ARCHIVE} -C .gocache .")
            return made_in_sandbox(sandbox, ["/bin/sh", "-c", script], ours, CACHE_ARCHIVE,
                                   max_bytes=CACHE_MAX_BYTES, env=env)

        return self._caches.get(key, make)


def _mapped(rec: dict[str, Any], smap: SourceMap) -> dict[str, Any]:
    index = rec.get("i")
    if not isinstance(index, int) or index >= len(smap.functions) or rec.get("status") == "pass":
        return rec
    line = rec.get("line")
    out = dict(rec)
    out["line"] = smap.line(index, str(rec.get("file") or ""),
                            line if isinstance(line, int) and not isinstance(line, bool) else None)
    return out


def _build_error(tests: list[TestSpec], proc: ProcessResult, log: str, smap: SourceMap, *,
                 timed_out: bool) -> ExecutionResult:
    errors = [(m.group("file"), int(m.group("line"))) for m in _ERROR.finditer(log)]
    if not timed_out and not errors and "cannot find package" not in log \
            and "is not in GOROOT" not in log and "no required module" not in log:
        # the go command itself failed (no GOROOT, a broken cache): not the model's fault
        raise InfraError(f"go: go build failed without a compile error: {log.strip()[:2000]}")
    message = log.strip() or "go build failed"

    def line(i: int) -> int | None:
        for file, file_line in errors:
            mapped = smap.line(i, file, file_line)
            if mapped is not None:
                return mapped
        return None

    return build_failure(tests, proc, message, smap.code, line,
                         status="timeout" if timed_out else "error")
