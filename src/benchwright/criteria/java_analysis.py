"""Java static analysis: ``java-checkstyle`` (Checkstyle), ``java-pmd`` (PMD), and the coverage
criterion ``java-jacoco`` (:mod:`benchwright.criteria.java_coverage`).

Both analysers run in the sample's sandbox on the extracted solution, verbatim, in a file named
as ``javac`` wants it (its public top-level type, :func:`~benchwright.lang.javasource.solution_file_name`),
with benchwright's rule set written next to it. Their findings are weighted and normalised as
every findings criterion's are (:mod:`benchwright.criteria.findings`): ``1 / (1 + penalty)``.

A solution the analyser cannot parse is checked with ``javac`` in the same sandbox: when javac
rejects it too, the code does not compile and scores 0 (the model's fault, with javac's
message); when javac accepts it, the analyser does not know its syntax (Checkstyle 8.36 predates
``sealed``) and the record is ``n/a``. Anything else the tool fails on is an infra error.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any, ClassVar

from benchwright import toolbox
from benchwright.criteria.base import Criterion, Measurement, SampleContext
from benchwright.criteria.findings import Finding, FindingsCriterion
from benchwright.criteria.java_coverage import JavaJacoco
from benchwright.criteria.javatoolserver import FILE, REPORT, JavaToolServer, ToolRun
from benchwright.errors import InfraError
from benchwright.lang.javasource import solution_file_name
from benchwright.sandbox.base import Sandbox
from benchwright.sandbox.servers import COLD_USES, ThreadServers

__all__ = ["CRITERIA", "JavaCheckstyle", "JavaPmd"]

TOOL_JVM = ("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto", "-XX:-UsePerfData")
"""The analysers' JVM flags: short runs, so a quick JIT and the simplest GC."""
JDK_HINT = "install a JDK: apt-get install default-jdk-headless"

_JAVAC_LINE = re.compile(r"(?m)^(?P<file>[^\s:][^:\n]*\.java):(?P<line>\d+): error:")


def _program(name: str) -> str:
    return shutil.which(name) or f"/usr/bin/{name}"


class Unparsable(Exception):
    """The analyser could not parse the solution (``line``: where, when it said)."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.line = line


class JavaFindings(FindingsCriterion):
    """A Java analyser: runs on ``ctx.code`` in a file named after its public class; a solution
    it cannot parse is judged by ``javac`` (see the module doc)."""

    languages = ("java",)

    def __init__(self, warm: bool = True) -> None:
        self.warm = warm
        """Analyse in a warm JVM, one per executor thread (:mod:`.javatoolserver`), where the
        sandbox offers long-lived sessions; False: the command line (a JVM) for every sample."""
        self._servers: ThreadServers[JavaToolServer] = ThreadServers(self._server, COLD_USES)

    def _server(self, sandbox: Sandbox) -> JavaToolServer:
        raise NotImplementedError

    def _command_line(self, ctx: SampleContext, name: str) -> ToolRun:
        raise NotImplementedError

    def close(self) -> None:
        self._servers.close()

    def run(self, ctx: SampleContext, name: str, usable: Callable[[ToolRun], bool]) -> ToolRun:
        """The tool's run on the solution in a file called ``name``: from this thread's warm
        JVM when it answers something ``usable``, else from the command line."""
        server = self._servers.get(ctx.sandbox) if self.warm else None
        if server is not None:
            answer = server.analyse(name, ctx.code)
            if answer is not None and usable(answer):
                return answer
            server.close()  # it failed or answered something else: a new one for the next sample
        return self._command_line(ctx, name)

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        try:
            return [self.measurement(self.findings(ctx))]
        except Unparsable as e:
            return [self.unparsable(ctx, e)]

    def unparsable(self, ctx: SampleContext, why: Unparsable) -> Measurement:
        """Score 0 when ``javac`` rejects the solution too, else ``n/a``."""
        name = solution_file_name(ctx.code)
        proc = self.run_tool(ctx, [
            _program("javac"), "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC", "-d", "bw_parse",
            "-proc:none", "-implicit:none", "-nowarn", "-encoding", "UTF-8", "-Xmaxerrs", "20", name,
        ], files={name: ctx.code.encode()})
        log = (proc.stderr + proc.stdout).decode("utf-8", "replace").strip()
        details: dict[str, Any] = {"parse_error": str(why), "compiles": proc.exit_code == 0}
        if proc.exit_code == 0:
            return Measurement(
                score=None, unit=self.unit, verdict="n/a", line=why.line, details=details,
                output=f"{self.tool} cannot parse this solution, which javac compiles "
                       f"(syntax newer than the tool): {why}")
        lines = [int(m.group("line")) for m in _JAVAC_LINE.finditer(log)
                 if m.group("file").endswith(name)]
        return Measurement(
            score=0.0, unit=self.unit, line=lines[0] if lines else why.line, error=log[:16000],
            output=f"the solution does not compile, so {self.tool} cannot analyse it: {why}",
            details=details)


# --------------------------------------------------------------------------- Checkstyle

CHECKSTYLE_JARS = ("antlr4-runtime", "commons-lang3", "commons-beanutils", "commons-collections3",
                   "guava", "commons-cli", "commons-logging", "picocli", "Saxon-HE", "reflections",
                   "checkstyle")
"""Debian's launcher's classpath (``/usr/bin/checkstyle``); ``checkstyle.jar``'s manifest adds
``antlr.jar``."""

CHECKSTYLE_CONFIG = """\
<?xml version="1.0"?>
<!DOCTYPE module PUBLIC "-//Checkstyle//DTD Checkstyle Configuration 1.3//EN"
  "https://checkstyle.org/dtds/configuration_1_3.dtd">
