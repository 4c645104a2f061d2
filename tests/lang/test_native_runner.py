"""The Rust and Go runner reads its job and the test programs' lines, and writes its records,
with json's own C scanner and encoder (importing ``json`` costs each sample milliseconds): what
it reads and writes is exactly what ``json`` would, in the interpreter the sandboxes run."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources

import pytest

from benchwright.lang import nativerunner

VALUES = [
    {"i": 0, "status": "pass", "time_ms": 0.000931, "output": "h\u00e9llo\n\x00\"\\\u2028"},
    {"a": [1.5, -0.0, 1e300, float("inf"), None, True, False], "b": {}, "c": []},
    "text", 3, -7.25,
]
REFUSED = ["", "   ", "{", '{"a": 1} x', "[1,]", "nul", '"\\x"', "1 2", "{'a': 1}"]
ACCEPTED = [' {"a": 1} \n', "\t[1]\r\n", "NaN", '"\\u00e9"', "-Infinity"]


def test_the_runner_reads_and_writes_what_json_does() -> None:
    assert nativerunner._SCAN is not None and nativerunner._ENCODE is not None  # the fast path
    for value in VALUES:
        assert nativerunner.dumps(value) == json.dumps(value)
        assert repr(nativerunner.loads(json.dumps(value))) == repr(json.loads(json.dumps(value)))
    for text in ACCEPTED:
        assert repr(nativerunner.loads(text)) == repr(json.loads(text)), text
    for text in REFUSED:
        with pytest.raises(ValueError):
            json.loads(text)
        with pytest.raises(ValueError):
            nativerunner.loads(text)


@pytest.mark.parametrize("python", sorted({sys.executable, "/usr/bin/python3"}))
def test_the_runner_imports_neither_json_nor_re_in_the_sandboxes_interpreter(python: str) -> None:
    source = resources.files("benchwright.lang").joinpath("nativerunner.py").read_text()
    probe = source.replace('if __name__ == "__main__":', "if False:") + (
        "\nimport sys\nprint(dumps(loads('[1, \"x\"]')), sorted({'json', 're', 'signal', "
        "'contextlib'} & set(sys.modules)))\n")
    done = subprocess.run([python, "-I", "-S", "-c", probe], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == '[1, "x"] []'
