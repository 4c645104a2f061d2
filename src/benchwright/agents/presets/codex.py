"""OpenAI Codex CLI (``codex exec``) on the Responses endpoint, printing JSONL events."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from benchwright.agents.preset import (
    AgentContext,
    AgentPreset,
    Converted,
    HomeReader,
    Package,
    Wire,
    step,
)
from benchwright.agents.presets._parse import arguments, clip, get, guarded, json_events, label
from benchwright.agents.presets._shell import KEY_VARIABLE, QUIET, in_home, q


class Codex(AgentPreset):
    """Codex CLI: OpenAI's coding agent (npm @openai/codex)."""

    name: ClassVar[str] = "codex"
    title: ClassVar[str] = "Codex CLI"
    homepage: ClassVar[str] = "https://github.com/openai/codex"
    package: ClassVar[Package] = Package("npm", "@openai/codex", "0.169.0", "codex")
    wire: ClassVar[Wire] = "responses"

    def command(self, ctx: AgentContext) -> str:
        words = [q(ctx.program), "exec", "--json", "--skip-git-repo-check",
                 "--dangerously-bypass-approvals-and-sandbox", "--model", q(ctx.route.model)]
        if ctx.turn > 1:
            words += ["resume", "--last"]
        return " ".join(words) + f" - < {q(ctx.prompt_file)}"

    def environment(self, ctx: AgentContext) -> dict[str, str]:
        return {**QUIET, "CODEX_HOME": in_home(ctx, ".codex"), KEY_VARIABLE: ctx.route.key}

    def home_files(self, ctx: AgentContext) -> dict[str, bytes]:
        s = json.dumps  # a JSON string is a valid TOML basic string
        lines = [
            f"model = {s(ctx.route.model)}",
            'model_provider = "benchwright"',
            'approval_policy = "never"',
            'sandbox_mode = "danger-full-access"',
            "check_for_update_on_startup = false",
            "",
            "[model_providers.benchwright]",
            'name = "benchwright"',
            f"base_url = {s(ctx.route.openai_base)}",
            f"env_key = {s(KEY_VARIABLE)}",
            'wire_api = "responses"',
            "",
            "[analytics]",
            "enabled = false",
            "",
            "[feedback]",
            "enabled = false",
            "",
        ]
        return {".codex/config.toml": "\n".join(lines).encode()}

    def convert(self, stdout: bytes, home: HomeReader, ctx: AgentContext) -> Converted:
        return guarded(lambda: convert_events(stdout), stdout)


def convert_events(stdout: bytes) -> Converted:
    out = Converted()
    for event in json_events(stdout, out):
        if event.get("type") == "item.completed":
            steps, text = _item(event.get("item"))
            out.steps.extend(steps)
            if text is not None:
                out.response = text
        elif event.get("type") in ("turn.failed", "error"):
            message = get(event, "error", "message") or event.get("message")
            out.steps.append(step("message", text=clip(message), role="error"))
    return out


def _item(item: Any) -> tuple[list[dict[str, Any]], str | None]:
    kind = get(item, "type")
    if kind == "agent_message" and isinstance(get(item, "text"), str):
        text = clip(item["text"])
        return [step("message", text=text, role="assistant")], text
    if kind == "reasoning" and isinstance(get(item, "text"), str):
        return [step("message", text=clip(item["text"]), role="thinking")], None
    if kind == "command_execution":
        code = get(item, "exit_code")
        return [step("tool_call", tool="shell", arguments={"command": clip(get(item, "command"))}),
                step("tool_result", tool="shell", result=clip(get(item, "aggregated_output") or ""),
                     exit_code=code if isinstance(code, int) else None)], None
    if kind == "file_change":
        return [step("tool_call", tool="apply_patch", arguments=arguments(get(item, "changes")),
                     status=label(get(item, "status")))], None
    if kind == "mcp_tool_call":
        return [step("tool_call", tool=f"{label(get(item, 'server'))}.{label(get(item, 'tool'))}",
                     arguments=arguments(get(item, "arguments"))),
                step("tool_result", result=clip(get(item, "result") or get(item, "error") or ""))], None
    if kind == "web_search":
        return [step("tool_call", tool="web_search", arguments={"query": clip(get(item, "query"))})], None
    if kind == "error":
        return [step("message", text=clip(get(item, "message")), role="error")], None
    if kind is not None:
        return [step("message", text=clip(item), role=clip(kind, 100))], None
    return [], None
