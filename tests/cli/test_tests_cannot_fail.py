"""``validate --golden`` runs mutants of each golden solution (the entry point returns a zero
value, or fails at once) and lists the tasks whose tests still pass one: tests that cannot fail.
Plain ``validate`` warns about test cases that never call the entry point and about test-harness
scaffolding the runner never executes. Through the real CLI and compilers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from tests.conftest import FIXTURES, Runner

DATASETS = FIXTURES / "humaneval-x"  # the first five tasks of two HumanEval-X files, unchanged

GOLDEN = {
    "python": "def f(x):\n    return x + 1\n",
    "rust": "fn f(x: i32) -> i32 {\n    x + 1\n}\n",
    "c": "int f(int x) {\n    return x + 1;\n}\n",
    "go": "package main\n\nfunc F(x int) int {\n    return x + 1\n}\n",
    "cpp": "#include <string>\nstd::string f(int x) {\n    return std::to_string(x + 1);\n}\n",
    "java": "public class Solution {\n    public static int f(int x) {\n        return x + 1;\n    }\n}\n",
    "typescript": "function f(x: number): number {\n  return x + 1;\n}\n",
    "bash": "f() {\n  echo $(( $1 + 1 ))\n}\n",
}
RUST_SCAFFOLD = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { assert_eq!(f(1), 2); }\n}\n"


def _source(ws: Path, lang: str, tests: list[str], name: str = "bare") -> Path:
    doc: dict[str, Any] = {"version": 1, "name": name, "tasks": [{
        "name": "f", "difficulty": "easy", "languages": [lang],
        "task": {"common_prompt": "Write f(x): x + 1.",
                 "languages_specific": {lang: {"public_tests": [{"code": t} for t in tests]}}},
        "golden_solution": {lang: GOLDEN[lang]},
    }]}
    path = ws / "tasks" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        YAML().dump(doc, f)
    return path


def _cannot_fail(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("tests cannot fail:")]


def test_python_test_that_calls_nothing_cannot_fail(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    source = _source(ws, "python", ["assert True"])
    plain = bw("validate", source, cwd=ws)
    assert plain.returncode == 0, plain.stderr
    out = " ".join(plain.stdout.split())
    assert "never calls the entry point 'f'" in out and "bare.yaml:" in out, plain.stdout
    proc = bw("validate", "--golden", source, cwd=ws)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    listed = _cannot_fail(proc.stderr)
    assert len(listed) == 1 and "bare / f [python]" in listed[0], proc.stderr
    assert "returns None" in listed[0] and "raises" in listed[0], proc.stderr
    assert "broken:" not in proc.stderr


def test_python_test_that_ignores_the_result_cannot_fail(tmp_path: Path, bw: Runner) -> None:
    """It calls f, so no static warning; the mutant returning None still passes it."""
    ws = tmp_path / "ws"
    source = _source(ws, "python", ["f(1)"])
    proc = bw("validate", "--golden", source, cwd=ws)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    listed = _cannot_fail(proc.stderr)
    assert len(listed) == 1 and "returns None" in listed[0] and "raises" not in listed[0], proc.stderr
    assert "never calls" not in proc.stdout


def test_python_good_tests_are_not_listed(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    proc = bw("validate", "--golden", _source(ws, "python", ["assert f(1) == 2", "assert f(-1) == 0"]), cwd=ws)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not _cannot_fail(proc.stderr) and "0 warning(s)" in proc.stdout, proc.stdout
    assert re.search(r"golden solutions: 1/1 pass; 2 mutants", proc.stdout), proc.stdout


def test_python_scaffolding_is_warned(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    source = _source(ws, "python", ['def test_f():\n    assert f(1) == 2\n',
                                    'if __name__ == "__main__":\n    assert f(1) == 2\n'])
    proc = bw("validate", source, cwd=ws)
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert "test_f() is defined and never called" in out, proc.stdout
    assert '`if __name__ == "__main__":`' in out, proc.stdout


def test_rust_cfg_test_module_is_warned_and_cannot_fail(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    source = _source(ws, "rust", [RUST_SCAFFOLD])
    plain = bw("validate", source, cwd=ws)
    assert plain.returncode == 0, plain.stderr
    out = " ".join(plain.stdout.split())
    assert "#[cfg(test)]" in out and "never executed" in out, plain.stdout
    # the warning is on the test's first line in the file
    text = source.read_text().splitlines()
    line = next(i for i, t in enumerate(text, 1) if "#[cfg(test)]" in t)
    assert f"bare.yaml:{line}" in plain.stdout, (line, plain.stdout)
    proc = bw("validate", "--golden", source, cwd=ws)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    listed = _cannot_fail(proc.stderr)
    assert len(listed) == 1 and "bare / f [rust]" in listed[0], proc.stderr
    assert "panics" in listed[0] and "Default::default()" in listed[0], proc.stderr


def test_rust_proper_tests_are_not_listed(tmp_path: Path, bw: Runner) -> None:
    ws = tmp_path / "ws"
    proc = bw("validate", "--golden", _source(ws, "rust", ["assert_eq!(f(1), 2);"]), cwd=ws)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not _cannot_fail(proc.stderr) and "golden solutions: 1/1 pass; 2 mutants" in proc.stdout


@pytest.mark.parametrize(("lang", "weak", "good"), [
    ("c", "int y = f(1); (void)y;", "assert(f(1) == 2);"),
    ("go", "_ = F(1)", "t.Equal(F(1), 2)"),
    ("cpp", "try { f(1); } catch (...) {}", 'assert(f(1) == "2");'),
    ("java", "try { Solution.f(1); } catch (RuntimeException e) {}", "assert Solution.f(1) == 2;"),
    ("typescript", "try { f(1); } catch (e) {}", "assert.strictEqual(f(1), 2);"),
    ("bash", "f 1 || true", 'assert_eq "$(f 1)" 2'),
])
def test_other_languages(tmp_path: Path, bw: Runner, lang: str, weak: str, good: str) -> None:
    ws = tmp_path / "ws"
    bad = bw("validate", "--golden", _source(ws, lang, [weak], name="weak"), cwd=ws)
    assert bad.returncode == 2, bad.stdout + bad.stderr
    listed = _cannot_fail(bad.stderr)
    assert len(listed) == 1 and f"weak / f [{lang}]" in listed[0], bad.stderr
    fine = bw("validate", "--golden", _source(ws, lang, [good], name="good"), cwd=ws)
    assert fine.returncode == 0, fine.stdout + fine.stderr
    assert not _cannot_fail(fine.stderr) and "golden solutions: 1/1 pass; 2 mutants" in fine.stdout, fine.stdout


@pytest.mark.parametrize(("lang", "test"), [
    ("go", "func TestF(t *testing.T) {\n}\n_ = F"),
    ("java", "@Test\nint y = Solution.f(1);"),
    ("typescript", "describe('f', () => { it('adds', () => { f(1); }); });"),
])
def test_scaffolding_is_warned(tmp_path: Path, bw: Runner, lang: str, test: str) -> None:
    ws = tmp_path / "ws"
    proc = bw("validate", _source(ws, lang, [test]), cwd=ws)
    assert proc.returncode == 0, proc.stderr
    assert "holds test-harness code that is never executed" in " ".join(proc.stdout.split()), proc.stdout


def test_humaneval_x_rust_tests_imported_as_they_are_are_warned(tmp_path: Path, bw: Runner) -> None:
    """HumanEval-X's Rust ``test`` is a ``#[cfg(test)] mod tests``: imported as a test case, it
    lands in a function body and compiles to nothing. validate says so, task by task."""
    ws = tmp_path / "ws"
    (ws / "tasks").mkdir(parents=True)
    out = ws / "tasks" / "rust.yaml"
    proc = bw("import", "jsonl", DATASETS / "humaneval_rust_first5.jsonl", "--out", out,
              "-m", "name=task_id", "-m", "prompt=prompt", "-m", "golden=canonical_solution",
              "-m", "tests=test", "-m", "golden_is_continuation=true", "-m", "language_value=rust",
              "-m", "mode=complete", "-m", "source_name=hx-rust", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    plain = bw("validate", out, cwd=ws)
    text = " ".join(plain.stdout.split())
    assert text.count("`#[cfg(test)]`") == 5, plain.stdout
