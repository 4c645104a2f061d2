"""A fake SonarQube server on loopback, and a stand-in for the SonarScanner CLI.

:class:`SonarQubeServer` speaks the parts of SonarQube's web API that the ``sonarqube``
criterion uses, with the JSON shapes SonarQube documents::

    GET  /api/server/version                 the version, as text (no token needed)
    GET  /api/ce/task?id=ID                  {"task": {"id", "status", "componentKey", ...}}
    GET  /api/issues/search?components=KEY   {"total", "p", "ps", "paging", "issues": [...], ...}
         (or componentKeys=KEY; resolved=false; ps, p: pages)
    GET  /api/measures/component?component=KEY&metricKeys=a,b
                                             {"component": {"key", "measures": [{"metric", "value"}]}}
    POST /api/projects/delete                form field project=KEY
    POST /api/ce/submit                      the fake's own upload (see below)

A token is required as SonarQube takes it: HTTP basic with the token as the user and an empty
password, or ``Authorization: Bearer TOKEN``; anything else gets 401. ``fail_status`` makes every
API call (but the version), or those to ``fail_paths``, answer that status with SonarQube's
error body.

The *analysis* is a stand-in: each line of each submitted file is matched against
:data:`RULES` (a bare ``except:``, ``eval(``, a ``TODO`` comment...) and each match is an issue at
that line, with a legacy ``severity`` and, unless ``impacts=False`` (SonarQube before 10.2),
``impacts``. The server's background task is ``PENDING`` for ``pending_polls`` polls of
``api/ce/task``, then ``SUCCESS``.

The real scanner sends a zipped report to ``api/ce/submit``; :func:`write_fake_scanner` writes an
executable that keeps the scanner's contract otherwise (``-Dsonar.*`` properties on the command
line, the token in ``SONAR_TOKEN``, the server in ``sonar.host.url`` or ``SONAR_HOST_URL``,
``report-task.txt`` with ``ceTaskId`` in the working directory) and uploads the source files as
JSON (``{"projectKey", "projectName", "files": {path: text}}``). It refuses a token on its command
line (where every user of the machine could read it).
"""

from __future__ import annotations

import base64
import itertools
import json
import re
import sys
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from benchwright.httpserve import HTTPServerBase, _Response
from benchwright.testing.reply import RecordedRequest

__all__ = ["RULES", "Rule", "SonarQubeServer", "write_fake_scanner"]


@dataclass(frozen=True)
class Rule:
    """A line pattern the fake analysis reports, as SonarQube would describe the issue."""

    pattern: str
    rule: str
    severity: str
    """Legacy severity: BLOCKER, CRITICAL, MAJOR, MINOR or INFO."""
    type: str
    """BUG, VULNERABILITY or CODE_SMELL."""
    quality: str
    """The impact's software quality: SECURITY, RELIABILITY or MAINTAINABILITY."""
    impact: str
    """The impact's severity: BLOCKER, HIGH, MEDIUM, LOW or INFO."""
    message: str
    effort_min: int = 5


RULES: tuple[Rule, ...] = (
    Rule(r"\bexcept\s*:", "python:S5754", "CRITICAL", "CODE_SMELL", "RELIABILITY", "HIGH",
         "Specify an exception class to catch or reraise the exception", 5),
    Rule(r"\beval\s*\(", "python:S1523", "CRITICAL", "VULNERABILITY", "SECURITY", "HIGH",
         "Make sure that this dynamic injection or execution of code is safe.", 30),
    Rule(r"==\s*None\b", "python:S5727", "MAJOR", "BUG", "RELIABILITY", "MEDIUM",
         "Remove this identity check; it will always be False.", 10),
    Rule(r"#\s*TODO", "python:S1135", "INFO", "CODE_SMELL", "MAINTAINABILITY", "INFO",
         'Complete the task associated to this "TODO" comment.', 0),
    Rule(r"\bprint\s*\(", "python:S106", "MINOR", "CODE_SMELL", "MAINTAINABILITY", "LOW",
         "Replace this use of print by a logger.", 1),
)
"""What the fake analysis flags, line by line."""

