"""The REST API of ``benchwright serve`` (FastAPI, under ``/api``; OpenAPI at ``/api/docs``).

Every route calls :class:`~benchwright.server.service.Service`; every error has one JSON shape::

    {"error": {"status": 412, "code": "conflict", "message": "...", "problems": [...]}}

``problems`` (validation) has the same fields as ``benchwright validate`` prints: file, line,
path in the document, message, hint, severity. Reads need the ``viewer`` role, writes and
launches ``editor``, token management ``admin`` (with ``--auth``; without it every request is
allowed and the server listens on loopback only).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.body_limit import RequestBodyLimitMiddleware

from benchwright import __version__
from benchwright.errors import InfraError, InputError, Problem, UserError
from benchwright.results.jsonl import SkippedLines
from benchwright.run.estimate import Preview
from benchwright.run.progress import RunProgress
from benchwright.server import auth
from benchwright.server.guard import MAX_BODY_MB, Guard
from benchwright.server.service import FOLDERS, Conflict, FileKind, NotFound, Service
from benchwright.workspace import Workspace


class ProblemOut(BaseModel):
    file: str
    line: int | None
    path: str
    message: str
    hint: str
    severity: str

    @classmethod
    def of(cls, p: Problem) -> ProblemOut:
        return cls(file=p.file, line=p.line, path=p.path, message=p.message, hint=p.hint, severity=p.severity)


class ErrorBody(BaseModel):
    status: int
    code: str
    message: str
    problems: list[ProblemOut] = Field(default_factory=list)
    etag: str | None = Field(default=None, description="conflict: the current version's ETag")


class ErrorOut(BaseModel):
    error: ErrorBody


class FileOut(BaseModel):
    kind: FileKind
    path: str
    size: int
    modified: str


class FileTextOut(BaseModel):
    path: str
    kind: FileKind
    text: str
    etag: str


class FileWrite(BaseModel):
    text: str = Field(description="the whole new content (YAML)")


class WrittenOut(BaseModel):
    path: str
    etag: str
    warnings: list[ProblemOut]


class NewFileIn(BaseModel):
    path: str = Field(description="the new file, e.g. tasks/my-tasks.yaml (in configs/, tasks/ "
                      "or scenarios/, ending .yaml, not existing)")


class SettingsOut(BaseModel):
    path: str
    text: str = Field(description="benchwright.yaml; empty when the workspace has none")
    etag: str = Field(description='its version for If-Match ("*" when there is no file yet)')


class CheckIn(BaseModel):
    path: str = Field(description="where the text would be saved, e.g. configs/x.yaml")
    text: str


class CheckOut(BaseModel):
    ok: bool
    problems: list[ProblemOut]


class LaunchIn(BaseModel):
    config: str = Field(description="the execution config, e.g. configs/example.yaml")
    task_sources: list[str] = Field(default_factory=list, description="instead of the config's")
    run_id: str | None = Field(default=None, max_length=100, description=(
        "the run's name (its folder in results/): letters, digits, '.', '_', '-'; a name a run "
        "has already is refused; none: CONFIG-DATE-TIME-XXXX"))


class RunOut(BaseModel):
    run_id: str
    state: str = Field(description="starting, running, interrupted (stopped or cancelled: resumable), completed, failed, "
                       "damaged or unknown; the same as `benchwright status` says")
    status: dict[str, Any] = Field(description="status.yaml as the run wrote it")
    exit_code: int | None = Field(description="how the process this server started ended (None: "
                                  "still running, not started here, or cancelled)")
    reason: str | None = Field(None, description="why the state differs from status.yaml's")
    resumable: bool = Field(False, description="whether /resume (and /retry-errors) applies")
    progress: RunProgress = Field(description="counts overall, per task source and per model; ETAs")
    created: str | None = Field(None, description="when the run was created (run.yaml)")
    config: str | None = Field(None, description="the execution config's file name")
    models: list[str] = Field(default_factory=list, description="the models and agents of the run")
    pass_rate: float | None = Field(None, description="share of samples that passed (summary.yaml); "
                                    "None: no summary yet, not measured")
    model_pass_rates: dict[str, float | None] = Field(default_factory=dict)


class RecordsOut(BaseModel):
    total: int
    offset: int
    limit: int
    records: list[dict[str, Any]]
    skipped_lines: SkippedLines | None = Field(
        default=None, description="Lines of records.jsonl that could not be read and were left out "
        "(torn, not UTF-8, not a record), with their place; absent when every line was read.")


ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 403, 404, 412, 422, 500)}

Viewer = Annotated[auth.TokenInfo | None, Depends(auth.require("viewer"))]
Editor = Annotated[auth.TokenInfo | None, Depends(auth.require("editor"))]
Admin = Annotated[auth.TokenInfo | None, Depends(auth.require("admin"))]


def kind_of(path: str) -> FileKind:
    """The kind of a workspace file from its folder (``configs/``, ``tasks/``, ``scenarios/``).

    Raises:
        UserError: the file is in none of them.
    """
    top = path.split("/", 1)[0]
    for kind, folder in FOLDERS.items():
        if top == folder:
            return kind
    raise UserError(f"{path!r}: files the API edits live in {', '.join(f + '/' for f in FOLDERS.values())}")


def _error(status: int, code: str, message: str, headers: dict[str, str] | None = None,
           **extra: Any) -> JSONResponse:
    body = ErrorOut(error=ErrorBody(status=status, code=code, message=message, **extra))
    return JSONResponse(body.model_dump(mode="json"), status_code=status, headers=headers)


DOCS_ASSETS = "/api/docs/assets"
"""Where Swagger UI's script, style and icon are served from (never a CDN: docs work offline)."""


