"""Claude Code (``claude -p``) on the Anthropic messages endpoint, printing stream-json."""

from __future__ import annotations

from typing import ClassVar

from benchwright.agents.preset import AgentContext, Package, Wire
from benchwright.agents.presets._shell import QUIET, continuing, q
from benchwright.agents.presets.claude_stream import StreamJsonPreset


class ClaudeCode(StreamJsonPreset):
    """Claude Code: Anthropic's agentic coding CLI (npm @anthropic-ai/claude-code)."""

    name: ClassVar[str] = "claude-code"
    title: ClassVar[str] = "Claude Code"
    homepage: ClassVar[str] = "https://docs.anthropic.com/en/docs/claude-code"
    package: ClassVar[Package] = Package(
        "npm", "@anthropic-ai/claude-code", "2.1.197", "claude",
        note="newer releases need Node >= 22; 2.1.197 is the last one for Node 20")
    wire: ClassVar[Wire] = "anthropic"

    def command(self, ctx: AgentContext) -> str:
        words = [q(ctx.program), "-p", "--output-format", "stream-json", "--verbose",
                 "--dangerously-skip-permissions", "--model", q(ctx.route.model)]
        return continuing(ctx, words)

    def environment(self, ctx: AgentContext) -> dict[str, str]:
        model = ctx.route.model
        return {
            **QUIET,
            "ANTHROPIC_BASE_URL": ctx.route.anthropic_base,
            "ANTHROPIC_API_KEY": ctx.route.key,
            "ANTHROPIC_MODEL": model,
            "ANTHROPIC_SMALL_FAST_MODEL": model,
            "ANTHROPIC_DEFAULT_HAIKU_MODEL": model,
            "ANTHROPIC_DEFAULT_SONNET_MODEL": model,
            "ANTHROPIC_DEFAULT_OPUS_MODEL": model,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "IS_SANDBOX": "1",
        }