<!-- benchwright's java-checkstyle rules (see docs/criteria.md#java-checkstyle): a subset of
     sun_checks.xml and google_checks.xml for single-file solutions. The severity is the weight
     class: error = likely bug, warning = convention, info = layout and taste. -->
<module name="Checker">
  <property name="charset" value="UTF-8"/>
  <property name="severity" value="warning"/>
  <module name="FileTabCharacter"><property name="severity" value="info"/></module>
  <module name="LineLength">
    <property name="severity" value="info"/>
    <property name="max" value="120"/>
  </module>
  <module name="TreeWalker">
    <module name="EmptyCatchBlock"><property name="severity" value="error"/></module>
    <module name="EqualsHashCode"><property name="severity" value="error"/></module>
    <module name="CovariantEquals"><property name="severity" value="error"/></module>
    <module name="StringLiteralEquality"><property name="severity" value="error"/></module>
    <module name="FallThrough"><property name="severity" value="error"/></module>
    <module name="EmptyStatement"><property name="severity" value="error"/></module>

    <module name="TypeName"/>
    <module name="MethodName"/>
    <module name="ConstantName"/>
    <module name="StaticVariableName"/>
    <module name="MemberName"/>
    <module name="ParameterName"/>
    <module name="LambdaParameterName"/>
    <module name="LocalVariableName"/>
    <module name="LocalFinalVariableName"/>
    <module name="ClassTypeParameterName"/>
    <module name="MethodTypeParameterName"/>
    <module name="PackageName"/>
    <module name="RedundantImport"/>
    <module name="UnusedImports"/>
    <module name="IllegalImport"/>
    <module name="NeedBraces"/>
    <module name="EmptyBlock"><property name="option" value="text"/></module>
    <module name="MissingSwitchDefault"/>
    <module name="InnerAssignment"/>
    <module name="ModifiedControlVariable"/>
    <module name="SimplifyBooleanExpression"/>
    <module name="SimplifyBooleanReturn"/>
    <module name="OneStatementPerLine"/>
    <module name="UpperEll"/>
    <module name="MethodLength"><property name="max" value="100"/></module>
    <module name="ParameterNumber"><property name="max" value="7"/></module>

    <module name="AvoidStarImport"><property name="severity" value="info"/></module>
    <module name="MagicNumber">
      <property name="severity" value="info"/>
      <property name="ignoreNumbers" value="-1, 0, 1, 2, 10"/>
      <property name="ignoreHashCodeMethod" value="true"/>
      <property name="ignoreFieldDeclaration" value="true"/>
    </module>
    <module name="MultipleVariableDeclarations"><property name="severity" value="info"/></module>
    <module name="ArrayTypeStyle"><property name="severity" value="info"/></module>
    <module name="ModifierOrder"><property name="severity" value="info"/></module>
    <module name="RedundantModifier"><property name="severity" value="info"/></module>
    <module name="AvoidNestedBlocks"><property name="severity" value="info"/></module>
    <module name="LeftCurly"><property name="severity" value="info"/></module>
    <module name="RightCurly"><property name="severity" value="info"/></module>
    <module name="WhitespaceAround">
      <property name="severity" value="info"/>
      <property name="allowEmptyConstructors" value="true"/>
      <property name="allowEmptyMethods" value="true"/>
      <property name="allowEmptyTypes" value="true"/>
      <property name="allowEmptyLoops" value="true"/>
      <property name="allowEmptyLambdas" value="true"/>
    </module>
    <module name="WhitespaceAfter"><property name="severity" value="info"/></module>
    <module name="NoWhitespaceBefore"><property name="severity" value="info"/></module>
    <module name="NoWhitespaceAfter"><property name="severity" value="info"/></module>
    <module name="MethodParamPad"><property name="severity" value="info"/></module>
    <module name="ParenPad"><property name="severity" value="info"/></module>
    <module name="GenericWhitespace"><property name="severity" value="info"/></module>
  </module>
