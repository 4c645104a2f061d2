"""A coding agent's workspace on the host, and what the agent changed in it.

Layout of one agent run's folder (``root``, mode 0711 so a sandbox uid can reach ``work``)::

    root/work/          the tree: bound as the sandbox's /work for set-up, agent and scorers
    root/baseline.git/  the baseline, a git repository the sandbox never sees
    root/hidden/        files the scenario marks hidden, kept here while the agent works

Git runs in the harness, on a tree an agent wrote: it is given a configuration of its own (no
system or user file, no hooks, no fsmonitor, no external diff or text conversion), and its
repository lives outside the tree, so nothing the agent writes (``.git/config``,
``.gitattributes``, ``.gitignore``) changes what is run or what is seen. Every file counts,
ignored ones included.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from benchwright.agents.change import Change, FileChange, Status
from benchwright.agents.scenario import WorkspaceRecipe
from benchwright.errors import InfraError, UserError

GIT_TIMEOUT_S = 300
_STATUS: dict[str, Status] = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed",
                              "C": "added", "T": "type_changed"}
_HEADER = re.compile(r"^diff --git ", re.M)


def _is_remote(repo: str) -> bool:
    return "://" in repo or repo.startswith("git@")


class AgentWorkspace:
    """The folder an agent works in, its baseline, and the diff against it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.work = root / "work"
        self.git_dir = root / "baseline.git"
        self.hidden_dir = root / "hidden"
        self._hidden: list[str] = []

    @classmethod
    def create(cls, recipe: WorkspaceRecipe, base_dir: Path, parent: Path) -> AgentWorkspace:
        """Copy the recipe's ``repo`` (a folder relative to ``base_dir``, or a git repository
        checked out at ``ref``) into a new folder under ``parent``.

        Raises:
            UserError: the repository or the ref does not exist.
            InfraError: git failed.
        """
        parent.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="bw-agent-", dir=parent))
        os.chmod(root, 0o711)
        ws = cls(root)
        source = recipe.repo if _is_remote(recipe.repo) else str((base_dir / recipe.repo).resolve())
        if not _is_remote(recipe.repo) and not Path(source).is_dir():
            raise UserError(f"workspace repo {recipe.repo!r} not found (looked for {source})")
        if recipe.ref is not None or _is_remote(recipe.repo):
            ws._git(["clone", "--quiet", "--no-hardlinks", source, str(ws.work)], plain=True)
            if recipe.ref is not None:
                ws._git(["-C", str(ws.work), "-c", "advice.detachedHead=false", "checkout", "--quiet",
                         recipe.ref], plain=True,
                        fail=f"workspace ref {recipe.ref!r} not found in {recipe.repo!r}")
            shutil.rmtree(ws.work / ".git")
        else:
            shutil.copytree(source, ws.work, symlinks=True, ignore=shutil.ignore_patterns(".git"))
        return ws

    # -- git ---------------------------------------------------------------------------------

    def _env(self, index: Path | None = None) -> dict[str, str]:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.root), "LC_ALL": "C",
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_AUTHOR_NAME": "benchwright", "GIT_AUTHOR_EMAIL": "benchwright@localhost",
            "GIT_COMMITTER_NAME": "benchwright", "GIT_COMMITTER_EMAIL": "benchwright@localhost",
            "GIT_TERMINAL_PROMPT": "0",
        }
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        return env

    def _git(self, args: list[str], *, plain: bool = False, index: Path | None = None,
             fail: str | None = None) -> str:
        """Run git: ``plain`` for clone/checkout of the source; else on the baseline
        repository with the tree as its work tree."""
        base = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
                "-c", "core.quotepath=false", "-c", "core.autocrlf=false", "-c", "core.symlinks=true",
                "-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false", "-c", "color.ui=false"]
        if not plain:
            base += [f"--git-dir={self.git_dir}", f"--work-tree={self.work}"]
        try:
            proc = subprocess.run([*base, *args], env=self._env(index), capture_output=True,
                                  timeout=GIT_TIMEOUT_S, cwd=self.root)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise InfraError(f"git {args[0]} failed: {e}") from e
        if proc.returncode != 0:
            message = proc.stderr.decode(errors="replace").strip()[-600:]
            if fail is not None:
                raise UserError(f"{fail}: {message}")
            raise InfraError(f"git {' '.join(args[:2])} failed: {message}")
        return proc.stdout.decode(errors="replace")

    def commit_baseline(self) -> str:
        """Commit the whole tree (after set-up) as the baseline; returns its commit id."""
        self._git(["init", "--quiet", "--bare", "--initial-branch=baseline", str(self.git_dir)], plain=True)
        self._git(["add", "--all", "--force", "."])
        self._git(["commit", "--quiet", "--allow-empty", "--no-verify", "-m", "baseline"])
        return self._git(["rev-parse", "HEAD"]).strip()

    # -- hidden files --------------------------------------------------------------------------

    def hide(self, paths: list[str]) -> None:
        """Move ``paths`` out of the tree (the agent must not see them).

        Raises:
            UserError: a hidden path is not in the workspace.
        """
        for rel in paths:
            src = self.work / rel
            if not src.exists() and not src.is_symlink():
                raise UserError(f"hidden file {rel!r} is not in the workspace")
            dst = self.hidden_dir / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(src, dst)
            self._hidden.append(rel)

    def restore(self) -> None:
        """Put the hidden files back as they were, over whatever the agent left at their place."""
        for rel in self._hidden:
            dst = self.work / rel
            if dst.is_symlink() or dst.is_file():
                dst.unlink()
            elif dst.is_dir():
                shutil.rmtree(dst)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(self.hidden_dir / rel, dst)
        self._hidden = []

    # -- the change ------------------------------------------------------------------------------

    def change(self) -> Change:
        """Everything that differs from the baseline now (untracked, ignored, deleted, renamed
        and binary files included)."""
        index = self.root / "final.index"
        index.unlink(missing_ok=True)
        self._git(["read-tree", "baseline"], index=index)
        self._git(["add", "--all", "--force", "."], index=index)
        common = ["diff", "--cached", "-M", "--no-ext-diff", "--no-textconv", "baseline"]
        listed = self._git([*common, "--name-status", "-z"], index=index).split("\0")
        entries: list[tuple[Status, str, str | None]] = []
        i = 0
        while i < len(listed) and listed[i]:
            code = listed[i][0]
            if code in "RC":
                entries.append((_STATUS[code], listed[i + 2], listed[i + 1]))
                i += 3
            else:
                entries.append((_STATUS.get(code, "modified"), listed[i + 1], None))
                i += 2
        patch = self._git([*common, "--unified=3"], index=index)
        zero = self._git([*common, "--unified=0"], index=index)
        blocks = [b for b in _HEADER.split(zero) if b]
        parts: list[list[str]] = []
        k = 0
        for status, _, _ in entries:  # a file replaced by a symlink (or back) is two patches
            two = (status == "type_changed" and k + 1 < len(blocks)
                   and "deleted file mode" in blocks[k].split("\n@@")[0])
            parts.append(blocks[k:k + (2 if two else 1)])
            k += 2 if two else 1
        if k != len(blocks):
            raise InfraError(f"git diff listed {len(entries)} files but gave {len(blocks)} patches")
        files = []
        added_total = removed_total = 0
        for (status, path, old), patches in zip(entries, parts, strict=True):
            added: tuple[str, ...] = ()
            removed: tuple[str, ...] = ()
            binary = False
            for block in patches:
                lines = block.splitlines()
                binary = binary or any(line.startswith("Binary files ") for line in lines[:6])
                hunk = next((n for n, line in enumerate(lines) if line.startswith("@@")), len(lines))
                body = [line for line in lines[hunk:] if line[:1] in "+-"]  # not the ---/+++ header
                added += tuple(line[1:] for line in body if line.startswith("+"))
                removed += tuple(line[1:] for line in body if line.startswith("-"))
            added_total += len(added)
            removed_total += len(removed)
            files.append(FileChange(path, status, old, binary, added, removed))
        index.unlink(missing_ok=True)
        return Change(tuple(files), patch, {"files": len(files), "added": added_total,
                                             "removed": removed_total})

    def baseline_text(self, path: str) -> str | None:
        """The text of ``path`` in the baseline; None when it was not there or is not text."""
        try:
            data = self._git(["cat-file", "blob", f"baseline:{path}"])
        except InfraError:
            return None
        return None if "\0" in data else data

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
