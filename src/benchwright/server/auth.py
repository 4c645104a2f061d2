"""Access tokens of ``benchwright serve --auth``: roles, the token store and the API's guard.

A token is ``bw_<id>_<secret>``. The ``id`` is short and public (it names the token in
``benchwright token list`` and in ``DELETE /api/tokens/{id}``); the whole token is shown once,
when it is made, and only its SHA-256 is kept, in ``.benchwright/tokens.json`` (mode 0600).

Roles are ordered ``viewer < editor < admin``: viewers read, editors also edit files and launch
runs, admins also manage tokens. Every API route depends on :func:`require` with the role it
needs; the app holds an :class:`Auth` in ``app.state.auth`` (``Auth(None)``: auth is off and
every request is let through).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import hashlib
import hmac
import os
import re
import secrets
from collections.abc import Awaitable, Callable, Iterator
from typing import Annotated, Literal, get_args

from fastapi import APIRouter, Depends, status
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import HTTPConnection

from benchwright.errors import UserError
from benchwright.workspace import Workspace
from benchwright.yamldoc import atomic_write

Role = Literal["viewer", "editor", "admin"]
ROLES: tuple[Role, ...] = get_args(Role)
"""The roles, lowest first."""

TOKENS_FILE = "tokens.json"
TOKEN_HEADER = "X-Benchwright-Token"
_TOKEN_RE = re.compile(r"bw_([0-9a-f]{8})_([A-Za-z0-9_-]{16,128})")


def allows(have: Role, need: Role) -> bool:
    """Whether a token of role ``have`` may do what needs ``need`` (viewer < editor < admin)."""
    return ROLES.index(have) >= ROLES.index(need)


def check_role(role: str) -> Role:
    """``role`` as a :data:`Role`.

    Raises:
        UserError: not one of viewer, editor, admin.
    """
    for r in ROLES:
        if role == r:
            return r
    raise UserError(f"unknown role {role!r}: choose {', '.join(ROLES)}")


class TokenInfo(BaseModel):
    """What may be shown about a token: never the token, never its hash."""

    model_config = ConfigDict(frozen=True)

    id: str
    role: Role
    name: str | None = None
    created: str
    """When it was made (ISO 8601, UTC)."""


class CreatedToken(TokenInfo):
    """A new token with its secret, returned once."""

    token: str


class _Entry(BaseModel):
    """One line of ``tokens.json``."""

    id: str
    role: Role
    name: str | None = None
    sha256: str
    created: str

    def info(self) -> TokenInfo:
        return TokenInfo(id=self.id, role=self.role, name=self.name, created=self.created)


class _File(BaseModel):
    version: Literal[1] = 1
    tokens: list[_Entry] = []


_Entries = list[_Entry]  # TokenStore.list hides the builtin inside the class


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class TokenStore:
    """The tokens of a workspace, in ``<workspace>/.benchwright/tokens.json``.

    Every call reads the file (parsed again only when its bytes changed), so a token made or
    revoked with the CLI counts at once in a running server. Changes hold an exclusive lock on
    ``tokens.json.lock`` and replace the file atomically.
    """

    def __init__(self, ws: Workspace) -> None:
        self.path = ws.state / TOKENS_FILE
        self._cache: tuple[bytes, _Entries] | None = None

    def create(self, role: Role, name: str | None = None) -> tuple[str, TokenInfo]:
        """Make a token; return it (the only time it is shown) and its public info.

        Raises:
            UserError: unknown role, or ``tokens.json`` is unreadable.
        """
        role = check_role(role)
        name = (name or "").strip() or None
        with self._locked():
            entries = self._read()
            taken = {e.id for e in entries}
            token_id = secrets.token_hex(4)
            while token_id in taken:
                token_id = secrets.token_hex(4)
            token = f"bw_{token_id}_{secrets.token_urlsafe(32)}"
            created = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
            entry = _Entry(id=token_id, role=role, name=name, sha256=_digest(token), created=created)
            self._write([*entries, entry])
        return token, entry.info()

    def verify(self, token: str) -> TokenInfo | None:
        """The token's info if ``token`` is a live token of this store, else ``None``.

        Raises:
            UserError: ``tokens.json`` is unreadable.
        """
        match = _TOKEN_RE.fullmatch(token)
        if match is None:
            return None
        digest = _digest(token)
        found: _Entry | None = None
        for entry in self._read():
            # compare every entry's hash in constant time; the id only picks the winner
            same = hmac.compare_digest(digest, entry.sha256)
            if same and entry.id == match.group(1):
                found = entry
        return found.info() if found is not None else None

    def still(self, info: TokenInfo) -> TokenInfo | None:
        """``info`` as the store has it now: None once its token was revoked (a web UI session
        signed in with a token keeps its info, never the token, and asks again each time).

        Raises:
            UserError: ``tokens.json`` is unreadable.
        """
        for entry in self._read():
            if entry.id == info.id and entry.created == info.created:
                return entry.info()
        return None

    def list(self) -> list[TokenInfo]:
        """Every live token, oldest first.

        Raises:
            UserError: ``tokens.json`` is unreadable.
        """
        return [e.info() for e in self._read()]

    def revoke(self, token_id: str) -> bool:
        """Delete the token ``token_id``; whether there was one.

        Raises:
            UserError: ``tokens.json`` is unreadable.
        """
        with self._locked():
            entries = self._read()
            kept = [e for e in entries if e.id != token_id]
            if len(kept) == len(entries):
                return False
            self._write(kept)
        return True

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.parent / (TOKENS_FILE + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _read(self) -> _Entries:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as e:
            raise UserError(f"cannot read {self.path}: {e.strerror}") from None
        if self._cache is not None and self._cache[0] == raw:
            return list(self._cache[1])
        try:
            entries = _File.model_validate_json(raw).tokens
        except ValueError as e:  # pydantic's ValidationError is a ValueError
            raise UserError(f"{self.path} is unreadable ({type(e).__name__}); fix it, or delete it "
                            "and make new tokens with 'benchwright token create'") from None
        self._cache = (raw, entries)
        return list(entries)

    def _write(self, entries: _Entries) -> None:
        text = _File(tokens=entries).model_dump_json(indent=2) + "\n"
        atomic_write(self.path, text, mode=0o600)  # private from the start
        os.chmod(self.path, 0o600)
        self._cache = None


class Auth:
    """The access policy of a server: ``Auth(store)`` checks tokens, ``Auth(None)`` lets all in."""

    def __init__(self, store: TokenStore | None) -> None:
        self.store = store

    @property
    def enabled(self) -> bool:
        return self.store is not None


class AuthError(UserError):
    """A request the server refuses: 401 ``unauthorized`` (no token, or not a live one), 403
    ``forbidden`` (role too low); the token routes also raise it with 404 ``not_found``.

    ``headers`` are to be sent with the response (``WWW-Authenticate`` on 401).
    """

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.headers: dict[str, str] = (
            {"WWW-Authenticate": 'Bearer realm="benchwright"'} if status == 401 else {})


_bearer = HTTPBearer(auto_error=False, description="A token from 'benchwright token create'.")
_header = APIKeyHeader(name=TOKEN_HEADER, auto_error=False,
                       description="The same token, for clients that cannot send Authorization.")


def _auth_of(conn: HTTPConnection) -> Auth:
    auth = getattr(conn.app.state, "auth", None)
    if not isinstance(auth, Auth):
        raise RuntimeError("app.state.auth is not set: give the app an Auth before serving")
    return auth


def require(role: Role) -> Callable[..., Awaitable[TokenInfo | None]]:
    """A FastAPI dependency letting through requests whose token has at least ``role``.

    It returns the caller's :class:`TokenInfo`, or ``None`` when auth is off. The token comes
    from ``Authorization: Bearer <token>`` or, failing that, the ``X-Benchwright-Token`` header.

    Raises (from the dependency):
        AuthError: 401 without a live token, 403 when its role is below ``role``.
    """
    role = check_role(role)

    async def dependency(
        conn: HTTPConnection,
        bearer: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
        header: Annotated[str | None, Depends(_header)],
    ) -> TokenInfo | None:
        auth = _auth_of(conn)
        if auth.store is None:
            return None
        if conn.headers.get("authorization") is not None:
            token = bearer.credentials if bearer is not None else ""
        else:
            token = header or ""
        if not token:
            raise AuthError(401, "unauthorized",
                            f"this server needs a token: send 'Authorization: Bearer <token>' or "
                            f"'{TOKEN_HEADER}: <token>' (make one with 'benchwright token create "
                            f"--role {role}')")
        info = auth.store.verify(token.strip())
        if info is None:
            raise AuthError(401, "unauthorized", "the token is wrong or revoked")
        if not allows(info.role, role):
            raise AuthError(403, "forbidden",
                            f"this needs the {role} role; token {info.id} is a {info.role}")
        return info

    dependency.__name__ = f"require_{role}"
    return dependency


class NewToken(BaseModel):
    """The body of ``POST /api/tokens``."""

    model_config = ConfigDict(extra="forbid")

    role: Role
    name: str | None = Field(default=None, max_length=200)


router = APIRouter(prefix="/api/tokens", tags=["auth tokens"])
"""Token management for admins: list, create (the token is in the answer, once), revoke."""


def _store(conn: HTTPConnection) -> TokenStore:
    store = _auth_of(conn).store
    if store is None:
        raise AuthError(404, "not_found", "tokens are off on this server: start it with "
                        "'benchwright serve --auth' (tokens are made with 'benchwright token create')")
    return store


Admin = Annotated[TokenInfo | None, Depends(require("admin"))]


@router.get("", response_model=list[TokenInfo], summary="List tokens (admin)")
def list_tokens(conn: HTTPConnection, _: Admin) -> list[TokenInfo]:
    return _store(conn).list()


@router.post("", response_model=CreatedToken, status_code=status.HTTP_201_CREATED,
             summary="Create a token (admin); the answer is the only time it is shown")
def create_token(conn: HTTPConnection, body: NewToken, _: Admin) -> CreatedToken:
    token, info = _store(conn).create(body.role, body.name)
    return CreatedToken(token=token, **info.model_dump())


@router.delete("/{token_id}", status_code=status.HTTP_204_NO_CONTENT, summary="Revoke a token (admin)")
def revoke_token(conn: HTTPConnection, token_id: str, _: Admin) -> None:
    if not _store(conn).revoke(token_id):
        raise AuthError(404, "not_found", f"no token {token_id!r} (see GET /api/tokens)")

