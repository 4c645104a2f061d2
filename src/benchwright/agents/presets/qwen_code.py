"""Qwen Code (``qwen``) on the OpenAI-compatible endpoint, printing stream-json."""

from __future__ import annotations

from typing import ClassVar

from benchwright.agents.preset import (
    AgentContext,
    AgentPreset,
    Converted,
    HomeReader,
    Package,
    Wire,
)
from benchwright.agents.presets._parse import guarded
from benchwright.agents.presets._shell import QUIET, json_file, q
from benchwright.agents.presets.claude_stream import convert_stream_json


class QwenCode(AgentPreset):
    """Qwen Code: the Gemini-CLI-derived agent of the Qwen team (npm @qwen-code/qwen-code)."""

    name: ClassVar[str] = "qwen-code"
    title: ClassVar[str] = "Qwen Code"
    homepage: ClassVar[str] = "https://github.com/QwenLM/qwen-code"
    package: ClassVar[Package] = Package(
        "npm", "@qwen-code/qwen-code", "0.15.10", "qwen",
        note="0.16 and later need Node >= 22; 0.15.10 is the newest release for Node 20")
    wire: ClassVar[Wire] = "openai"

    def command(self, ctx: AgentContext) -> str:
        words = [q(ctx.program), "--yolo", "--output-format", "stream-json",
                 "--auth-type", "openai", "--model", q(ctx.route.model)]
        if ctx.turn > 1:
            words.append("--continue")
        return " ".join(words) + f" < {q(ctx.prompt_file)}"

    def environment(self, ctx: AgentContext) -> dict[str, str]:
        return {
            **QUIET,
            "OPENAI_BASE_URL": ctx.route.openai_base,
            "OPENAI_API_KEY": ctx.route.key,
            "OPENAI_MODEL": ctx.route.model,
        }

    def home_files(self, ctx: AgentContext) -> dict[str, bytes]:
        return {".qwen/settings.json": json_file({
            "security": {"auth": {"selectedType": "openai"}},
            "model": {"name": ctx.route.model},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        })}

    def convert(self, stdout: bytes, home: HomeReader, ctx: AgentContext) -> Converted:
        return guarded(lambda: convert_stream_json(stdout), stdout)
