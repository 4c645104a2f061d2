"""Qwen Code (``qwen``) on the OpenAI-compatible endpoint, printing stream-json."""

from __future__ import annotations

from typing import ClassVar

from benchwright.agents.preset import AgentContext, Package, Wire
from benchwright.agents.presets._shell import QUIET, continuing, json_file, q
from benchwright.agents.presets.claude_stream import StreamJsonPreset
from benchwright.agents.presets.gemini_cli import QUIET_SETTINGS


class QwenCode(StreamJsonPreset):
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
        return continuing(ctx, words)

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
            **QUIET_SETTINGS,
        })}
