"""Java sources of one sample: scanning the solution, and generating the test class around it.

The test class holds the prelude, one method per test case and ``__bwRun``, which calls the
test method of an index. The runner is a class of its own, ``bwrunner.Runner``: the Java text of
``javarunner.java`` next to this module (read with ``importlib.resources``), the same for every
sample, so it is compiled once per javac server. See :mod:`benchwright.lang.java` for how the two
run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

from benchwright.lang.base import TestSpec

MESSAGE_CHARS = 4000
"""Exception messages and descriptions longer than this are cut by the runner."""
RUNNER_SOURCE = (
    resources.files("benchwright.lang").joinpath("javarunner.java").read_text(encoding="utf-8")
    .replace("__MESSAGE_CHARS__", str(MESSAGE_CHARS))
)
"""The runner's Java source (package ``bwrunner``: no solution class can take its names)."""
RUNNER_CLASS = "bwrunner.Runner"
"""The class holding the runner's ``main``."""
RUNNER_FILE = "bwrunner/Runner.java"
"""Where the runner's source goes in a work folder that compiles it."""
TEST_CLASS_END = """    // ---- benchwright's dispatch: not part of any test case ----
    public static void __bwRun(int __bwIndex) throws java.lang.Throwable {
        switch (__bwIndex) {
__DISPATCH__
            default: throw new java.lang.IllegalStateException("no test " + __bwIndex);
        }
    }
}
"""
"""The end of the test class after the test methods: ``__bwRun``, called by the runner."""
TEST_CLASS = "BwTests"
"""The test class's name, with ``_`` appended while the solution declares that name."""

_TYPE_DECL = re.compile(
    r"(?<![\w$.])(@\s*interface|class|interface|enum|record)\s+([A-Za-z_$][\w$]*)"
)
_PACKAGE = re.compile(r"(?m)^[ \t]*package\s+[\w$.\s]+?;")
_IMPORT_LINE = re.compile(r"^\s*import\s+(?:static\s+)?[\w$.]+(?:\s*\.\s*\*)?\s*;\s*(?://.*)?$")
_METHOD = re.compile(
    r"((?:\b(?:public|protected|private|static|final|synchronized|abstract|native|strictfp)\s+)+)"
    r"(?:<[^;{}()]*?>\s*)?"
    r"[\w$.\[\]<>,?\s]*?[\w$\]>]\s+"
    r"([A-Za-z_$][\w$]*)\s*\("
)

# --------------------------------------------------------------------------- scanning the solution


def blank_java(src: str) -> str:
    """``src`` with comments and the contents of string/char literals replaced by spaces.

    Newlines are kept, so offsets and line numbers are those of ``src``.
    """
    out: list[str] = []
    i, n = 0, len(src)

    def blank(text: str) -> str:
        return re.sub(r"[^\n]", " ", text)

    while i < n:
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif src.startswith('"""', i):
            j = i + 3
            while j < n and not src.startswith('"""', j):
                j += 2 if src[j] == "\\" else 1
            j = min(j + 3, n)
            out.append('"""' + blank(src[i + 3 : max(j - 3, i + 3)]) + ('"""' if j - 3 > i else ""))
            i = j
            continue
        elif src[i] in "\"'":
            quote = src[i]
            j = i + 1
            while j < n and src[j] != quote and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(quote + blank(src[i + 1 : j - 1]) + (src[j - 1] if j - 1 > i else ""))
            i = j
            continue
        else:
            out.append(src[i])
            i += 1
            continue
        out.append(blank(src[i:j]))
        i = j
    return "".join(out)


@dataclass(frozen=True)
class TopLevelType:
    name: str
    public: bool


def top_level_types(src: str) -> list[TopLevelType]:
    """The types declared at the top level of a compilation unit, in order."""
    text = blank_java(src)
    found: list[TopLevelType] = []
    depth = 0
    pos = 0
    for m in _TYPE_DECL.finditer(text):
        seg = text[pos : m.start()]
        depth += seg.count("{") - seg.count("}")
        pos = m.start()
        if depth != 0:
            continue
        before = text[: m.start()]
        cut = max(before.rfind(";"), before.rfind("}"), before.rfind("{"))
        modifiers = before[cut + 1 :]
        found.append(TopLevelType(m.group(2), re.search(r"\bpublic\b", modifiers) is not None))
    return found


