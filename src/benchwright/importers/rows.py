"""Read a dataset's published file, or its copy on the Hugging Face Hub, as rows.

Every importer reads rows through this module, so a file and the Hub give the same rows to the
same conversion code. Files are read as the datasets publish them: JSON Lines (``.jsonl``,
optionally gzipped, whatever the name says), a JSON array of objects (``.json``) and Parquet
(``.parquet``, with pyarrow). Each row keeps where it came from, for error messages.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchwright.errors import InputError, MissingDependency, Problem, UserError

__all__ = ["HubLocation", "Row", "hub_rows", "read_rows"]

MAX_FILE_BYTES = 2 * 1024**3
"""The largest data file read (decompressed), against a hostile or mistaken ``--data``."""


@dataclass(frozen=True)
class Row:
    """One record of a dataset file."""

    data: dict[str, Any]
    where: str
    """Its place, for messages: ``line 12`` of a JSON Lines file, ``row 12`` otherwise."""
    line: int | None = None
    """Its 1-based line in a JSON Lines file."""


@dataclass(frozen=True)
class HubLocation:
    """Where a dataset lives on the Hugging Face Hub."""

    path: str
    """The dataset's id (``openai/openai_humaneval``), or a local folder holding the same files."""
    name: str | None = None
    """The configuration (subset), if the dataset has several."""
    split: str = "test"
    revision: str | None = None
    data_files: str | list[str] | None = None
    """Only these files of the repository (a glob or list), for datasets without a loader config."""

    def describe(self) -> str:
        """``path`` with its configuration and split, as a user would write them."""
        text = self.path + (f" ({self.name})" if self.name else "")
        files = self.data_files if isinstance(self.data_files, str) else ", ".join(self.data_files or [])
        return f"{text}, split {self.split}" + (f", files {files}" if files else "")


def _read_bytes(path: Path) -> bytes:
    try:
        if path.exists() and not path.is_file():  # a folder, a FIFO (it would block), a device
            raise InputError([Problem(file=str(path), message="not a regular file",
                                      hint="give the dataset's .jsonl, .jsonl.gz, .json or .parquet file")])
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise InputError([Problem(file=str(path), message="data file not found")]) from None
    except OSError as exc:
        raise InputError([Problem(file=str(path), message=f"cannot read: {exc.strerror}")]) from None
    if data[:2] == b"\x1f\x8b":
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as unzipped:
                data = unzipped.read(MAX_FILE_BYTES + 1)
        except (OSError, EOFError) as exc:
            raise InputError([Problem(file=str(path), message=f"bad gzip data: {exc}")]) from None
    if len(data) > MAX_FILE_BYTES:
        raise InputError([Problem(file=str(path), message="larger than 2 GiB: not read")])
    return data


