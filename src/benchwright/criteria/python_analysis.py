"""``python-ruff``, ``python-pyright`` and ``python-bandit``: lint, type and security findings on
the extracted Python solution, weighted and normalised (see :mod:`.findings`).

Each tool runs in the sample's sandbox on ``solution.py`` (the extracted code) with an explicit
configuration, so that nothing on the machine or in the code's folder changes what is checked:
suppression comments (``# noqa``, ``# nosec``, ``# type: ignore``) are not honoured. Findings on
the lines of the task's prompt, which a completion task's code starts with, are listed apart
and not counted: the model was given those lines.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from importlib import resources
from typing import Any, ClassVar, TypeGuard

from benchwright.criteria.base import Measurement, SampleContext
from benchwright.criteria.findings import Finding, FindingsCriterion
from benchwright.criteria.toolserver import ToolServer
from benchwright.errors import InfraError
from benchwright.sandbox.base import ProcessResult, Sandbox
from benchwright.sandbox.servers import COLD_USES, ThreadServers
from benchwright.toolbox import missing_file, python_tool, tools_python

SOLUTION = "solution.py"
PYTHON_VERSION = "3.11"
"""The sandbox's interpreter (``/usr/bin/python3``), which the tools judge the code for."""


def prompt_lines(ctx: SampleContext) -> int:
    """How many whole lines of ``ctx.code`` are the task's prompt (0 unless the code starts
    with it, as a completion task's code does)."""
    prompt = ctx.rendered.prompt
    return prompt.count("\n") if prompt and ctx.code.startswith(prompt) else 0


def _json(proc: ProcessResult, tool: str) -> Any:
    try:
        return json.loads(proc.stdout)
    except ValueError:
        tail = (proc.stderr or proc.stdout).decode(errors="replace").strip()[-800:]
        raise InfraError(f"{tool} wrote no JSON report (exit status {proc.exit_code}): {tail}") from None


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dicts(value: object) -> TypeGuard[list[dict[str, Any]]]:
    """Whether ``value`` is a list of JSON objects (a tool's list of findings)."""
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)


def _column(value: object) -> int | None:
    """A 1-based column from a 0-based one."""
    column = _int(value)
    return None if column is None else column + 1


class PythonFindings(FindingsCriterion):
    """A findings criterion on Python code. Not counted in the score, but listed: findings on
    the prompt's own lines (except syntax errors), and every syntax error after the first (parsers
    report a cascade of them after one mistake)."""

    languages = ("python",)
    program: ClassVar[str] = "?"
    """The program of the tools' environment (:func:`python_tool`)."""
    syntax_rule: ClassVar[str] = "syntax"
    """The rule of the tool's findings that say the code does not parse."""

    def missing(self) -> str | None:
        return missing_file(python_tool(self.program), self.program)

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        given = prompt_lines(ctx)
        counted: list[Finding] = []
        uncounted: list[tuple[Finding, str]] = []
        for f in sorted(self.findings(ctx), key=lambda f: (f.line or 0, f.column or 0)):
            if f.rule == self.syntax_rule:  # wherever it is, the completion broke the parse
                if any(c.rule == f.rule for c in counted):
                    uncounted.append((f, "a further syntax error"))
                else:
                    counted.append(f)
            elif f.line is not None and f.line <= given:
                uncounted.append((f, "on the task's prompt"))
            else:
                counted.append(f)
        m = self.measurement(counted)
        if uncounted and m.details is not None:
            m.details["prompt_lines"] = given
            m.details["not_counted"] = [{**asdict(f), "why": why} for f, why in uncounted]
            m.output = (f"{m.output}\nnot counted:\n"
                        + "\n".join(f"{f.render()} ({why})" for f, why in uncounted))
        return [m]


RUFF_SELECT = ("E", "W", "F", "B", "PLE")
"""pycodestyle errors and warnings, pyflakes, bugbear and pylint's errors (the stable rules)."""
RUFF_IGNORE = ("W292", "B905")
"""No newline at the end of the file (an artefact of extracting the code), ``zip()`` without
``strict=`` (almost every ``zip`` in short solutions)."""
RUFF_LINE_LENGTH = 120
RUFF_CLASSES: dict[str, str] = {
    "invalid-syntax": "error",
    "F": "error", "E9": "error", "E722": "error", "B": "error", "PLE": "error",
    "F401": "warning", "F541": "warning", "F841": "warning",
    "E7": "warning", "W605": "warning",
    "B007": "warning", "B009": "warning", "B010": "warning", "B019": "warning", "B024": "warning",
    "B027": "warning", "B028": "warning", "B904": "warning",
    "E70": "info", "E74": "info", "E1": "info", "E2": "info", "E3": "info", "E4": "info",
    "E5": "info", "W": "info",
}
"""Severity class of a ruff rule: the longest prefix of its code listed here (else warning).
Errors: broken or almost certainly wrong code (syntax, pyflakes' undefined names and
redefinitions, bare ``except:``, bugbear's bugs, pylint's errors). Warnings: dead code
(unused imports and variables) and brittle idioms (``== None``, ``type(x) == t``, a lambda
bound to a name). Info: layout (whitespace, long lines, one-line statements, ambiguous names)."""


