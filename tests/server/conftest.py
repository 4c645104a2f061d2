"""Shared by the server tests: `benchwright serve` as a real process on a free port, and Debian's
Chromium driven by Playwright (no browser download), with screenshots under test-artifacts/ui/
(BW_ARTIFACTS moves them)."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.conftest import BIN

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-sync", "--disable-dev-shm-usage"]
ARTIFACTS = Path(os.environ.get("BW_ARTIFACTS", Path(__file__).parents[2] / "test-artifacts")) / "ui"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextmanager
def serving(workspace: Path, *options: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`benchwright serve WORKSPACE --port P OPTIONS` until it answers; its base URL and process
    (stderr piped). Stopped at the end, unless the test stopped it."""
    port = free_port()
    proc = subprocess.Popen([str(BIN), "serve", str(workspace), "--port", str(port), *options],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
            try:
                httpx.get(f"{base}/api/health", timeout=1)  # any answer, 401 included, means up
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.1)
        yield base, proc
    finally:
        if proc.returncode is None:  # the test may have stopped it to read what it said
            proc.terminate()
            proc.communicate(timeout=30)


@pytest.fixture
def server(workspace: Path) -> Iterator[str]:
    """The example workspace served without authentication."""
    with serving(workspace) as (base, _):
        yield base


@pytest.fixture
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():  # ./scripts/setup installs Debian's chromium
        pytest.fail(f"{CHROMIUM} not found: run ./scripts/setup")
    with sync_playwright() as p:
        made = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield made
        made.close()


def shot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
