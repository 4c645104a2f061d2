"""``benchwright doctor``: which sandbox backend and which toolchains this machine has.

Registered as the ``doctor`` command in :mod:`benchwright.cli.app`. It always exits 0: it
reports, it does not judge. ``--format json`` gives the same facts to scripts.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from benchwright.errors import BenchwrightError
from benchwright.registry import registry
from benchwright.sandbox.base import GUARANTEES, Sandbox, SandboxLimits
from benchwright.sandbox.select import PREFERENCE, availability, best_sandbox
from benchwright.workspace import Workspace

out = Console(soft_wrap=True)

JDK_HINT = "apt-get install default-jdk-headless"
PYTHON_HINT = "apt-get install python3"


def _in_sandbox(sandbox: Sandbox, argv: list[str], memory_mb: int = 1024) -> tuple[str | None, str]:
    """(first line of the output, or None when it failed; why it failed)."""
    try:
        r = sandbox.run(argv, files={}, limits=SandboxLimits(wall_s=60, memory_mb=memory_mb,
                                                            processes=256))
    except BenchwrightError as e:
        return None, str(e)
    text = (r.stdout.decode("utf-8", "replace").strip() or r.stderr.decode("utf-8", "replace").strip())
    if r.exit_code != 0:
        return None, f"exit {r.exit_code}, signal {r.signal}: {text[-300:]}"
    return (text.splitlines()[0] if text else ""), ""


def _toolchains(sandbox: Sandbox) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    try:
        python = sandbox.python
    except BenchwrightError as e:
        rows.append({"tool": "python", "path": None, "version": None, "problem": str(e),
                     "install": PYTHON_HINT})
    else:
        version, why = _in_sandbox(sandbox, [python, "-I", "-S", "-c",
                                             "import sys; print(sys.version.split()[0])"])
        rows.append({"tool": "python", "path": python, "version": version, "problem": why or None,
                     "install": PYTHON_HINT if version is None else None})
    for tool in ("javac", "java"):
        path = shutil.which(tool)
        if path is None:
            rows.append({"tool": tool, "path": None, "version": None,
                         "problem": f"`{tool}` is not on PATH", "install": JDK_HINT})
            continue
        # the JVM reserves more address space than any sensible RLIMIT_AS (see lang/java.py)
        version, why = _in_sandbox(sandbox, [path, "-version"], memory_mb=0)
        rows.append({"tool": tool, "path": path, "version": version, "problem": why or None,
                     "install": JDK_HINT if version is None else None})
    for name in registry.names("language"):
        if name in ("python", "java"):  # checked inside the sandbox above
            continue
        lang = registry.create("language", name)
        missing = lang.missing()
        found = None if missing else ", ".join(f"{k} {v}" for k, v in lang.toolchain().items())
        rows.append({"tool": name, "path": None, "version": found, "problem": missing,
                     "install": lang.install_hint if missing else None})
    return rows


def facts(preferred: str | None) -> dict[str, Any]:
    backends = []
    for name in [*PREFERENCE, *(n for n in registry.names("sandbox") if n not in PREFERENCE)]:
        why = availability(name)
        try:
            sandbox = registry.create("sandbox", name)
        except BenchwrightError:
            continue
        backends.append({
            "name": name, "available": why is None, "why_not": why,
            "isolation": sandbox.isolation, "install": sandbox.install_hint or None,
            "guarantees": sorted(sandbox.guarantees),
            "lacks": sorted(set(GUARANTEES) - sandbox.guarantees),
        })
    result: dict[str, Any] = {"preferred": preferred, "backends": backends}
    try:
        chosen = best_sandbox(preferred)
    except BenchwrightError as e:
        result["chosen"] = None
        result["problem"] = str(e)
        return result
    result["chosen"] = {"name": chosen.name, "isolation": chosen.isolation}
    result["toolchains"] = _toolchains(chosen)
    return result


def doctor(
    fmt: Annotated[str, typer.Option("--format", "-f", help="text or json.")] = "text",
    workspace: Annotated[
        Path | None,
        typer.Option("--workspace", "-w", help="Workspace whose `sandbox:` setting to honour "
                                               "(default: nearest with benchwright.yaml)."),
    ] = None,
) -> None:
    """Which sandbox backend and which toolchains this machine has, and how to install what is missing."""
    try:
        preferred = Workspace.open(workspace).settings.sandbox
    except BenchwrightError:
        preferred = None
    data = facts(preferred)
    if fmt == "json":
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
        return
    chosen = data.get("chosen")
    if chosen:
        how = "from the settings" if preferred else "the best available"
        out.print(f"sandbox: [bold]{chosen['name']}[/] (isolation: {chosen['isolation']}; {how})")
        if chosen["isolation"] == "rlimits":
            out.print("[yellow]warning: rlimits only: generated code can read your files and "
                      "use the network. Install bubblewrap: `apt-get install bubblewrap`[/]")
    else:
        out.print(f"[red]sandbox: none works: {data.get('problem')}[/]")
    table = Table("backend", "available", "isolation", "cannot promise", title="sandbox backends, best first")
    for b in data["backends"]:
        state = "yes" if b["available"] else f"no: {b['why_not']}"
        table.add_row(b["name"], state, b["isolation"], ", ".join(b["lacks"]) or "-")
    out.print(table)
    if chosen and "toolchains" in data:
        tools = Table("tool", "path", "version", "install", title=f"toolchains inside {chosen['name']}")
        for t in data["toolchains"]:
            version = t["version"] if t["version"] is not None else f"[red]missing: {t['problem']}[/]"
            tools.add_row(t["tool"], t["path"] or "-", version, f"`{t['install']}`" if t["install"] else "")
        out.print(tools)
    missing = [b["install"] for b in data["backends"] if not b["available"] and b["install"]]
    missing += [t["install"] for t in data.get("toolchains", []) if t["install"]]
    if missing:
        out.print("to install what is missing: " + "; ".join(f"`{m}`" for m in dict.fromkeys(missing)))
    else:
        out.print("nothing missing")
