"""The model wire formats both ways: a client's request as a :class:`GenerationRequest`, an
:class:`Answer` as the client's response (a JSON body, or the server-sent events of a stream).

Four formats: OpenAI chat completions, Anthropic Messages, the OpenAI Responses API and Gemini
``generateContent``. The request side (``*_request``) maps each format's conversation to the
OpenAI-shaped messages and function tools of :class:`GenerationRequest`: Anthropic ``tool_use`` /
``tool_result`` blocks and ``system``, Responses items (``message``, ``function_call``,
``function_call_output``) and ``instructions``, Gemini ``parts`` (``text``, ``functionCall``,
``functionResponse``) and ``systemInstruction``. Images, files and other blocks the engine cannot
pass on are dropped, leaving a ``[... omitted]`` note in the text. The answer side
(``*_body`` and ``*_events``) renders text, tool calls, the finish reason and usage; a stream is
made from the complete answer, its text cut into a few deltas.

Used by the model proxy (:mod:`benchwright.agents.proxy`), the scripted model
(:mod:`benchwright.testing.script`) and the fake services (:mod:`benchwright.testing.servers`).
"""

from __future__ import annotations

import json
import math
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from benchwright.httpserve import sse
from benchwright.model.base import GenerationRequest, ToolCall

__all__ = [
    "Rendered",
    "WireError",
    "anthropic_body",
    "anthropic_events",
    "anthropic_request",
    "estimate_tokens",
    "finish_for",
    "gemini_body",
    "gemini_events",
    "gemini_request",
    "openai_chat_body",
    "openai_chat_events",
    "openai_chat_request",
    "pieces",
    "responses_body",
    "responses_events",
    "responses_request",
]

PARAMS = ("temperature", "max_tokens", "top_p", "stop", "seed")


class WireError(ValueError):
    """A request the format does not allow (answered with 400 and this message)."""


@dataclass(frozen=True)
class Rendered:
    """What an answer says, ready to render in any format."""

    text: str
    calls: Sequence[ToolCall]
    finish: str
    """``stop``, ``length``, ``tool_calls`` or ``content_filter`` (OpenAI's words; each format
    maps them to its own)."""
    model: str
    tokens_in: int
    tokens_out: int


def finish_for(reason: str | None, has_calls: bool) -> str:
    """A provider's finish reason (any format's word for it) in OpenAI's words."""
    if has_calls:
        return "tool_calls"
    r = (reason or "").lower()
    if r in ("length", "max_tokens", "max_output_tokens", "model_length"):
        return "length"
    if r in ("content_filter", "safety", "refusal", "recitation"):
        return "content_filter"
    return "stop"


def pieces(text: str, n: int = 4) -> list[str]:
    """``text`` cut into at most ``n`` deltas (none for empty text)."""
    if not text:
        return []
    size = max(1, math.ceil(len(text) / n))
    return [text[i:i + size] for i in range(0, len(text), size)]


def estimate_tokens(text: str) -> int:
    """A rough token count (about four characters a token)."""
    return max(1, math.ceil(len(text) / 4)) if text else 0


def _new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


