"""Test helpers for benchwright and its plug-ins: fake model services speaking real HTTP.

See :mod:`benchwright.testing.servers` (the servers), :mod:`benchwright.testing.reply` (what they
answer and record), :mod:`benchwright.httpserve` (the HTTP/1.1 server under them) and
:mod:`benchwright.testing.script` (the scripted model of ``benchwright serve-model``, the only
part benchwright itself imports, when that command runs). No third-party packages beyond
benchwright's own.
"""

from benchwright.testing.script import ScriptedModel, ScriptedServer
from benchwright.testing.servers import (
    AnswerFn,
    AnthropicServer,
    FakeServer,
    OpenAIServer,
    RecordedRequest,
    Reply,
)

__all__ = ["AnswerFn", "AnthropicServer", "FakeServer", "OpenAIServer", "RecordedRequest", "Reply",
           "ScriptedModel", "ScriptedServer"]
