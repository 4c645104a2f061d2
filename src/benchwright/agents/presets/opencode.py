"""opencode (``opencode run``) with a custom OpenAI-compatible provider, printing JSON events."""

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
from benchwright.agents.presets._parse import arguments, clip, get, guarded, json_events, label
from benchwright.agents.presets._shell import KEY_VARIABLE, QUIET, continuing, in_home, json_file, q

CONFIG = ".config/opencode/opencode.json"


class OpenCode(AgentPreset):
    """opencode: the open-source terminal coding agent by SST (npm opencode-ai)."""

    name: ClassVar[str] = "opencode"
    title: ClassVar[str] = "opencode"
    homepage: ClassVar[str] = "https://opencode.ai"
    package: ClassVar[Package] = Package("npm", "opencode-ai", "1.18.33", "opencode")
    wire: ClassVar[Wire] = "openai"

    def command(self, ctx: AgentContext) -> str:
        words = [q(ctx.program), "run", "--format", "json", "--model", q("benchwright/" + ctx.route.model)]
        return continuing(ctx, words)

    def environment(self, ctx: AgentContext) -> dict[str, str]:
        return {
            **QUIET,
            KEY_VARIABLE: ctx.route.key,
            "OPENCODE_CONFIG": in_home(ctx, CONFIG),
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_SHARE": "1",
        }

    def home_files(self, ctx: AgentContext) -> dict[str, bytes]:
        model = ctx.route.model
        return {CONFIG: json_file({
            "$schema": "https://opencode.ai/config.json",
            "provider": {"benchwright": {
                "npm": "@ai-sdk/openai-compatible", "name": "benchwright",
                "options": {"baseURL": ctx.route.openai_base, "apiKey": "{env:" + KEY_VARIABLE + "}"},
                "models": {model: {"name": model}},
            }},
            "model": "benchwright/" + model,
            "small_model": "benchwright/" + model,
            "autoupdate": False,
            "share": "disabled",
            "permission": {"*": "allow"},
        })}

    def convert(self, stdout: bytes, home: HomeReader, ctx: AgentContext) -> Converted:
        return guarded(lambda: convert_events(stdout), stdout)


def convert_events(stdout: bytes) -> Converted:
    """``step_start`` / ``text`` / ``reasoning`` / ``tool_use`` / ``step_finish`` / ``error``."""
    out = Converted()
    for event in json_events(stdout, out):
        kind, part = event.get("type"), event.get("part")
        text = get(part, "text")
        if kind == "text" and isinstance(text, str):
            out.steps.append(step("message", text=clip(text), role="assistant"))
            out.response = out.steps[-1]["text"]
        elif kind == "reasoning" and isinstance(text, str):
            out.steps.append(step("message", text=clip(text), role="thinking"))
        elif kind == "tool_use":
            out.steps.extend(_tool(part))
        elif kind == "error":
            message = get(event, "error", "data", "message") or get(event, "error", "name") or event.get("error")
            out.steps.append(step("message", text=clip(message), role="error"))
    return out


def _tool(part: Any) -> list[dict[str, Any]]:
    tool = get(part, "tool")
    name = clip(tool, 200) if isinstance(tool, str) else "?"
    ident = label(get(part, "callID"))
    state = get(part, "state")
    result = get(state, "output") if get(state, "output") is not None else get(state, "error")
    status = get(state, "status")
    return [step("tool_call", tool=name, arguments=arguments(get(state, "input")), id=ident),
            step("tool_result", tool=name, result=clip(result or ""), id=ident,
                 status=label(status, 50))]