def _arguments_object(arguments: str) -> dict[str, Any]:
    """A call's arguments as an object: ``{}`` when they are not a JSON object."""
    try:
        value = json.loads(arguments)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _text_of(value: Any) -> str:
    """Text of a content value: a string, or a list of blocks/parts with text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        out = []
        for part in value:
            if isinstance(part, str):
                out.append(part)
            elif isinstance(part, dict):
                kind = part.get("type")
                if isinstance(part.get("text"), str):
                    out.append(part["text"])
                elif kind in ("tool_result",):
                    out.append(_text_of(part.get("content")))
                else:
                    out.append(f"[{kind or 'unknown'} content omitted]")
        return "\n".join(out)
    if isinstance(value, dict):
        return _text_of([value])
    return str(value)


def _params(body: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """``params`` of the request: each wire name in ``names`` -> its engine name."""
    out: dict[str, Any] = {}
    for wire, ours in names.items():
        value = body.get(wire)
        if value is not None:
            out[ours] = value
    if isinstance(out.get("stop"), str):
        out["stop"] = [out["stop"]]
    return out


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    for m in reversed(messages):
        if m.get("role") in ("user", "tool"):
            return _text_of(m.get("content"))
    return ""


def _request(model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
             params: dict[str, Any]) -> GenerationRequest:
    return GenerationRequest(model=model, mode="instruct", messages=messages,
                             prompt=_last_user_text(messages), language="agent", params=params,
                             tools=tools or None)


def _object(body: Any) -> Mapping[str, Any]:
    if not isinstance(body, dict):
        raise WireError("the request body is not a JSON object")
    return body


def _list(body: Mapping[str, Any], key: str, required: bool = False) -> list[Any]:
    value = body.get(key)
    if value is None and not required:
        return []
    if not isinstance(value, list):
        raise WireError(f"'{key}' must be an array")
    return value


# -- OpenAI chat completions -----------------------------------------------------------------


def openai_chat_request(body: Any, model: str) -> GenerationRequest:
    """An OpenAI chat request as a :class:`GenerationRequest` for ``model``."""
    b = _object(body)
    messages: list[dict[str, Any]] = []
    for i, m in enumerate(_list(b, "messages", required=True)):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise WireError(f"messages[{i}]: not a message with a role")
        role = "system" if m["role"] == "developer" else m["role"]
        out: dict[str, Any] = {"role": role, "content": _text_of(m.get("content"))}
        if role == "assistant" and m.get("tool_calls"):
            calls = []
            for n, c in enumerate(m["tool_calls"]):
                fn = c.get("function") if isinstance(c, dict) else None
                if not isinstance(fn, dict):
                    raise WireError(f"messages[{i}].tool_calls[{n}]: no function")
                args = fn.get("arguments")
                calls.append({"id": str(c.get("id") or f"call_{n}"), "type": "function",
                              "function": {"name": str(fn.get("name", "")),
                                           "arguments": args if isinstance(args, str)
                                           else json.dumps(args or {})}})
            out["tool_calls"] = calls
            out["content"] = out["content"] or None
        if role == "tool":
            out["tool_call_id"] = str(m.get("tool_call_id", ""))
        messages.append(out)
    tools = [t for t in _list(b, "tools") if isinstance(t, dict) and t.get("type", "function") == "function"
             and isinstance(t.get("function"), dict)]
    names = {k: k for k in PARAMS}
    names["max_completion_tokens"] = "max_tokens"
    return _request(model, messages, [{"type": "function", "function": t["function"]} for t in tools],
                    _params(b, names))


def _chat_calls(calls: Sequence[ToolCall]) -> list[dict[str, Any]]:
    return [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls]


def _openai_usage(r: Rendered) -> dict[str, Any]:
    return {"prompt_tokens": r.tokens_in, "completion_tokens": r.tokens_out,
            "total_tokens": r.tokens_in + r.tokens_out}


def openai_chat_body(r: Rendered) -> dict[str, Any]:
    """A ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": r.text}
    if r.calls:
        message["content"] = r.text or None
        message["tool_calls"] = _chat_calls(r.calls)
    return {"id": _new_id("chatcmpl-"), "object": "chat.completion", "created": int(time.time()),
            "model": r.model, "choices": [{"index": 0, "message": message, "logprobs": None,
                                           "finish_reason": r.finish}],
            "usage": _openai_usage(r)}


