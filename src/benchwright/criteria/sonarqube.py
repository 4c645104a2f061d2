"""``sonarqube``: the findings of the user's SonarQube server on the extracted solution.

With ``sonarqube:`` in ``benchwright.yaml`` (the server's ``url`` and ``token_env``, the *name* of
the environment variable holding a user token), each sample is analysed as its own project,
``PREFIX-EXECUTION_ID``:

1. the SonarScanner CLI submits the solution file (the token goes to it in ``SONAR_TOKEN``,
   never on its command line) and writes ``report-task.txt`` with the server's task id;
2. ``GET api/ce/task?id=`` is polled until the server's analysis task is ``SUCCESS``;
3. ``GET api/issues/search`` (``components`` and ``componentKeys``: the parameter's names since
   and before SonarQube 10.2; ``resolved=false``, 500 a page) lists the issues, and
   ``GET api/measures/component`` the counts (bugs, vulnerabilities, code smells, hotspots,
   technical debt, lines of code);
4. with ``delete_projects: true``, ``POST api/projects/delete`` removes the project.

Each issue weighs what its severity weighs: its highest impact severity (SonarQube 10.2 and
later: BLOCKER, HIGH, MEDIUM, LOW, INFO), else its legacy severity (BLOCKER, CRITICAL, MAJOR,
MINOR, INFO); the score is ``1 / (1 + sum of weights)`` as for every findings criterion
(:mod:`benchwright.criteria.findings`).

The scanner runs on this machine outside the sandbox: it reads the solution's text and sends it
to the server (it needs the network and its own JVM), and never runs it. Without ``sonarqube:``
every sample records ``n/a`` with the reason; a server that fails or cannot be reached makes the
sample ``infra_error`` (retry with ``benchwright run --resume --retry-errors``). The token never
reaches a record, a log or an error message.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from benchwright.config.settings import Settings, SonarQubeSettings
from benchwright.criteria.base import Measurement, SampleContext
from benchwright.criteria.findings import Finding, FindingsCriterion
from benchwright.errors import InfraError

if TYPE_CHECKING:
    import httpx

__all__ = ["CRITERIA", "NOT_CONFIGURED", "SonarQube"]

NOT_CONFIGURED = ("no SonarQube server is configured: add sonarqube.url and sonarqube.token_env "
                  "to benchwright.yaml (see docs/criteria.md#sonarqube)")
"""What every sample records when ``benchwright.yaml`` names no server."""
SCANNER_DOCS = "https://docs.sonarsource.com/sonarqube-server/analyzing-source-code/scanners/sonarscanner/"
METRICS = ("bugs", "vulnerabilities", "code_smells", "security_hotspots", "sqale_index", "ncloc")
"""The measures read for each sample (``sqale_index``: technical debt in minutes)."""
IMPACT_ORDER = ("BLOCKER", "HIGH", "MEDIUM", "LOW", "INFO")
_ENV_KEEP = ("PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR", "http_proxy", "https_proxy",
             "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")


@dataclass
class Analysis:
    """What the server said about one sample."""

    project: str
    task_id: str
    findings: list[Finding]
    types: dict[str, int]
    measures: dict[str, float | str]
    server_version: str | None = None
    notes: list[str] = field(default_factory=list)


class SonarQube(FindingsCriterion):
    """Issues a SonarQube server finds in the solution, weighted by severity, normalised 0-1."""

    name = "sonarqube"
    tool = "SonarQube server (sonar-scanner and the web API)"
    weights: ClassVar[dict[str, float]] = {
        "BLOCKER": 2.0, "CRITICAL": 1.0, "HIGH": 1.0, "MAJOR": 0.5, "MEDIUM": 0.5,
        "MINOR": 0.2, "LOW": 0.2, "INFO": 0.1,
    }

    def missing(self) -> str | None:
        return None  # the server and the scanner are in the settings: said per sample

    def unconfigured(self, settings: Settings) -> str | None:
        return NOT_CONFIGURED if settings.sonarqube is None else None

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        conf = ctx.settings.sonarqube if ctx.settings is not None else None
        if conf is None:
            return [Measurement(score=None, verdict="n/a", output=NOT_CONFIGURED)]
        scanner = _which(conf.scanner)
        if scanner is None:
            return [Measurement(score=None, verdict="n/a", output=(
                f"the SonarScanner CLI ({conf.scanner}) is not installed: install it ({SCANNER_DOCS}) "
                "or set sonarqube.scanner in benchwright.yaml to its path"))]
        analysis = Session(conf, scanner).analyse(ctx)
        m = self.measurement(analysis.findings)
        assert m.details is not None
        m.details.update({
            "project": analysis.project, "task": analysis.task_id, "types": analysis.types,
            "measures": analysis.measures, "server": conf.url,
            "server_version": analysis.server_version,
        })
        if analysis.notes:
            m.details["notes"] = analysis.notes
        return [m]

    def findings(self, ctx: SampleContext) -> list[Finding]:
        conf = ctx.settings.sonarqube if ctx.settings is not None else None
        if conf is None:
            raise InfraError(NOT_CONFIGURED)
        scanner = _which(conf.scanner)
        if scanner is None:
            raise InfraError(f"the SonarScanner CLI ({conf.scanner}) is not installed")
        return Session(conf, scanner).analyse(ctx).findings


def _which(scanner: str) -> str | None:
    if "/" in scanner:
        p = Path(scanner).expanduser()
        return str(p) if p.is_file() and os.access(p, os.X_OK) else None
    return shutil.which(scanner)


def severity(issue: dict[str, Any]) -> str:
    """The issue's weight class: its highest impact severity, else its legacy severity."""
    impacts = [str(i.get("severity", "")).upper() for i in issue.get("impacts") or []
               if isinstance(i, dict)]
    ranked = [s for s in IMPACT_ORDER if s in impacts]
    if ranked:
        return ranked[0]
    return str(issue.get("severity") or "MAJOR").upper()


