"""A warm basedpyright: the language server, one per executor thread, checks one sample at a time.

This file runs inside the sandbox (standard library only), started by
:class:`benchwright.criteria.toolserver.ToolServer` as
``python -I -c <this file> <basedpyright-langserver> <python path>`` in a folder that holds
``pyrightconfig.json``. It starts the language server on its stdio, initialises it with that
folder as the workspace, says ``BWP ready`` and then, for each line on its stdin
(``{"nonce": ..., "code": ...}``), opens ``solution.py`` with that text as a new version, waits
for the server's diagnostics of that version, closes the file and answers one line,
``BWP <nonce> [diagnostic, ...]``, each diagnostic as the command line's ``--outputjson`` writes
it (``severity`` a word, ``rule``, ``message``, ``range``). Hints (unused names, unreachable
code) are not findings: the command line does not report them either. The file is never
written: the server sees the text only, so a sample's code is gone when the next one opens.
An unsaved document that imports the standard-library modules samples use most stays open, so
that their stubs are not dropped with each sample and parsed again for the next.
"""

import json
import os
import subprocess
import sys
from typing import Any

SEVERITIES = {1: "error", 2: "warning", 3: "information"}
KEEP = ("import abc, bisect, collections, copy, dataclasses, decimal, enum, fractions, functools, "
        "hashlib, heapq, itertools, math, operator, os, random, re, statistics, string, sys, "
        "typing\n")
"""The text of the document that keeps these modules' stubs loaded (``untitled:``: no sample
can import it)."""


def main() -> None:
    server = subprocess.Popen([sys.argv[1], "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    python_path = sys.argv[2]
    assert server.stdin is not None and server.stdout is not None
    to_server, from_server = server.stdin, server.stdout
    out = sys.stdout

    def send(message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        to_server.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        to_server.flush()

    def receive() -> dict[str, Any]:
        length = None
        while True:
            line = from_server.readline()
            if not line:
                raise SystemExit("bw_pyright: the language server ended")
            if line in (b"\r\n", b"\n"):
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if length is None:
            raise SystemExit("bw_pyright: a message without Content-Length")
        message: dict[str, Any] = json.loads(from_server.read(length))
        if "method" in message and "id" in message:  # the server asks: answer so it goes on
            result = None
            if message["method"] == "workspace/configuration":
                result = [{"pythonPath": python_path} if item.get("section") == "python" else {}
                          for item in message["params"].get("items", [])]
            send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        return message

    root = "file://" + os.getcwd()
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "processId": os.getpid(), "rootUri": root,
        "workspaceFolders": [{"uri": root, "name": "work"}],
        "capabilities": {"workspace": {"configuration": True},
                         "textDocument": {"publishDiagnostics": {"versionSupport": True}}}}})
    while receive().get("id") != 1:
        pass
    send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    # an unsaved document that imports what samples import most, open for good: a closed
    # sample was the last file to need the standard library's stubs, and the server dropped
    # them, so the next sample parsed and bound them again (about 130 ms of CPU a sample)
    send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "untitled:bw-keep", "languageId": "python", "version": 1, "text": KEEP}}})
    while True:  # checked: the workspace is set up and the stubs are loaded (a sample opened
        message = receive()  # before that got a first, empty set of diagnostics)
        if (message.get("method") == "textDocument/publishDiagnostics"
                and (message.get("params") or {}).get("uri") == "untitled:bw-keep"):
            break
    out.write("BWP ready\n")
    out.flush()
    uri = root + "/solution.py"
    version = 0
    for line in sys.stdin:
        job = json.loads(line)
        version += 1
        send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": version, "text": job["code"]}}})
        while True:
            message = receive()
            params = message.get("params") or {}
            if (message.get("method") == "textDocument/publishDiagnostics"
                    and params.get("uri") == uri and params.get("version") == version):
                break
        send({"jsonrpc": "2.0", "method": "textDocument/didClose",
              "params": {"textDocument": {"uri": uri}}})
        found: list[dict[str, Any]] = []
        for d in params.get("diagnostics", []):
            severity = SEVERITIES.get(d.get("severity"))
            if severity is None:
                continue
            item = {"severity": severity, "message": d.get("message", ""), "range": d.get("range")}
            if d.get("code") is not None:
                item["rule"] = d["code"]
            found.append(item)
        out.write("BWP " + str(job["nonce"]) + " " + json.dumps(found) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