def openai_chat_events(r: Rendered, include_usage: bool = True) -> list[bytes]:
    """The ``chat.completion.chunk`` events of a stream: the role, the text in a few deltas, each
    tool call (index, id and name, then its arguments in pieces), the finish reason, the usage
    chunk (``choices: []``) when ``include_usage``, then ``[DONE]``."""
    ident, created = _new_id("chatcmpl-"), int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        data: dict[str, Any] = {"id": ident, "object": "chat.completion.chunk", "created": created,
                                "model": r.model, "choices": [{"index": 0, "delta": delta,
                                                               "logprobs": None,
                                                               "finish_reason": finish}]}
        if include_usage:
            data["usage"] = None
        return sse(data)

    out = [chunk({"role": "assistant", "content": ""})]
    out.extend(chunk({"content": p}) for p in pieces(r.text))
    for i, call in enumerate(r.calls):
        out.append(chunk({"tool_calls": [{"index": i, "id": call.id, "type": "function",
                                          "function": {"name": call.name, "arguments": ""}}]}))
        out.extend(chunk({"tool_calls": [{"index": i, "function": {"arguments": p}}]})
                   for p in pieces(call.arguments, 3))
    out.append(chunk({}, r.finish))
    if include_usage:
        out.append(sse({"id": ident, "object": "chat.completion.chunk", "created": created,
                        "model": r.model, "choices": [], "usage": _openai_usage(r)}))
    out.append(sse("[DONE]"))
    return out


# -- Anthropic Messages ----------------------------------------------------------------------

ANTHROPIC_STOP = {"stop": "end_turn", "length": "max_tokens", "tool_calls": "tool_use",
                  "content_filter": "refusal"}



