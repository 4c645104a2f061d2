"""Where agent CLIs are installed, and the installer behind ``benchwright agents install``.

Each preset gets a folder of its own under :func:`tools_root`: a virtual environment of the
sandbox's Python (``pip`` presets) or an npm prefix installed with the system node (``npm``
presets), plus an ``installed.json`` (:class:`Installed`) saying what is there. An install is
built in a temporary sibling folder and renamed into place only when it worked, so a failed
install leaves the previous one as it was.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from benchwright.agents.preset import AgentPreset
from benchwright.errors import InfraError

ENV_ROOT = "BENCHWRIGHT_AGENT_TOOLS"
SYSTEM_ROOT = Path("/usr/local/lib/benchwright-tools/agents")
"""The tools folder when benchwright runs as root: under /usr, which every sandbox shows read-only."""
PYTHON = "/usr/bin/python3"
"""The interpreter of pip presets' environments: the one the sandbox has."""
NODE = "/usr/bin/node"
NPM = "/usr/bin/npm"
RECORD = "installed.json"
TAIL_LINES = 30


class InstallFailed(InfraError):
    """Installing an agent CLI failed; the message has the tail of pip's or npm's output and the fix."""


class Installed(BaseModel):
    """What ``benchwright agents install`` put in a preset's folder (its ``installed.json``)."""

    preset: str
    """The preset's name (``qwen-code``)."""
    package: str
    """The package's name in its registry (``@qwen-code/qwen-code``)."""
    ecosystem: Literal["pip", "npm"]
    """``pip`` (a virtual environment) or ``npm`` (an npm prefix)."""
    version: str
    """The version the registry actually installed (read back from pip or the package.json)."""
    program: str
    """The absolute path of the CLI's executable."""
    installed_at: str
    """When it was installed (UTC, ISO 8601)."""
    runtime: str
    """The interpreter (``/usr/bin/python3 3.11.2``) or node (``node v20.20.2``) it runs on."""


def tools_root() -> Path:
    """``$BENCHWRIGHT_AGENT_TOOLS``; else, as root, :data:`SYSTEM_ROOT`; else
    ``$XDG_DATA_HOME/benchwright/agents`` (``~/.local/share/benchwright/agents``)."""
    if os.environ.get(ENV_ROOT):
        return Path(os.environ[ENV_ROOT])
    if os.geteuid() == 0:
        return SYSTEM_ROOT
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "benchwright" / "agents"


def tool_folder(name: str, root: Path | None = None) -> Path:
    """The folder of a preset's install: ``<tools root>/<name>`` (what the sandbox mounts)."""
    return (root if root is not None else tools_root()) / name


def installed(name: str, root: Path | None = None) -> Installed | None:
    """The preset's install record, or None when it is missing or unreadable."""
    try:
        return Installed.model_validate_json(
            (tool_folder(name, root) / RECORD).read_bytes()[:1_000_000])
    except (OSError, ValidationError, ValueError):
        return None


LineSink = Callable[[str], None]


def install(preset: AgentPreset | type[AgentPreset], *, version: str | None = None,
            root: Path | None = None, on_line: LineSink | None = None) -> Installed:
    """Install the preset's package (its pinned version unless ``version``) into its folder."""
    package = preset.package
    wanted = version or package.version
    final = tool_folder(preset.name, root)
    final.parent.mkdir(parents=True, exist_ok=True)
    _world_readable(final.parent)
    build = Path(tempfile.mkdtemp(prefix=f".{preset.name}.", dir=final.parent))
    try:
        if package.ecosystem == "pip":
            got, runtime = _pip(build, package.name, wanted, on_line)
            program = final / "venv" / "bin" / package.program
        else:
            got, runtime = _npm(build, package.name, wanted, on_line)
            program = final / "node_modules" / ".bin" / package.program
        built_program = build / program.relative_to(final)
        if not built_program.exists():
            raise InstallFailed(f"{package.name}=={got} installed but has no program "
                                f"{package.program!r} at {built_program}")
        record = Installed(preset=preset.name, package=package.name, ecosystem=package.ecosystem,
                           version=got, program=str(program),
                           installed_at=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
                           runtime=runtime)
        if package.ecosystem == "pip":
            _relocate(build / "venv" / "bin", str(build), str(final))
        (build / RECORD).write_text(record.model_dump_json(indent=2) + "\n")
        _world_readable(build)
        _swap(build, final)
        return record
    finally:
        if build.exists():
            shutil.rmtree(build, ignore_errors=True)