def _offline_docs(app: FastAPI) -> None:
    """Swagger UI at ``/api/docs`` from the files the ``fastapi-offline`` package ships, served
    by this server under :data:`DOCS_ASSETS`: the page needs no network beyond the server."""
    from pathlib import Path

    import fastapi_offline
    from fastapi.openapi.docs import get_swagger_ui_html
    from fastapi.responses import HTMLResponse
    from fastapi.staticfiles import StaticFiles

    assets = Path(fastapi_offline.__file__).parent / "static"
    app.mount(DOCS_ASSETS, StaticFiles(directory=assets), name="docs-assets")

    @app.get("/api/docs", include_in_schema=False)
    async def _docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/api/openapi.json", title="benchwright API",
            swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{DOCS_ASSETS}/favicon.png")


def create_app(ws: Workspace, *, auth_on: bool = False, with_ui: bool = False,
               max_body_mb: float = MAX_BODY_MB) -> FastAPI:
    """The application: the API under ``/api`` for the workspace ``ws``, and with ``with_ui``
    the web UI under ``/ui`` (once per process: NiceGUI's pages are global). Every request
    passes :class:`~benchwright.server.guard.Guard` first (loopback ``Host`` names only without
    ``auth_on``, no cross-origin browser requests, frame protection) and bodies are limited to
    ``max_body_mb`` MiB (413)."""
    app = FastAPI(title="benchwright", version=__version__, docs_url=None,
                  openapi_url="/api/openapi.json", redoc_url=None)
    _offline_docs(app)
    max_body = int(max_body_mb * 1024 * 1024)
    app.add_middleware(RequestBodyLimitMiddleware, max_body_size=max_body)
    app.add_middleware(Guard, loopback_only=not auth_on, max_body=max_body)
    service = Service(ws)
    app.state.service = service
    app.state.auth = auth.Auth(auth.TokenStore(ws) if auth_on else None)

    @app.exception_handler(auth.AuthError)
    async def _auth(request: Request, exc: auth.AuthError) -> JSONResponse:
        return _error(exc.status, exc.code, exc.message, headers=exc.headers or None)

    @app.exception_handler(NotFound)
    async def _missing(request: Request, exc: NotFound) -> JSONResponse:
        return _error(404, "not_found", str(exc))

    @app.exception_handler(Conflict)
    async def _conflict(request: Request, exc: Conflict) -> JSONResponse:
        return _error(412, "conflict", str(exc), etag=exc.current or None)

    @app.exception_handler(InputError)
    async def _invalid(request: Request, exc: InputError) -> JSONResponse:
        return _error(422, "invalid", f"{len(exc.problems)} problem(s)",
                      problems=[ProblemOut.of(p) for p in exc.problems])

    @app.exception_handler(UserError)
    async def _bad(request: Request, exc: UserError) -> JSONResponse:
        return _error(400, "bad_request", str(exc))

    @app.exception_handler(RequestValidationError)
    async def _request(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [ProblemOut(file="request", line=None, path=".".join(str(x) for x in e.get("loc", ())),
                               message=str(e.get("msg")), hint="", severity="error") for e in exc.errors()]
        return _error(422, "invalid_request", "the request is not valid", problems=problems)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = {404: "not_found", 405: "method_not_allowed", 413: "too_large"}.get(
            exc.status_code, "http_error")
        if exc.status_code == 413:
            return _error(413, code, f"the request body is larger than {max_body_mb:g} MiB "
                          "(benchwright serve --max-body-mb)")
        return _error(exc.status_code, code, str(exc.detail))

    @app.exception_handler(InfraError)
    async def _damaged(request: Request, exc: InfraError) -> JSONResponse:
        return _error(500, "infra_error", service.shown(exc))

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> JSONResponse:
        return _error(500, "internal", f"{type(exc).__name__}: the server failed (see its log)")

    api = APIRouter(prefix="/api", responses=ERRORS)

    @api.get("/health")
    def health(_: Viewer) -> dict[str, Any]:
        return {"ok": True, "version": __version__, "workspace": str(ws.root), "auth": auth_on}

    @api.get("/files")
    def list_files(_: Viewer, kind: FileKind | None = None) -> list[FileOut]:
        return [FileOut(kind=f.kind, path=f.path, size=f.size, modified=f.modified)
                for f in service.list_files(kind)]

    @api.get("/files/{path:path}")
    def read_file(path: str, _: Viewer, response: Response) -> FileTextOut:
        kind = kind_of(path)
        got = service.read_file(path, kind)
        response.headers["ETag"] = got.etag
        return FileTextOut(path=got.path, kind=kind, text=got.text, etag=got.etag)

    @api.put("/files/{path:path}")
    def write_file(path: str, body: FileWrite, _: Editor, response: Response,
                   if_match: Annotated[str | None, Header()] = None) -> WrittenOut:
        """Save a file when it validates and is still the version ``If-Match`` names (412
        otherwise: re-read and redo the edit). A new file: ``If-Match: *`` or none."""
        written, warnings = service.write_file(path, body.text, kind_of(path), if_match)
        response.headers["ETag"] = written.etag
        return WrittenOut(path=written.path, etag=written.etag, warnings=[ProblemOut.of(p) for p in warnings])

    @api.post("/files", status_code=201)
    def new_file(body: NewFileIn, _: Editor, response: Response) -> FileTextOut:
        """Create a file from its kind's starter (a small valid config, task source or
        scenario); 412 when it exists. Edit it then with PUT and the returned ETag."""
        kind = kind_of(body.path)
        made = service.create_file(body.path, kind)
        response.headers["ETag"] = made.etag
        return FileTextOut(path=made.path, kind=kind, text=made.text, etag=made.etag)

    @api.get("/settings")
    def read_settings(_: Viewer, response: Response) -> SettingsOut:
        """The workspace settings, ``benchwright.yaml`` (env var names only, never secrets)."""
        got = service.read_settings()
        response.headers["ETag"] = got.etag
        return SettingsOut(path=got.path, text=got.text, etag=got.etag)

    @api.put("/settings")
    def write_settings(body: FileWrite, _: Admin, response: Response,
                       if_match: Annotated[str | None, Header()] = None) -> WrittenOut:
        """Save ``benchwright.yaml`` (admin only) when it is valid settings and still the version
        ``If-Match`` names (412 otherwise); the server uses the new settings at once."""
        written, warnings = service.write_settings(body.text, if_match)
        response.headers["ETag"] = written.etag
        return WrittenOut(path=written.path, etag=written.etag, warnings=[ProblemOut.of(p) for p in warnings])

    @api.post("/validate")
    def check(body: CheckIn, _: Viewer) -> CheckOut:
        """What ``validate`` says of a text, as if saved at ``path`` (nothing is written)."""
        problems = service.check_text(body.path, body.text, kind_of(body.path))
        return CheckOut(ok=not any(p.severity == "error" for p in problems),
                        problems=[ProblemOut.of(p) for p in problems])

    @api.get("/runs")
    def runs(_: Viewer) -> list[RunOut]:
        """Every run, newest first: state, counts, config, models and pass rate."""
        return [RunOut(**r) for r in service.runs()]

    @api.post("/runs/preview")
    def preview(body: LaunchIn, _: Viewer) -> Preview:
        """What launching the same body would run: tasks x languages x models x samples, the
        test executions, the generations already cached and the estimated cost (nothing starts)."""
        if body.run_id:
            service.check_run_id(body.run_id)
        return Preview(**service.preview(body.config, body.task_sources))

    @api.post("/runs", status_code=202)
    def launch(body: LaunchIn, _: Editor) -> RunOut:
        """Start a run (every problem of its files is reported before anything starts)."""
        rid = service.launch(body.config, body.task_sources, body.run_id)
        service.wait_started(rid)
        return RunOut(**service.status(rid))

    @api.get("/runs/{run_id}")
    def run_status(run_id: str, _: Viewer) -> RunOut:
        return RunOut(**service.status(run_id))

    @api.post("/runs/{run_id}/cancel")
    def cancel(run_id: str, _: Editor) -> RunOut:
        """Stop a running run; its state becomes ``interrupted`` (resumable), ``status.cancelled``
        says when."""
        return RunOut(**service.cancel(run_id))

    @api.post("/runs/{run_id}/resume", status_code=202)
    def resume(run_id: str, _: Editor) -> RunOut:
        """Finish a stopped run where it stopped (``benchwright run --resume ID``)."""
        return RunOut(**service.resume(run_id))

    @api.post("/runs/{run_id}/retry-errors", status_code=202)
    def retry_errors(run_id: str, _: Editor) -> RunOut:
        """Resume the run and run its infra_error samples again (``--resume ID --retry-errors``)."""
        return RunOut(**service.resume(run_id, retry_errors=True))

    @api.get("/runs/{run_id}/summary")
    def summary(run_id: str, _: Viewer) -> dict[str, Any]:
        return service.summary(run_id)

    @api.get("/runs/{run_id}/records")
    def records(run_id: str, _: Viewer,
                model: str | None = None, task: str | None = None, criterion: str | None = None,
                verdict: Literal["pass", "fail", "n/a"] | None = None, language: str | None = None,
                task_source: str | None = None, outcome: str | None = None,
                offset: Annotated[int, Query(ge=0)] = 0,
                limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> RecordsOut:
        skipped = SkippedLines()
        total, page = service.records(run_id, filters={
            "model": model, "task": task, "criterion": criterion, "verdict": verdict,
            "language": language, "task_source": task_source, "outcome": outcome},
            offset=offset, limit=limit, skipped=skipped)
        return RecordsOut(total=total, offset=offset, limit=limit, records=page,
                          skipped_lines=skipped if skipped else None)

    @api.get("/compare")
    def compare(a: str, b: str, _: Viewer) -> dict[str, Any]:
        return service.compare(a, b)

    app.include_router(api)
    app.include_router(auth.router)
    if with_ui:
        from benchwright.server.ui import mount_ui

        mount_ui(app, service, auth_on=auth_on)
    return app