</module>
"""
"""The rule set (written into the sandbox as ``bw_checkstyle.xml``)."""


class JavaCheckstyle(JavaFindings):
    """Checkstyle's findings on the solution with benchwright's rule set."""

    name = "java-checkstyle"
    tool = "checkstyle 8.36.1"
    weights: ClassVar[dict[str, float]] = {"error": 1.0, "warning": 0.5, "info": 0.1}
    config_file = "bw_checkstyle.xml"
    report_file = "bw_checkstyle_report.xml"

    def missing(self) -> str | None:
        for jar in CHECKSTYLE_JARS:
            why = toolbox.missing_file(toolbox.java_lib(f"{jar}.jar"), "Checkstyle",
                                       "apt-get install checkstyle")
            if why is not None:
                return why
        return None if shutil.which("java") else f"java-checkstyle needs java: {JDK_HINT}"

    def _classpath(self) -> str:
        return ":".join(str(toolbox.java_lib(f"{jar}.jar")) for jar in CHECKSTYLE_JARS)

    def _arguments(self, report: str, file: str) -> list[str]:
        return ["-c", self.config_file, "-f", "xml", "-o", report, file]

    def _server(self, sandbox: Sandbox) -> JavaToolServer:
        return JavaToolServer(sandbox, _program("java"), list(TOOL_JVM), self._classpath(), "checkstyle",
                              self._arguments(REPORT, FILE), {self.config_file: CHECKSTYLE_CONFIG.encode()},
                              self.wall_s, self.tool)

    def _command_line(self, ctx: SampleContext, name: str) -> ToolRun:
        proc = self.run_tool(ctx, [
            _program("java"), *TOOL_JVM, "-cp", self._classpath(), "com.puppycrawl.tools.checkstyle.Main",
            *self._arguments(self.report_file, name),
        ], files={name: ctx.code.encode(), self.config_file: CHECKSTYLE_CONFIG.encode()},
            ok=tuple(range(256)), collect=(self.report_file,))
        return ToolRun(proc.exit_code or 0, (proc.stderr + proc.stdout).decode("utf-8", "replace"),
                       proc.files.get(self.report_file))

    def findings(self, ctx: SampleContext) -> list[Finding]:
        name = solution_file_name(ctx.code)
        run = self.run(ctx, name, lambda r: r.report is not None or "while parsing file" in r.printed)
        stderr = run.printed
        if "while parsing file" in stderr:  # CheckstyleException: ... occurred while parsing file
            where = re.search(rf"(?m)^Caused by: (?:\S*?{re.escape(name)}:|line )(\d+):\d+: (.+)$", stderr)
            raise Unparsable(f"line {where.group(1)}: {where.group(2).strip()}" if where else
                             "Checkstyle's parser rejected it", int(where.group(1)) if where else None)
        try:
            root = ET.fromstring(run.report or b"")
        except ET.ParseError as e:
            raise InfraError(f"{self.tool} wrote no readable report (exit {run.exit_code}): "
                             f"{stderr.strip()[-800:] or e}") from e
        found: list[Finding] = []
        for element in root.iter():
            if element.tag == "exception":
                raise InfraError(f"{self.tool} failed: {(element.text or '').strip()[-800:]}")
            if element.tag != "error":
                continue
            source = element.get("source", "?").rsplit(".", 1)[-1]
            found.append(Finding(
                line=_int(element.get("line")), column=_int(element.get("column")),
                rule=source.removesuffix("Check"), severity=element.get("severity", "error"),
                message=element.get("message", "")))
        return found


# --------------------------------------------------------------------------- PMD

PMD_RULESET = """\
<?xml version="1.0" encoding="UTF-8"?>
<ruleset name="benchwright-java"
         xmlns="http://pmd.sourceforge.net/ruleset/2.0.0"
         xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
         xsi:schemaLocation="http://pmd.sourceforge.net/ruleset/2.0.0 https://pmd.sourceforge.io/ruleset_2_0_0.xsd">
  <description>benchwright's java-pmd rules (see docs/criteria.md#java-pmd): PMD's quickstart
    rule set without the two rules every function-level task's Solution class breaks by design
    (a class of static methods in the default package), plus the field naming conventions.
  </description>
  <rule ref="rulesets/java/quickstart.xml">
    <exclude name="NoPackage"/>
    <exclude name="InstantiableUtilityClass"/>
  </rule>
  <rule ref="category/java/codestyle.xml/FieldNamingConventions"/>
