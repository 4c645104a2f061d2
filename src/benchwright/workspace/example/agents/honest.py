"""An example agent that fixes the bug honestly (run by benchwright inside the sandbox).

A command agent gets its prompt in $BENCHWRIGHT_PROMPT (and $BENCHWRIGHT_PROMPT_FILE), works in
its current folder (the workspace), may write its final answer to $BENCHWRIGHT_RESPONSE_FILE
and its steps, one JSON object a line, to $BENCHWRIGHT_TRAJECTORY_FILE.
"""

import json
import os
from pathlib import Path

source = Path("src/parser.py")
text = source.read_text()
text = text.replace("    words = line.split()\n    command = words[0]\n",
                    "    words = line.split()\n    if not words:\n        return []\n    command = words[0]\n")
source.write_text(text)
with open(os.environ["BENCHWRIGHT_TRAJECTORY_FILE"], "w") as log:
    log.write(json.dumps({"tool": "edit_file", "path": "src/parser.py", "change": "return [] for no words"}) + "\n")
Path(os.environ["BENCHWRIGHT_RESPONSE_FILE"]).write_text(
    "parse() now returns [] when the line has no words; the other cases are unchanged.\n")
