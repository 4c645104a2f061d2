"""Who may see and do what in the web UI: with ``serve --auth``, a page asks for a token and an
action checks its role, as the API does.

A sign-in never stores the token. The server keeps, in memory only, which token (its public
info: id, role, when it was made) each browser session signed in with; the browser holds only
NiceGUI's session cookie (an opaque id, signed with the workspace's UI secret). Every check asks
the token store again, so a token revoked with ``benchwright token revoke`` ends the sessions
signed in with it at once, and a server restart ends them all.
"""

from __future__ import annotations

import threading

from benchwright.server.auth import Role, TokenInfo, TokenStore, allows
from benchwright.server.service import Service


class Access:
    def __init__(self, service: Service, auth_on: bool) -> None:
        self.store = TokenStore(service.ws) if auth_on else None
        self._lock = threading.Lock()
        self._sessions: dict[str, TokenInfo] = {}
        """Browser session id -> the token it signed in with (never the token itself)."""

    @staticmethod
    def _session() -> str | None:
        """This page's browser session id (NiceGUI's, from its signed cookie)."""
        from nicegui import context

        try:
            sid = context.client.request.session.get("id")
        except (RuntimeError, AttributeError, AssertionError):
            return None
        return sid if isinstance(sid, str) else None

    def role(self) -> Role | None:
        """The signed-in role (``admin`` when auth is off), or None."""
        if self.store is None:
            return "admin"
        sid = self._session()
        with self._lock:
            info = self._sessions.get(sid) if sid is not None else None
        live = self.store.still(info) if info is not None else None
        if live is None and sid is not None:
            with self._lock:
                self._sessions.pop(sid, None)
        return live.role if live is not None else None

    def allows(self, need: Role) -> bool:
        have = self.role()
        return have is not None and allows(have, need)

    def sign_in(self, need: Role = "viewer") -> None:
        """A form asking for a token (the page itself is not shown)."""
        from nicegui import ui

        ui.label(f"This server needs a token with the {need} role "
                 "('benchwright token create --role ...').").props('data-testid="sign-in"')
        field = ui.input("token", password=True).classes("w-96").props('data-testid="token"')
        message = ui.label().classes("text-red-700")

        def submit() -> None:
            info = self.store.verify(field.value or "") if self.store is not None else None
            sid = self._session()
            if info is None or not allows(info.role, need) or sid is None:
                message.text = "this token is not valid here" if info is None else \
                    f"this token is a {info.role}'s: the page needs {need}" if sid is not None \
                    else "this browser has no session: enable cookies for this site"
                return
            field.value = ""  # the token leaves the page's state as well
            with self._lock:
                self._sessions[sid] = info
            ui.navigate.reload()

        ui.button("Sign in", on_click=submit).props('data-testid="sign-in-button"')
