"""Reading and writing inside a folder an agent wrote, without following anything it made.

A :class:`Tree` is a folder the harness made (an agent's workspace, its ledger folder) whose
contents an agent controls. Every path is relative to it, and is walked one component at a
time from the folder's file descriptor: each folder on the way is opened ``O_NOFOLLOW |
O_DIRECTORY`` relative to the one before (``openat``), so a symbolic link at any component, the
last one included, is refused or removed rather than followed, and nothing renamed during the
walk can lead it out of the tree (each step starts from a folder already open). Absolute
paths, ``..`` and NUL characters are refused before anything is opened.

* **Reads** (:meth:`Tree.read`): the entry must be a regular file with one name (``lstat``
  first, so a FIFO or a device is never even opened; not a hard link either), opened
  ``O_NOFOLLOW | O_NONBLOCK`` and checked again with ``fstat`` to be the same file; at most
  ``cap`` bytes are read, and the file's size is reported so that a caller can say it was
  larger. Anything else raises :class:`~benchwright.errors.UnsafeFile` with the reason.
* **Writes** (:meth:`Tree.write`): the missing folders on the way are made (``mkdirat``), a
  new file is created ``O_CREAT | O_EXCL | O_NOFOLLOW`` next to the name and renamed over it
  (``renameat``: a symbolic link, a hard link or a FIFO left at the name is replaced, never
  written through; a folder there is removed first).
* **Moves** (:meth:`Tree.move_in`, :meth:`Tree.move_out`): ``renameat`` between a folder of the
  harness and a folder of the tree reached as above.
* **Removal** (:meth:`Tree.remove`, :func:`remove_tree`) is iterative and holds one folder open
  at a time, climbing back through ``..`` checked against the folder it came from: a tree
  thousands of folders deep exhausts neither the stack nor the file descriptors (Python 3.11's
  ``shutil.rmtree`` and ``os.walk`` recurse and raise ``RecursionError`` on it). A folder the
  agent made unreadable or unwritable (mode 000, when the harness is not root and the agent
  ran as its uid) is given back its owner's permissions through an ``O_PATH`` descriptor before
  it is emptied.

What a write, a move or a folder to be made found in its way is returned as :class:`Obstacle`
values, and the harness decides: a symbolic link, a FIFO, a socket or a device is a violation
(:attr:`Obstacle.suspicious`), a plain file or folder is the agent's own work.

Linux's ``openat2(RESOLVE_NO_SYMLINKS)`` would do a read's walk in one system call; the
component walk is used on every kernel instead, since writes must make their folders on the way
anyway: one code path, at a few system calls per component.
"""

from benchwright.safefs.tree import Slice, Tidied, Tree, parts
from benchwright.safefs.walk import Obstacle, chown_tree, kind_of, remove_tree

__all__ = ["Obstacle", "Slice", "Tidied", "Tree", "chown_tree", "kind_of", "parts", "remove_tree"]
