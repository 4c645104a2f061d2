"""Test helpers for benchwright and its plug-ins: fake model services speaking real HTTP.

See :mod:`benchwright.testing.servers`. Standard library only; nothing here is imported by
benchwright itself.
"""

from benchwright.testing.servers import (
    AnswerFn,
    AnthropicServer,
    FakeServer,
    OpenAIServer,
    RecordedRequest,
    Reply,
)

__all__ = ["AnswerFn", "AnthropicServer", "FakeServer", "OpenAIServer", "RecordedRequest", "Reply"]
