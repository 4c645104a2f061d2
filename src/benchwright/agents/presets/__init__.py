"""benchwright's own agent presets, one module each; registered under the ``agent-preset`` kind
by :mod:`benchwright.builtins` exactly as a third-party package registers its own."""

from __future__ import annotations

from benchwright.agents.preset import AgentPreset
from benchwright.agents.presets.aider import Aider
from benchwright.agents.presets.claude_code import ClaudeCode
from benchwright.agents.presets.codex import Codex
from benchwright.agents.presets.gemini_cli import GeminiCli
from benchwright.agents.presets.mini_swe_agent import MiniSweAgent
from benchwright.agents.presets.opencode import OpenCode
from benchwright.agents.presets.qwen_code import QwenCode

PRESETS: tuple[type[AgentPreset], ...] = (MiniSweAgent, Aider, ClaudeCode, Codex, GeminiCli, QwenCode,
                                          OpenCode)
