"""Which code runs, from a raw answer, for each way a model can be asked."""

from __future__ import annotations

from pathlib import Path

from benchwright import yamldoc
from benchwright.config.model import ExecConfig, ModelSpec
from benchwright.config.settings import Settings
from benchwright.lang.python import PythonLanguage
from benchwright.run.plan import build_plan
from benchwright.run.worker import extract
from benchwright.task.load import LoadedSource
from benchwright.task.model import TaskSource

SOURCE = '''\
version: 1
name: s
tasks:
  - name: inst
    languages: [python]
    task:
      common_prompt: Write inc(x).
      languages_specific:
        python:
          hidden_tests: [{code: "assert inc(1) == 2"}]
  - name: comp
    mode: complete
    languages: [python]
    task:
      languages_specific:
        python:
          entry_point: inc
          description: |
            from typing import List
            def inc(x: int) -> int:
                """Add one."""
          hidden_tests: [{code: "assert inc(1) == 2"}]
'''


def units(api: str):  # type: ignore[no-untyped-def]
    doc = yamldoc.parse_text(SOURCE, "s.yaml")
    loaded = LoadedSource(Path("s.yaml"), doc, TaskSource.model_validate(doc.data), "0")
    config = ExecConfig(llms=[ModelSpec(id="reference", api=api)], criteria=[])  # type: ignore[arg-type]
    plan = build_plan(config, "c.yaml", [loaded], Settings())
    return {u.task.name: u for u in plan.units}


PY = PythonLanguage()
BODY = "    return x + 1\n"


def test_auto_uses_each_task_s_own_api() -> None:
    u = units("auto")
    assert u["inst"].api == "instruct" and u["comp"].api == "complete"
    assert extract(u["inst"], "Sure:\n```python\ndef inc(x):\n    return x + 1\n```\n", PY).startswith("def inc")
    prompt = u["comp"].rendered.prompt
    assert extract(u["comp"], BODY, PY) == prompt + BODY
    assert extract(u["comp"], prompt + BODY, PY) == prompt + BODY
    assert u["comp"].messages() == []


def test_chat_api_for_a_completion_task() -> None:
    u = units("chat")["comp"]
    assert u.api == "instruct"
    (msg,) = u.messages()
    assert "Complete the following python code" in msg["content"] and "def inc" in msg["content"]
    prompt = u.rendered.prompt
    whole = f"```python\n{prompt}{BODY}```"
    assert extract(u, whole, PY) == prompt + BODY
    only_def = "```python\ndef inc(x: int) -> int:\n    return x + 1\n```"
    code = extract(u, only_def, PY)
    assert code.startswith("from typing import List\n\ndef inc") and code.endswith(BODY)
    only_body = f"```python\n{BODY}```"
    assert extract(u, only_body, PY) == prompt + BODY


def test_completion_api_for_an_instruct_task() -> None:
    u = units("completion")["inst"]
    assert u.api == "complete" and u.messages() == []
    assert extract(u, "```python\ndef inc(x):\n    return x + 1\n```", PY) == "def inc(x):\n    return x + 1\n"


BRACES = '''\
version: 1
name: b
tasks:
  - name: close
    mode: complete
    languages: [cpp]
    task:
      languages_specific:
        cpp:
          entry_point: inc
          description: |
            int inc(int x) {
          stop: ["\\n}", "\\nint main"]
          completion_suffix: "}\\n"
          hidden_tests: [{code: "assert(inc(1) == 2);"}]
'''


def test_a_continuation_is_cut_at_the_task_s_stop_sequences_and_closed_by_its_suffix() -> None:
    """MultiPL-E's way: the completion API stops before the closing brace, the harness appends
    it. The stop sequences go to the API (first), and a provider that ignored them is cut here."""
    doc = yamldoc.parse_text(BRACES, "b.yaml")
    loaded = LoadedSource(Path("b.yaml"), doc, TaskSource.model_validate(doc.data), "0")
    config = ExecConfig(llms=[ModelSpec(id="reference", api="completion", stop=["\n\n\n"])],  # type: ignore[arg-type]
                        criteria=[])
    unit = build_plan(config, "c.yaml", [loaded], Settings()).units[0]
    assert unit.request().params["stop"] == ["\n}", "\nint main", "\n\n\n"]
    prompt = unit.rendered.prompt
    stopped = "    return x + 1;"  # what an API that honoured the stop sequences answers
    assert extract(unit, stopped, None) == prompt + stopped + "}\n"
    rambling = stopped + "\n}\n\nint main() { return inc(0); }\n"  # one that did not
    assert extract(unit, rambling, None) == prompt + stopped + "}\n"
    chat = units("chat")["comp"]  # a chat answer is the whole code: nothing cut, nothing added
    assert "stop" not in chat.request().params
