"""schemathesis against the API's own OpenAPI schema, in-process: whatever it sends, the server
answers with a status it documents, never a 5xx."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from benchwright.server.api import create_app
from benchwright.workspace import Workspace
from benchwright.workspace.workspace import init_workspace


def _app() -> object:
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="bw-fuzz-")) / "ws"
    init_workspace(folder)
    app = create_app(Workspace.open(folder))

    async def on_loopback(scope: dict[str, Any], receive: Any, send: Any) -> None:
        """schemathesis calls its ASGI app as host 'testserver'; the server without --auth
        answers loopback names only (tests/server/test_guard.py)."""
        if scope["type"] in ("http", "websocket"):
            scope = {**scope, "headers": [(k, b"localhost" if k == b"host" else v)
                                          for k, v in scope["headers"]]}
        await app(scope, receive, send)

    return on_loopback


schema = schemathesis.openapi.from_asgi("/api/openapi.json", _app())


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_request_makes_the_server_fail(case: schemathesis.Case) -> None:
    if case.method == "POST" and case.path in ("/api/runs", "/api/runs/{run_id}/cancel"):
        case.body = {"config": "configs/does-not-exist.yaml"} if case.path == "/api/runs" else case.body
    response = case.call()
    assert response.status_code < 500, (case.method, case.path, response.text[:500])
