"""The form editors of the web UI: the YAML-editing helpers (comments survive a form edit) and,
in Chromium, the config form and the scenario's scorer rows against a real server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from benchwright.server.service import Service
from benchwright.server.ui import forms
from benchwright.workspace import Workspace
from tests.server.conftest import shot


def comments(text: str) -> list[str]:
    """Every comment of a YAML text (these files have no '#' inside strings)."""
    return [m.group(1).strip() for line in text.splitlines() if (m := re.search(r"(?:^|\s)(#.*)$", line))]


# -- the helpers -----------------------------------------------------------------------------


def test_toggling_a_criterion_and_adding_a_model_keep_every_comment(workspace: Path) -> None:
    text = (workspace / "configs" / "python-only.yaml").read_text()
    doc = forms.load_rt(text)
    assert forms.toggles(doc, "criteria") == {"unit-test": True, "cpu-usage": True, "ram-usage": True,
                                              "token-count": True}
    assert forms.model_ids(doc) == ["reference"]

    def change(d: object) -> None:
        forms.set_toggle(d, "criteria", "cpu-usage", False)
        forms.set_toggle(d, "criteria", "latency", True)
        forms.set_toggle(d, "parameters", "should-write-comments", True)
        forms.add_model(d, "openrouter/qwen/qwen-2.5-coder-32b-instruct")
        forms.set_list(d, "difficulties", ["easy", "medium"])
        forms.set_scalar(d, "samples", 2)

    edited = forms.edit_text(text, change)
    assert comments(edited) == comments(text) and len(comments(text)) > 20
    assert "  - name: cpu-usage               # CPU time of the test execution (ms)\n    enabled: false" in edited
    assert "difficulties: [easy, medium]\n" in edited
    assert "llms: [reference, openrouter/qwen/qwen-2.5-coder-32b-instruct]\n" in edited
    # the new criterion is in the list, and the comment of the next key stays with that key
    assert "    enabled: true\n  - name: latency\n    enabled: true\n\n# The judge model" in edited
    doc = forms.load_rt(edited)
    assert forms.toggles(doc, "criteria")["latency"] is True
    assert forms.toggles(doc, "parameters")["should-write-comments"] is True
    assert doc["samples"] == 2
    # and it still validates
    assert not [p for p in Service(Workspace.open(workspace)).check_text(
        "configs/python-only.yaml", edited, "config") if p.severity == "error"]
    # removing the model and switching the criterion off again restores the list
    back = forms.edit_text(edited, lambda d: (forms.remove_model(d, "openrouter/qwen/qwen-2.5-coder-32b-instruct"),
                                              forms.set_toggle(d, "criteria", "latency", False)))
    assert "llms: [reference]\n" in back and "  - name: latency\n    enabled: false\n" in back


def test_toggles_in_every_accepted_form() -> None:
    short = forms.edit_text("criteria: [unit-test]  # short form\nllms: [reference]\n",
                            lambda d: (forms.set_toggle(d, "criteria", "latency", True),
                                       forms.set_toggle(d, "criteria", "unit-test", False)))
    assert short.startswith("criteria: [latency]  ") and short.endswith("# short form\nllms: [reference]\n")
    mapping = forms.edit_text("criteria: {unit-test: true}\n",
                              lambda d: forms.set_toggle(d, "criteria", "unit-test", False))
    assert forms.toggles(forms.load_rt(mapping), "criteria") == {"unit-test": False}


def test_scorer_types_and_fields_come_from_the_scenario_models() -> None:
    from benchwright.registry import registry

    assert sorted(forms.scorer_models()) == registry.names("scorer")
    assert forms.scorer_fields("command") == ["command", "timeout_s"]
    assert forms.field_kind("command", "timeout_s") == "int"
    assert forms.scorer_fields("allowed_paths") == ["patterns"]
    assert forms.field_kind("tests_unmodified", "paths") == "list"
    assert forms.scorer_fields("llm_judge") == ["rubric"]
    assert forms.default_required("command") and not forms.default_required("no_new_skips")
    assert not forms.default_required("llm_judge")


def test_a_scorer_row_added_and_removed_round_trips(workspace: Path) -> None:
    text = (workspace / "scenarios" / "parser-fixes.yaml").read_text()
    doc = forms.load_rt(text)
    assert len(forms.scorers(doc)) == 10
    assert [forms.is_required(s) for s in forms.scorers(doc)][-3:] == [False, False, False]

    def add(d: object) -> None:
        forms.add_scorer(d, "command")
        forms.set_scorer_field(d, 10, "command", "python3 -m unittest -q")
        forms.set_scorer_field(d, 10, "timeout_s", 60)
        forms.set_scorer_field(d, 10, "name", "smoke")
        forms.set_scorer_field(d, 7, "required", True)  # no_new_skips made a gate

    added = forms.edit_text(text, add)
    assert comments(added) == comments(text)
    assert "  - {type: command, command: python3 -m unittest -q, timeout_s: 60, name: smoke}\ntasks:" in added
    assert "{type: no_new_skips, required: true}" in added
    service = Service(Workspace.open(workspace))
    assert not [p for p in service.check_text("scenarios/parser-fixes.yaml", added, "scenario")
                if p.severity == "error"]
    # the type changes: fields the new type lacks go
    retyped = forms.edit_text(added, lambda d: forms.set_scorer_type(d, 10, "max_files_changed"))
    assert "  - {type: max_files_changed, name: smoke}\n" in retyped
    # removing the row gives the file back as it was
    assert forms.edit_text(forms.edit_text(text, lambda d: forms.add_scorer(d, "forbid_secrets")),
                           lambda d: forms.remove_scorer(d, 10)) == text
    back = forms.edit_text(added, lambda d: (forms.remove_scorer(d, 10),
                                             forms.set_scorer_field(d, 7, "required", False)))
    assert forms.load_rt(back) == forms.load_rt(text) and comments(back) == comments(text)


def test_a_bad_timeout_is_reported_with_its_line(workspace: Path) -> None:
    text = (workspace / "scenarios" / "parser-fixes.yaml").read_text()
    bad = forms.edit_text(text, lambda d: forms.set_scorer_field(d, 0, "timeout_s", 0))
    problems = Service(Workspace.open(workspace)).check_text("scenarios/parser-fixes.yaml", bad, "scenario")
    assert [(p.path, p.line) for p in problems] == [("scorers[0].command.timeout_s", 10)]
    assert "greater than or equal to 1" in problems[0].message


def test_text_that_is_not_a_mapping_is_refused() -> None:
    with pytest.raises(ValueError, match="mapping"):
        forms.load_rt("- a\n- b\n")
    with pytest.raises(ValueError, match="invalid YAML"):
        forms.load_rt("a: [\n")


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