def _message(assistant: bool, texts: list[str], calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One converted turn in the OpenAI shape: an assistant turn (its text, its tool calls),
    or a user turn when it has text (tool results were emitted on their own)."""
    if assistant:
        out: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) or None}
        if calls:
            out["tool_calls"] = calls
        elif out["content"] is None:
            out["content"] = ""
        return [out]
    return [{"role": "user", "content": "\n".join(texts)}] if texts else []

def anthropic_request(body: Any, model: str) -> GenerationRequest:
    """An Anthropic Messages request as a :class:`GenerationRequest` for ``model``."""
    b = _object(body)
    messages: list[dict[str, Any]] = []
    system = b.get("system")
    if system:
        messages.append({"role": "system", "content": _text_of(system)})
    for i, m in enumerate(_list(b, "messages", required=True)):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            raise WireError(f"messages.{i}: the role must be 'user' or 'assistant'")
        content = m.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        if not isinstance(blocks, list):
            raise WireError(f"messages.{i}.content: must be a string or a list of blocks")
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for block in blocks:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text":
                texts.append(str(block.get("text", "")))
            elif kind == "tool_use" and m["role"] == "assistant":
                calls.append({"id": str(block.get("id", "")), "type": "function",
                              "function": {"name": str(block.get("name", "")),
                                           "arguments": json.dumps(block.get("input") or {})}})
            elif kind == "tool_result" and m["role"] == "user":
                result = _text_of(block.get("content"))
                if block.get("is_error"):
                    result = f"[error] {result}"
                messages.append({"role": "tool", "tool_call_id": str(block.get("tool_use_id", "")),
                                 "content": result})
            elif kind in ("thinking", "redacted_thinking"):
                continue
            else:
                texts.append(f"[{kind or 'unknown'} content omitted]")
        messages += _message(m["role"] == "assistant", texts, calls)
    tools = []
    for t in _list(b, "tools"):
        if isinstance(t, dict) and isinstance(t.get("name"), str) and "input_schema" in t:
            fn = {"name": t["name"], "description": str(t.get("description", "")),
                  "parameters": t["input_schema"]}
            tools.append({"type": "function", "function": fn})
    params = _params(b, {"temperature": "temperature", "max_tokens": "max_tokens",
                         "top_p": "top_p", "stop_sequences": "stop"})
    return _request(model, messages, tools, params)


def _anthropic_content(r: Rendered) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    if r.text or not r.calls:
        content.append({"type": "text", "text": r.text})
    content.extend({"type": "tool_use", "id": _toolu(c.id), "name": c.name,
                    "input": _arguments_object(c.arguments)} for c in r.calls)
    return content


def _toolu(call_id: str) -> str:
    return call_id if call_id.startswith("toolu_") else f"toolu_{call_id}"


def anthropic_body(r: Rendered) -> dict[str, Any]:
    """A Messages ``message`` object."""
    return {"id": _new_id("msg_"), "type": "message", "role": "assistant", "model": r.model,
            "content": _anthropic_content(r), "stop_reason": ANTHROPIC_STOP.get(r.finish, r.finish),
            "stop_sequence": None,
            "usage": {"input_tokens": r.tokens_in, "output_tokens": r.tokens_out}}


def anthropic_events(r: Rendered) -> list[bytes]:
    """The Messages stream: ``message_start`` (input tokens), per block ``content_block_start``,
    deltas (``text_delta``, ``input_json_delta``) and ``content_block_stop``, then
    ``message_delta`` (stop reason, output tokens) and ``message_stop``."""
    start: dict[str, Any] = {"id": _new_id("msg_"), "type": "message", "role": "assistant", "model": r.model,
             "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {"input_tokens": r.tokens_in, "output_tokens": 1}}
    out = [sse({"type": "message_start", "message": start}, "message_start")]
    index = 0
    if r.text or not r.calls:
        out.append(sse({"type": "content_block_start", "index": index,
                        "content_block": {"type": "text", "text": ""}}, "content_block_start"))
        out.append(sse({"type": "ping"}, "ping"))
        out.extend(sse({"type": "content_block_delta", "index": index,
                        "delta": {"type": "text_delta", "text": p}}, "content_block_delta")
                   for p in pieces(r.text))
        out.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1
    for c in r.calls:
        out.append(sse({"type": "content_block_start", "index": index,
                        "content_block": {"type": "tool_use", "id": _toolu(c.id), "name": c.name,
                                          "input": {}}}, "content_block_start"))
        text = json.dumps(_arguments_object(c.arguments))
        out.extend(sse({"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": p}},
                       "content_block_delta") for p in pieces(text, 3))
        out.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1
    out.append(sse({"type": "message_delta",
                    "delta": {"stop_reason": ANTHROPIC_STOP.get(r.finish, r.finish),
                              "stop_sequence": None},
                    "usage": {"output_tokens": r.tokens_out}}, "message_delta"))
    out.append(sse({"type": "message_stop"}, "message_stop"))
    return out


# -- OpenAI Responses API --------------------------------------------------------------------


def responses_request(body: Any, model: str) -> GenerationRequest:
    """A Responses API request (``input`` a string or items, ``instructions``) as a
    :class:`GenerationRequest` for ``model``."""
    b = _object(body)
    messages: list[dict[str, Any]] = []
    if isinstance(b.get("instructions"), str) and b["instructions"]:
        messages.append({"role": "system", "content": b["instructions"]})
    items = b.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    if not isinstance(items, list):
        raise WireError("'input' must be a string or an array of items")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise WireError(f"input[{i}]: not an object")
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role")
            role = "system" if role == "developer" else role
            if role not in ("system", "user", "assistant"):
                raise WireError(f"input[{i}]: unknown role {role!r}")
            messages.append({"role": role, "content": _text_of(item.get("content"))})
        elif kind == "function_call":
            call = {"id": str(item.get("call_id") or item.get("id") or f"call_{i}"),
                    "type": "function", "function": {"name": str(item.get("name", "")),
                                                     "arguments": str(item.get("arguments", "{}"))}}
            last = messages[-1] if messages else None
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
                last["content"] = last["content"] or None
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            messages.append({"role": "tool", "tool_call_id": str(item.get("call_id", "")),
                             "content": output if isinstance(output, str) else _text_of(output)})
        elif kind == "reasoning":
            continue
        else:
            messages.append({"role": "user", "content": f"[{kind} item omitted]"})
    tools = []
    for t in _list(b, "tools"):
        if isinstance(t, dict) and t.get("type") == "function" and isinstance(t.get("name"), str):
            fn = {"name": t["name"], "description": str(t.get("description") or ""),
                  "parameters": t.get("parameters") or {"type": "object", "properties": {}}}
            tools.append({"type": "function", "function": fn})
    params = _params(b, {"temperature": "temperature", "max_output_tokens": "max_tokens",
                         "top_p": "top_p"})
    return _request(model, messages, tools, params)


def _responses_items(r: Rendered, msg_id: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if r.text or not r.calls:
        items.append({"type": "message", "id": msg_id, "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "text": r.text, "annotations": []}]})
    items.extend({"type": "function_call", "id": f"fc_{c.id}", "call_id": c.id, "name": c.name,
                  "arguments": c.arguments, "status": "completed"} for c in r.calls)
    return items


def responses_body(r: Rendered, resp_id: str | None = None, msg_id: str | None = None) -> dict[str, Any]:
    """A ``response`` object (status ``incomplete`` when the answer hit its length limit)."""
    incomplete = r.finish == "length"
    return {"id": resp_id or _new_id("resp_"), "object": "response", "created_at": int(time.time()),
            "status": "incomplete" if incomplete else "completed", "model": r.model,
            "output": _responses_items(r, msg_id or _new_id("msg_")),
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": {"input_tokens": r.tokens_in, "output_tokens": r.tokens_out,
                      "total_tokens": r.tokens_in + r.tokens_out,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}


def responses_events(r: Rendered) -> list[bytes]:
    """The Responses stream: ``response.created``, ``response.in_progress``, per output item
    ``response.output_item.added``, its deltas (``response.output_text.delta`` /
    ``response.function_call_arguments.delta``), their ``.done`` and
    ``response.output_item.done``, then ``response.completed`` with the usage."""
    resp_id, msg_id = _new_id("resp_"), _new_id("msg_")
    final = responses_body(r, resp_id, msg_id)
    seq = 0
    out: list[bytes] = []

    def emit(kind: str, **data: Any) -> None:
        nonlocal seq
        out.append(sse({"type": kind, "sequence_number": seq, **data}, kind))
        seq += 1

    pending = dict(final, status="in_progress", output=[], usage=None, incomplete_details=None)
    emit("response.created", response=pending)
    emit("response.in_progress", response=pending)
    for index, item in enumerate(final["output"]):
        if item["type"] == "message":
            emit("response.output_item.added", output_index=index,
                 item=dict(item, status="in_progress", content=[]))
            part = {"type": "output_text", "text": "", "annotations": []}
            emit("response.content_part.added", item_id=item["id"], output_index=index,
                 content_index=0, part=part)
            for p in pieces(r.text):
                emit("response.output_text.delta", item_id=item["id"], output_index=index,
                     content_index=0, delta=p, logprobs=[])
            emit("response.output_text.done", item_id=item["id"], output_index=index,
                 content_index=0, text=r.text, logprobs=[])
            emit("response.content_part.done", item_id=item["id"], output_index=index,
                 content_index=0, part=dict(part, text=r.text))
        else:
            emit("response.output_item.added", output_index=index,
                 item=dict(item, status="in_progress", arguments=""))
            for p in pieces(item["arguments"], 3):
                emit("response.function_call_arguments.delta", item_id=item["id"],
                     output_index=index, delta=p)
            emit("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                 name=item["name"], arguments=item["arguments"])
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.incomplete" if final["status"] == "incomplete" else "response.completed",
         response=final)
    return out


# -- Gemini generateContent ------------------------------------------------------------------

GEMINI_FINISH = {"stop": "STOP", "length": "MAX_TOKENS", "tool_calls": "STOP",
                 "content_filter": "SAFETY"}


def gemini_request(body: Any, model: str) -> GenerationRequest:
    """A Gemini ``generateContent`` request as a :class:`GenerationRequest` for ``model``. Gemini
    calls carry no ids: a call gets ``call_N`` and the next ``functionResponse`` of that name
    answers it."""
    b = _object(body)
    messages: list[dict[str, Any]] = []
    system = b.get("systemInstruction") or b.get("system_instruction")
    if isinstance(system, dict):
        text = "\n".join(str(p.get("text", "")) for p in system.get("parts") or []
                         if isinstance(p, dict))
        if text:
            messages.append({"role": "system", "content": text})
    open_calls: list[tuple[str, str]] = []
    n = 0
    for i, c in enumerate(_list(b, "contents", required=True)):
        if not isinstance(c, dict):
            raise WireError(f"contents[{i}]: not an object")
        role = "assistant" if c.get("role") == "model" else "user"
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for part in c.get("parts") or []:
            if not isinstance(part, dict):
                continue
            if isinstance(part.get("text"), str):
                if not part.get("thought"):
                    texts.append(part["text"])
            elif isinstance(part.get("functionCall"), dict):
                fc = part["functionCall"]
                call_id = str(fc.get("id") or f"call_{n}")
                n += 1
                name = str(fc.get("name", ""))
                open_calls.append((call_id, name))
                calls.append({"id": call_id, "type": "function",
                              "function": {"name": name, "arguments": json.dumps(fc.get("args") or {})}})
            elif isinstance(part.get("functionResponse"), dict):
                fr = part["functionResponse"]
                name = str(fr.get("name", ""))
                match = next((x for x in open_calls if x[1] == name), None)
                call_id = str(fr.get("id") or (match[0] if match else f"call_{name}"))
                if match is not None:
                    open_calls.remove(match)
                response = fr.get("response")
                messages.append({"role": "tool", "tool_call_id": call_id,
                                 "content": response if isinstance(response, str)
                                 else json.dumps(response)})
            else:
                texts.append(f"[{next(iter(part), 'unknown')} part omitted]")
        messages += _message(role == "assistant", texts, calls)
    tools = []
    for t in _list(b, "tools"):
        for fd in (t.get("functionDeclarations") or t.get("function_declarations") or []) \
                if isinstance(t, dict) else []:
            if isinstance(fd, dict) and isinstance(fd.get("name"), str):
                schema = fd.get("parameters") or fd.get("parametersJsonSchema") or \
                    {"type": "object", "properties": {}}
                tools.append({"type": "function", "function": {
                    "name": fd["name"], "description": str(fd.get("description", "")),
                    "parameters": schema}})
    config = b.get("generationConfig") or {}
    params = _params(config if isinstance(config, dict) else {},
                     {"temperature": "temperature", "maxOutputTokens": "max_tokens", "topP": "top_p",
                      "stopSequences": "stop", "seed": "seed"})
    return _request(model, messages, tools, params)


def _gemini_usage(r: Rendered) -> dict[str, Any]:
    return {"promptTokenCount": r.tokens_in, "candidatesTokenCount": r.tokens_out,
            "totalTokenCount": r.tokens_in + r.tokens_out}


def gemini_body(r: Rendered) -> dict[str, Any]:
    """A ``GenerateContentResponse``."""
    parts: list[dict[str, Any]] = [{"text": r.text}] if r.text or not r.calls else []
    parts.extend({"functionCall": {"name": c.name, "args": _arguments_object(c.arguments)}}
                 for c in r.calls)
    return {"candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": GEMINI_FINISH.get(r.finish, "STOP"), "index": 0}],
            "usageMetadata": _gemini_usage(r), "modelVersion": r.model}


def gemini_events(r: Rendered) -> list[bytes]:
    """``streamGenerateContent?alt=sse``: the text in a few responses, then one with the calls,
    the finish reason and the usage."""
    out = [sse({"candidates": [{"content": {"role": "model", "parts": [{"text": p}]}, "index": 0}],
                "modelVersion": r.model}) for p in pieces(r.text)]
    last = gemini_body(Rendered("", r.calls, r.finish, r.model, r.tokens_in, r.tokens_out))
    if not r.calls:
        last["candidates"][0]["content"]["parts"] = [{"text": ""}]
    out.append(sse(last))
    return out
