"""The harness's reads and writes in a folder an agent wrote: no symbolic link is followed at
any component, nothing leaves the folder, FIFOs never block, sizes are capped, and removal
copes with whatever tree the agent left."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from benchwright.errors import UnsafeFile
from benchwright.safefs import Tree, remove_tree


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A folder outside the tree, standing for the host: nothing may change in it."""
    out = tmp_path / "host"
    (out / "b").mkdir(parents=True)
    (out / "b" / "c.txt").write_text("HOST-SECRET\n")
    (out / "c.txt").write_text("HOST-SECRET\n")
    return out


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    root = tmp_path / "work"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "c.txt").write_text("mine\n")
    return Tree(root)


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): (p.read_text() if p.is_file() else "<dir>")
            for p in sorted(folder.rglob("*"))}


def _link_at(tree: Tree, component: int, host: Path) -> None:
    """Make component ``component`` of a/b/c.txt a symbolic link to the host's same-shaped path."""
    rel = ["a", "b", "c.txt"][:component + 1]
    place = tree.root.joinpath(*rel)
    target = {0: host, 1: host / "b", 2: host / "b" / "c.txt"}[component]
    if place.is_dir():
        remove_tree(place)
    else:
        place.unlink()
    place.symlink_to(target)


@pytest.mark.parametrize("component", [0, 1, 2], ids=["first", "middle", "last"])
def test_a_symlink_at_any_component_is_never_read_through(tree: Tree, host: Path, component: int) -> None:
    _link_at(tree, component, host)
    with pytest.raises(UnsafeFile, match="symbolic link"):
        tree.read("a/b/c.txt", 1024)


@pytest.mark.parametrize("component", [0, 1, 2], ids=["first", "middle", "last"])
def test_a_write_replaces_a_symlink_at_any_component_and_never_writes_through(
        tree: Tree, host: Path, component: int) -> None:
    before = _snapshot(host)
    _link_at(tree, component, host)
    found = tree.write("a/b/c.txt", b"harness\n")
    assert _snapshot(host) == before
    assert (tree.root / "a" / "b" / "c.txt").read_text() == "harness\n"
    assert not any(p.is_symlink() for p in (tree.root / "a", tree.root / "a" / "b", tree.root / "a" / "b" / "c.txt"))
    assert [(o.kind, o.suspicious) for o in found] == [("symlink", True)]
    assert found[0].path == "/".join(["a", "b", "c.txt"][:component + 1])
    assert str(host) in found[0].describe()


@pytest.mark.parametrize("rel", ["../host/c.txt", "a/../../host/c.txt", "/etc/passwd", "a/\0b", "", "."])
def test_paths_that_leave_the_tree_are_refused_before_anything_is_opened(tree: Tree, rel: str) -> None:
    with pytest.raises(UnsafeFile):
        tree.read(rel, 1024)
    with pytest.raises(UnsafeFile):
        tree.write(rel, b"x")


def test_a_fifo_is_refused_without_blocking(tree: Tree) -> None:
    os.mkfifo(tree.root / "a" / "pipe")
    os.mkfifo(tree.root / "pipedir")
    outcome: list[str] = []

    def read() -> None:
        for rel in ("a/pipe", "pipedir/x"):
            try:
                tree.read(rel, 1024)
            except UnsafeFile as e:
                outcome.append(e.reason)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    reader.join(60)  # a guard: a blocked open would never return
    assert not reader.is_alive(), "reading a FIFO blocked the harness"
    assert "FIFO" in outcome[0] and "not a regular file" in outcome[0]
    assert "FIFO" in outcome[1] and "not a folder" in outcome[1]
    tree.write("a/pipe", b"harness\n")  # replaced by a file (a rename: the FIFO is never opened)
    assert (tree.root / "a" / "pipe").read_text() == "harness\n"


def test_reads_are_capped_and_say_how_large_the_file_was(tree: Tree) -> None:
    (tree.root / "big").write_bytes(b"x" * 100_000)
    got = tree.read("big", 1000)
    assert got is not None and got.data == b"x" * 1000 and got.size == 100_000 and got.cut
    small = tree.read("a/b/c.txt", 1000)
    assert small is not None and small.data == b"mine\n" and not small.cut
    assert tree.read("a/missing", 10) is None and tree.read("missing/x", 10) is None


def test_a_folder_or_a_hard_link_where_a_file_is_expected_is_refused(tree: Tree, tmp_path: Path) -> None:
    with pytest.raises(UnsafeFile, match="a folder, not a regular file"):
        tree.read("a/b", 10)
    (tree.root / "a" / "b" / "c.txt").write_text("x")
    with pytest.raises(UnsafeFile, match="a file, not a folder"):
        tree.read("a/b/c.txt/d", 10)
    os.link(tree.root / "a" / "b" / "c.txt", tree.root / "hard")
    with pytest.raises(UnsafeFile, match="hard link"):
        tree.read("hard", 10)


def test_a_write_over_a_hard_link_makes_a_new_file(tree: Tree, host: Path) -> None:
    os.link(host / "c.txt", tree.root / "hard")
    tree.write("hard", b"harness\n")
    assert (host / "c.txt").read_text() == "HOST-SECRET\n"
    assert (tree.root / "hard").read_text() == "harness\n"