def _swap(build: Path, final: Path) -> None:
    """Rename ``build`` to ``final``; the previous install is removed only after."""
    old = None
    if final.exists():
        old = final.with_name(f".{final.name}.old.{os.getpid()}")
        os.rename(final, old)
    try:
        os.rename(build, final)
    except OSError:
        if old is not None:
            os.rename(old, final)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def _relocate(bin_dir: Path, built: str, final: str) -> None:
    """Point the scripts of a virtual environment built at ``built`` (their ``#!`` lines, the
    activate scripts) at ``final``, where it is renamed to."""
    for entry in bin_dir.iterdir():
        if entry.is_symlink() or not entry.is_file():
            continue
        data = entry.read_bytes()
        if built.encode() in data[:100_000] and b"\0" not in data[:4096]:
            entry.write_bytes(data.replace(built.encode(), final.encode()))


def _pip(build: Path, name: str, version: str, on_line: LineSink | None) -> tuple[str, str]:
    venv = build / "venv"
    _run([PYTHON, "-m", "venv", str(venv)], on_line, f"creating a virtual environment with {PYTHON}",
         fix=f"install the venv module of {PYTHON} (Debian: apt-get install python3-venv)")
    python = str(venv / "bin" / "python")
    _run([python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
          f"{name}=={version}"], on_line, f"pip install {name}=={version}",
         fix=f"check that {name} {version} exists on PyPI and supports {PYTHON} "
             "(pass --version to pick another), and that PyPI is reachable")
    shown = _run([python, "-m", "pip", "show", name], None, f"pip show {name}", fix="")
    got = next((line.split(":", 1)[1].strip() for line in shown.splitlines()
                if line.startswith("Version:")), version)
    runtime = _run([python, "-c", "import sys; print(sys.version.split()[0])"], None, "python", fix="")
    return got, f"{PYTHON} {runtime.strip()}"


def _npm(build: Path, name: str, version: str, on_line: LineSink | None) -> tuple[str, str]:
    _run([NPM, "install", "--prefix", str(build), "--no-audit", "--no-fund", "--omit=dev",
          "--no-update-notifier", f"{name}@{version}"], on_line, f"npm install {name}@{version}",
         fix=f"check that {name}@{version} exists on the npm registry and supports this node "
             f"('npm view {name}@{version} engines'; pass --version to pick another), "
             "and that the registry is reachable")
    try:
        manifest = json.loads((build / "node_modules" / name / "package.json").read_text())
        got = str(manifest.get("version") or version)
    except (OSError, ValueError, AttributeError):
        got = version
    node = _run([NODE, "--version"], None, "node --version", fix="install Node.js at /usr/bin/node")
    return got, f"node {node.strip()}"


def _run(argv: list[str], on_line: LineSink | None, what: str, *, fix: str) -> str:
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "NO_COLOR": "1",
           "npm_config_update_notifier": "false"}
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace", env=env, stdin=subprocess.DEVNULL)
    except OSError as e:
        raise InstallFailed(f"{what}: cannot start {argv[0]}: {e}" + (f"\nfix: {fix}" if fix else "")) from e
    lines: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip("\n")
        lines.append(line)
        if on_line is not None:
            on_line(line)
    code = proc.wait()
    if code != 0:
        tail = "\n".join(lines[-TAIL_LINES:])
        raise InstallFailed(f"{what} failed (exit {code}):\n{tail}" + (f"\nfix: {fix}" if fix else ""))
    return "\n".join(lines)


def _world_readable(path: Path) -> None:
    """Folders 0755 and files readable (executables runnable) by every uid: the sandbox may run
    the CLI as another user. Symbolic links are left as they are."""
    _chmod(path)
    if not path.is_dir() or path.is_symlink():
        return
    for folder, dirs, files in os.walk(path):
        for entry in dirs + files:
            _chmod(Path(folder) / entry)


def _chmod(path: Path) -> None:
    try:
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            return
        if stat.S_ISDIR(mode):
            os.chmod(path, 0o755)
        elif stat.S_ISREG(mode):
            extra = 0o555 if mode & stat.S_IXUSR else 0o444
            os.chmod(path, (stat.S_IMODE(mode) | extra) & ~0o022)
    except OSError:
        pass
