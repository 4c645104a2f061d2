"""The HTTP/1.1 server under the fake services, now :mod:`benchwright.httpserve` (the model proxy
uses it too); re-exported here for code written against this module."""

from benchwright.httpserve import _HEAD_LIMIT as _HEAD_LIMIT
from benchwright.httpserve import HTTPServerBase, RecordedRequest, Response, http_reason, sse
from benchwright.httpserve import _Response as _Response

__all__ = ["HTTPServerBase", "RecordedRequest", "Response", "http_reason", "sse"]
