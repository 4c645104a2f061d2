"""Test helpers for benchwright and its plug-ins: fake model services speaking real HTTP.

See :mod:`benchwright.testing.servers` (the servers), :mod:`benchwright.testing.reply` (what they
answer and record) and :mod:`benchwright.httpserve` (the HTTP/1.1 server under them). Standard
library only; nothing here is imported by benchwright itself.
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
