"""The form editors of the web UI in Chromium: the config form and the scenario's scorer rows
against a real server (the edits they make are tested in ``tests.config.test_config_editor.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser

from tests.config.test_config_editor import comments
from tests.server.conftest import shot

# -- in the browser --------------------------------------------------------------------------


@pytest.mark.slow
def test_the_config_form_and_the_scorer_rows_in_a_browser(server: str, browser: Browser, workspace: Path) -> None:
    config = workspace / "configs" / "python-only.yaml"
    before = config.read_text()
    page = browser.new_page(viewport={"width": 1500, "height": 1000})
    page.goto(f"{server}/ui/config?path=configs/python-only.yaml")
    page.wait_for_selector("[data-testid=criterion-latency]")
    assert page.is_checked("[data-testid=criterion-unit-test]")
    assert not page.is_checked("[data-testid=criterion-latency]")
    shot(page, "20-config-form")
    page.click("[data-testid=criterion-latency]")
    page.wait_for_selector("[data-testid=checked]")
    page.click("[data-testid=save]")
    page.wait_for_selector("[data-testid=saved]")
    shot(page, "21-config-saved")
    after = config.read_text()
    assert after != before and "  - name: latency\n    enabled: true\n" in after
    assert comments(after) == comments(before)
    assert "# CI gate: `benchwright run` exits with 1 when a model scores below these." in after

    scenario = workspace / "scenarios" / "parser-fixes.yaml"
    original = scenario.read_text()
    page.goto(f"{server}/ui/scenario?path=scenarios/parser-fixes.yaml")
    page.wait_for_selector("[data-testid=scorer-0-timeout_s]")
    assert page.input_value("[data-testid=scorer-0-timeout_s]") == "120"
    assert not page.is_checked("[data-testid=scorer-7-required]")  # no_new_skips: advisory
    page.fill("[data-testid=scorer-0-timeout_s]", "0")
    page.wait_for_selector("[data-testid=problem]")
    page.click("[data-testid=save]")
    page.wait_for_selector("[data-testid=problem]")
    problem = page.inner_text("[data-testid=problem]")
    assert "scorers[0].command.timeout_s" in problem and "parser-fixes.yaml:10" in problem
    shot(page, "22-scenario-bad-timeout")
    assert scenario.read_text() == original  # nothing written
