"""Split MultiPL-E's test programs into benchwright test cases, one per check.

MultiPL-E appends ``tests`` to ``prompt + completion`` and runs the result as one program. Each
language's translator (``dataset_builder/humaneval_to_<lang>.py``) writes that program the same
way: it first closes what the prompt opened (``}`` for C++, Rust and Bash; the method for Java),
then opens a test function (C++ and Rust ``main``, Java ``main``, JavaScript and TypeScript
``test()``, Go ``Test<Name>(t *testing.T)`` with a table, Python ``check(candidate)``, Bash
``run_test``), binds ``candidate`` to the entry point and lists one check per line.

benchwright's solution is ``prompt + completion`` on its own (the completion closes what the
prompt opened), so the closing part is dropped and every check becomes one test case in the
language's own test format, with the ``candidate`` binding it needs. A program whose test
function holds anything but the binding and the checks becomes one case, the function's body,
with ``unsplit`` saying why. All text here is plain source; the caller escapes it for templates.
Nothing is ever evaluated: the programs are only scanned as text.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field

from benchwright.importers.humaneval import split_check
from benchwright.task.model import TestCase

__all__ = ["SplitProgram", "TestsProblem", "block_statements", "split_program"]


class TestsProblem(Exception):
    """A test program this module cannot make test cases of; the message says why."""

    __test__ = False


@dataclass(frozen=True)
class SplitProgram:
    """What one MultiPL-E test program becomes in benchwright."""

    cases: list[TestCase]
    entry_point: str | None
    prelude: str = ""
    description: str | None = None
    """The prompt as benchwright shows it, when it differs from MultiPL-E's (else None)."""
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- scanning C-like text


def _skip_string(text: str, i: int, quote: str) -> int:
    """The index after the string literal starting at ``text[i]`` (a quote), or -1."""
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == quote:
            return j + 1
        if c == "\n" and quote != "`":
            return -1
        j += 1
    return -1


def _skip_comment(text: str, i: int) -> int:
    """The index after the comment starting at ``text[i]``, or ``i`` when none starts there."""
    if text.startswith("//", i):
        end = text.find("\n", i)
        return len(text) if end < 0 else end
    if text.startswith("/*", i):
        end = text.find("*/", i + 2)
        return -1 if end < 0 else end + 2
    return i


def _matching_brace(text: str, start: int, quotes: str) -> int:
    """The index of the ``}`` closing the ``{`` at ``text[start]``, or -1."""
    depth = 0
    i = start
    while i < len(text):
        after = _skip_comment(text, i)
        if after != i:
            if after < 0:
                return -1
            i = after
            continue
        c = text[i]
        if c in quotes:
            i = _skip_string(text, i, c)
            if i < 0:
                return -1
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def block_statements(body: str, quotes: str = "\"'") -> list[str] | None:
    """The top-level statements of a C-like block body, each ending at its ``;``.

    None when the body does not scan (an unterminated string or comment, unbalanced brackets)
    or holds text after its last ``;``.
    """
    out: list[str] = []
    depth = 0
    start = 0
    i = 0
    while i < len(body):
        after = _skip_comment(body, i)
        if after != i:
            if after < 0:
                return None
            i = after
            continue
        c = body[i]
        if c in quotes:
            i = _skip_string(body, i, c)
            if i < 0:
                return None
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return None
        elif c == ";" and depth == 0:
            end = i + 1
            trailing = re.match(r"[ \t]*//[^\n]*", body[end:])  # a comment on the same line
            end += trailing.end() if trailing else 0
            out.append(textwrap.dedent(body[start:end]).strip())
            start = i = end
            continue
        i += 1
    if depth != 0 or _code_left(body[start:], quotes):
        return None
    return out


def _code_left(text: str, quotes: str) -> bool:
    """Whether ``text`` holds anything but whitespace and comments."""
    i = 0
    while i < len(text):
        after = _skip_comment(text, i)
        if after < 0:
            return True
        if after != i:
            i = after
            continue
        if not text[i].isspace():
            return True
        i += 1
    return False


@dataclass(frozen=True)
class _Function:
    head: str
    """Text before the test function (what closes the prompt's code, imports)."""
    body: str
    tail: str
    """Text after it (a call of the test function, the close of Java's class)."""


