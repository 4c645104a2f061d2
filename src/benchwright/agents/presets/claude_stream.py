"""Claude Code's ``--output-format stream-json`` (also what Qwen Code prints): one JSON object a
line, ``system`` / ``assistant`` / ``user`` / ``result``, with Anthropic content blocks."""

from __future__ import annotations

from typing import Any

from benchwright.agents.preset import Converted, step
from benchwright.agents.presets._parse import arguments, clip, get, json_lines, text_of


def convert_stream_json(stdout: bytes) -> Converted:
    out = Converted()
    for item in json_lines(stdout):
        if isinstance(item, str):
            out.steps.append(step("message", text=item, role="output"))
            continue
        kind = item.get("type")
        if kind in ("assistant", "user"):
            out.steps.extend(_blocks(get(item, "message", "content"), str(kind)))
        elif kind == "result":
            result = item.get("result")
            if isinstance(result, str):
                out.response = clip(result)
            elif item.get("is_error") is True:
                out.steps.append(step("message", text=clip(item.get("error") or item.get("subtype")),
                                      role="error"))
    return out


def _blocks(content: Any, role: str) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [step("message", text=clip(content), role=role)]
    steps: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        btype = get(block, "type")
        if btype == "text" and isinstance(get(block, "text"), str):
            steps.append(step("message", text=clip(block["text"]), role=role))
        elif btype == "thinking" and isinstance(get(block, "thinking"), str):
            steps.append(step("message", text=clip(block["thinking"]), role="thinking"))
        elif btype == "tool_use":
            steps.append(step("tool_call", tool=clip(get(block, "name") or "?", 200),
                              arguments=arguments(get(block, "input")), id=_id(get(block, "id"))))
        elif btype == "tool_result":
            steps.append(step("tool_result", result=text_of(get(block, "content")) or "",
                              id=_id(get(block, "tool_use_id")),
                              error=True if get(block, "is_error") is True else None))
    return steps


def _id(value: object) -> str | None:
    return clip(value, 200) if isinstance(value, str) else None
