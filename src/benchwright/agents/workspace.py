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

Nothing the agent made is followed (:mod:`benchwright.safefs`):

* Hidden files go out and come back by ``renameat`` between folders reached without a
  symbolic link. Whatever the agent left at a hidden path or on its way (a link to a host
  folder, a FIFO, a file where a folder was) is removed, never followed, and the hidden file is
  put back in its place; a link or a special file there is a violation (:meth:`restore`
  returns it: the run badge fails).
* Git records a symbolic link as a link (it never reads through one) and leaves FIFOs out.
  Before git reads the tree it is walked once: a ``.git`` below the top (a folder, or a file
  naming another repository) would make git read that repository and leave the folder's files
  out of the change, so it is removed (one that is not a folder is a violation); files and
  folders the agent made unreadable are given back to their owner (a harness that is not root,
  where the agent ran as its uid: git would fail or skip them); paths too long for git to
  open are a violation (git would leave them out).
* The change is size-capped: a file over :data:`BIG_FILE` bytes is a binary file in it (no
  lines), and each git output is read up to :data:`DIFF_CAP` (:data:`NAMES_CAP` for the list of
  names); beyond that it is cut, and that is a violation.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from benchwright.agents import repo
from benchwright.agents.change import Change, FileChange, Status
from benchwright.agents.scenario import WorkspaceRecipe
from benchwright.errors import InfraError, UnsafeFile, UserError
from benchwright.safefs import Tree, remove_tree

GIT_TIMEOUT_S = 300
DIFF_CAP = 16 * 1024 * 1024
"""Each diff of the change (the patch, and its copy with no context) is read up to this many
bytes; beyond it the diff is cut and the run badge fails."""
NAMES_CAP = 4 * 1024 * 1024
"""The list of changed files is read up to this many bytes."""
OUTPUT_CAP = 1024 * 1024
"""Any other git output is read up to this many bytes."""
BIG_FILE = 1024 * 1024
"""A file larger than this is a binary file in the change (git's ``core.bigFileThreshold``):
listed, without its lines."""
PATH_LIMIT = 4000
"""A path (relative to the tree) longer than this many bytes is beyond what git opens."""
_STATUS: dict[str, Status] = {"A": "added", "M": "modified", "D": "deleted", "R": "renamed",
                              "C": "added", "T": "type_changed"}
_HEADER = re.compile(r"^diff --git ", re.M)