</ruleset>
"""
"""The rule set (written into the sandbox as ``bw_pmd.xml``)."""

PMD_PRIORITIES = {1: "high", 2: "medium-high", 3: "medium", 4: "medium-low", 5: "low"}
"""PMD's rule priorities and their names (``RulePriority``)."""
_PMD_PARSE = re.compile(r"(?:Parse|Lex)Exception: [^\n]*? at line (\d+), column \d+: ?([^\n]*)")


class JavaPmd(JavaFindings):
    """PMD's findings on the solution with benchwright's rule set."""

    name = "java-pmd"
    tool = "pmd 7.28.0"
    weights: ClassVar[dict[str, float]] = {
        "high": 1.0, "medium-high": 0.7, "medium": 0.5, "medium-low": 0.3, "low": 0.1}
    ruleset_file = "bw_pmd.xml"
    report_file = "bw_pmd_report.json"

    def missing(self) -> str | None:
        why = toolbox.missing_file(toolbox.pmd_lib(), "PMD")
        if why is not None:
            return why
        return None if shutil.which("java") else f"java-pmd needs java: {JDK_HINT}"

    def _arguments(self, report: str, file: str) -> list[str]:
        return ["check", "--no-cache", "--no-progress", "--show-suppressed", "-f", "json",
                "-R", self.ruleset_file, "-r", report, "-d", file]

    def _server(self, sandbox: Sandbox) -> JavaToolServer:
        return JavaToolServer(sandbox, _program("java"), list(TOOL_JVM), f"{toolbox.pmd_lib()}/*", "pmd",
                              self._arguments(REPORT, FILE), {self.ruleset_file: PMD_RULESET.encode()},
                              self.wall_s, self.tool)

    def _command_line(self, ctx: SampleContext, name: str) -> ToolRun:
        proc = self.run_tool(ctx, [
            _program("java"), *TOOL_JVM, "-cp", f"{toolbox.pmd_lib()}/*",
            "net.sourceforge.pmd.cli.PmdCli", *self._arguments(self.report_file, name),
        ], files={name: ctx.code.encode(), self.ruleset_file: PMD_RULESET.encode()},
            ok=(0, 4, 5), collect=(self.report_file,))
        return ToolRun(proc.exit_code or 0, (proc.stderr or proc.stdout).decode("utf-8", "replace"),
                       proc.files.get(self.report_file))

    def findings(self, ctx: SampleContext) -> list[Finding]:
        name = solution_file_name(ctx.code)
        run = self.run(ctx, name, lambda r: r.exit_code in (0, 4, 5) and r.report is not None)
        try:
            report = json.loads(run.report or b"")
        except ValueError as e:
            raise InfraError(f"{self.tool} wrote no readable report (exit {run.exit_code}): "
                             f"{run.printed.strip()[-800:] or e}") from e
        if not isinstance(report, dict):
            raise InfraError(f"{self.tool} wrote an unexpected report: {str(report)[:300]}")
        problems = [*report.get("configurationErrors", []), *report.get("processingErrors", [])]
        for problem in problems:
            message = str(problem.get("message", problem))
            parse = _PMD_PARSE.search(message)
            if parse:
                raise Unparsable(f"line {parse.group(1)}: {parse.group(2).strip()}", int(parse.group(1)))
        if problems:
            raise InfraError(f"{self.tool} failed: {str(problems[0].get('message', problems[0]))[:800]}")
        found: list[Finding] = []
        for key, suppressed in (("files", False), ("suppressedViolations", True)):
            for file in report.get(key, []):
                for v in file.get("violations", []):
                    priority = _int(v.get("priority"))
                    message = str(v.get("description", ""))
                    if suppressed:  # a // NOPMD or @SuppressWarnings in the code does not hide it
                        message += f" (suppressed in the code: {v.get('suppressiontype', '?')})"
                    found.append(Finding(
                        line=_int(v.get("beginline")), column=_int(v.get("begincolumn")),
                        rule=str(v.get("rule", "?")), message=message,
                        severity=PMD_PRIORITIES.get(priority or 3, "medium")))
        return found


def _int(value: object) -> int | None:
    try:
        return int(str(value))
    except ValueError:
        return None


CRITERIA: tuple[type[Criterion], ...] = (JavaCheckstyle, JavaPmd, JavaJacoco)
"""The criteria of this module, registered by :mod:`benchwright.builtins`."""
