"""Choosing the backend, and ``benchwright doctor``."""

from __future__ import annotations

import json

import pytest

from benchwright.errors import InfraError, PluginNotFound, UserError
from benchwright.sandbox import select
from benchwright.sandbox.base import GUARANTEES
from benchwright.sandbox.bwrap import BwrapSandbox
from benchwright.sandbox.rlimit import RlimitSandbox
from benchwright.sandbox.unshare import UnshareSandbox
from tests.conftest import Runner

BROKEN = "bwrap not found on PATH (`apt-get install bubblewrap`)"


def test_availability_is_worked_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(select, "_checked", {})
    calls: list[str] = []
    real = select._probe

    def probe(name: str) -> str | None:
        calls.append(name)
        return real(name)

    monkeypatch.setattr(select, "_probe", probe)
    first = select.availability("rlimit")
    assert select.availability("rlimit") == first is None
    assert calls == ["rlimit"]


def test_the_best_is_bwrap_where_it_works() -> None:  # ./scripts/setup installs bubblewrap
    assert select.availability("bwrap") is None
    chosen = select.best_sandbox()
    assert isinstance(chosen, BwrapSandbox)
    assert chosen.isolation == "bwrap"


def test_falls_back_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(select, "_checked", {"bwrap": BROKEN, "unshare": None, "rlimit": None})
    assert isinstance(select.best_sandbox(), UnshareSandbox)
    monkeypatch.setattr(select, "_checked", {"bwrap": BROKEN, "unshare": "no userns", "rlimit": None})
    fallback = select.best_sandbox()
    assert isinstance(fallback, RlimitSandbox) and fallback.isolation == "rlimits"
    monkeypatch.setattr(select, "_checked", {"bwrap": BROKEN, "unshare": "x", "rlimit": "y"})
    with pytest.raises(InfraError, match="no sandbox backend works"):
        select.best_sandbox()


def test_the_settings_choice_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(select, "_checked", {"bwrap": None, "unshare": None, "rlimit": None})
    assert type(select.best_sandbox("rlimit")) is RlimitSandbox
    assert isinstance(select.best_sandbox("unshare"), UnshareSandbox)


def test_an_unavailable_choice_names_the_backend_and_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(select, "_checked", {"bwrap": BROKEN})
    with pytest.raises(UserError) as info:
        select.best_sandbox("bwrap")
    assert "'bwrap'" in str(info.value) and "apt-get install bubblewrap" in str(info.value)


def test_an_unknown_choice_is_a_user_error() -> None:
    with pytest.raises(PluginNotFound):
        select.best_sandbox("dockerish")


def test_a_missing_program_makes_a_backend_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setattr("benchwright.sandbox.isolated.shutil.which", lambda *a, **k: None)
    why = BwrapSandbox().unavailable()
    assert why is not None and "bwrap" in why and "apt-get install bubblewrap" in why


def test_guarantees_are_from_the_vocabulary() -> None:
    for sandbox in (BwrapSandbox(), UnshareSandbox(), RlimitSandbox()):
        assert sandbox.guarantees <= set(GUARANTEES), sandbox.name
    assert BwrapSandbox().guarantees == set(GUARANTEES)
    rlimit = RlimitSandbox().guarantees
    assert {"no-network", "hidden-home", "hidden-tmp", "read-only-system", "tree-killed"}.isdisjoint(rlimit)


def test_doctor(bw: Runner) -> None:
    proc = bw("doctor")
    assert proc.returncode == 0, proc.stderr
    for name in ("bwrap", "unshare", "rlimit", "python", "javac", "java"):
        assert name in proc.stdout
    data = json.loads(bw("doctor", "--format", "json").stdout)
    names = [b["name"] for b in data["backends"]]
    assert names[:3] == ["bwrap", "unshare", "rlimit"]
    best = next(b for b in data["backends"] if b["available"])
    assert data["chosen"]["name"] == best["name"]
    rlimit = next(b for b in data["backends"] if b["name"] == "rlimit")
    assert "no-network" in rlimit["lacks"]
    tools = {t["tool"]: t for t in data["toolchains"]}
    assert set(tools) == {"python", "javac", "java", "javascript", "typescript", "c", "cpp", "rust",
                          "go", "bash"}
    for tool in tools.values():
        assert (tool["version"] is None) == (tool["install"] is not None)
        assert tool["version"], tool  # the README set-up installs every toolchain
