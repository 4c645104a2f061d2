"""YAML documents: lines of nested paths, round-trip edits, and bad files as located problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright import yamldoc
from benchwright.errors import InputError

NESTED = """\
# a task source
version: 1
name: demo
tasks:
  - name: first   # the first task
    difficulty: easy
    task:
      common_prompt: hello
      languages_specific:
        python:
          hidden_tests:
            - code: assert f() == 1
            - name: second
              code: |
                x = 1
                assert f() == x
  - name: other
    languages: [python, java]
"""


def test_data_is_plain_python():
    doc = yamldoc.parse_text(NESTED, "nested.yaml")
    assert doc.file == "nested.yaml"
    assert type(doc.data) is dict
    assert type(doc.data["tasks"]) is list
    assert doc.data["version"] == 1 and type(doc.data["version"]) is int
    assert doc.data["tasks"][1]["languages"] == ["python", "java"]
    hidden = doc.data["tasks"][0]["task"]["languages_specific"]["python"]["hidden_tests"]
    assert hidden[1]["code"] == "x = 1\nassert f() == x\n"


def test_line_numbers_of_nested_paths():
    doc = yamldoc.parse_text(NESTED, "nested.yaml")
    hidden = ("tasks", 0, "task", "languages_specific", "python", "hidden_tests")
    assert doc.line_of(()) == 1
    assert doc.line_of(("version",)) == 2
    assert doc.line_of(("name",)) == 3
    assert doc.line_of(("tasks",)) == 4
    assert doc.line_of(("tasks", 0)) == 5
    assert doc.line_of(("tasks", 0, "name")) == 5
    assert doc.line_of(("tasks", 0, "difficulty")) == 6
    assert doc.line_of(("tasks", 0, "task", "common_prompt")) == 8
    assert doc.line_of(hidden) == 11
    assert doc.line_of((*hidden, 0)) == 12
    assert doc.line_of((*hidden, 0, "code")) == 12
    assert doc.line_of((*hidden, 1)) == 13
    assert doc.line_of((*hidden, 1, "name")) == 13
    assert doc.line_of((*hidden, 1, "code")) == 14
    assert doc.line_of(("tasks", 1)) == 17
    assert doc.line_of(("tasks", 1, "languages")) == 18
    assert doc.line_of(("tasks", 1, "languages", 1)) == 18


def test_line_of_missing_path_uses_nearest_ancestor():
    doc = yamldoc.parse_text(NESTED, "nested.yaml")
    assert doc.line_of(("tasks", 1, "no_such_key", 3)) == 17
    assert doc.line_of(("tasks", 0, "task", "languages_specific", "java")) == 9
    assert doc.line_of(("nothing",)) == 1


def test_problem_names_file_path_and_line():
    doc = yamldoc.parse_text(NESTED, "nested.yaml")
    path = ("tasks", 0, "task", "languages_specific", "python", "hidden_tests", 1, "code")
    p = doc.problem(path, "bad code", hint="fix it")
    assert p.file == "nested.yaml"
    assert p.line == 14
    assert p.path == "tasks[0].task.languages_specific.python.hidden_tests[1].code"
    assert p.render() == (
        "nested.yaml:14: error: tasks[0].task.languages_specific.python.hidden_tests[1].code: "
        "bad code (hint: fix it)"
    )


def test_format_path():
    assert yamldoc.format_path(()) == ""
    assert yamldoc.format_path(("tasks", 3, "languages_specific", "python")) == (
        "tasks[3].languages_specific.python"
    )
    assert yamldoc.format_path((0, "a")) == "[0].a"


def test_load_from_file(tmp_path):
    p = tmp_path / "t.yaml"
    p.write_text(NESTED, encoding="utf-8")
    doc = yamldoc.load(p)
    assert doc.file == str(p)
    assert doc.data["name"] == "demo"


def test_utf8_bom_and_unicode(tmp_path):
    p = tmp_path / "bom.yaml"
    p.write_bytes("\ufeffname: café ✓\n".encode())
    assert yamldoc.load(p).data == {"name": "café ✓"}


def test_edit_keeps_comments_and_key_order(tmp_path):
    p = tmp_path / "config.yaml"
    p.write_text(
        "# header comment\n"
        "version: 1\n"
        "zeta: last-alpha-but-first  # inline comment\n"
        "alpha: 'quoted'\n"
        "criteria:\n"
        "  # list comment\n"
        "  - name: unit-test\n"
        "    enabled: true\n"
        "samples: 1\n",
        encoding="utf-8",
    )

    def change(doc):
        doc["samples"] = 5
        doc["criteria"][0]["enabled"] = False
        doc["added"] = "new"

    yamldoc.edit(p, change)
    text = p.read_text(encoding="utf-8")
    assert "# header comment" in text
    assert "# inline comment" in text
    assert "# list comment" in text
    assert "'quoted'" in text
    keys = [line.split(":")[0] for line in text.splitlines() if line and line[0].isalpha()]
    assert keys == ["version", "zeta", "alpha", "criteria", "samples", "added"]
    data = yamldoc.load(p).data
    assert data["samples"] == 5
    assert data["criteria"] == [{"name": "unit-test", "enabled": False}]
    assert data["added"] == "new"
    assert not [f for f in tmp_path.iterdir() if f.name != "config.yaml"]  # no temp files left


def test_dump_and_atomic_write_roundtrip(tmp_path):
    p = tmp_path / "sub" / "out.yaml"
    yamldoc.dump({"b": [1, 2], "a": {"x": "y"}}, p)
    assert yamldoc.load(p).data == {"b": [1, 2], "a": {"x": "y"}}
    yamldoc.atomic_write(p, "c: 3\n")
    assert p.read_text() == "c: 3\n"


def _problem(info: pytest.ExceptionInfo[InputError]):
    (problem,) = info.value.problems
    return problem


def test_binary_file(tmp_path):
    p = tmp_path / "image.yaml"
    p.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(InputError) as info:
        yamldoc.load(p)
    prob = _problem(info)
    assert prob.file == str(p)
    assert "binary" in prob.message
    assert prob.hint
    assert str(p) in str(info.value)


@pytest.mark.parametrize("content", [b"", b"   \n\n", b"\n"])
def test_empty_file(tmp_path, content):
    p = tmp_path / "empty.yaml"
    p.write_bytes(content)
    with pytest.raises(InputError) as info:
        yamldoc.load(p)
    prob = _problem(info)
    assert prob.file == str(p)
    assert "empty" in prob.message
    assert prob.hint


def test_non_utf8_file(tmp_path):
    p = tmp_path / "latin1.yaml"
    p.write_bytes("name: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(InputError) as info:
        yamldoc.load(p)
    prob = _problem(info)
    assert prob.file == str(p)
    assert "UTF-8" in prob.message
    assert "UTF-8" in prob.hint


def test_folder(tmp_path):
    d = tmp_path / "tasks.yaml"
    d.mkdir()
    with pytest.raises(InputError) as info:
        yamldoc.load(d)
    prob = _problem(info)
    assert prob.file == str(d)
    assert "folder" in prob.message
    assert prob.hint


def test_missing_file(tmp_path):
    p = tmp_path / "nope.yaml"
    with pytest.raises(InputError) as info:
        yamldoc.load(p)
    prob = _problem(info)
    assert prob.file == str(p)
    assert "not found" in prob.message
    assert prob.hint
    assert "nope.yaml" in str(info.value)


def test_invalid_yaml_has_line(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text("version: 1\ntasks:\n  - name: a\n    languages: [python, java\n  - name: b\n")
    with pytest.raises(InputError) as info:
        yamldoc.load(p)
    prob = _problem(info)
    assert prob.file == str(p)
    assert prob.message.startswith("invalid YAML")
    assert prob.line is not None and 4 <= prob.line <= 5
    assert prob.hint


def test_bad_indentation_has_line():
    with pytest.raises(InputError) as info:
        yamldoc.parse_text("a: 1\nb:\n  c: 2\n d: 3\n", "indent.yaml")
    prob = _problem(info)
    assert prob.file == "indent.yaml"
    assert prob.line == 4


def test_tab_indentation_is_error():
    with pytest.raises(InputError) as info:
        yamldoc.parse_text("a:\n\tb: 1\n", "tabs.yaml")
    assert _problem(info).line == 2


def test_alias_bomb_is_refused():
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    prev = "a"
    for name in "bcdefghij":
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
        prev = name
    text = "\n".join(lines) + "\n"
    with pytest.raises(InputError) as info:
        yamldoc.parse_text(text, "bomb.yaml")
    prob = _problem(info)
    assert prob.file == "bomb.yaml"
    assert "alias" in prob.message
    assert prob.hint


def test_modest_aliases_are_fine():
    doc = yamldoc.parse_text("base: &b {x: 1}\none: *b\ntwo: *b\n", "ok.yaml")
    assert doc.data == {"base": {"x": 1}, "one": {"x": 1}, "two": {"x": 1}}


def test_duplicate_keys_are_error_with_line():
    text = "version: 1\nname: a\ntasks: []\nname: b\n"
    with pytest.raises(InputError) as info:
        yamldoc.parse_text(text, "dup.yaml")
    prob = _problem(info)
    assert prob.file == "dup.yaml"
    assert prob.line == 4
    assert "duplicate" in prob.message
    assert "name" in prob.message


def test_nested_duplicate_keys_are_error_with_line():
    text = "tasks:\n  - name: a\n    difficulty: easy\n    difficulty: hard\n"
    with pytest.raises(InputError) as info:
        yamldoc.parse_text(text, "dup2.yaml")
    prob = _problem(info)
    assert prob.line == 4
    assert "difficulty" in prob.message


def test_binary_text_passed_to_parse_text():
    with pytest.raises(InputError) as info:
        yamldoc.parse_text("a: 1\x00\n", "nul.yaml")
    assert "binary" in _problem(info).message


def test_scalar_and_list_documents():
    assert yamldoc.parse_text("just a string\n", "s.yaml").data == "just a string"
    assert yamldoc.parse_text("- 1\n- two\n", "l.yaml").data == [1, "two"]


def test_large_file_is_refused(tmp_path):
    p = tmp_path / "big.yaml"
    with p.open("wb") as f:  # sparse: the size is checked before anything is read
        f.truncate(yamldoc.MAX_BYTES + 1)
    with pytest.raises(InputError) as info:
        yamldoc.load(p)
    prob = _problem(info)
    assert prob.file == str(p)
    assert str(yamldoc.MAX_BYTES + 1) in prob.message
    assert prob.hint


def test_file_name_reaches_message_of_every_kind(tmp_path: Path):
    bad = tmp_path / "weird.yaml"
    bad.write_text("key: [unclosed\n")
    with pytest.raises(InputError) as info:
        yamldoc.load(bad)
    assert str(info.value).startswith(str(bad))


def test_value_line_inside_block_and_inline_strings():
    text = (
        "tasks:\n"
        "  - code: inline ${x}\n"
        "    block: |\n"
        "      first\n"
        "      second ${y}\n"
    )
    doc = yamldoc.parse_text(text, "v.yaml")
    assert doc.value_line(("tasks", 0, "code"), 1) == 2
    assert doc.value_line(("tasks", 0, "block"), 2) == 5
    assert text.splitlines()[5 - 1].strip() == "second ${y}"
    assert doc.value_line(("tasks", 0, "block"), None) == 3
