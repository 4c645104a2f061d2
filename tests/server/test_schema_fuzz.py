"""schemathesis against the API's own OpenAPI schema, in-process: whatever it sends, the server
answers with a status it documents, never a 5xx."""

from __future__ import annotations

from pathlib import Path

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
    return create_app(Workspace.open(folder))


schema = schemathesis.openapi.from_asgi("/api/openapi.json", _app())


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_request_makes_the_server_fail(case: schemathesis.Case) -> None:
    if case.method == "POST" and case.path in ("/api/runs", "/api/runs/{run_id}/cancel"):
        case.body = {"config": "configs/does-not-exist.yaml"} if case.path == "/api/runs" else case.body
    response = case.call()
    assert response.status_code < 500, (case.method, case.path, response.text[:500])
