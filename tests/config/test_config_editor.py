"""The edits the web UI's forms make to an execution config and a scenario: on the YAML text
itself, so every comment, the key order and each list's style survive, and the result validates
as a hand-written file does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from benchwright.config import editor
from benchwright.server.service import Service
from benchwright.workspace import Workspace


@pytest.fixture(scope="module")
def kinds() -> editor.ScorerTypes:
    """The installed scorer types, as the service gives them to the scenario form."""
    from benchwright.agents.scenario import installed_scorer_models

    return editor.ScorerTypes(installed_scorer_models())


def comments(text: str) -> list[str]:
    """Every comment of a YAML text (these files have no '#' inside strings)."""
    return [m.group(1).strip() for line in text.splitlines() if (m := re.search(r"(?:^|\s)(#.*)$", line))]


def test_toggling_a_criterion_and_adding_a_model_keep_every_comment(workspace: Path) -> None:
    text = (workspace / "configs" / "python-only.yaml").read_text()
    doc = editor.load_rt(text)
    assert editor.toggles(doc, "criteria") == {"unit-test": True, "cpu-usage": True, "ram-usage": True,
                                              "token-count": True}
    assert editor.model_ids(doc) == ["reference"]

    def change(d: object) -> None:
        editor.set_toggle(d, "criteria", "cpu-usage", False)
        editor.set_toggle(d, "criteria", "latency", True)
        editor.set_toggle(d, "parameters", "should-write-comments", True)
        editor.add_model(d, "openrouter/qwen/qwen-2.5-coder-32b-instruct")
        editor.set_list(d, "difficulties", ["easy", "medium"])
        editor.set_scalar(d, "samples", 2)

    edited = editor.edit_text(text, change)
    assert comments(edited) == comments(text) and len(comments(text)) > 20
    assert "  - name: cpu-usage               # CPU time of the test execution (ms)\n    enabled: false" in edited
    assert "difficulties: [easy, medium]\n" in edited
    assert "llms: [reference, openrouter/qwen/qwen-2.5-coder-32b-instruct]\n" in edited
    # the new criterion is in the list, and the comment of the next key stays with that key
    assert "    enabled: true\n  - name: latency\n    enabled: true\n\n# The judge model" in edited
    doc = editor.load_rt(edited)
    assert editor.toggles(doc, "criteria")["latency"] is True
    assert editor.toggles(doc, "parameters")["should-write-comments"] is True
    assert doc["samples"] == 2
    # and it still validates
    assert not [p for p in Service(Workspace.open(workspace)).check_text(
        "configs/python-only.yaml", edited, "config") if p.severity == "error"]
    # removing the model and switching the criterion off again restores the list
    back = editor.edit_text(edited, lambda d: (editor.remove_model(d, "openrouter/qwen/qwen-2.5-coder-32b-instruct"),
                                              editor.set_toggle(d, "criteria", "latency", False)))
    assert "llms: [reference]\n" in back and "  - name: latency\n    enabled: false\n" in back


def test_toggles_in_every_accepted_form() -> None:
    short = editor.edit_text("criteria: [unit-test]  # short form\nllms: [reference]\n",
                            lambda d: (editor.set_toggle(d, "criteria", "latency", True),
                                       editor.set_toggle(d, "criteria", "unit-test", False)))
    assert short.startswith("criteria: [latency]  ") and short.endswith("# short form\nllms: [reference]\n")
    mapping = editor.edit_text("criteria: {unit-test: true}\n",
                              lambda d: editor.set_toggle(d, "criteria", "unit-test", False))
    assert editor.toggles(editor.load_rt(mapping), "criteria") == {"unit-test": False}


def test_scorer_types_and_fields_come_from_the_scenario_models(kinds: editor.ScorerTypes) -> None:
    from benchwright.registry import registry

    assert kinds.names() == registry.names("scorer")
    assert kinds.fields("command") == ["command", "timeout_s"]
    assert kinds.field_kind("command", "timeout_s") == "int"
    assert kinds.fields("allowed_paths") == ["patterns"]
    assert kinds.field_kind("tests_unmodified", "paths") == "list"
    assert kinds.fields("llm_judge") == ["rubric"]
    assert kinds.default_required("command") and not kinds.default_required("no_new_skips")
    assert not kinds.default_required("llm_judge")
    assert kinds.fields("not-installed") == [] and kinds.default_required("not-installed")


def test_a_scorer_row_added_and_removed_round_trips(workspace: Path, kinds: editor.ScorerTypes) -> None:
    text = (workspace / "scenarios" / "parser-fixes.yaml").read_text()
    doc = editor.load_rt(text)
    assert len(editor.scorers(doc)) == 10
    assert [kinds.is_required(s) for s in editor.scorers(doc)][-3:] == [False, False, False]

    def add(d: object) -> None:
        editor.add_scorer(d, "command")
        kinds.set_field(d, 10, "command", "python3 -m unittest -q")
        kinds.set_field(d, 10, "timeout_s", 60)
        kinds.set_field(d, 10, "name", "smoke")
        kinds.set_field(d, 7, "required", True)  # no_new_skips made a gate

    added = editor.edit_text(text, add)
    assert comments(added) == comments(text)
    assert "  - {type: command, command: python3 -m unittest -q, timeout_s: 60, name: smoke}\ntasks:" in added
    assert "{type: no_new_skips, required: true}" in added
    service = Service(Workspace.open(workspace))
    assert not [p for p in service.check_text("scenarios/parser-fixes.yaml", added, "scenario")
                if p.severity == "error"]
    # the type changes: fields the new type lacks go
    retyped = editor.edit_text(added, lambda d: kinds.set_type(d, 10, "max_files_changed"))
    assert "  - {type: max_files_changed, name: smoke}\n" in retyped
    # removing the row gives the file back as it was
    assert editor.edit_text(editor.edit_text(text, lambda d: editor.add_scorer(d, "forbid_secrets")),
                           lambda d: editor.remove_scorer(d, 10)) == text
    back = editor.edit_text(added, lambda d: (editor.remove_scorer(d, 10),
                                             kinds.set_field(d, 7, "required", False)))
    assert editor.load_rt(back) == editor.load_rt(text) and comments(back) == comments(text)


def test_a_bad_timeout_is_reported_with_its_line(workspace: Path, kinds: editor.ScorerTypes) -> None:
    text = (workspace / "scenarios" / "parser-fixes.yaml").read_text()
    bad = editor.edit_text(text, lambda d: kinds.set_field(d, 0, "timeout_s", 0))
    problems = Service(Workspace.open(workspace)).check_text("scenarios/parser-fixes.yaml", bad, "scenario")
    assert [(p.path, p.line) for p in problems] == [("scorers[0].command.timeout_s", 10)]
    assert "greater than or equal to 1" in problems[0].message


def test_text_that_is_not_a_mapping_is_refused() -> None:
    with pytest.raises(ValueError, match="mapping"):
        editor.load_rt("- a\n- b\n")
    with pytest.raises(ValueError, match="invalid YAML"):
        editor.load_rt("a: [\n")