def _json_lines(path: Path, text: str, problems: list[Problem] | None) -> list[Row]:
    rows: list[Row] = []
    found: list[Problem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            found.append(Problem(str(path), f"not valid JSON: {exc.msg} (column {exc.colno})",
                                    f"line {number}", number))
            continue
        if not isinstance(value, dict):
            found.append(Problem(str(path), f"expected a JSON object, got {type(value).__name__}",
                                    f"line {number}", number))
            continue
        rows.append(Row(value, f"line {number}", number))
    if found and problems is None:
        raise InputError(found)
    if problems is not None:
        problems.extend(found)
    return rows


def _json_document(path: Path, text: str) -> list[Row] | None:
    """A JSON array of objects (MBPP sanitized), or None when ``text`` is not one JSON value."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        return None
    if isinstance(value, dict):
        # {"rows": [...]} or {"id": {...}, ...}: the records are the values
        inner = next((v for v in value.values() if isinstance(v, list)), None)
        items = inner if inner is not None and len(value) == 1 else list(value.values())
    elif isinstance(value, list):
        items = value
    else:
        raise InputError([Problem(str(path), f"expected JSON objects, got a {type(value).__name__}")])
    bad = [i for i, item in enumerate(items) if not isinstance(item, dict)]
    if bad:
        raise InputError([Problem(str(path), f"item {i} is not a JSON object", f"[{i}]") for i in bad[:20]])
    return [Row(item, f"item {i}") for i, item in enumerate(items)]


def _parquet(path: Path) -> list[Row]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingDependency(
            f"{path}: reading Parquet needs pyarrow: pip install 'benchwright[datasets]'") from None
    try:
        table = pq.read_table(path)
    except Exception as exc:  # pyarrow raises several kinds for a bad file
        raise InputError([Problem(str(path), f"not a readable Parquet file: {exc}")]) from None
    return [Row(_plain(r), f"row {i + 1}") for i, r in enumerate(table.to_pylist())]


def _plain(value: Any) -> Any:
    """Numpy scalars and arrays (the Hub's rows) as plain Python values."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and not isinstance(value, (str, bytes)):
        return _plain(tolist())
    return value


def read_rows(path: Path, problems: list[Problem] | None = None) -> list[Row]:
    """The records of ``path``: JSON Lines (gzipped or not), a JSON array, or Parquet.

    Lines of a JSON Lines file that are not JSON objects are added to ``problems`` when it is
    given (the good rows are still returned), else raised.

    Raises:
        InputError: the file is missing, unreadable, or holds something other than records;
            every bad line is listed.
        MissingDependency: a Parquet file and no pyarrow.
    """
    path = Path(path)
    if path.suffix == ".parquet":
        if not path.is_file():
            raise InputError([Problem(file=str(path), message="data file not found")])
        return _parquet(path)
    data = _read_bytes(path)
    if data[:4] == b"PAR1":
        return _parquet(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError([Problem(file=str(path), message=f"not UTF-8 text: {exc}")]) from None
    if text.lstrip().startswith("["):
        rows = _json_document(path, text)
        if rows is not None:
            return rows
    try:
        return _json_lines(path, text, problems if "\n" in text.strip() else None)
    except InputError:
        rows = _json_document(path, text)  # one JSON document over several lines
        if rows is None:
            raise
        return rows


HUB = "https://huggingface.co"


def _hub_reachable() -> str | None:
    """None when the Hub answers, else why not (asked once, briefly, before ``datasets`` retries)."""
    if os.environ.get("HF_HUB_OFFLINE", "") not in ("", "0") or os.environ.get(
            "HF_DATASETS_OFFLINE", "") not in ("", "0"):
        return "HF_HUB_OFFLINE is set"
    import httpx

    endpoint = os.environ.get("HF_ENDPOINT", HUB)
    try:
        httpx.head(endpoint, timeout=5.0)
    except httpx.HTTPError as exc:
        return f"{endpoint} cannot be reached ({type(exc).__name__})"
    return None


def hub_rows(location: HubLocation, offline_hint: str = "") -> list[Row]:
    """The rows of a dataset from the Hugging Face Hub (or its local copy), via ``datasets``.

    Args:
        offline_hint: what to say when the Hub cannot be reached (where to download the file).

    Raises:
        MissingDependency: ``datasets`` is not installed.
        UserError: the Hub cannot be reached, or has no such dataset, configuration or split.
    """
    try:
        import datasets
    except ImportError:
        raise MissingDependency(
            "--hf needs the datasets library: pip install 'benchwright[datasets]'") from None
    if not Path(location.path).is_dir():
        why = _hub_reachable()
        if why is not None:
            raise UserError(f"cannot load {location.describe()} from the Hugging Face Hub: {why}; "
                            + (offline_hint or "download the file and give it with --data"))
    try:
        loaded = datasets.load_dataset(location.path, name=location.name, split=location.split,
                                       revision=location.revision, data_files=location.data_files)
    except Exception as exc:  # connection errors, missing configs, bad files: all the user's to fix
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
        raise UserError(f"cannot load {location.describe()} from the Hugging Face Hub: {first} "
                        + (f"; {offline_hint}" if offline_hint else
                           " (offline? download the file and give it with --data)")) from None
    return [Row(_plain(dict(r)), f"row {i + 1}") for i, r in enumerate(_iterate(loaded))]


def _iterate(loaded: Any) -> Iterator[Any]:
    yield from loaded