METRICS = ("bugs", "vulnerabilities", "code_smells", "security_hotspots", "sqale_index", "ncloc")
"""The metrics the fake server knows (others are 404, as SonarQube answers unknown metrics)."""


def _json(status: int, data: Any) -> _Response:
    return _Response(status, json.dumps(data).encode(), {})


def _error(status: int, message: str) -> _Response:
    return _json(status, {"errors": [{"msg": message}]})


class SonarQubeServer(HTTPServerBase):
    """A loopback SonarQube web API (see the module's docstring). Use with ``with``."""

    name: ClassVar[str] = "sonarqube"

    def __init__(self, *, token: str, version: str = "10.7.0.96327", pending_polls: int = 1,
                 impacts: bool = True, fail_status: int | None = None,
                 fail_paths: tuple[str, ...] = (), rules: tuple[Rule, ...] = RULES, host: str = "127.0.0.1", port: int = 0) -> None:
        """
        Args:
            token: the only token accepted.
            version: what ``api/server/version`` says.
            pending_polls: polls of a task that see ``PENDING`` before ``SUCCESS``.
            impacts: whether issues carry ``impacts`` (SonarQube 10.2 and later).
            fail_status: answer every API call (but the version) with this status...
            fail_paths: ...or only the calls to these paths (``/api/issues/search``).
            rules: the fake analysis.
        """
        super().__init__(host=host, port=port)
        self.token = token
        self.version = version
        self.pending_polls = pending_polls
        self.impacts = impacts
        self.fail_status = fail_status
        self.fail_paths = fail_paths
        self.rules = rules
        self._ids = itertools.count(1)
        self.projects: dict[str, dict[str, str]] = {}
        """Project key -> its files (path -> text), as last submitted."""
        self.deleted: list[str] = []
        self._ce_tasks: dict[str, dict[str, Any]] = {}

    # -- what the server does -------------------------------------------------------------------

    def _authorised(self, rec: RecordedRequest) -> bool:
        header = rec.headers.get("authorization", "")
        scheme, _, value = header.partition(" ")
        if scheme.lower() == "bearer":
            return value.strip() == self.token
        if scheme.lower() == "basic":
            try:
                user, _, _password = base64.b64decode(value.strip()).decode().partition(":")
            except ValueError:
                return False
            return user == self.token
        return False

    async def _respond(self, rec: RecordedRequest) -> _Response | None:
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(rec.query).items()}
        if rec.path == "/api/server/version":
            return _Response(200, self.version.encode(), {}, content_type="text/plain")
        if not self._authorised(rec):
            return _error(401, "Authentication required")
        if self.fail_status is not None and (not self.fail_paths or rec.path in self.fail_paths):
            return _error(self.fail_status, "An error has occurred. Please contact your administrator")
        route = (rec.method, rec.path)
        if route == ("POST", "/api/ce/submit"):
            return self._submit(rec)
        if route == ("GET", "/api/ce/task"):
            return self._task(query.get("id", ""))
        if route == ("GET", "/api/issues/search"):
            return self._issues(query)
        if route == ("GET", "/api/measures/component"):
            return self._measures(query)
        if route == ("POST", "/api/projects/delete"):
            form = {k: v[-1] for k, v in urllib.parse.parse_qs(rec.body.decode()).items()}
            key = form.get("project") or query.get("project", "")
            if key not in self.projects:
                return _error(404, f"Project '{key}' not found")
            del self.projects[key]
            self.deleted.append(key)
            return _Response(204, b"", {})
        return _error(404, f"Unknown url : {rec.path}")

    def _plain(self, status: int, message: str, *, close: bool = False) -> _Response:
        response = _error(status, message)
        response.close = close
        return response

    def _submit(self, rec: RecordedRequest) -> _Response:
        body = rec.json if isinstance(rec.json, dict) else {}
        key = str(body.get("projectKey") or "")
        files = body.get("files")
        if not key or not isinstance(files, dict):
            return _error(400, "The 'projectKey' and 'files' parameters are missing")
        self.projects[key] = {str(p): str(t) for p, t in files.items()}
        task_id = f"AY{next(self._ids):014d}"
        self._ce_tasks[task_id] = {"id": task_id, "type": "REPORT", "componentKey": key,
                                "componentName": body.get("projectName") or key,
                                "componentQualifier": "TRK", "status": "PENDING",
                                "submittedAt": "2025-01-01T00:00:00+0000", "polls": 0}
        return _json(200, {"taskId": task_id, "projectId": key})

    def _task(self, task_id: str) -> _Response:
        task = self._ce_tasks.get(task_id)
        if task is None:
            return _error(404, f"No activity found for task '{task_id}'")
        task["polls"] += 1
        if task["polls"] > self.pending_polls:
            task["status"] = "SUCCESS"
            task["analysisId"] = f"AN{task_id[2:]}"
            task["executionTimeMs"] = 42
        return _json(200, {"task": {k: v for k, v in task.items() if k != "polls"}})

    def analyse(self, key: str) -> list[dict[str, Any]]:
        """The issues of project ``key``, as ``api/issues/search`` lists them."""
        issues: list[dict[str, Any]] = []
        for path, text in sorted(self.projects.get(key, {}).items()):
            for number, line in enumerate(text.splitlines(), start=1):
                for rule in self.rules:
                    match = re.search(rule.pattern, line)
                    if match is None:
                        continue
                    issue: dict[str, Any] = {
                        "key": f"{key}-{path}-{number}-{rule.rule}", "rule": rule.rule,
                        "severity": rule.severity, "component": f"{key}:{path}", "project": key,
                        "line": number, "hash": "0" * 32,
                        "textRange": {"startLine": number, "endLine": number,
                                      "startOffset": match.start(), "endOffset": match.end()},
                        "flows": [], "status": "OPEN", "issueStatus": "OPEN",
                        "message": rule.message, "effort": f"{rule.effort_min}min",
                        "debt": f"{rule.effort_min}min", "tags": [], "type": rule.type,
                        "scope": "MAIN", "quickFixAvailable": False,
                    }
                    if self.impacts:
                        issue["cleanCodeAttribute"] = "CONVENTIONAL"
                        issue["cleanCodeAttributeCategory"] = "CONSISTENT"
                        issue["impacts"] = [{"softwareQuality": rule.quality, "severity": rule.impact}]
                    issues.append(issue)
        return issues

    def _issues(self, query: dict[str, str]) -> _Response:
        key = query.get("components") or query.get("componentKeys") or ""
        if key not in self.projects:
            return _error(404, f"Component key '{key}' not found")
        size = min(int(query.get("ps", "100")), 500)
        page = max(int(query.get("p", "1")), 1)
        issues = self.analyse(key)
        chunk = issues[(page - 1) * size: page * size]
        files = sorted(self.projects[key])
        return _json(200, {
            "total": len(issues), "p": page, "ps": size,
            "paging": {"pageIndex": page, "pageSize": size, "total": len(issues)},
            "effortTotal": sum(int(i["effort"][:-3]) for i in issues),
            "issues": chunk,
            "components": [{"key": key, "enabled": True, "qualifier": "TRK", "name": key,
                            "longName": key}] + [
                {"key": f"{key}:{p}", "enabled": True, "qualifier": "FIL", "name": Path(p).name,
                 "longName": p, "path": p} for p in files],
            "facets": [],
        })

    def _measures(self, query: dict[str, str]) -> _Response:
        key = query.get("component", "")
        if key not in self.projects:
            return _error(404, f"Component key '{key}' not found")
        wanted = [m for m in query.get("metricKeys", "").split(",") if m]
        unknown = [m for m in wanted if m not in METRICS]
        if unknown:
            return _error(404, f"The following metric keys are not found: {', '.join(unknown)}")
        issues = self.analyse(key)
        ncloc = sum(1 for text in self.projects[key].values() for line in text.splitlines()
                    if line.strip() and not line.strip().startswith("#"))
        values = {
            "bugs": sum(i["type"] == "BUG" for i in issues),
            "vulnerabilities": sum(i["type"] == "VULNERABILITY" for i in issues),
            "code_smells": sum(i["type"] == "CODE_SMELL" for i in issues),
            "security_hotspots": 0,
            "sqale_index": sum(int(i["effort"][:-3]) for i in issues if i["type"] == "CODE_SMELL"),
            "ncloc": ncloc,
        }
        measures = [{"metric": m, "value": str(values[m]), **({"bestValue": True} if values[m] == 0 else {})}
                    for m in wanted]
        return _json(200, {"component": {"key": key, "name": key, "qualifier": "TRK",
                                         "measures": measures}})


