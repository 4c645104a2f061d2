from __future__ import annotations

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from benchwright.importers.escape import escape_template, needs_escaping


def _env(**options: bool) -> ImmutableSandboxedEnvironment:
    return ImmutableSandboxedEnvironment(
        variable_start_string="${",
        variable_end_string="}",
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        **options,
    )


SAMPLES = [
    "plain text\n",
    "def f():\n    return {'a': 1}\n",
    "price: ${x} and ${ y }\n",
    "{% if a %}b{% endif %}",
    "{# a comment #} d = {#}",
    "{{ jinja default }} is literal here",
    "nested {% raw %}x{% endraw %} tricky {%- endraw -%} and {%+endraw%}",
    "windows\r\nline\rends ${a}",
    "   leading and trailing spaces   \n    ",
    "\n\nstarts with newlines {%",
    "$",
    "{",
    "${",
    "",
]


@pytest.mark.parametrize("text", SAMPLES)
@pytest.mark.parametrize("options", [{}, {"trim_blocks": True, "lstrip_blocks": True}])
def test_rendering_gives_the_text_back(text: str, options: dict[str, bool]) -> None:
    assert _env(**options).from_string(escape_template(text)).render() == text


def test_plain_text_is_left_alone() -> None:
    text = "def add(a, b):\n    return {a: b}\n"
    assert not needs_escaping(text)
    assert escape_template(text) == text


def test_templates_are_wrapped_in_raw() -> None:
    assert escape_template("x ${y}") == "{% raw %}x ${y}{%+ endraw %}"
