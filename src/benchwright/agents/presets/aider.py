"""Aider (``aider --message-file``) on the OpenAI-compatible endpoint; its markdown chat history
(kept in the private HOME) is converted."""

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
from benchwright.agents.presets._parse import clip, guarded
from benchwright.agents.presets._shell import QUIET, in_home, model_option, q

HISTORY = ".aider/chat.history.md"


class Aider(AgentPreset):
    """Aider: AI pair programming in the terminal (PyPI aider-chat)."""

    name: ClassVar[str] = "aider"
    title: ClassVar[str] = "Aider"
    homepage: ClassVar[str] = "https://aider.chat"
    package: ClassVar[Package] = Package("pip", "aider-chat", "0.86.2", "aider")
    wire: ClassVar[Wire] = "openai"

    def command(self, ctx: AgentContext) -> str:
        words = [q(ctx.program), "--model", q("openai/" + ctx.route.model),
                 "--yes-always", "--no-auto-commits", "--no-dirty-commits", "--no-gitignore",
                 "--no-check-update", "--no-analytics", "--analytics-disable",
                 "--no-show-model-warnings", "--no-show-release-notes",
                 "--no-pretty", "--no-stream", "--no-fancy-input",
                 "--input-history-file", q(in_home(ctx, ".aider/input.history")),
                 "--chat-history-file", q(in_home(ctx, HISTORY)),
                 "--llm-history-file", q(in_home(ctx, ".aider/llm.history"))]
        edit_format = model_option(ctx, "edit_format", "")
        if edit_format:
            words += ["--edit-format", q(edit_format)]
        if ctx.options.get("repo_map") is not True:
            words += ["--map-tokens", "0"]
        if ctx.turn > 1:
            words.append("--restore-chat-history")
        return " ".join(words) + f" --message-file {q(ctx.prompt_file)} < /dev/null"

    def environment(self, ctx: AgentContext) -> dict[str, str]:
        return {
            **QUIET,
            "OPENAI_API_BASE": ctx.route.openai_base,
            "OPENAI_API_KEY": ctx.route.key,
            "AIDER_CHECK_UPDATE": "false",
            "AIDER_ANALYTICS": "false",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }

    def convert(self, stdout: bytes, home: HomeReader, ctx: AgentContext) -> Converted:
        return guarded(lambda: convert_history(home(HISTORY), stdout), stdout)


def convert_history(data: bytes | None, stdout: bytes) -> Converted:
    """The last session of aider's markdown history: ``#### `` lines are the user's, ``> ``
    lines aider's own notes (``Applied edit to F`` becomes a tool result), the rest the model's."""
    text = (data if data is not None else stdout).decode(errors="replace")
    marker = "# aider chat started at"
    lines = text.rsplit(marker, 1)[-1].splitlines()[1:] if marker in text else text.splitlines()
    out = Converted()
    block: list[str] = []
    role = ""

    def flush() -> None:
        body = "\n".join(block).strip()
        if body:
            out.steps.append(step("message", text=clip(body), role=role))
            if role == "assistant":
                out.response = out.steps[-1]["text"]
        block.clear()

    for line in lines:
        kind, content = _line(line)
        if kind == "edit":
            flush()
            out.steps.append(step("tool_result", tool="apply_edit", result=clip(content)))
            continue
        if kind != role:
            flush()
            role = kind
        block.append(content)
    flush()
    return out


def _line(line: str) -> tuple[str, Any]:
    if line.startswith("#### "):
        return "user", line[5:].rstrip()
    if line.startswith(">"):
        note = line[1:].strip()
        return ("edit", note) if note.startswith("Applied edit to ") else ("aider", note)
    return "assistant", line
