"""mini-SWE-agent (``mini``): a bash-only agent on litellm, pointed at the OpenAI-compatible
endpoint; its trajectory JSON is saved into the private HOME and converted."""

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
from benchwright.agents.presets._parse import (
    arguments,
    clip,
    get,
    guarded,
    label,
    parse_json,
    text_of,
)
from benchwright.agents.presets._shell import QUIET, in_home, prompt_arg, q


def trajectory_path(turn: int) -> str:
    """Where a turn's trajectory is saved, relative to HOME."""
    return f".benchwright/mini/turn-{turn}.traj.json"


class MiniSweAgent(AgentPreset):
    """mini-SWE-agent: the 100-line bash-only agent (PyPI mini-swe-agent)."""

    name: ClassVar[str] = "mini-swe-agent"
    title: ClassVar[str] = "mini-SWE-agent"
    homepage: ClassVar[str] = "https://mini-swe-agent.com"
    package: ClassVar[Package] = Package("pip", "mini-swe-agent", "2.4.6", "mini")
    wire: ClassVar[Wire] = "openai"

    def command(self, ctx: AgentContext) -> str:
        return " ".join([
            q(ctx.program), "--yolo", "--exit-immediately", "--cost-limit", "0",
            "--model", q("openai/" + ctx.route.model),
            "--task", prompt_arg(ctx),
            "--output", q(in_home(ctx, trajectory_path(ctx.turn))),
            "< /dev/null",
        ])

    def environment(self, ctx: AgentContext) -> dict[str, str]:
        return {
            **QUIET,
            "OPENAI_API_BASE": ctx.route.openai_base,
            "OPENAI_BASE_URL": ctx.route.openai_base,
            "OPENAI_API_KEY": ctx.route.key,
            "MSWEA_CONFIGURED": "true",
            "MSWEA_COST_TRACKING": "ignore_errors",
            "MSWEA_SILENT_STARTUP": "1",
            "MSWEA_GLOBAL_CONFIG_DIR": in_home(ctx, ".config/mini-swe-agent"),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_TELEMETRY": "False",
        }

    def convert(self, stdout: bytes, home: HomeReader, ctx: AgentContext) -> Converted:
        return guarded(lambda: convert_trajectory(home(trajectory_path(ctx.turn)), stdout), stdout)


def convert_trajectory(data: bytes | None, stdout: bytes) -> Converted:
    doc = parse_json(data) if data is not None else None
    messages = get(doc, "messages")
    if not isinstance(messages, list):
        tail = stdout[-20_000:].decode(errors="replace")
        return Converted(steps=[step("message", text=tail, role="output")] if tail.strip() else [])
    out = Converted()
    for message in messages:
        out.steps.extend(_message(message))
    submission = get(doc, "info", "submission")
    last_text = next((s["text"] for s in reversed(out.steps)
                      if s["kind"] == "message" and s.get("role") == "assistant" and "text" in s), None)
    out.response = clip(submission) if isinstance(submission, str) and submission.strip() else last_text
    return out


def _message(message: Any) -> list[dict[str, Any]]:
    role = get(message, "role")
    content = text_of(get(message, "content"))
    if role == "tool":
        return [step("tool_result", tool="bash", result=content or "",
                     id=label(get(message, "tool_call_id")),
                     returncode=_int(get(message, "extra", "returncode")))]
    if role == "exit":
        return [step("message", text=content or "", role="exit",
                     status=label(get(message, "extra", "exit_status")))]
    steps = []
    if content:
        steps.append(step("message", text=content, role=label(role) or "unknown"))
    calls = get(message, "tool_calls")
    for call in calls if isinstance(calls, list) else []:
        steps.append(step("tool_call", tool=label(get(call, "function", "name")) or "?",
                          arguments=arguments(get(call, "function", "arguments")),
                          id=label(get(call, "id"))))
    return steps


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
