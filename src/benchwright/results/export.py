"""``benchwright export``: a run folder as JUnit XML, JSON, CSV or markdown.

* ``junit``: one ``<testsuite>`` per model and language (``model/language``), one ``<testcase>``
  per unit-test test case (classname ``task_source.task``, name ``test case [sample n]``); a
  failed case carries ``<failure>`` with the assertion message, the line and the exact code
  executed, a crashed or timed-out one ``<error>``, a case not run ``<skipped>``. A sample that
  ended in ``infra_error`` is a single ``infra_error [sample n]`` test case holding
  ``<error type="infra_error">`` (whatever test cases it ran); a sample whose
  tests could not run at all (build error) a single ``unit-test [sample n]`` case; an
  ``untested`` sample (no test case applies) a single ``untested [sample n]`` case marked
  ``<skipped>``, never a pass.
* ``json``: ``{"run": manifest, "summary": summary, "records": [...]}``.
* ``csv``: every record, one row each; the standard record keys first, then the others;
  ``details`` (and any other nested value) JSON-encoded.
* ``markdown``: the same as ``benchwright report --format markdown``.

Lines of ``records.jsonl`` that cannot be read are skipped and added to the ``skipped``
argument (the CLI warns with each place). ``json`` carries them under ``skipped_lines``;
``junit`` reports a sample with records missing as one ``unreadable [sample n]`` case holding
``<error type="unreadable">`` (not its partial test cases), and the lines themselves as an
``unreadable lines`` case of a ``(unreadable)`` suite, so CI sees the damage.
"""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import Any

from benchwright.results.folder import RECORDS_FILE, RecordsScan, RunFolder
from benchwright.results.formats import ExportFormat
from benchwright.results.jsonl import SkippedLines
from benchwright.results.record import Record
from benchwright.results.report import report_text
from benchwright.results.summary import summarize_folder

SPEC_KEYS = (
    "run_id", "execution_id", "task_source", "task", "language", "model", "sample", "criterion",
    "executor", "score", "unit", "verdict", "required", "output", "error", "time_ms", "test_case",
    "code",
)
"""The standard record keys, in their documented order: the first columns of the CSV export."""

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def folder_summary(folder: RunFolder) -> dict[str, Any]:
    """``summary.yaml``, or (for a run that never finished) one computed from its records,
    with the lines it could not read under ``skipped_lines``."""
    summary = folder.summary()
    if summary is not None:
        return summary
    config = folder.manifest().get("config")
    thresholds = config.get("thresholds") if isinstance(config, dict) else None
    return summarize_folder(folder, thresholds if isinstance(thresholds, dict) and thresholds else None)


def export(folder: RunFolder, fmt: str, skipped: SkippedLines | None = None) -> str:
    """The run in the installed export format ``fmt`` (benchwright's: ``json``, ``csv``,
    ``junit``, ``markdown``); a :class:`~benchwright.errors.PluginNotFound` naming the
    installed ones for any other. The lines of ``records.jsonl`` that could not be read are
    added to ``skipped``."""
    from benchwright.registry import registry

    skipped = skipped if skipped is not None else SkippedLines()
    return registry.create("export-format", fmt).export(folder, skipped)


class JsonExport(ExportFormat):
    """The manifest, the summary and every record, as one JSON document."""

    name = "json"
    suffix = ".json"

    def export(self, folder: RunFolder, skipped: SkippedLines) -> str:
        return export_json(folder, skipped)


class CsvExport(ExportFormat):
    """One row per record, every field (the standard keys first)."""

    name = "csv"
    suffix = ".csv"

    def export(self, folder: RunFolder, skipped: SkippedLines) -> str:
        return export_csv(folder, skipped)


class JunitExport(ExportFormat):
    """JUnit XML: a test suite per model, a test case per task x criterion (for CI)."""

    name = "junit"
    suffix = ".xml"

    def export(self, folder: RunFolder, skipped: SkippedLines) -> str:
        return export_junit(folder, skipped)


