"""The thesis's appendix C files load as they are."""

from __future__ import annotations

from tests.conftest import FIXTURES, Runner


def test_thesis_exec_config_and_task_source_validate(bw: Runner, tmp_path) -> None:  # type: ignore[no-untyped-def]
    files = sorted((FIXTURES / "thesis").glob("*.yaml"))
    assert len(files) == 2
    # its models are OpenRouter ids written without the provider: the workspace names the default
    (tmp_path / "benchwright.yaml").write_text("version: 1\ndefault_provider: openrouter\n")
    proc = bw("validate", *files, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the thesis's own forms are accepted, the missing pieces only warned about
    assert "python-pmd" in proc.stdout
    assert "sonarqube" in proc.stdout


def test_thesis_golden_solution_passes(bw: Runner, tmp_path) -> None:  # type: ignore[no-untyped-def]
    proc = bw("validate", "--golden", FIXTURES / "thesis" / "mbbp-sanitized-sample-1.yaml", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "1/1 pass" in proc.stdout
