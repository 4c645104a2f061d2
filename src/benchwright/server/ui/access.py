"""Who may see and do what in the web UI: with ``serve --auth``, a page asks for a token (kept
in the browser's signed session) and an action checks its role, as the API does."""

from __future__ import annotations

from benchwright.server.auth import Role, TokenStore, allows
from benchwright.server.service import Service


class Access:
    def __init__(self, service: Service, auth_on: bool) -> None:
        self.store = TokenStore(service.ws) if auth_on else None

    def role(self) -> Role | None:
        """The signed-in role (``admin`` when auth is off), or None."""
        if self.store is None:
            return "admin"
        from nicegui import app

        token = app.storage.user.get("token")
        info = self.store.verify(token) if isinstance(token, str) else None
        return info.role if info is not None else None

    def allows(self, need: Role) -> bool:
        have = self.role()
        return have is not None and allows(have, need)

    def sign_in(self, need: Role = "viewer") -> None:
        """A form asking for a token (the page itself is not shown)."""
        from nicegui import app, ui

        ui.label(f"This server needs a token with the {need} role "
                 "('benchwright token create --role ...').").props('data-testid="sign-in"')
        field = ui.input("token", password=True).classes("w-96").props('data-testid="token"')
        message = ui.label().classes("text-red-700")

        def submit() -> None:
            info = self.store.verify(field.value or "") if self.store is not None else None
            if info is None or not allows(info.role, need):
                message.text = "this token is not valid here" if info is None else \
                    f"this token is a {info.role}'s: the page needs {need}"
                return
            app.storage.user["token"] = field.value
            ui.navigate.reload()

        ui.button("Sign in", on_click=submit).props('data-testid="sign-in-button"')
