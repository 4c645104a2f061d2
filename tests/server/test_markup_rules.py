"""The web UI's source keeps to the rules of benchwright.server.ui.text, so that no name, path or
text from a dataset, a config, a model or an agent reaches the page as markup or code (the
browser test test_hostile_text.py shows the pages holding; these rules keep new code holding):

- a props, classes or style string is written in the code, never built from data (NiceGUI parses
  it: a name could add an ``innerHTML`` prop or a ``:``-prop, which runs as JavaScript);
- nothing renders markup or runs code from a string built from data: no ui.html, ui.markdown,
  ui.code (markdown), ui.mermaid with anything but markup written in the code (the stylesheet's
  ``<link>``), no run_javascript, no ``html=True``;
- a link or navigation target is written in the code or built by ``link_to`` (URL-quoted);
- no ``:``-key (a JavaScript expression to NiceGUI) and no ECharts ``formatter`` (a template that
  puts names into the tooltip unescaped) in the code.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import benchwright.server.ui as ui_package

SOURCES = sorted(Path(ui_package.__file__).parent.glob("*.py"))
PARSED_STRINGS = {"props", "classes", "style", "default_props", "default_classes", "default_style"}
MARKUP = {"html", "markdown", "code", "mermaid", "restructured_text", "run_javascript", "add_head_html",
          "add_body_html", "add_css", "interactive_image", "chat_message", "aggrid", "json_editor"}
LINKS = {"link", "to"}  # ui.link(text, target), ui.navigate.to(target)


def written(node: ast.expr) -> bool:
    """Text the code writes: a literal, a module's constant, a choice between them, them joined."""
    if isinstance(node, ast.Name):
        return node.id.isupper()
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.IfExp):
        return written(node.body) and written(node.orelse)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return written(node.left) and written(node.right)
    return False


def quoted_link(node: ast.expr) -> bool:
    if written(node):
        return True
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "link_to"


def broken_rules(source: str, name: str = "<test>") -> list[str]:
    """Where ``source`` breaks the rules, as ``file:line: what``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        where = f"{name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Dict):
            for key in node.keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str) and \
                        (key.value.startswith(":") or key.value == "formatter"):
                    found.append(f"{where}: the key {key.value!r} makes the browser run or format code")
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        attr = node.func.attr
        args = [*node.args, *(k.value for k in node.keywords)]
        if attr in PARSED_STRINGS and not all(written(a) for a in args):
            found.append(f"{where}: .{attr}() given a string built from data (set a prop as one entry: "
                         "testid(), element.props[key] = value)")
        if attr in MARKUP and isinstance(node.func.value, ast.Name) and node.func.value.id == "ui" and \
                not (node.args and all(written(a) for a in node.args)):
            found.append(f"{where}: ui.{attr} renders markup or runs code (show text: ui.label, preformatted)")
        if attr == "run_javascript":
            found.append(f"{where}: run_javascript")
        if any(k.arg == "html" and not (isinstance(k.value, ast.Constant) and k.value.value is False)
               for k in node.keywords):
            found.append(f"{where}: html= renders markup")
        if attr in LINKS:
            targets = node.args[1:2] if attr == "link" else node.args[:1]
            targets += [k.value for k in node.keywords if k.arg == "target"]
            if not all(quoted_link(t) for t in targets):
                found.append(f"{where}: a link target built from data (use link_to)")
    return found


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_the_ui_source_keeps_data_out_of_markup_and_code(path: Path) -> None:
    assert broken_rules(path.read_text(), path.name) == []


@pytest.mark.parametrize("bad", [
    """ui.label(name).props(f'data-testid="task-{name}"')""",
    """ui.label(name).classes(colour)""",
    """ui.button("x").props("flat " + name)""",
    """ui.markdown(answer)""",
    """ui.code(output, language="text")""",
    """ui.html(reasoning)""",
    """ui.add_head_html(f'<link href="{path}">')""",
    """ui.add_head_html(LINK + name)""",
    """ui.run_javascript("go()")""",
    """ui.notify(message, html=True)""",
    """ui.run_javascript(f"go({name!r})")""",
    """ui.link(name, f"/edit?path={name}")""",
    """ui.navigate.to("/run/" + run_id)""",
    """ui.echart({"tooltip": {"formatter": "{a}: {c}"}})""",
    """ui.table(columns=[{"name": "x", ":format": "v => v"}], rows=[])""",
])
def test_each_rule_catches_what_it_is_for(bad: str) -> None:
    assert broken_rules(bad) != []


@pytest.mark.parametrize("good", [
    """testid(ui.label(name).classes("text-lg " + ("a" if ok else "b")).props("flat dense"), f"task-{name}")""",
    """ui.link(name, link_to("/edit", path=name))""",
    """ui.navigate.to(link_to("/run", run_id))""",
    """ui.link("Files", "/")""",
    """ui.add_head_html(STYLESHEET, shared=True)""",
])
def test_what_the_pages_do_passes(good: str) -> None:
    assert broken_rules(good) == []