def ruff_class(code: str) -> str:
    """The severity class of ruff rule ``code`` (see :data:`RUFF_CLASSES`)."""
    for end in range(len(code), 0, -1):
        found = RUFF_CLASSES.get(code[:end])
        if found is not None:
            return found
    return "warning"


class PythonRuff(PythonFindings):
    """ruff's lint findings: an explicit, stable rule selection, no configuration file."""

    name = "python-ruff"
    tool = "ruff 0.17.6"
    program = "ruff"
    syntax_rule = "invalid-syntax"

    def __init__(self, warm: bool = True) -> None:
        self.warm = warm
        """Run ruff from a warm sandbox, one per executor thread (:mod:`.commandrunner`: the
        same command line, without a new sandbox per sample), where the sandbox offers
        long-lived sessions; False: a sandbox of its own for every sample."""
        self._servers: ThreadServers[ToolServer] = ThreadServers(self._server)

    def _argv(self) -> list[str]:
        return [str(python_tool("ruff")), "check", "--isolated", "--no-cache", "--no-fix",
                "--ignore-noqa", "--no-preview", "--output-format", "json",
                "--target-version", "py" + PYTHON_VERSION.replace(".", ""),
                "--line-length", str(RUFF_LINE_LENGTH), "--select", ",".join(RUFF_SELECT),
                "--ignore", ",".join(RUFF_IGNORE), SOLUTION]

    def _server(self, sandbox: Sandbox) -> ToolServer:
        runner = resources.files("benchwright.criteria").joinpath("commandrunner.py").read_text()
        argv = [str(tools_python()), "-I", "-c", runner, "BWX", str(self.wall_s), *self._argv()]
        return ToolServer(sandbox, argv, {}, "BWX", self.wall_s + 5, self.tool)

    def close(self) -> None:
        self._servers.close()

    def _report(self, ctx: SampleContext) -> Any:
        """ruff's JSON report on the sample: from this thread's warm sandbox, else from a
        sandbox of its own."""
        server = self._servers.get(ctx.sandbox) if self.warm else None
        answer = server.check(ctx.code) if server is not None else None
        if isinstance(answer, dict) and answer.get("exit") in (0, 1) and isinstance(answer.get("stdout"), str):
            try:
                report = json.loads(answer["stdout"])
            except ValueError:
                report = None
            if isinstance(report, list):
                return report
        if server is not None:
            server.close()  # it failed or answered something else: a new one for the next sample
        proc = self.run_tool(ctx, self._argv(), files={SOLUTION: ctx.code.encode()})
        return _json(proc, self.tool)

    def findings(self, ctx: SampleContext) -> list[Finding]:
        report = self._report(ctx)
        if not isinstance(report, list):
            raise InfraError(f"{self.tool} wrote an unexpected report: {str(report)[:300]}")
        out = []
        for item in report:
            code = str(item.get("code") or "invalid-syntax")
            where = item.get("location") or {}
            out.append(Finding(line=_int(where.get("row")), rule=code, severity=ruff_class(code),
                               message=str(item.get("message", "")), column=_int(where.get("column"))))
        return out


PYRIGHT_CONFIG: dict[str, object] = {
    "typeCheckingMode": "standard",
    "pythonVersion": PYTHON_VERSION,
    "pythonPlatform": "Linux",
    "enableTypeIgnoreComments": False,
    "include": [SOLUTION],
}
"""pyright's own default mode (``standard``), not basedpyright's ``recommended``, which reports
every unannotated parameter."""
PYRIGHT_CLASSES = {"error": "error", "warning": "warning", "information": "info"}