def _function(tests: str, opening: re.Pattern[str], quotes: str) -> _Function | None:
    match = opening.search(tests)
    if match is None:
        return None
    brace = match.end() - 1
    end = _matching_brace(tests, brace, quotes)
    if end < 0:
        return None
    return _Function(tests[: match.start()], tests[brace + 1 : end], tests[end + 1 :])


def _only(text: str, allowed: str) -> bool:
    """Whether ``text`` is, but for whitespace, ``allowed`` (a regex)."""
    return re.fullmatch(rf"\s*(?:{allowed})\s*", text) is not None


_ALIAS = re.compile(r"(?:auto|let|const|var|let\s+mut)\s+candidate\s*=\s*([A-Za-z_$][\w$]*)\s*;")


@dataclass(frozen=True)
class _CStyle:
    """How one C-like language writes its MultiPL-E test program."""

    opening: re.Pattern[str]
    head: str
    """What may come before the test function (a regex)."""
    tail: str
    """What may come after it (a regex)."""
    check: re.Pattern[str]
    """A statement that is one check."""
    quotes: str = "\"'"


def _c_style_cases(tests: str, style: _CStyle, rewrite: Callable[[str], str] = str) -> SplitProgram:
    function = _function(tests, style.opening, style.quotes)
    if function is None:
        raise TestsProblem(f"no test function ({style.opening.pattern!r}) in the tests")
    notes: list[str] = []
    if not _only(function.head, style.head) or not _only(function.tail, style.tail):
        notes.append("the tests hold code outside their test function; it is left out")
    body = function.body
    statements = block_statements(body, style.quotes)
    alias = _ALIAS.search(body)
    entry = alias.group(1) if alias else None
    if statements is not None:
        first = next((i for i, s in enumerate(statements) if style.check.match(s)), None)
        if first is not None and all(style.check.match(s) for s in statements[first:]):
            setup = statements[:first]
            cases = [TestCase(name=f"assert-{n + 1}", code=rewrite("\n".join([*setup, check])))
                     for n, check in enumerate(statements[first:])]
            return SplitProgram(cases=cases, entry_point=entry, notes=notes)
        why = ("the test function has no check to split" if first is None else
               "the test function has statements other than checks after its first check")
    else:
        why = "the test function's body does not scan as statements"
    code = textwrap.dedent(body.strip("\n")).strip()
    if not code:
        raise TestsProblem("the test function is empty")
    return SplitProgram(cases=[TestCase(name="tests", code=rewrite(code), unsplit=why)],
                        entry_point=entry, notes=notes)


_CPP = _CStyle(
    opening=re.compile(r"^[ \t]*int\s+main\s*\(\s*\)\s*\{", re.M),
    head=r"\}", tail="", check=re.compile(r"assert\s*\("))
_RUST = _CStyle(
    opening=re.compile(r"^[ \t]*fn\s+main\s*\(\s*\)\s*\{", re.M),
    head=r"\}", tail="", check=re.compile(r"(?:debug_)?assert(?:_eq|_ne)?!\s*[(\[{]"))
_JS_HEAD = r"(?:declare\s+var\s+require\s*:\s*any\s*;\s*)?const\s+assert\s*=\s*require\(\s*['\"](?:node:)?assert['\"]\s*\)\s*;"
_JS = _CStyle(
    opening=re.compile(r"^[ \t]*function\s+test\s*\(\s*\)\s*\{", re.M),
    head=_JS_HEAD, tail=r"test\(\s*\)\s*;?", check=re.compile(r"assert(?:\.\w+)?\s*\("),
    quotes="\"'`")
_JAVA = _CStyle(
    opening=re.compile(r"^[ \t]*public\s+static\s+void\s+main\s*\(\s*String\s*(?:\[\]\s*\w+|\w+\s*\[\])\s*\)\s*\{",
                       re.M),
    head=r"\}", tail=r"\}", check=re.compile(r"assert\b"))


def split_cpp(prompt: str, tests: str) -> SplitProgram:
    """C++: ``int main() { auto candidate = f; assert(...); ... }`` after a closing ``}``.
    Each case is ``auto candidate = f;`` and one ``assert``, in a function of its own."""
    return _c_style_cases(tests, _CPP)


