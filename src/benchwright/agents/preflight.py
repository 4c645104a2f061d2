"""Before a run: each command and preset agent's program resolves inside the sandbox.

An agent installed under a home folder or ``/tmp`` is invisible in the sandbox; without this
check the run badge would fail later with ``/bin/sh: 1: …: not found`` in a stderr tail. The
check runs, in the sandbox the run will use and with the mounts the agent will get, ``test -x``
on a preset's program, or ``command -v`` on the first word of a command.
"""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Sequence
from pathlib import Path

from benchwright.agents import tools
from benchwright.agents.batch import scratch_root
from benchwright.agents.invocation import tool_mounts
from benchwright.agents.plan import AgentUnit
from benchwright.config.model import AgentSpec
from benchwright.errors import BenchwrightError
from benchwright.safefs import remove_tree
from benchwright.sandbox.base import Mount, Sandbox, SandboxLimits


def _probe(agent: AgentSpec, mounts: tuple[str, ...]) -> tuple[str, list[Mount], str] | tuple[None, list[Mount], str]:
    """The shell check for ``agent``'s program, the mounts it needs, and what it checks; a None
    check when there is nothing to check (the command starts with a variable...) or a problem
    in the third place when the preset is not installed."""
    shown = [Mount(Path(m)) for m in mounts]
    if agent.preset is not None:
        got = tools.installed(agent.preset)
        if got is None:
            return None, shown, (f"agent {agent.name!r}: the {agent.preset} preset's CLI is not installed in "
                                 f"{tools.tools_root()}: run `benchwright agents install {agent.preset}`")
        return f"test -x {shlex.quote(got.program)}", [*tool_mounts(tools.tool_folder(agent.preset)), *shown], got.program
    if agent.command is None:
        return None, shown, ""
    try:
        words = shlex.split(agent.command)
    except ValueError:
        return None, shown, ""
    first = next((w for w in words if "=" not in w.split("/")[0]), "")
    if not first or "$" in first or "`" in first:
        return None, shown, ""
    return f"command -v {shlex.quote(first)} >/dev/null", shown, first


def agent_problems(units: Sequence[AgentUnit], sandbox: Sandbox) -> list[str]:
    """One message per agent whose program does not resolve inside ``sandbox``, naming the fix."""
    problems: list[str] = []
    seen: set[str] = set()
    for unit in units:
        agent = unit.agent
        if agent.builtin or agent.name in seen:
            continue
        seen.add(agent.name)
        check, mounts, what = _probe(agent, unit.mounts)
        if check is None:
            if what:
                problems.append(what)
            continue
        folder = Path(tempfile.mkdtemp(prefix="bw-preflight-", dir=scratch_root()))
        try:
            folder.chmod(0o755)
            proc = sandbox.run_in(folder, ["/bin/sh", "-c", check], mounts=mounts,
                                  limits=SandboxLimits(wall_s=30, memory_mb=0, processes=64))
        except BenchwrightError as e:
            problems.append(f"agent {agent.name!r}: its program {what!r} could not be checked in the "
                            f"{sandbox.name} sandbox: {e}")
            continue
        finally:
            remove_tree(folder)
        if not proc.ok:
            problems.append(
                f"agent {agent.name!r}: {what!r} does not resolve inside the {sandbox.name} sandbox, which "
                "shows only the system folders (/usr, /bin, /lib...), the workspace and the agent's "
                "mounts; a program under a home folder, /tmp or a virtualenv there is invisible: "
                + (f"reinstall it with `benchwright agents install {agent.preset}`" if agent.preset else
                   "install it under /usr (e.g. a venv of /usr/bin/python3 under /usr/local), use a "
                   "preset (`benchwright list agents`), or show its folder with `mounts:`"))
    return problems


def installed_version(agent: AgentSpec) -> dict[str, object]:
    """For ``run.yaml``: the installed package and version of a preset agent's CLI."""
    if agent.preset is None:
        return {}
    got = tools.installed(agent.preset)
    if got is None:
        return {}
    return {"installed": {"package": got.package, "version": got.version, "program": got.program}}
