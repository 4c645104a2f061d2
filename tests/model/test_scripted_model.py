"""The scripted model of ``benchwright serve-model``: its turns file (and the errors a bad one
gets), which turn answers which request, and the server speaking the wire formats to the real
SDKs (streaming included)."""

from __future__ import annotations

import json
from pathlib import Path

import anthropic
import openai
import pytest

from benchwright.errors import InputError
from benchwright.model.base import GenerationRequest
from benchwright.testing.script import ScriptedModel, ScriptedServer

TURNS = """\
version: 1
turns:
  - text: "I will look at the code."
    tool_calls: [{name: run_shell_command, arguments: {command: "cat src/parser.py"}}]
  - text: "Fixed."
replies:
  - match: "Respond with a JSON"
    text: '{"verdict": "PASS"}'
usage: [120, 30]
"""


def _load(tmp_path: Path, text: str) -> ScriptedModel:
    path = tmp_path / "turns.yaml"
    path.write_text(text)
    return ScriptedModel.load(path)


def _req(*messages: dict[str, object]) -> GenerationRequest:
    return GenerationRequest(model="m", mode="instruct", messages=list(messages), prompt="",
                             language="agent")


def test_turns_follow_the_conversation(tmp_path: Path) -> None:
    model = _load(tmp_path, TURNS)
    first = model.answer(_req({"role": "user", "content": "fix it"}))
    assert first.text == "I will look at the code." and first.finish_reason == "tool_calls"
    assert [(c.id, c.name, json.loads(c.arguments)) for c in first.tool_calls] == \
        [("call_0_0", "run_shell_command", {"command": "cat src/parser.py"})]
    assert (first.tokens_in, first.tokens_out) == (120, 30)
    call = {"id": "call_0_0", "type": "function",
            "function": {"name": "run_shell_command", "arguments": '{"command":"cat src/parser.py"}'}}
    convo = [{"role": "user", "content": "fix it"},
             {"role": "assistant", "content": "Got it. Thanks for the context!"},  # the CLI's own: not a turn
             {"role": "user", "content": "fix it"},
             {"role": "assistant", "content": None, "tool_calls": [call]},
             {"role": "tool", "tool_call_id": "call_0_0", "content": "def parse(): ..."}]
    second = model.answer(_req(*convo))
    assert second.text == "Fixed." and not second.tool_calls and second.finish_reason == "stop"
    # the same conversation again (a retry) gets the same answer: stateless
    assert model.answer(_req(*convo)).text == "Fixed."
    past = model.answer(_req(*convo, {"role": "assistant", "content": "Fixed."},
                             {"role": "user", "content": "and?"}))
    assert past.text == "Fixed." and not past.tool_calls
    judged = model.answer(_req({"role": "user", "content": "Check. Respond with a JSON object."}))
    assert judged.text == '{"verdict": "PASS"}'


def test_past_the_end_of_calls_only_is_done_and_usage_is_estimated(tmp_path: Path) -> None:
    model = _load(tmp_path, "version: 1\nturns:\n  - tool_calls: [{name: x, arguments: '{\"a\": 1}'}]\n")
    answer = model.answer(_req({"role": "user", "content": "one two three"}))
    assert answer.tool_calls[0].arguments == '{"a": 1}' and answer.tokens_estimated
    assert answer.tokens_in == 3
    other = model.answer(_req({"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}))
    assert other.tool_calls  # an assistant message that is not the script's own is no turn
    done = model.answer(_req({"role": "user", "content": "x"}, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "x", "arguments": '{ "a" : 1 }'}}]}))
    assert done.text == "done"


@pytest.mark.parametrize(("text", "expected"), [
    ("turns: []\n", "version must be 1"),
    ("version: 1\n", "'turns' must be a list of at least one turn"),
    ("version: 1\nturns:\n  - {}\n", "turns[0]: a turn says nothing"),
    ("version: 1\nturns:\n  - text: hi\n    tools: []\n", "turns[0].tools: unknown key 'tools'"),
    ("version: 1\nturns:\n  - text: hi\nreplies:\n  - match: '('\n    text: x\n",
     "replies[0].match: not a valid regular expression"),
    ("version: 1\nturns:\n  - text: hi\n    tool_calls: [{arguments: {}}]\n",
     "turns[0].tool_calls[0]: a tool call is a mapping with a 'name'"),
    ("version: 1\nturns:\n  - text: hi\nusage: [1]\n", "usage must be two token counts"),
    ("- a\n", "a turns file is a mapping"),
])
def test_bad_files_name_the_file_place_and_fix(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(InputError) as caught:
        _load(tmp_path, text)
    message = str(caught.value)
    assert "turns.yaml" in message and expected in message and "hint:" in message


def test_bad_file_problem_has_its_line(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        _load(tmp_path, "version: 1\nturns:\n  - text: hi\n  - text: 3\n")
    problem = caught.value.problems[0]
    assert problem.line == 4 and problem.path == "turns[1].text"


def test_served_to_the_sdks(tmp_path: Path) -> None:
    with ScriptedServer(_load(tmp_path, TURNS)) as srv:
        oai = openai.OpenAI(base_url=f"{srv.url}/v1", api_key="anything", max_retries=0)
        chat = oai.chat.completions.create(model="x", messages=[{"role": "user", "content": "go"}])
        assert chat.choices[0].message.tool_calls[0].function.name == "run_shell_command"  # type: ignore[index]
        chunks = list(oai.chat.completions.create(
            model="x", stream=True, messages=[
                {"role": "user", "content": "go"},
                {"role": "assistant", "content": "ok", "tool_calls": [{
                    "id": "c1", "type": "function", "function": {
                        "name": "run_shell_command", "arguments": '{"command": "cat src/parser.py"}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "def parse(): ..."}]))
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Fixed."
        events = list(oai.responses.create(model="x", input="go", stream=True))
        done = [e.item for e in events if e.type == "response.output_item.done"]
        assert done[-1].type == "function_call"
        ant = anthropic.Anthropic(base_url=srv.url, api_key="anything", max_retries=0)
        with ant.messages.stream(model="x", max_tokens=10, messages=[
                {"role": "user", "content": "Respond with a JSON verdict"}]) as stream:
            assert stream.get_final_text() == '{"verdict": "PASS"}'