class MarkdownExport(ExportFormat):
    """The summary's tables as Markdown."""

    name = "markdown"
    suffix = ".md"

    def export(self, folder: RunFolder, skipped: SkippedLines) -> str:
        summary = folder_summary(folder)
        skipped.extend(SkippedLines.model_validate(summary.get("skipped_lines") or {}))
        return report_text(summary, "markdown")


EXPORT_FORMATS: tuple[type[ExportFormat], ...] = (JsonExport, CsvExport, JunitExport, MarkdownExport)
"""benchwright's own export formats (registered like any plug-in's)."""


# -- json --------------------------------------------------------------------------------------


def export_json(folder: RunFolder, skipped: SkippedLines | None = None) -> str:
    skipped = skipped if skipped is not None else SkippedLines()
    doc: dict[str, Any] = {
        "run": folder.manifest(),
        "summary": folder_summary(folder),
        "records": [r.model_dump(mode="json") for r in folder.records(skipped)],
    }
    if skipped:
        doc["skipped_lines"] = skipped.model_dump(mode="json", exclude_none=True)
    return json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"


# -- csv ---------------------------------------------------------------------------------------


def _csv_cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return str(value)


def export_csv(folder: RunFolder, skipped: SkippedLines | None = None) -> str:
    records = [r.model_dump(mode="json") for r in folder.records(skipped)]
    columns = list(SPEC_KEYS)
    columns += [k for k in Record.model_fields if k not in columns]
    extra = sorted({k for r in records for k in r} - set(columns))
    columns += extra
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for r in records:
        writer.writerow([_csv_cell(r.get(c)) for c in columns])
    return buf.getvalue()


# -- junit -------------------------------------------------------------------------------------


def _x(text: Any) -> str:
    """Text XML 1.0 can hold: control characters other than tab and newlines are replaced."""
    return _XML_INVALID.sub("\ufffd", "" if text is None else str(text))


def _seconds(ms: float | None) -> str:
    return f"{(ms or 0.0) / 1000:.3f}"


class _Suite:
    def __init__(self, name: str) -> None:
        self.element = ET.Element("testsuite", name=_x(name))
        self.tests = self.failures = self.errors = self.skipped = 0
        self.time_ms = 0.0

    def case(self, classname: str, name: str, time_ms: float | None) -> ET.Element:
        self.tests += 1
        self.time_ms += time_ms or 0.0
        return ET.SubElement(self.element, "testcase", classname=_x(classname), name=_x(name),
                             time=_seconds(time_ms))

    def close(self) -> None:
        self.element.set("tests", str(self.tests))
        self.element.set("failures", str(self.failures))
        self.element.set("errors", str(self.errors))
        self.element.set("skipped", str(self.skipped))
        self.element.set("time", _seconds(self.time_ms))


def _detail(record: Record) -> str:
    parts = []
    if record.line is not None:
        parts.append(f"line {record.line}")
    if record.hidden:
        parts.append("hidden test")
    head = ", ".join(parts)
    body = record.code or ""
    return _x(f"{head}\n{body}" if head else body)


def _test_case(suite: _Suite, classname: str, sample: int, r: Record) -> None:
    case = suite.case(classname, f"{r.test_case} [sample {sample}]", r.time_ms)
    status = r.status or ("pass" if r.verdict == "pass" else "fail")
    if status == "pass":
        pass
    elif status == "fail":
        suite.failures += 1
        el = ET.SubElement(case, "failure", message=_x(r.error or "test failed"), type="fail")
        el.text = _detail(r)
    elif status == "not_run":
        suite.skipped += 1
        ET.SubElement(case, "skipped", message=_x(r.error or "not run"))
    else:  # error, timeout and anything unknown
        suite.errors += 1
        el = ET.SubElement(case, "error", message=_x(r.error or status), type=_x(status))
        el.text = _detail(r)
    if r.output:
        ET.SubElement(case, "system-out").text = _x(r.output)