def source_name(ctx: SampleContext) -> str:
    """The solution's file name: Java's public class names its file; else ``solution`` and the
    language's extension."""
    ext = ctx.lang.file_extension if ctx.lang is not None else ".txt"
    if ctx.language == "java":
        found = re.search(r"^\s*public\s+(?:final\s+|abstract\s+)*(?:class|interface|enum|record)\s+(\w+)",
                          ctx.code, flags=re.M)
        if found:
            return f"{found.group(1)}.java"
    return f"solution{ext}"


class Session:
    """One sample's analysis on the server: the scanner, then the web API (sync httpx)."""

    def __init__(self, conf: SonarQubeSettings, scanner: str) -> None:
        self.conf = conf
        self.scanner = scanner
        token = os.environ.get(conf.token_env, "")
        if not token:
            raise InfraError(f"the environment variable {conf.token_env} (sonarqube.token_env in "
                             "benchwright.yaml) is not set: it holds the SonarQube token")
        self._token = token

    def scrub(self, text: str) -> str:
        """``text`` with the token blanked out."""
        return text.replace(self._token, "***") if self._token else text

    def fail(self, message: str) -> InfraError:
        return InfraError(self.scrub(message))

    def analyse(self, ctx: SampleContext) -> Analysis:
        """Scan ``ctx.code``, wait for the server and read its issues and measures.

        Raises:
            InfraError: the scanner failed, the server failed or could not be reached, or the
                analysis took longer than ``timeout_s``.
        """
        deadline = time.monotonic() + self.conf.timeout_s
        project = f"{self.conf.project_prefix}-{ctx.generation.execution_id}"
        name = source_name(ctx)
        with tempfile.TemporaryDirectory(prefix="bw-sonar-") as tmp:
            task_id, server_version = self.scan(ctx, Path(tmp), project, name, deadline)
        import httpx  # here: slow to import, and only a configured server needs it

        try:
            with httpx.Client(base_url=self.conf.url, auth=(self._token, ""),
                              timeout=min(60.0, self.conf.timeout_s),
                              headers={"Accept": "application/json"}) as client:
                self.wait(client, task_id, deadline)
                issues = self.issues(client, project)
                measures, notes = self.measures(client, project)
                if self.conf.delete_projects:
                    notes += self.delete(client, project)
        except httpx.HTTPError as e:
            raise self.fail(f"SonarQube server {self.conf.url} could not be reached: "
                            f"{type(e).__name__}: {e}") from None
        findings = []
        for issue in issues:
            line = issue.get("line")
            if not isinstance(line, int):
                line = (issue.get("textRange") or {}).get("startLine")
            start = (issue.get("textRange") or {}).get("startOffset")
            findings.append(Finding(
                line=line if isinstance(line, int) else None, rule=str(issue.get("rule", "?")),
                severity=severity(issue), message=str(issue.get("message", "")),
                column=start + 1 if isinstance(start, int) else None))
        types = dict(Counter(str(i.get("type", "?")) for i in issues))
        return Analysis(project, task_id, findings, types, measures, server_version, notes)

    def scan(self, ctx: SampleContext, root: Path, project: str, name: str,
             deadline: float) -> tuple[str, str | None]:
        """Run the scanner on the solution in ``root``; the server's task id and version."""
        (root / name).write_text(ctx.code)
        work = root / ".scannerwork"
        argv = [
            self.scanner, f"-Dsonar.projectKey={project}",
            f"-Dsonar.projectName={ctx.task.name} {ctx.generation.model} #{ctx.generation.sample}",
            f"-Dsonar.projectBaseDir={root}", f"-Dsonar.sources={name}",
            f"-Dsonar.working.directory={work}", f"-Dsonar.host.url={self.conf.url}",
            "-Dsonar.scm.disabled=true", "-Dsonar.sourceEncoding=UTF-8",
        ]
        if ctx.language == "java":  # SonarJava wants compiled classes; none is an empty folder
            (root / "classes").mkdir()
            argv.append("-Dsonar.java.binaries=classes")
        env = {k: v for k, v in os.environ.items()
               if k in _ENV_KEEP or k.startswith(("SONAR_", "JAVA_"))}
        env.update({"SONAR_TOKEN": self._token, "SONAR_HOST_URL": self.conf.url})
        remaining = deadline - time.monotonic()
        try:
            proc = subprocess.run(argv, cwd=root, env=env, capture_output=True,
                                  timeout=max(remaining, 1.0), check=False)
        except subprocess.TimeoutExpired:
            raise self.fail(f"{self.conf.scanner} took longer than {self.conf.timeout_s:g} s "
                            "(sonarqube.timeout_s)") from None
        except OSError as e:
            raise self.fail(f"{self.conf.scanner} could not start: {e}") from None
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).decode(errors="replace").strip()[-800:]
            raise self.fail(f"{self.conf.scanner} failed (exit status {proc.returncode}): {tail}")
        report = work / "report-task.txt"
        if not report.is_file():
            raise self.fail(f"{self.conf.scanner} wrote no {report.name} (is it the SonarScanner CLI?)")
        props = dict(line.split("=", 1) for line in report.read_text().splitlines() if "=" in line)
        task_id = props.get("ceTaskId")
        if not task_id:
            raise self.fail(f"{report.name} names no ceTaskId")
        return task_id, props.get("serverVersion")

    def get(self, client: httpx.Client, path: str, params: dict[str, str | int]) -> httpx.Response:
        """GET ``path``; a response that is not 2xx (but 404) is an :class:`InfraError`."""
        response = client.get(path, params=params)
        if response.status_code == 404 or response.is_success:
            return response
        raise self.fail(self.explain(path, response))

    def json(self, path: str, response: httpx.Response) -> dict[str, Any]:
        """The JSON object of a response (anything else is an :class:`InfraError`)."""
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise self.fail(f"SonarQube server {self.conf.url} answered {path} with something that "
                            f"is not a JSON object: {response.text.strip()[:200]!r}")
        return data

    def explain(self, path: str, response: httpx.Response) -> str:
        """The server's own words for a failed call."""
        try:
            errors = response.json().get("errors") or []
            said = "; ".join(str(e.get("msg")) for e in errors if isinstance(e, dict))
        except (ValueError, AttributeError):
            said = response.text.strip()[:300]
        hint = {401: f" (check the token in {self.conf.token_env})",
                403: " (the token's user lacks the permission)"}.get(response.status_code, "")
        return (f"SonarQube server {self.conf.url} answered {response.status_code} to {path}"
                f"{': ' + said if said else ''}{hint}")

    def wait(self, client: httpx.Client, task_id: str, deadline: float) -> None:
        """Poll the server's analysis task until it succeeds."""
        while True:
            response = self.get(client, "/api/ce/task", {"id": task_id})
            if response.status_code == 404:
                raise self.fail(self.explain("/api/ce/task", response))
            task = self.json("/api/ce/task", response).get("task")
            task = task if isinstance(task, dict) else {}
            status = task.get("status")
            if status == "SUCCESS":
                return
            if status in ("FAILED", "CANCELED"):
                raise self.fail(f"SonarQube's analysis task {task_id} ended {status}: "
                                f"{task.get('errorMessage') or 'no reason given'}")
            if time.monotonic() + self.conf.poll_s > deadline:
                raise self.fail(f"SonarQube's analysis task {task_id} was still {status} after "
                                f"{self.conf.timeout_s:g} s (sonarqube.timeout_s)")
            time.sleep(self.conf.poll_s)

    def issues(self, client: httpx.Client, project: str) -> list[dict[str, Any]]:
        """Every unresolved issue of ``project``, page by page."""
        out: list[dict[str, Any]] = []
        page = 1
        while True:
            response = self.get(client, "/api/issues/search", {
                "components": project, "componentKeys": project, "resolved": "false",
                "ps": 500, "p": page})
            if response.status_code == 404:
                raise self.fail(self.explain("/api/issues/search", response))
            data = self.json("/api/issues/search", response)
            batch = [i for i in data.get("issues") or [] if isinstance(i, dict)]
            out += batch
            total = (data.get("paging") or {}).get("total", data.get("total", 0))
            if not batch or len(out) >= int(total or 0) or page * 500 >= 10_000:
                return out
            page += 1

    def measures(self, client: httpx.Client, project: str) -> tuple[dict[str, float | str], list[str]]:
        """The project's measures (a server without some of them: none, and a note why)."""
        response = self.get(client, "/api/measures/component",
                            {"component": project, "metricKeys": ",".join(METRICS)})
        if response.status_code == 404:
            return {}, [self.explain("/api/measures/component", response)]
        out: dict[str, float | str] = {}
        component = self.json("/api/measures/component", response).get("component")
        found = component.get("measures") if isinstance(component, dict) else None
        for m in found if isinstance(found, list) else []:
            if not isinstance(m, dict):
                continue
            value: Any = m.get("value")
            try:
                out[str(m.get("metric"))] = float(value)
            except (TypeError, ValueError):
                out[str(m.get("metric"))] = str(value)
        return out, []

    def delete(self, client: httpx.Client, project: str) -> list[str]:
        """Delete ``project`` on the server (a refusal is a note, not a failure)."""
        response = client.post("/api/projects/delete", data={"project": project})
        if response.is_success:
            return []
        return [self.explain("/api/projects/delete", response)]


CRITERIA = (SonarQube,)
"""The criteria of this module, registered by :mod:`benchwright.builtins`."""
