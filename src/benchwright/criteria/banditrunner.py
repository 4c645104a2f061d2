"""A warm bandit: imported once per executor thread, it checks one sample at a time.

This file runs inside the sandbox with the tools' Python, started by
:class:`benchwright.criteria.toolserver.ToolServer` as ``python -I -c <this file> <bandit's
arguments>``. It says ``BWB ready``, then for each line on its stdin (``{"nonce": ..., "code":
...}``) writes the code to ``solution.py`` and runs bandit's own command-line entry point with
those arguments in this process, its standard output captured, and answers one line,
``BWB <nonce> {"exit": <status>, "report": <what bandit wrote>}``: exactly what a fresh
``bandit`` would have written, without importing bandit and its plug-ins again (most of its
time).
"""

import contextlib
import io
import json
import linecache
import sys

from bandit.cli import main as bandit  # type: ignore[import-not-found]


class Captured(io.StringIO):
    """What bandit writes: standard output to its JSON formatter, which reads the file's name
    and closes it."""

    name = "<stdout>"

    def close(self) -> None:
        return None


def main() -> None:
    arguments = sys.argv[1:]
    out = sys.stdout
    out.write("BWB ready\n")
    out.flush()
    for line in sys.stdin:
        job = json.loads(line)
        with open("solution.py", "wb") as f:
            f.write(job["code"].encode())
        linecache.clearcache()  # bandit quotes lines through it: never an earlier sample's
        report = Captured()
        status: object = 0
        sys.argv = ["bandit", *arguments]
        with contextlib.redirect_stdout(report):
            try:
                bandit.main()
            except SystemExit as e:
                status = e.code
        out.write("BWB " + str(job["nonce"]) + " " + json.dumps({"exit": status, "report": report.getvalue()})
                  + "\n")
        out.flush()


if __name__ == "__main__":
    main()
