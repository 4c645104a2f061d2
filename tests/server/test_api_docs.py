"""``/api/docs`` in a real browser with no network beyond loopback: Swagger UI comes from the
server itself and shows the API's operations (it was a blank page offline when loaded from a
CDN)."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, Route

from tests.server.conftest import shot

LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


@pytest.mark.slow
def test_api_docs_render_the_operations_offline(server: str, browser: Browser) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    outside: list[str] = []

    def offline(route: Route) -> None:
        url = route.request.url
        if urlsplit(url).scheme in ("data", "blob") or urlsplit(url).hostname in LOOPBACK:
            route.continue_()
        else:  # what a machine without the internet would do to it
            outside.append(url)
            route.abort("internetdisconnected")

    page.route("**/*", offline)
    page.goto(f"{server}/api/docs")
    page.locator(".opblock").first.wait_for(timeout=30_000)
    assert page.locator(".info .title").inner_text().startswith("benchwright")
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert "/api/health" in paths and any(p.startswith("/api/runs") for p in paths), paths
    assert len(paths) >= 10
    shot(page, "api-docs-offline")
    page.locator(".opblock-summary", has_text="/api/health").first.click()  # an operation opens
    page.get_by_role("button", name="Try it out").first.wait_for(timeout=10_000)
    assert outside == []
    page.close()