class PythonPyright(PythonFindings):
    """basedpyright's type checking in ``standard`` mode, for the sandbox's Python.

    Each executor thread keeps basedpyright's language server up in a sandbox of its own
    (:mod:`.toolserver`, :mod:`.pyrightlsp`), which checks a sample in tens of milliseconds
    instead of the command line's second; a sample the server fails on is checked by the
    command line."""

    name = "python-pyright"
    tool = "basedpyright 1.40.2"
    program = "basedpyright"

    def __init__(self, warm: bool = True) -> None:
        self.warm = warm
        """Check through a warm language server where the sandbox offers long-lived sessions;
        False: the command line for every sample."""
        self._servers: ThreadServers[ToolServer] = ThreadServers(self._server, COLD_USES)

    def _server(self, sandbox: Sandbox) -> ToolServer:
        # the adapter is not a file: the folder holds what the command line's does, nothing more
        # (an empty solution.py, so that `import solution` resolves as it does there; the server
        # checks the open document's text, never this file)
        adapter = resources.files("benchwright.criteria").joinpath("pyrightlsp.py").read_text()
        argv = [str(tools_python()), "-I", "-c", adapter, str(python_tool("basedpyright-langserver")),
                sandbox.python]
        files = {"pyrightconfig.json": json.dumps(PYRIGHT_CONFIG).encode(), SOLUTION: b""}
        return ToolServer(sandbox, argv, files, "BWP", self.wall_s, self.tool)

    def close(self) -> None:
        self._servers.close()

    def findings(self, ctx: SampleContext) -> list[Finding]:
        server = self._servers.get(ctx.sandbox) if self.warm else None
        diagnostics = server.check(ctx.code) if server is not None else None
        if not _dicts(diagnostics):
            if server is not None:
                server.close()  # it answered something else: a new one for the next sample
            diagnostics = self._command_line(ctx)
        out = []
        for d in diagnostics:
            start = (d.get("range") or {}).get("start") or {}
            line = _int(start.get("line"))
            out.append(Finding(
                line=None if line is None else line + 1,
                rule=str(d.get("rule") or "syntax"),
                severity=PYRIGHT_CLASSES.get(str(d.get("severity")), "error"),
                message=str(d.get("message", "")).split("\n")[0],
                column=_column(start.get("character"))))
        return out

    def _command_line(self, ctx: SampleContext) -> list[dict[str, Any]]:
        argv = [str(python_tool("basedpyright")), "--outputjson", "--project", "pyrightconfig.json",
                "--pythonpath", ctx.sandbox.python, SOLUTION]
        files = {SOLUTION: ctx.code.encode(),
                 "pyrightconfig.json": json.dumps(PYRIGHT_CONFIG).encode()}
        proc = self.run_tool(ctx, argv, files=files)
        report = _json(proc, self.tool)
        diagnostics = report.get("generalDiagnostics") if isinstance(report, dict) else None
        if not _dicts(diagnostics):
            raise InfraError(f"{self.tool} wrote an unexpected report: {str(report)[:300]}")
        return diagnostics


BANDIT_ARGS = ("--format", "json", "--quiet", "--ignore-nosec", "--severity-level", "all",
               "--confidence-level", "all", SOLUTION)
"""bandit's arguments: every finding, whatever its severity and confidence, no ``# nosec``."""
BANDIT_CLASSES = {"HIGH": "high", "MEDIUM": "medium", "LOW": "low", "UNDEFINED": "low"}


class PythonBandit(PythonFindings):
    """bandit's security findings, weighted by bandit's severity (all confidences count)."""

    name = "python-bandit"
    tool = "bandit 1.9.4"
    program = "bandit"
    weights: ClassVar[dict[str, float]] = {"high": 1.0, "medium": 0.5, "low": 0.1, "error": 1.0}

    def __init__(self, warm: bool = True) -> None:
        self.warm = warm
        """Check with bandit imported once per executor thread where the sandbox offers
        long-lived sessions; False: a fresh ``bandit`` for every sample."""
        self._servers: ThreadServers[ToolServer] = ThreadServers(self._server)

    def _server(self, sandbox: Sandbox) -> ToolServer:
        runner = resources.files("benchwright.criteria").joinpath("banditrunner.py").read_text()
        return ToolServer(sandbox, [str(tools_python()), "-I", "-c", runner, *BANDIT_ARGS], {}, "BWB",
                          self.wall_s, self.tool)

    def close(self) -> None:
        self._servers.close()

    def _report(self, ctx: SampleContext) -> Any:
        """bandit's JSON report on the sample: from this thread's warm bandit, else from the
        command line (the same arguments, the same report)."""
        server = self._servers.get(ctx.sandbox) if self.warm else None
        answer = server.check(ctx.code) if server is not None else None
        if (isinstance(answer, dict) and answer.get("exit") in (0, 1)
                and isinstance(answer.get("report"), str)):
            try:
                return json.loads(answer["report"])
            except ValueError:
                pass
        if server is not None:
            server.close()  # it failed on this sample or answered something else
        proc = self.run_tool(ctx, [str(python_tool("bandit")), *BANDIT_ARGS],
                             files={SOLUTION: ctx.code.encode()})
        return _json(proc, self.tool)

    def findings(self, ctx: SampleContext) -> list[Finding]:
        report = self._report(ctx)
        results = report.get("results") if isinstance(report, dict) else None
        errors = report.get("errors") if isinstance(report, dict) else None
        if not isinstance(results, list) or not isinstance(errors, list):
            raise InfraError(f"{self.tool} wrote an unexpected report: {str(report)[:300]}")
        out = []
        for e in errors:
            reason = str(e.get("reason", ""))
            if "syntax error" not in reason:  # bandit's own trouble, not the code's
                raise InfraError(f"{self.tool} failed on the solution: {reason}")
            out.append(Finding(line=None, rule="syntax", severity="error",
                               message=f"bandit cannot check it: {reason}"))
        for r in results:
            out.append(Finding(
                line=_int(r.get("line_number")), rule=str(r.get("test_id", "?")),
                severity=BANDIT_CLASSES.get(str(r.get("issue_severity")), "low"),
                message=f"{r.get('issue_text', '')} ({r.get('test_name', '')}, "
                        f"confidence {str(r.get('issue_confidence', '?')).lower()})",
                column=_column(r.get("col_offset"))))
        return out


CRITERIA = (PythonRuff, PythonPyright, PythonBandit)
"""The criteria of this module, registered by :mod:`benchwright.builtins`."""