def split_rust(prompt: str, tests: str) -> SplitProgram:
    """Rust: ``fn main() { let candidate = f; assert_eq!(...); ... }`` after a closing ``}``."""
    return _c_style_cases(tests, _RUST)


def split_javascript(prompt: str, tests: str) -> SplitProgram:
    """JavaScript and TypeScript: ``function test() { let candidate = f; assert.deepEqual(...);
    ... }`` then ``test();``. The ``require('node:assert')`` line is dropped: benchwright's tests
    have node's ``assert`` already."""
    return _c_style_cases(tests, _JS)


# --------------------------------------------------------------------------- Java

_JAVA_METHOD = re.compile(
    r"^[ \t]*(?:public\s+|private\s+|protected\s+)?static\s+[\w$<>\[\],.?\s]+?\s([A-Za-z_$][\w$]*)\s*\([^;{}]*\)\s*"
    r"(?:throws\s+[\w$.,\s]+)?\{\s*\Z", re.M)
_JAVA_CLASS = re.compile(r"^[ \t]*(?:public\s+|final\s+|abstract\s+)*class\s+([A-Za-z_$][\w$]*)", re.M)
JAVATUPLES = re.compile(
    r"\b(?:Unit|Pair|Triplet|Quartet|Quintet|Sextet|Septet|Octet|Ennead|Decade|KeyValue|LabelValue)"
    r"\s*(?:<|\.\s*(?:with|from)\b)")
"""A use of an ``org.javatuples`` class (its generic type or a factory call)."""
_JAVATUPLES_IMPORT = re.compile(r"^[ \t]*import\s+org\.javatuples\.\*\s*;[ \t]*\n", re.M)


def uses_javatuples(prompt: str, tests: str) -> bool:
    """Whether a Java task needs ``org.javatuples`` (its signature or tests use a tuple class)."""
    method = _JAVA_METHOD.search(prompt)
    signature = method.group(0) if method else ""
    return bool(JAVATUPLES.search(signature) or JAVATUPLES.search(tests))


def split_java(prompt: str, tests: str) -> SplitProgram:
    """Java: ``main`` of the prompt's class (``Problem``) asserts ``f(...) == (...)`` or
    ``f(...).equals(...)``. benchwright's Java tests are methods of a test class of their own,
    so each call of the entry point is qualified with the class (``Problem.f(...)``). The
    prompt's ``import org.javatuples.*;`` is dropped (benchwright's Java has no third-party
    libraries; tasks that use the tuples are left out by the importer)."""
    method = _JAVA_METHOD.search(prompt)
    classes = _JAVA_CLASS.findall(prompt)
    if method is None or not classes:
        raise TestsProblem("the prompt has no class with a static method to complete")
    entry, owner = method.group(1), classes[-1]
    call = re.compile(rf"(?<![\w$.]){re.escape(entry)}(?=\s*\()")

    def qualify(code: str) -> str:
        return call.sub(f"{owner}.{entry}", code)

    split = _c_style_cases(tests, _JAVA, qualify)
    return SplitProgram(cases=split.cases, entry_point=entry, notes=split.notes,
                        description=_JAVATUPLES_IMPORT.sub("", prompt))


# --------------------------------------------------------------------------- Go

_GO_TEST = re.compile(r"^[ \t]*func\s+Test\w*\s*\(\s*t\s+\*testing\.T\s*\)\s*\{", re.M)
_GO_TABLE = re.compile(r"\btests\s*:=\s*\[\]test\s*\{")
_GO_CHECK = re.compile(
    r'for\s+i\s*,\s*tc\s*:=\s*range\s+tests\s*\{\s*t\.Run\(\s*fmt\.Sprintf\(\s*"test num % d"\s*,\s*i\s*\)\s*,'
    r'\s*func\s*\(\s*t\s+\*testing\.T\s*\)\s*\{\s*if\s+fmt\.Sprintf\(\s*"%v"\s*,\s*tc\.actual\s*\)\s*!=\s*'
    r'fmt\.Sprintf\(\s*"%v"\s*,\s*tc\.expected\s*\)\s*\{\s*t\.Errorf\(\s*"expected \'%s\', got \'%s\'"\s*,'
    r'\s*tc\.expected\s*,\s*tc\.actual\s*\)\s*\}\s*\}\s*\)\s*\}\s*\Z')
