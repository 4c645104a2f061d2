"""Gemini CLI (``gemini -p``) on the Gemini generateContent endpoint, printing stream-json."""

from __future__ import annotations

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
from benchwright.agents.presets._parse import arguments, clip, get, guarded, json_lines, label
from benchwright.agents.presets._shell import QUIET, json_file, prompt_arg, q

QUIET_SETTINGS: dict[str, Any] = {
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
}
"""The ``settings.json`` sections that keep Gemini CLI (and Qwen Code, built on it) from
reporting usage and from checking for updates."""


class GeminiCli(AgentPreset):
    """Gemini CLI: Google's open-source terminal agent (npm @google/gemini-cli)."""

    name: ClassVar[str] = "gemini-cli"
    title: ClassVar[str] = "Gemini CLI"
    homepage: ClassVar[str] = "https://github.com/google-gemini/gemini-cli"
    package: ClassVar[Package] = Package("npm", "@google/gemini-cli", "0.61.0", "gemini")
    wire: ClassVar[Wire] = "gemini"

    def command(self, ctx: AgentContext) -> str:
        words = [q(ctx.program), "--yolo", "--output-format", "stream-json",
                 "--model", q(ctx.route.model)]
        if ctx.turn > 1:
            words += ["--resume", "latest"]
        return " ".join(words) + f" --prompt={prompt_arg(ctx)} < /dev/null"

    def environment(self, ctx: AgentContext) -> dict[str, str]:
        return {
            **QUIET,
            "GEMINI_API_KEY": ctx.route.key,
            "GOOGLE_GEMINI_BASE_URL": ctx.route.gemini_base,
            "GEMINI_MODEL": ctx.route.model,
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
        }

    def home_files(self, ctx: AgentContext) -> dict[str, bytes]:
        return {".gemini/settings.json": json_file({
            "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
            **QUIET_SETTINGS,
        })}

    def convert(self, stdout: bytes, home: HomeReader, ctx: AgentContext) -> Converted:
        return guarded(lambda: convert_stream(stdout), stdout)


def convert_stream(stdout: bytes) -> Converted:
    """``init`` / ``message`` (assistant deltas are joined) / ``tool_use`` / ``tool_result`` /
    ``error`` / ``result`` events."""
    out = Converted()
    pending: list[str] = []

    def flush() -> None:
        if pending:
            out.steps.append(step("message", text=clip("".join(pending)), role="assistant"))
            out.response = out.steps[-1]["text"]
            pending.clear()

    for event in json_lines(stdout):
        kind = event.get("type") if isinstance(event, dict) else None
        if isinstance(event, str):
            flush()
            out.steps.append(step("message", text=event, role="output"))
        elif kind == "message" and isinstance(event.get("content"), str):
            if event.get("role") == "assistant":
                pending.append(event["content"])
            else:
                flush()
                out.steps.append(step("message", text=clip(event["content"]), role=clip(event.get("role"), 50)))
        elif kind == "tool_use":
            flush()
            out.steps.append(step("tool_call", tool=clip(event.get("tool_name") or "?", 200),
                                  arguments=arguments(event.get("parameters")), id=label(event.get("tool_id"))))
        elif kind == "tool_result":
            flush()
            result = event.get("output") if event.get("output") is not None else get(event, "error", "message")
            out.steps.append(step("tool_result", result=clip(result or ""), id=label(event.get("tool_id")),
                                  status=label(event.get("status"))))
        elif kind in ("error", "result"):
            flush()
            message = get(event, "error", "message") or (event.get("message") if kind == "error" else None)
            if message is not None:
                out.steps.append(step("message", text=clip(message), role="error"))
    flush()
    return out
