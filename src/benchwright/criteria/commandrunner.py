"""A tool's command line, run from a warm sandbox: one server per executor thread.

Some tools start fast but their sandbox does not (a new set of namespaces and mounts for each
sample costs more than ruff's whole check). This file runs inside the sandbox with the tools'
Python, started by :class:`benchwright.criteria.toolserver.ToolServer` as ``python -I -c <this
file> <tag> <wall seconds> <command line ...>``. It says ``<tag> ready``, then for each line on
its stdin (``{"nonce": ..., "code": ...}``) writes the code to ``solution.py`` (replacing what
was there, never through a link), runs the command line (it names that file) with the time
limit, and answers one line, ``<tag> <nonce> {"exit": <status>, "stdout": <text>}``: exactly
what the same command line prints in a sandbox of its own. The tool reads the code and never
runs it.
"""

import json
import os
import subprocess
import sys

OUTPUT_CAP = 8 << 20
"""The most of the tool's standard output that is answered (as the per-sample path's cap)."""


def main() -> None:
    tag, wall, argv = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
    out = sys.stdout
    out.write(f"{tag} ready\n")
    out.flush()
    for line in sys.stdin:
        job = json.loads(line)
        part = "solution.py.part"
        if os.path.lexists(part):
            os.unlink(part)
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(job["code"].encode())
        os.replace(part, "solution.py")
        try:
            proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=wall,
                                  check=False)
            answer: dict[str, object] = {"exit": proc.returncode,
                                         "stdout": proc.stdout[:OUTPUT_CAP].decode(errors="replace")}
        except subprocess.TimeoutExpired:
            answer = {"exit": None, "stdout": ""}
        out.write(f"{tag} {job['nonce']} {json.dumps(answer)}\n")
        out.flush()


if __name__ == "__main__":
    main()
