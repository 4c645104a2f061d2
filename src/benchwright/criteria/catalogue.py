"""Criteria named by the specification that this version does not ship yet.

A config that enables one of these validates (with a warning) and runs without it, so the
thesis's own files work as they are; a name in neither the registry nor this list is an error.
"""

from __future__ import annotations

PLANNED: dict[str, str] = {
    "energy": "energy and CO2 of the run",
    "python-ruff": "ruff findings",
    "python-pyright": "pyright findings",
    "python-bandit": "bandit security findings",
    "java-checkstyle": "Checkstyle findings",
    "java-pmd": "PMD findings",
    "java-jacoco": "JaCoCo coverage",
    "python-coverage": "coverage.py coverage",
    "complexity": "cyclomatic complexity and size",
    "similarity-chrf": "chrF similarity to the golden solution",
    "codebleu": "CodeBLEU similarity to the golden solution",
    "llm-judge-code-quality": "LLM judge: code quality",
    "llm-judge-comment-quality": "LLM judge: comment quality",
    "llm-judge-solution-correctness": "LLM judge: solution correctness",
    "sonarqube": "SonarQube findings",
}