_GO_ALIAS = re.compile(r"\bcandidate\s*:=\s*([A-Za-z_]\w*)")
_GO_IMPORTS = re.compile(r"^import\s*\(\n((?:[ \t]*(?:\"[\w/.]+\"|//[^\n]*)?[ \t]*\n)*)\)[ \t]*\n(?:[ \t]*\n)?", re.M)
_GO_HARNESS_PACKAGES = ('"testing"', '"fmt"')
GO_COMPARE = (
    'if fmt.Sprintf("%v", tc.actual) != fmt.Sprintf("%v", tc.expected) {\n'
    "\tt.Errorf(\"expected '%s', got '%s'\", tc.expected, tc.actual)\n"
    "}")
"""MultiPL-E's Go check of one table entry (the body of its ``t.Run`` callback)."""


def _go_entries(table: str) -> list[str] | None:
    """The ``{ actual: ..., expected: ... }`` entries of a test table's body."""
    entries: list[str] = []
    i = 0
    while i < len(table):
        c = table[i]
        if c.isspace() or c == ",":
            i += 1
            continue
        if c != "{":
            return None
        end = _matching_brace(table, i, "\"'`")
        if end < 0:
            return None
        entries.append(table[i : end + 1])
        i = end + 1
    return entries


def _go_description(prompt: str) -> str:
    """The prompt without the imports only MultiPL-E's tests use (``testing``, ``fmt``).

    In MultiPL-E the tests share the prompt's file; benchwright's tests are a file of their own
    with their own imports, so those imports would be unused in the solution, which Go refuses.
    """
    def keep(match: re.Match[str]) -> str:
        lines = [line for line in match.group(1).splitlines()
                 if line.strip() and line.strip() not in _GO_HARNESS_PACKAGES]
        if not any(line.strip().startswith('"') for line in lines):
            return ""
        return "import (\n" + "".join(f"{line}\n" for line in lines) + ")\n\n"

    return _GO_IMPORTS.sub(keep, prompt, count=1)


def _go_setup(text: str) -> str:
    """The statements before the table, one a line, the fields of ``type test struct`` indented
    by a tab (MultiPL-E mixes two-space and tab indentation)."""
    lines: list[str] = []
    depth = 0
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        depth -= line.startswith("}")
        lines.append("\t" * max(depth, 0) + line)
        depth += line.endswith("{")
    return "\n".join(lines)


def split_go(prompt: str, tests: str) -> SplitProgram:
    """Go: ``func TestF(t *testing.T)`` binds ``candidate``, declares ``type test struct``, fills
    ``tests := []test{ {actual: ..., expected: ...}, ... }`` and compares each entry's
    ``fmt.Sprintf("%v", ...)`` in a ``t.Run``. Each entry becomes one case: the binding, the type,
    ``tc := test{...}`` and that same comparison, in benchwright's ``func(t *bwdriver.T)``."""
    function = _function(tests, _GO_TEST, "\"'`")
    if function is None:
        raise TestsProblem("no func TestX(t *testing.T) in the tests")
    body = function.body
    table = _GO_TABLE.search(body)
    if table is None:
        raise TestsProblem("the Go test function has no 'tests := []test{...}' table")
    end = _matching_brace(body, table.end() - 1, "\"'`")
    entries = _go_entries(body[table.end() : end]) if end >= 0 else None
    if entries is None or not entries:
        raise TestsProblem("the Go test table does not scan as { actual: ..., expected: ... } entries")
    if not _GO_CHECK.match(body[end + 1 :].strip()):
        raise TestsProblem("the Go test function does not compare the table with MultiPL-E's "
                           "fmt.Sprintf(\"%v\") loop")
    setup = _go_setup(body[: table.start()])
    alias = _GO_ALIAS.search(setup)
    notes = [] if _only(function.head + function.tail, "") else [
        "the tests hold code outside their test function; it is left out"]
    cases = [TestCase(name=f"assert-{n + 1}", code=f"{setup}\ntc := test{entry}\n{GO_COMPARE}")
             for n, entry in enumerate(entries)]
    return SplitProgram(cases=cases, entry_point=alias.group(1) if alias else None,
                        prelude='import "fmt"\n', description=_go_description(prompt), notes=notes)


# --------------------------------------------------------------------------- Python