_SCANNER = r'''#!{python}
"""A stand-in for the SonarScanner CLI (benchwright.testing.sonarqube): properties from
-Dkey=value arguments, the token from SONAR_TOKEN, the sources uploaded as JSON to
api/ce/submit, and report-task.txt written where the real scanner writes it."""
import base64, json, os, sys, urllib.request
from pathlib import Path

props = {{}}
for arg in sys.argv[1:]:
    if arg.startswith("-D") and "=" in arg:
        k, _, v = arg[2:].partition("=")
        props[k] = v
token = os.environ.get("SONAR_TOKEN", "")
if not token:
    print("ERROR: Not authorized. Please check the user token in SONAR_TOKEN", file=sys.stderr)
    sys.exit(1)
if any(token in a for a in sys.argv[1:]):
    print("ERROR: the token is on the command line", file=sys.stderr)
    sys.exit(1)
host = (props.get("sonar.host.url") or os.environ.get("SONAR_HOST_URL") or "").rstrip("/")
key = props.get("sonar.projectKey")
if not host or not key:
    print("ERROR: You must define the following mandatory properties: sonar.projectKey, sonar.host.url",
          file=sys.stderr)
    sys.exit(1)
base = Path(props.get("sonar.projectBaseDir") or os.getcwd())
files = {{}}
for src in (s for s in props.get("sonar.sources", ".").split(",") if s):
    p = base / src
    paths = [p] if p.is_file() else [q for q in sorted(p.rglob("*")) if q.is_file() and ".scannerwork" not in q.parts]
    for q in paths:
        files[str(q.relative_to(base))] = q.read_text(errors="replace")
body = json.dumps({{"projectKey": key, "projectName": props.get("sonar.projectName", key),
                   "files": files}}).encode()
auth = base64.b64encode((token + ":").encode()).decode()
req = urllib.request.Request(host + "/api/ce/submit", data=body, method="POST",
                             headers={{"Content-Type": "application/json", "Authorization": "Basic " + auth}})
try:
    with urllib.request.urlopen(req, timeout=30) as resp:
        task = json.loads(resp.read())["taskId"]
except Exception as e:
    print(f"ERROR: Error during SonarScanner execution: {{e}}", file=sys.stderr)
    sys.exit(1)
work = Path(props.get("sonar.working.directory") or base / ".scannerwork")
work.mkdir(parents=True, exist_ok=True)
(work / "report-task.txt").write_text(
    f"projectKey={{key}}\nserverUrl={{host}}\nserverVersion=10.7.0.96327\n"
    f"dashboardUrl={{host}}/dashboard?id={{key}}\nceTaskId={{task}}\n"
    f"ceTaskUrl={{host}}/api/ce/task?id={{task}}\n")
print("INFO: ANALYSIS SUCCESSFUL, you can find the results at: " + host + "/dashboard?id=" + key)
print("INFO: EXECUTION SUCCESS")
'''


def write_fake_scanner(path: Path) -> Path:
    """Write the stand-in scanner (an executable Python script) to ``path``; return ``path``."""
    path.write_text(_SCANNER.format(python=sys.executable))
    path.chmod(0o755)
    return path
