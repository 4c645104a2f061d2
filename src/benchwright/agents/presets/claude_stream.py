"""Claude Code's ``--output-format stream-json`` (also what Qwen Code prints): one JSON object a
line, ``system`` / ``assistant`` / ``user`` / ``result``, with Anthropic content blocks."""

from __future__ import annotations

from typing import Any

from benchwright.agents.preset import AgentContext, AgentPreset, Converted, HomeReader, step
from benchwright.agents.presets._parse import (
    arguments,
    clip,
    get,
    guarded,
    json_events,
    label,
    text_of,
)


class StreamJsonPreset(AgentPreset):
    """A preset whose CLI prints stream-json (Claude Code, Qwen Code): its turn is converted from
    what it printed."""

    def convert(self, stdout: bytes, home: HomeReader, ctx: AgentContext) -> Converted:
        return guarded(lambda: convert_stream_json(stdout), stdout)


def convert_stream_json(stdout: bytes) -> Converted:
    out = Converted()
    for item in json_events(stdout, out):
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
                              arguments=arguments(get(block, "input")), id=label(get(block, "id"))))
        elif btype == "tool_result":
            steps.append(step("tool_result", result=text_of(get(block, "content")) or "",
                              id=label(get(block, "tool_use_id")),
                              error=True if get(block, "is_error") is True else None))
    return steps