class AgentWorkspace:
    """The folder an agent works in, its baseline, and the diff against it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.work = root / "work"
        self.git_dir = root / "baseline.git"
        self.hidden_dir = root / "hidden"
        self.tree = Tree(self.work)
        self._hidden: list[str] = []

    @classmethod
    def create(cls, recipe: WorkspaceRecipe, base_dir: Path, parent: Path) -> AgentWorkspace:
        """Copy the recipe's ``repo`` (a folder relative to ``base_dir``, or a git repository
        checked out at ``ref``) into a new folder under ``parent``. The repo was confined when
        its scenario was loaded for the workspace (:func:`benchwright.agents.plan.check_scenario`);
        a refused form is refused here too.

        Raises:
            UserError: the repository or the ref does not exist.
            InfraError: git failed.
        """
        parent.mkdir(parents=True, exist_ok=True)
        root = Path(tempfile.mkdtemp(prefix="bw-agent-", dir=parent))
        os.chmod(root, 0o711)
        ws = cls(root)
        try:
            kind = repo.form(recipe.repo)
        except ValueError as e:
            raise UserError(f"workspace repo: {e}") from None
        source = recipe.repo if kind == "remote" else str(repo.local_path(recipe.repo, base_dir).resolve())
        if kind != "remote" and not Path(source).is_dir():
            raise UserError(f"workspace repo {recipe.repo!r} not found (looked for {source})")
        if recipe.ref is not None or kind != "local":
            ws._git(["clone", "--quiet", "--no-hardlinks", "--", source, str(ws.work)], plain=True)
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
        repository with the tree as its work tree. Its output is read up to
        :data:`OUTPUT_CAP`."""
        return self._git_cut(args, plain=plain, index=index, fail=fail)[0]

    def _git_cut(self, args: list[str], *, plain: bool = False, index: Path | None = None,
                 fail: str | None = None, cap: int = OUTPUT_CAP) -> tuple[str, bool]:
        """Git's output (at most ``cap`` bytes), and whether there was more (git is then
        stopped)."""
        base = ["git", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
                "-c", "core.quotepath=false", "-c", "core.autocrlf=false", "-c", "core.symlinks=true",
                "-c", "diff.noprefix=false", "-c", "diff.mnemonicPrefix=false", "-c", "color.ui=false",
                "-c", f"core.bigFileThreshold={BIG_FILE}"]
        if not plain:
            base += [f"--git-dir={self.git_dir}", f"--work-tree={self.work}"]
        with tempfile.TemporaryFile() as err:
            try:
                proc = subprocess.Popen([*base, *args], env=self._env(index), stdout=subprocess.PIPE,
                                        stderr=err, stdin=subprocess.DEVNULL, cwd=self.root)
            except OSError as e:
                raise InfraError(f"git {args[0]} failed: {e}") from e
            late = threading.Event()

            def stop() -> None:
                late.set()
                proc.kill()

            timer = threading.Timer(GIT_TIMEOUT_S, stop)
            timer.start()
            try:
                assert proc.stdout is not None
                data = proc.stdout.read(cap + 1)
                cut = len(data) > cap
                if cut:
                    proc.kill()
                proc.stdout.close()
                code = proc.wait()
            finally:
                timer.cancel()
            if late.is_set():
                raise InfraError(f"git {args[0]} failed: it took more than {GIT_TIMEOUT_S} s")
            if code != 0 and not cut:
                err.seek(0)
                message = err.read().decode(errors="replace").strip()[-600:]
                if fail is not None:
                    raise UserError(f"{fail}: {message}")
                raise InfraError(f"git {' '.join(args[:2])} failed: {message}")
        return data[:cap].decode(errors="replace"), cut

    def commit_baseline(self) -> str:
        """Commit the whole tree (after set-up) as the baseline; returns its commit id."""
        self._git(["init", "--quiet", "--bare", "--initial-branch=baseline", str(self.git_dir)], plain=True)
        self._tidy()
        self._git(["add", "--all", "--force", "."])
        self._git(["commit", "--quiet", "--allow-empty", "--no-verify", "-m", "baseline"])
        return self._git(["rev-parse", "HEAD"]).strip()

    # -- hidden files --------------------------------------------------------------------------

    def hide(self, paths: list[str]) -> None:
        """Move ``paths`` out of the tree (the agent must not see them), never through a
        symbolic link of the tree.

        Raises:
            UserError: a hidden path is not in the workspace, or a folder on its way is a link
                (or not a folder).
        """
        for rel in paths:
            try:
                if not self.tree.move_out(rel, self.hidden_dir / rel):
                    raise UserError(f"hidden file {rel!r} is not in the workspace")
            except UnsafeFile as e:
                raise UserError(f"hidden file {rel!r} cannot be hidden: {e} (after set-up, a "
                                "hidden path must be reached through real folders)") from None
            self._hidden.append(rel)

    def restore(self) -> list[str]:
        """Put the hidden files back as they were, over whatever the agent left at their
        place or on their way (removed, never followed). Returns the violations: a symbolic
        link or a special file found there, a hidden file that could not be put back."""
        violations: list[str] = []
        for rel in self._hidden:
            try:
                found = self.tree.move_in(self.hidden_dir / rel, rel)
            except UnsafeFile as e:
                violations.append(f"hidden file {rel} not restored: {e}")
                continue
            bad = [o.describe() for o in found if o.suspicious]
            if bad:
                violations.append(f"hidden file {rel} put back over what the agent left: "
                                  f"{'; '.join(bad)} (removed, not followed)")
        self._hidden = []
        return violations

    def _tidy(self) -> list[str]:
        """Ready the tree for git (see the module's docstring); the violations."""
        done = self.tree.tidy(".git", grant=os.geteuid() != 0, path_limit=PATH_LIMIT)
        out = [f"{o.describe()}: a git link inside the workspace (git would read the repository "
               "it names), removed before the diff" for o in done.removed if o.kind != "folder"]
        if done.too_long:
            out.append(f"{len(done.too_long)} path(s) too long for git, left out of the change: "
                       f"{done.too_long[0][:120]}... ({len(done.too_long[0].encode())} bytes)")
        return out

    # -- the change ------------------------------------------------------------------------------

    def change(self) -> Change:
        """Everything that differs from the baseline now (untracked, ignored, deleted, renamed
        and binary files included)."""
        violations = self._tidy()
        index = self.root / "final.index"
        index.unlink(missing_ok=True)
        self._git(["read-tree", "baseline"], index=index)
        self._git(["add", "--all", "--force", "."], index=index)
        common = ["diff", "--cached", "-M", "--no-ext-diff", "--no-textconv", "baseline"]
        names, names_cut = self._git_cut([*common, "--name-status", "-z"], index=index, cap=NAMES_CAP)
        listed = names.split("\0")
        if names_cut:
            listed = listed[:-1]  # the last name is cut
        entries: list[tuple[Status, str, str | None]] = []
        i = 0
        while i < len(listed) and listed[i]:
            code = listed[i][0]
            width = 3 if code in "RC" else 2
            if i + width > len(listed):
                break
            if code in "RC":
                entries.append((_STATUS[code], listed[i + 2], listed[i + 1]))
            else:
                entries.append((_STATUS.get(code, "modified"), listed[i + 1], None))
            i += width
        patch, patch_cut = self._git_cut([*common, "--unified=3"], index=index, cap=DIFF_CAP)
        zero, zero_cut = self._git_cut([*common, "--unified=0"], index=index, cap=DIFF_CAP)
        blocks = [b for b in _HEADER.split(zero) if b]
        if zero_cut and blocks:
            blocks.pop()  # the last one is cut
        cut = names_cut or patch_cut or zero_cut
        if names_cut:
            violations.append(f"the change lists more files than the harness reads ({NAMES_CAP:,} "
                              f"bytes of names): only the first {len(entries)} were graded")
        if patch_cut or zero_cut:
            violations.append(f"the change's diff is larger than the {DIFF_CAP:,} bytes the harness "
                              "reads: it is cut there, and the files past the cut have no lines")
        if patch_cut:
            patch += f"\n[... the diff is cut here: it is larger than the {DIFF_CAP:,} bytes the harness reads]\n"
        parts: list[list[str]] = []
        k = 0
        for status, _, _ in entries:  # a file replaced by a symlink (or back) is two patches
            two = (status == "type_changed" and k + 1 < len(blocks)
                   and "deleted file mode" in blocks[k].split("\n@@")[0])
            parts.append(blocks[k:k + (2 if two else 1)])
            k += 2 if two else 1
        if k != len(blocks) and not cut:
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
                                             "removed": removed_total}, tuple(violations))

    def baseline_text(self, path: str) -> str | None:
        """The text of ``path`` in the baseline; None when it was not there or is not text."""
        try:
            data, cut = self._git_cut(["cat-file", "blob", f"baseline:{path}"], cap=DIFF_CAP)
        except InfraError:
            return None
        return None if cut or "\0" in data else data

    def remove(self) -> None:
        """Remove the whole folder (never following a link the agent left in it); best effort."""
        with contextlib.suppress(InfraError):
            remove_tree(self.root)
