"""The ``reference`` provider: answers every task with its golden solution (no API key)."""

from __future__ import annotations

from benchwright.errors import InfraError
from benchwright.model.base import Answer, GenerationRequest, Provider


class ReferenceProvider(Provider):
    """Answers with the task's golden solution, as a model would: fenced in instruct mode,
    the continuation of the prompt in complete mode. Free, instant, never cached."""

    cacheable = False
    shared_service = False
    reads_golden = True

    async def generate(self, request: GenerationRequest) -> Answer:
        golden = request.golden
        if golden is None:
            raise InfraError(f"the task has no golden solution for {request.language}")
        if request.mode == "complete":
            text = golden[len(request.prompt):] if golden.startswith(request.prompt) else golden
        else:
            text = f"```{request.language}\n{golden.rstrip()}\n```\n"
        return Answer(text=text, finish_reason="stop", cost_usd=0.0, model="reference")
