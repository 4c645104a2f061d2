"""The web UI's Tailwind classes are compiled ahead of time into a stylesheet the package ships
(``./scripts/build-css``): the shipped file is what the compiler makes of the UI's modules now,
the pages link it and it styles them, and no page compiles CSS in the browser."""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser

from benchwright.server.ui import ASSETS

REPO = Path(__file__).parents[2]


def test_the_shipped_stylesheet_is_built_from_the_ui_as_it_is(tmp_path: Path) -> None:
    built = tmp_path / "tailwind.css"
    proc = subprocess.run([str(REPO / "scripts" / "build-css"), str(built)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert built.read_text() == (ASSETS / "tailwind.css").read_text(), (
        "src/benchwright/server/ui/assets/tailwind.css is out of date: run ./scripts/build-css")
    css = built.read_text()
    for used in (".text-2xl", ".bg-slate-800", ".grow", ".w-72", ".h-\\[60vh\\]", ".text-red-700"):
        assert used + "{" in css or used + "," in css, used


@pytest.mark.slow
def test_pages_use_the_compiled_classes_and_compile_nothing_in_the_browser(server: str, browser: Browser) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    scripts: list[str] = []
    page.on("request", lambda r: scripts.append(r.url) if r.resource_type == "script" else None)
    page.goto(f"{server}/ui/")
    title = page.get_by_test_id("page-title")
    title.wait_for()
    assert title.evaluate("e => getComputedStyle(e).fontSize") == "24px"  # text-2xl
    header = page.locator("header").first
    assert header.evaluate("e => getComputedStyle(e).backgroundColor") != "rgba(0, 0, 0, 0)"  # bg-slate-800
    assert scripts and not [s for s in scripts if "tailwind" in s]
    link = page.locator("link[rel=stylesheet][href*='assets/tailwind.css']")
    href = link.get_attribute("href")
    assert href is not None
    got = httpx.get(server + href, timeout=10)
    assert got.status_code == 200 and got.headers["content-type"].startswith("text/css")
    assert "max-age=0" in got.headers["cache-control"]  # revalidated: a new build is never stale
    assert got.text == (ASSETS / "tailwind.css").read_text()