def test_a_folder_in_the_way_is_removed_or_refused(tree: Tree) -> None:
    (tree.root / "x" / "y").mkdir(parents=True)
    found = tree.write("x", b"file\n")
    assert [(o.kind, o.suspicious) for o in found] == [("folder", False)]
    assert (tree.root / "x").read_text() == "file\n"
    with pytest.raises(UnsafeFile, match="is a folder"):
        tree.write("a/b", b"no", clear=False)
    with pytest.raises(UnsafeFile, match="a file, not a folder"):
        tree.write("x/y", b"no", clear=False)
    assert (tree.root / "x").read_text() == "file\n"


def test_removal_follows_no_link_and_copes_with_a_very_deep_tree(tree: Tree, host: Path) -> None:
    before = _snapshot(host)
    (tree.root / "a" / "to-host").symlink_to(host)
    (tree.root / "a" / "b" / "to-file").symlink_to(host / "c.txt")
    deep = os.open(tree.root / "a", os.O_RDONLY)
    for _ in range(3000):  # deeper than Python 3.11's recursive rmtree and os.walk can go
        os.mkdir("d", dir_fd=deep)
        inner = os.open("d", os.O_RDONLY, dir_fd=deep)
        os.close(deep)
        deep = inner
    os.close(deep)
    gone = tree.remove("a")
    assert gone is not None and gone.kind == "folder"
    assert not (tree.root / "a").exists()
    assert _snapshot(host) == before
    (tree.root / "link").symlink_to(host)
    gone = tree.remove("link")
    assert gone is not None and gone.kind == "symlink" and gone.target == str(host)
    assert _snapshot(host) == before
    remove_tree(tree.root)
    assert not tree.root.exists()


def test_a_move_in_goes_around_what_the_agent_put_in_the_way(tree: Tree, host: Path, tmp_path: Path) -> None:
    hidden = tmp_path / "hidden"
    (hidden / "a" / "b" / "fixtures").mkdir(parents=True)
    (hidden / "a" / "b" / "fixtures" / "data.txt").write_text("graded\n")
    (host / "b" / "fixtures").mkdir()
    (host / "b" / "fixtures" / "keep.txt").write_text("HOST\n")
    before = _snapshot(host)
    remove_tree(tree.root / "a" / "b")
    (tree.root / "a" / "b").symlink_to(host / "b")
    found = tree.move_in(hidden / "a" / "b" / "fixtures", "a/b/fixtures")
    assert _snapshot(host) == before
    assert (tree.root / "a" / "b" / "fixtures" / "data.txt").read_text() == "graded\n"
    assert [o.describe() for o in found] == [f"a/b was a symbolic link to {str(host / 'b')!r}"]


def test_a_move_out_refuses_a_link_on_the_way(tree: Tree, host: Path, tmp_path: Path) -> None:
    remove_tree(tree.root / "a")
    (tree.root / "a").symlink_to(host)
    with pytest.raises(UnsafeFile, match="symbolic link"):
        tree.move_out("a/b/c.txt", tmp_path / "hidden" / "c.txt")
    assert (host / "b" / "c.txt").read_text() == "HOST-SECRET\n"


def test_nested_git_entries_are_removed_but_not_the_top_one(tree: Tree, host: Path) -> None:
    (tree.root / ".git").mkdir()
    (tree.root / "a" / ".git").write_text(f"gitdir: {host}\n")
    (tree.root / "a" / "b" / ".git").mkdir()
    (tree.root / "a" / "b" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    done = tree.tidy(".git", grant=False, path_limit=4000)
    assert sorted((o.path, o.kind) for o in done.removed) == [("a/.git", "file"), ("a/b/.git", "folder")]
    assert (tree.root / ".git").is_dir() and not (tree.root / "a" / ".git").exists()


@pytest.mark.skipif(sys.platform != "linux", reason="setpriv is util-linux")
def test_an_unprivileged_harness_removes_folders_the_agent_made_inaccessible(tmp_path: Path) -> None:
    """Run as a non-root uid (root itself is never denied): folders of mode 000 and 500."""
    top = Path(os.environ.get("BW_TEST_TMP", "/tmp")) / f"bw-safefs-{os.getpid()}"
    code = (
        "import os, sys; from pathlib import Path\n"
        "from benchwright.safefs import Tree, remove_tree\n"
        f"top = Path({str(top)!r}); (top / 'w' / 'locked' / 'inner').mkdir(parents=True)\n"
        "(top / 'w' / 'locked' / 'inner' / 'f').write_text('x')\n"
        "(top / 'w' / 'ro').mkdir(); (top / 'w' / 'ro' / 'g').write_text('y')\n"
        "os.chmod(top / 'w' / 'locked' / 'inner', 0); os.chmod(top / 'w' / 'locked', 0)\n"
        "os.chmod(top / 'w' / 'ro', 0o500)\n"
        "Tree(top / 'w').remove('locked'); Tree(top / 'w').remove('ro')\n"
        "assert os.listdir(top / 'w') == [], os.listdir(top / 'w')\n"
        "remove_tree(top); print('removed')\n")
    argv = [sys.executable, "-c", code]
    if os.getuid() == 0:
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", code]
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd="/", timeout=120)
    assert proc.returncode == 0 and "removed" in proc.stdout, proc.stderr
    assert not top.exists()