def _sample(suite: _Suite, classname: str, sample: int, records: list[Record]) -> None:
    outcome = records[0].outcome or "pass"
    if outcome == "infra_error":
        first = next((r for r in records if r.error), records[0])
        case = suite.case(classname, f"infra_error [sample {sample}]", None)
        suite.errors += 1
        el = ET.SubElement(case, "error", message=_x(first.error or "infra_error"), type="infra_error")
        el.text = _x(f"criterion {first.criterion}: {first.error or ''}\n{first.output or ''}".rstrip())
        return
    if outcome == "untested":
        said = next((r for r in records if r.criterion == "unit-test" and r.test_case is None), records[0])
        case = suite.case(classname, f"untested [sample {sample}]", said.time_ms)
        suite.skipped += 1
        ET.SubElement(case, "skipped", message=_x(said.output or "untested: no test case applies"))
        return
    cases = sorted((r for r in records if r.criterion == "unit-test" and r.test_case is not None),
                   key=lambda r: r.record_index)
    if cases:
        for r in cases:
            _test_case(suite, classname, sample, r)
        return
    level = next((r for r in records if r.criterion == "unit-test" and r.test_case is None), None)
    if level is None and outcome == "pass":
        return  # no tests were run for this sample, and nothing went wrong
    r = level or records[0]
    case = suite.case(classname, f"{r.criterion} [sample {sample}]", r.time_ms)
    if outcome == "pass":
        return
    message = r.error or r.output or outcome
    if outcome == "fail":
        suite.failures += 1
        ET.SubElement(case, "failure", message=_x(message), type="fail").text = _x(r.output or "")
    else:
        suite.errors += 1
        ET.SubElement(case, "error", message=_x(message), type=_x(outcome)).text = _x(r.output or "")


def _unreadable(suite: _Suite, classname: str, sample: int, skipped: SkippedLines) -> None:
    """A sample some of whose records could not be read: one error, never a partial pass."""
    case = suite.case(classname, f"unreadable [sample {sample}]", None)
    suite.errors += 1
    el = ET.SubElement(case, "error", message="records of this sample could not be read: not scored",
                       type="unreadable")
    el.text = _x(skipped.message())


def export_junit(folder: RunFolder, skipped: SkippedLines | None = None) -> str:
    skipped = skipped if skipped is not None else SkippedLines()
    samples: dict[str, list[Record]] = defaultdict(list)
    for r in folder.records(skipped):
        samples[r.execution_id].append(r)
    damaged: set[str] = set()
    if skipped:
        scan = RecordsScan()
        for records in samples.values():
            for r in records:
                scan.add(r)
        damaged = scan.damaged() | {b.execution_id for b in skipped.lines if b.execution_id}
    suites: dict[tuple[str, str], _Suite] = {}
    ordered = sorted(samples.values(), key=lambda rs: (rs[0].model, rs[0].language, rs[0].task_source,
                                                       rs[0].task, rs[0].sample))
    for records in ordered:
        first = records[0]
        key = (first.model, first.language)
        if key not in suites:
            suites[key] = _Suite(f"{first.model}/{first.language}")
        if first.execution_id in damaged:
            _unreadable(suites[key], f"{first.task_source}.{first.task}", first.sample, skipped)
        else:
            _sample(suites[key], f"{first.task_source}.{first.task}", first.sample, records)
    if skipped:
        lost = suites[("", "")] = _Suite("(unreadable)")
        case = lost.case(RECORDS_FILE, "unreadable lines", None)
        lost.errors += 1
        ET.SubElement(case, "error", message=_x(f"{skipped.count} line(s) could not be read"),
                      type="unreadable").text = _x(skipped.message())
    root = ET.Element("testsuites", name=_x(folder.run_id))
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    time_ms = 0.0
    for suite in suites.values():
        suite.close()
        root.append(suite.element)
        totals["tests"] += suite.tests
        totals["failures"] += suite.failures
        totals["errors"] += suite.errors
        totals["skipped"] += suite.skipped
        time_ms += suite.time_ms
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("time", _seconds(time_ms))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
