"""``benchwright list languages``: every language, its code fences and whether this machine has
its toolchain (README set-up installs them all)."""

from __future__ import annotations

import shutil

import pytest

from benchwright.lang.base import Language
from benchwright.registry import registry
from tests.conftest import Runner

LANGUAGES = {"python", "java", "javascript", "typescript", "c", "cpp", "rust", "go", "bash"}


def test_every_language_is_listed_and_ready(bw: Runner) -> None:
    proc = bw("list", "languages")
    assert proc.returncode == 0, proc.stderr
    rows = [line for line in proc.stdout.splitlines() if line.startswith("│ ") and "│" in line[2:]]
    named = {row.split("│")[1].strip() for row in rows} - {""}
    assert named == LANGUAGES
    assert "missing" not in proc.stdout
    assert proc.stdout.count("ready") == len(LANGUAGES)


@pytest.mark.parametrize("name", sorted(LANGUAGES))
def test_a_missing_toolchain_names_its_install_command(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    lang: Language = registry.create("language", name)
    assert lang.missing() is None
    assert lang.install_hint.startswith("apt-get install ")
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr(shutil, "which", lambda *a, **k: None)
    real_access = __import__("os").access
    monkeypatch.setattr("os.access", lambda path, mode: False if str(path).startswith("/usr") else real_access(path, mode))
    monkeypatch.setattr("os.path.exists", lambda path: False)
    monkeypatch.setattr("os.path.isfile", lambda path: False)
    why = lang.missing()
    assert why is not None, name
    assert lang.install_hint.split("install ", 1)[1].split()[0] in why or "apt-get" in why, why
