"""Loading execution configs with located problems."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchwright import yamldoc
from benchwright.config.model import ExecConfig
from benchwright.errors import InputError, Problem
from benchwright.problems import validate


def parse_config(path: Path) -> tuple[yamldoc.Document | None, ExecConfig | None, list[Problem]]:
    try:
        doc = yamldoc.load(path)
    except InputError as e:
        return None, None, list(e.problems)
    return parse_config_doc(doc)


def parse_config_doc(doc: yamldoc.Document) -> tuple[yamldoc.Document, ExecConfig | None, list[Problem]]:
    if not isinstance(doc.data, dict):
        return doc, None, [doc.problem((), "an execution config must be a mapping",
                                       hint="start with 'version: 1' and list 'llms:'")]
    config, problems = validate(doc, ExecConfig)
    return doc, config, problems


def load_config(path: Path) -> tuple[yamldoc.Document, ExecConfig]:
    doc, config, problems = parse_config(path)
    errors = [p for p in problems if p.severity == "error"]
    if errors or doc is None or config is None:
        raise InputError(errors or problems)
    return doc, config


def config_from_data(data: dict[str, Any], file: str) -> ExecConfig:
    """Re-validate a config snapshot (as stored in ``run.yaml``)."""
    doc = yamldoc.Document(file=file, data=data)
    _, config, problems = parse_config_doc(doc)
    if config is None:
        raise InputError(problems)
    return config
