"""Prompt and test templates: sandboxed Jinja2 with ``${name}`` variables."""

from __future__ import annotations

import pytest

from benchwright.task.template import Parameters, TemplateFailure, render


def test_dollar_variables():
    assert render("Write it in ${language}.", {"language": "python"}) == "Write it in python."


def test_nested_variable_and_spaces():
    ctx = {"solution": {"function_name": "similar_elements"}}
    assert render("call ${ solution.function_name }()", ctx) == "call similar_elements()"


def test_plain_text_is_returned_as_is():
    text = "no templates here: {curly} and $dollar and }"
    assert render(text, {}) == text


def test_double_braces_are_not_variables():
    assert render("{{ name }} ${name}", {"name": "x"}) == "{{ name }} x"


def test_trailing_newline_is_kept():
    assert render("a ${x}\n", {"x": 1}) == "a 1\n"


def test_if_block_with_parameter():
    text = "{% if parameters['all-tests-public'] %}tests{% else %}none{% endif %}"
    assert render(text, {"parameters": Parameters({"all-tests-public": True})}) == "tests"
    assert render(text, {"parameters": Parameters({"all-tests-public": False})}) == "none"


def test_missing_parameter_is_false():
    text = "{% if parameters['never-set'] %}yes{% else %}no{% endif %}"
    assert render(text, {"parameters": Parameters()}) == "no"
    text = "{% if not parameters['never-set'] %}hidden{% endif %}"
    assert render(text, {"parameters": Parameters({"other": True})}) == "hidden"


def test_parameters_missing_key_is_false_directly():
    params = Parameters({"a": True})
    assert params["a"] is True
    assert params["b"] is False


def test_for_loop_block():
    text = "{% for x in items %}${x};{% endfor %}"
    assert render(text, {"items": [1, 2, 3]}) == "1;2;3;"


def test_undefined_variable_is_failure_with_line():
    with pytest.raises(TemplateFailure) as info:
        render("line one\nline two ${nope}\nline three\n", {})
    assert info.value.line == 2
    assert "nope" in info.value.message
    assert "undefined" in str(info.value)


def test_undefined_attribute_is_failure():
    with pytest.raises(TemplateFailure) as info:
        render("a\nb\n${ solution.missing_attr }", {"solution": {"function_name": "f"}})
    assert info.value.line == 3
    assert "missing_attr" in info.value.message


def test_undefined_inside_if_block_is_failure():
    with pytest.raises(TemplateFailure) as info:
        render("{% if undefined_flag %}x{% endif %}", {})
    assert info.value.line == 1


def test_syntax_error_is_failure_with_line():
    with pytest.raises(TemplateFailure) as info:
        render("first\nsecond\n{% if %}\nfourth\n{% endif %}\n", {})
    assert info.value.line == 3
    assert "syntax" in info.value.message


def test_unclosed_block_is_failure():
    with pytest.raises(TemplateFailure) as info:
        render("a\n{% if x %}\nb\n", {"x": True})
    assert "syntax" in info.value.message
    assert info.value.line is not None


def test_unclosed_variable_is_failure():
    with pytest.raises(TemplateFailure):
        render("hello ${name", {"name": "x"})


@pytest.mark.parametrize(
    "text",
    [
        "${ ''.__class__.__mro__ }",
        "${ ''.__class__ }",
        "${ (1).__class__.__subclasses__() }",
        "${ x.__class__.__base__ }",
        "${ x.__init__.__globals__ }",
    ],
)
def test_sandbox_blocks_dunder_access(text):
    with pytest.raises(TemplateFailure) as info:
        render("safe line\n" + text, {"x": Parameters()})
    assert "unsafe" in info.value.message
    assert info.value.line == 2


def test_sandbox_is_immutable():
    """Templates cannot mutate the context (ImmutableSandboxedEnvironment)."""
    items: list[int] = [1]
    with pytest.raises(TemplateFailure) as info:
        render("{{ items.append(2) }}${ items.append(2) }", {"items": items})
    assert "unsafe" in info.value.message
    assert items == [1]


def test_runtime_error_is_failure_with_line():
    with pytest.raises(TemplateFailure) as info:
        render("a\nb\n${ 1 / 0 }", {})
    assert info.value.line == 3
    assert "ZeroDivisionError" in info.value.message


def test_failure_is_an_exception_with_message():
    err = TemplateFailure("boom", 4)
    assert str(err) == "boom"
    assert err.line == 4
    assert isinstance(err, Exception)