def split_python(prompt: str, tests: str) -> SplitProgram:
    """Python: ``def check(candidate)`` of asserts, then ``def test_check(): check(f)`` and
    ``test_check()``. The last two are dropped (benchwright calls nothing at import) and
    ``check`` is split as HumanEval's is: one case per assert, ``candidate = f`` in the prelude."""
    try:
        module = ast.parse(tests)
    except SyntaxError as exc:
        raise TestsProblem(f"the Python tests do not parse: {exc.msg} (line {exc.lineno})") from None
    entry: str | None = None
    kept: list[str] = []
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and node.name == "test_check":
            calls = [n for n in ast.walk(node) if isinstance(n, ast.Call)
                     and isinstance(n.func, ast.Name) and n.func.id == "check"]
            if calls and calls[0].args and isinstance(calls[0].args[0], ast.Name):
                entry = calls[0].args[0].id
            continue
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name) and node.value.func.id == "test_check"):
            continue
        segment = ast.get_source_segment(tests, node, padded=True)
        if segment is not None:
            kept.append(segment)
    if entry is None:
        defs = re.findall(r"^def\s+([A-Za-z_]\w*)\s*\(", prompt, flags=re.M)
        if not defs:
            raise TestsProblem("no entry point: neither check(f) in test_check nor a def in the prompt")
        entry = defs[-1]
    split = split_check("\n\n".join(kept) + "\n", entry)
    cases = split.cases if split.split else [
        TestCase(name=c.name, code=c.code, unsplit="check(candidate) is not a list of asserts")
        for c in split.cases]
    return SplitProgram(cases=cases, entry_point=entry, prelude=split.prelude)


# --------------------------------------------------------------------------- Bash

_SH_RUN_TEST = re.compile(r"^run_test\s*\(\s*\)\s*\{[ \t]*\n(.*?)^\}[ \t]*$", re.M | re.S)
_SH_CANDIDATE = re.compile(r"^candidate\s*\(\s*\)\s*\{[ \t]*\n(.*?)^\}[ \t]*$", re.M | re.S)
_SH_CHECK = re.compile(r"\[\[.*\]\]\s*$")


def split_bash(prompt: str, tests: str) -> SplitProgram:
    """Bash: a closing ``}``, ``candidate() { f "$@"; }``, ``set -e`` and ``run_test() { [[ $(candidate
    ...) = ... ]] ... }``. ``candidate`` goes to the prelude; each ``[[ ... ]]`` line is a case
    (benchwright runs a Bash case with ``set -e`` semantics, so a false ``[[ ]]`` fails it)."""
    run_test = _SH_RUN_TEST.search(tests)
    if run_test is None:
        raise TestsProblem("no run_test() { ... } in the Bash tests")
    wrapper = _SH_CANDIDATE.search(tests)
    prelude = wrapper.group(0) + "\n" if wrapper else ""
    entry_match = re.match(r"\s*([A-Za-z_][\w-]*)\s+\"\$@\"\s*$", wrapper.group(1)) if wrapper else None
    entry = entry_match.group(1) if entry_match else None
    lines = [line.strip() for line in run_test.group(1).splitlines() if line.strip()]
    if lines and all(_SH_CHECK.match(line) for line in lines):
        return SplitProgram(cases=[TestCase(name=f"assert-{n + 1}", code=line) for n, line in enumerate(lines)],
                            entry_point=entry, prelude=prelude)
    code = textwrap.dedent(run_test.group(1)).strip()
    if not code:
        raise TestsProblem("run_test() is empty")
    return SplitProgram(cases=[TestCase(name="tests", code=code,
                                        unsplit="run_test() holds commands other than [[ ... ]] checks")],
                        entry_point=entry, prelude=prelude)


SPLITTERS: dict[str, Callable[[str, str], SplitProgram]] = {
    "cpp": split_cpp, "go": split_go, "java": split_java, "js": split_javascript,
    "py": split_python, "rs": split_rust, "sh": split_bash, "ts": split_javascript,
}
"""The splitter of each MultiPL-E language (MultiPL-E's own names)."""


def split_program(language: str, prompt: str, tests: str) -> SplitProgram:
    """The test cases of one MultiPL-E row in ``language`` (MultiPL-E's name).

    Raises:
        TestsProblem: the tests are not a test program of the shape MultiPL-E writes.
    """
    return SPLITTERS[language](prompt, tests)
