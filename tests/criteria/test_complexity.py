"""``complexity`` (lizard): a convoluted solution has a higher cyclomatic complexity than a
simple one, in Python, Java and C; the record names every function with its line, gives the
totals and finds duplicated code; a solution without a function is ``n/a``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from benchwright.config.model import Limits
from benchwright.criteria.base import Measurement, SampleContext
from benchwright.criteria.complexity import Complexity, analyse
from benchwright.registry import registry
from benchwright.results.record import Generation
from benchwright.sandbox.rlimit import RlimitSandbox
from benchwright.task.model import Task
from benchwright.task.render import render_task

SIMPLE = {
    "python": "def clamp(x, low, high):\n    return max(low, min(x, high))\n",
    "java": "public class Solution {\n    public static int clamp(int x, int low, int high) {\n"
            "        return Math.max(low, Math.min(x, high));\n    }\n}\n",
    "c": "int clamp(int x, int low, int high) {\n    return x < low ? low : (x > high ? high : x);\n}\n",
}

# the same job with nested ifs and loops; `clamp` sits below a helper, so lines differ
CONVOLUTED = {
    "python": (
        "def helper(v):\n"
        "    return v\n"
        "\n"
        "def clamp(x, low, high):\n"
        "    result = x\n"
        "    for _ in range(1):\n"
        "        if x < low:\n"
        "            if low <= high:\n"
        "                result = low\n"
        "            else:\n"
        "                while result > high:\n"
        "                    result -= 1\n"
        "        elif x > high and high >= low:\n"
        "            result = high\n"
        "    return helper(result)\n"),
    "java": (
        "public class Solution {\n"
        "    static int helper(int v) { return v; }\n"
        "\n"
        "    public static int clamp(int x, int low, int high) {\n"
        "        int result = x;\n"
        "        for (int i = 0; i < 1; i++) {\n"
        "            if (x < low) {\n"
        "                if (low <= high) {\n"
        "                    result = low;\n"
        "                } else {\n"
        "                    while (result > high) { result--; }\n"
        "                }\n"
        "            } else if (x > high && high >= low) {\n"
        "                result = high;\n"
        "            }\n"
        "        }\n"
        "        return helper(result);\n"
        "    }\n"
        "}\n"),
    "c": (
        "static int helper(int v) { return v; }\n"
        "\n"
        "\n"
        "int clamp(int x, int low, int high) {\n"
        "    int result = x;\n"
        "    for (int i = 0; i < 1; i++) {\n"
        "        if (x < low) {\n"
        "            if (low <= high) {\n"
        "                result = low;\n"
        "            } else {\n"
        "                while (result > high) { result--; }\n"
        "            }\n"
        "        } else if (x > high && high >= low) {\n"
        "            result = high;\n"
        "        }\n"
        "    }\n"
        "    return helper(result);\n"
        "}\n"),
}


def _context(language: str, code: str) -> SampleContext:
    task = Task(name="clamp", languages=[language], golden_solution={language: SIMPLE[language]})
    gen = Generation(run_id="r", execution_id="e", task_source="s", task=task.name,
                     language=language, model="m", provider="p", sample=0, code=code)
    return SampleContext(task=task, language=language, rendered=render_task(task, language, {}),
                         generation=gen, code=code, lang=None, sandbox=RlimitSandbox(),
                         limits=Limits())


def _measure(language: str, code: str) -> Measurement:
    [m] = Complexity().evaluate(_context(language, code))
    return m


def test_the_criterion_is_registered_with_its_unit_direction_and_tool() -> None:
    criterion = registry.create("criterion", "complexity")
    assert isinstance(criterion, Complexity)
    assert (criterion.unit, criterion.higher_is_better) == ("count", False)
    assert criterion.missing() is None
    assert criterion.tool.startswith("lizard 1.")
    assert {"python", "java", "c", "cpp", "javascript", "typescript", "go", "rust"} <= \
        set(criterion.languages)
    assert "bash" not in criterion.languages  # lizard has no reader for shell scripts


@pytest.mark.parametrize("language", sorted(CONVOLUTED))
def test_a_convoluted_solution_is_more_complex_and_named_with_its_line(language: str) -> None:
    simple = _measure(language, SIMPLE[language])
    convoluted = _measure(language, CONVOLUTED[language])
    assert simple.score is not None and convoluted.score is not None
    assert simple.score <= 3  # no decision (Python, Java); two ternaries in C
    # for, if, if, while, elif, and: six decisions on top of 1
    assert convoluted.score == 7 > simple.score
    assert convoluted.line == 4  # the most complex function: clamp, on line 4
    assert convoluted.output is not None
    out = convoluted.output.splitlines()
    assert any(line.startswith("line 4: ") and "clamp" in line and "CCN 7" in line for line in out), out
    assert any(line.startswith(("line 1: ", "line 2: ")) and "helper" in line and "CCN 1" in line
               for line in out), out

    details = convoluted.details
    assert details is not None
    functions = {f["name"].split("::")[-1]: f for f in details["functions"]}
    assert set(functions) == {"helper", "clamp"}
    clamp = functions["clamp"]
    assert (clamp["line"], clamp["ccn"]) == (4, 7)
    assert clamp["end_line"] > clamp["line"] and clamp["nloc"] >= 10 and clamp["tokens"] > 40
    assert clamp["parameters"] == ["x", "low", "high"]
    assert details["function_count"] == 2 and details["max_ccn"] == 7 and details["total_ccn"] == 8
    assert details["average_ccn"] == pytest.approx(4.0)
    assert details["nloc"] >= clamp["nloc"] and details["tokens"] > clamp["tokens"]
    assert details["duplication"]["blocks"] == [] and details["duplication"]["rate"] == 0.0


def test_duplicated_code_is_found_with_the_lines_of_each_copy() -> None:
    block = ("def scale_{n}(values, limit):\n"
             "    result = []\n"
             "    for value in values:\n"
             "        if value > limit:\n"
             "            result.append(value * 2)\n"
             "        else:\n"
             "            result.append(value - 1)\n"
             "    total = sum(result)\n"
             "    if total > 100:\n"
             "        return total // 2\n"
             "    return total\n\n")
    code = "".join(block.format(n=n) for n in range(3))
    report = analyse(code, "python")
    assert [f.line for f in report.functions] == [1, 13, 25]
    assert len(report.duplicates) == 1
    assert [start for start, _end in report.duplicates[0]] == [1, 13, 25]
    assert report.duplicate_rate > 0.8
    m = _measure("python", code)
    assert m.details is not None and m.details["duplication"]["rate"] == report.duplicate_rate
    assert m.output is not None and "duplicated code: lines 1-" in m.output


def test_a_solution_without_a_function_is_not_applicable() -> None:
    m = _measure("python", "print('hello')\n")
    assert m.score is None and m.verdict == "n/a"
    assert m.output is not None and "no function" in m.output
    prose = _measure("java", "I am sorry, I cannot write that.")
    assert prose.verdict == "n/a"


def test_importing_lizard_leaves_the_import_path_alone() -> None:
    # lizard puts its folder and the program's in front of sys.path when imported (in a new
    # process, where it is not imported yet)
    check = ("import sys; before = list(sys.path); "
             "from benchwright.criteria.complexity import analyse; "
             "assert analyse('def f():\\n    return 1\\n', 'python').functions; "
             "assert 'lizard' in sys.modules and sys.path == before, sys.path[:3]")
    proc = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