def solution_file_name(src: str) -> str:
    """The file ``javac`` wants for ``src``: its public top-level type, else ``Solution.java``."""
    for t in top_level_types(src):
        if t.public:
            return f"{t.name}.java"
    return "Solution.java"


def neutralize_package(src: str) -> str:
    """Comment out a ``package`` declaration in place: the tests live in the default package."""
    m = _PACKAGE.search(blank_java(src))
    if m is None:
        return src
    decl = src[m.start() : m.end()]
    if "*/" in decl:
        return src
    return src[: m.start()] + "/* " + decl + " */" + src[m.end() :]


def entry_point(code: str) -> str | None:
    """The first public static method other than ``main``, else the first static one."""
    text = blank_java(code)
    first_static: str | None = None
    for m in _METHOD.finditer(text):
        modifiers = m.group(1).split()
        method = m.group(2)
        if "static" not in modifiers or method == "main":
            continue
        if "public" in modifiers:
            return method
        if first_static is None:
            first_static = method
    return first_static


def free_class_name(src: str) -> str:
    """``TEST_CLASS``, with ``_`` appended while ``src`` declares a top-level type of that name."""
    taken = {t.name for t in top_level_types(src)}
    name = TEST_CLASS
    while name in taken:
        name += "_"
    return name


# --------------------------------------------------------------------------- the test class


def split_prelude(prelude: str | None) -> tuple[list[str], list[str]]:
    """The prelude's import lines, and its other lines (members of the test class)."""
    if not prelude or not prelude.strip():
        return [], []
    imports: list[str] = []
    members: list[str] = []
    for line in prelude.strip("\n").splitlines():
        (imports if _IMPORT_LINE.match(line) else members).append(line)
    while members and not members[0].strip():
        members.pop(0)
    while members and not members[-1].strip():
        members.pop()
    return [i.strip() for i in imports], members


def _indent(lines: list[str], prefix: str) -> list[str]:
    return [prefix + line if line.strip() else "" for line in lines]


def _method_name(index: int, name: str) -> str:
    slug = re.sub(r"[^A-Za-z0-9]+", "_", name).strip("_")[:40]
    return f"test_{index}_{slug}" if slug else f"test_{index}"


@dataclass(frozen=True)
class TestClassLayout:
    """The generated test class and how its lines map to each test's reported code."""

    __test__ = False

    class_name: str
    source: str
    header: list[str]
    """Lines 1..len(header) of the test class: imports, class opening, prelude members."""
    methods: list[tuple[int, list[str]]]
    """Per test: (file line of the method's first line, the method's lines)."""


def build_test_class(
    class_name: str, tests: list[TestSpec], prelude: str | None
) -> TestClassLayout:
    """``import java.util.*;``, the prelude's imports, then ``public class <class_name>`` with
    the prelude's other lines, one ``static void test_<i>_<name>() throws Throwable`` per test
    (its statements verbatim, indented) and ``__bwRun``."""
    imports, members = split_prelude(prelude)
    header = ["import java.util.*;", *[i for i in imports if i != "import java.util.*;"], ""]
    header.append(f"public class {class_name} {{")
    if members:
        header.extend(_indent(members, "    "))
    header.append("")
    lines = list(header)
    methods: list[tuple[int, list[str]]] = []
    dispatch: list[str] = []
    for index, test in enumerate(tests):
        method = _method_name(index, test.name)
        body = test.code.strip("\n").splitlines() or [""]
        method_lines = [
            f"    static void {method}() throws Throwable {{",
            *_indent(body, "        "),
            "    }",
        ]
        methods.append((len(lines) + 1, method_lines))
        lines.extend(method_lines)
        lines.append("")
        dispatch.append(f"            case {index}: {method}(); break;")
    end = TEST_CLASS_END.replace("__DISPATCH__", "\n".join(dispatch))
    source = "\n".join(lines) + "\n" + end
    return TestClassLayout(class_name, source, header, methods)
