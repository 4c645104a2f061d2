"""The ``reference`` provider: answers every task with its golden solution (no API key)."""

from __future__ import annotations

import re

from benchwright.errors import InfraError
from benchwright.model.base import Answer, GenerationRequest, Provider


def estimate_tokens(text: str) -> int:
    """A rough token count (words, numbers and punctuation runs) for services that give none."""
    return len(re.findall(r"\w+|[^\w\s]+", text))


class ReferenceProvider(Provider):
    """Answers with the task's golden solution, as a model would: fenced in instruct mode,
    the continuation of the prompt in complete mode."""

    async def generate(self, request: GenerationRequest) -> Answer:
        golden = request.golden
        if golden is None:
            raise InfraError(f"the task has no golden solution for {request.language}")
        if request.mode == "complete":
            text = golden[len(request.prompt):] if golden.startswith(request.prompt) else golden
        else:
            text = f"```{request.language}\n{golden.rstrip()}\n```\n"
        prompt_text = "\n".join(m["content"] for m in request.messages) or request.prompt
        return Answer(
            text=text,
            tokens_in=estimate_tokens(prompt_text),
            tokens_out=estimate_tokens(text),
            tokens_estimated=True,
            finish_reason="stop",
            cost_usd=0.0,
        )
