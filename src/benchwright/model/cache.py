"""The generation cache: one SQLite file per workspace, ``.benchwright/cache.sqlite3``.

An answer is stored under :func:`cache_key`, a hash of everything sent to the model (provider,
its type and endpoint, the model, the mode, the messages, the prompt, every parameter) and the
sample index, so a run never pays twice for the same generation and ``samples: n`` still gets
``n`` different answers. It is a cache: deleting the file loses nothing but money.

Several processes (runs, the UI, ``benchwright cache``) may use one file at once: the journal
is WAL (readers never block the writer), waits for a lock are bounded by ``busy_timeout`` and
every write is one autocommitted statement. Each thread gets its own connection.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from benchwright.errors import InfraError, UserError
from benchwright.model.base import ToolCall

if TYPE_CHECKING:
    from benchwright.model.base import GenerationRequest

CACHE_FILE = "cache.sqlite3"
KEY_VERSION = 1
"""Part of every key: bump it when the key's material changes, and old entries stop matching."""
BUSY_TIMEOUT_MS = 30_000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS generations (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    tokens_in INTEGER,
    tokens_out INTEGER,
    tokens_estimated INTEGER NOT NULL DEFAULT 0,
    finish_reason TEXT,
    cost_usd REAL,
    answer_model TEXT,
    latency_ms REAL,
    created TEXT NOT NULL,
    tool_calls TEXT
);
CREATE INDEX IF NOT EXISTS generations_provider_model ON generations (provider, model);
"""
_COLUMNS = ("text, tokens_in, tokens_out, tokens_estimated, finish_reason, cost_usd, "
            "answer_model, latency_ms, created, tool_calls")
_TEXT_COLUMNS = ("text", "finish_reason", "answer_model", "created", "tool_calls")
_READ = ", ".join(f"CASE typeof({c}) WHEN 'text' THEN CAST({c} AS BLOB) WHEN 'null' THEN NULL "
                  f"ELSE typeof({c}) END" if c in _TEXT_COLUMNS else c for c in _COLUMNS.split(", "))
"""The columns of :data:`_COLUMNS` with TEXT read as bytes, so :func:`_answer` checks them (any
other type in a TEXT column reads as its type's name, a str, which :func:`_answer` refuses)."""


class AnswerCache(Protocol):
    """What the generation engine needs of a cache: :class:`GenerationCache` on this machine,
    or the Ray executor's view of the driver's one."""

    def get(self, key: str) -> CachedAnswer | None: ...

    def put(self, key: str, provider: str, model: str, entry: CachedAnswer) -> None: ...


def cache_key(provider: str, provider_type: str, base_url: str | None, request: GenerationRequest) -> str:
    """The cache key of ``request`` sent to provider ``provider``: a sha256 in hex.

    It covers what reaches the model (model, mode, messages, prompt, parameters) and the sample
    index; not the golden solution, the task name or the language, which are never sent.
    The tools offered are part of it when there are any (a request without tools keeps the key
    it had before tools existed).
    """
    material = {
        "v": KEY_VERSION,
        "provider": provider,
        "type": provider_type,
        "base_url": base_url,
        "model": request.model,
        "mode": request.mode,
        "messages": request.messages,
        "prompt": request.prompt,
        "params": request.params,
        "sample": request.sample,
    }
    if request.tools is not None:
        material["tools"] = request.tools
    text = json.dumps(material, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_path(state: Path) -> Path:
    """The cache file inside a workspace's ``.benchwright/`` folder (``Workspace.state``)."""
    return state / CACHE_FILE


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@dataclass(frozen=True)
class CachedAnswer:
    text: str
    tokens_in: int | None = None
    tokens_out: int | None = None
    tokens_estimated: bool = False
    finish_reason: str | None = None
    cost_usd: float | None = None
    model: str | None = None
    """The model the service said answered (``Answer.model``)."""
    latency_ms: float | None = None
    """How long the original generation took: the time a cache hit saves."""
    created: str = field(default_factory=now_iso)
    """When the answer was generated (ISO 8601, UTC)."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The tool calls of the answer (stored as a JSON list; NULL when there are none)."""


def _dump_calls(calls: tuple[ToolCall, ...]) -> str | None:
    if not calls:
        return None
    return json.dumps([{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls],
                      ensure_ascii=False)


def _load_calls(raw: object) -> tuple[ToolCall, ...] | None:
    """The stored tool calls; None when they cannot be read (the entry is then a miss)."""
    if raw is None or raw == "":
        return ()
    try:
        items = json.loads(str(raw))
        return tuple(ToolCall(id=str(i["id"]), name=str(i["name"]), arguments=str(i["arguments"]))
                     for i in items)
    except (ValueError, TypeError, KeyError):
        return None


def _text(value: object, optional: bool = True) -> str | None:
    """A TEXT column read as bytes: its UTF-8 text; a ValueError for anything else."""
    if value is None and optional:
        return None
    if not isinstance(value, bytes):
        raise ValueError("not text")
    return value.decode("utf-8")


def _whole(value: object) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise ValueError("not a whole number")


def _real(value: object) -> float | None:
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return None if value is None else float(value)
    raise ValueError("not a number")


def _answer(row: tuple[object, ...]) -> CachedAnswer | None:
    """A row of :data:`_COLUMNS` (TEXT read as bytes) as an answer; None when it is damaged."""
    try:
        calls = _load_calls(_text(row[9]))
        text = _text(row[0], optional=False)
        if calls is None or text is None:
            return None
        return CachedAnswer(
            text=text, tokens_in=_whole(row[1]), tokens_out=_whole(row[2]),
            tokens_estimated=bool(_whole(row[3])), finish_reason=_text(row[4]), cost_usd=_real(row[5]),
            model=_text(row[6]), latency_ms=_real(row[7]), created=_text(row[8]) or now_iso(),
            tool_calls=calls)
    except ValueError:  # UnicodeDecodeError included
        return None


@dataclass(frozen=True)
class ModelStats:
    provider: str
    model: str
    entries: int
    latency_ms: float
    """Sum of the original generations' latencies (what serving all of them again saves)."""
    cost_usd: float
    oldest: str | None
    newest: str | None


@dataclass(frozen=True)
class CacheStats:
    path: Path
    entries: int
    size_bytes: int
    """The database file plus its ``-wal`` and ``-shm`` files."""
    latency_ms: float
    """Sum of the original latencies of every entry."""
    cost_usd: float
    models: list[ModelStats] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "entries": self.entries,
            "size_bytes": self.size_bytes,
            "latency_saved_ms": round(self.latency_ms, 3),
            "cost_usd": round(self.cost_usd, 6),
            "models": [
                {"provider": m.provider, "model": m.model, "entries": m.entries,
                 "latency_saved_ms": round(m.latency_ms, 3), "cost_usd": round(m.cost_usd, 6),
                 "oldest": m.oldest, "newest": m.newest}
                for m in self.models
            ],
        }


def _size_on_disk(path: Path) -> int:
    total = 0
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(OSError):
            total += (path.parent / (path.name + suffix)).stat().st_size
    return total


WAL_WAIT_S = 10.0
"""How long opening the cache waits for another process that is creating it."""


class GenerationCache:
    """The cache file at ``path``; safe to share between threads and processes.

    Raises (from every method, the constructor included):
        UserError: the file is not a usable SQLite database (corrupted, unreadable, read-only);
            the message names it and says how to reset it.
        InfraError: the database stayed locked longer than ``busy_timeout``.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._closed = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise UserError(f"cannot create the folder of the generation cache {self.path}: {e}") from None
        with self._guard():
            conn = self._conn()
            mode = self._wal(conn)
            if mode is None or str(mode[0]).lower() != "wal":
                raise sqlite3.OperationalError(f"cannot switch to WAL journal (got {mode!r})")
            conn.executescript(_SCHEMA)
            self._upgrade(conn)

    @staticmethod
    def _wal(conn: sqlite3.Connection) -> Any:
        """Switch to the WAL journal. Two processes creating the file at once both need an
        exclusive lock for it, and SQLite does not wait for that one (its busy timeout does not
        apply): try again for a while."""
        deadline = time.monotonic() + WAL_WAIT_S
        while True:
            try:
                return conn.execute("PRAGMA journal_mode=WAL").fetchone()
            except sqlite3.OperationalError as e:
                if "locked" not in str(e).lower() or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    @staticmethod
    def _upgrade(conn: sqlite3.Connection) -> None:
        """Add the columns a file made by an older version lacks (another process may be
        doing the same at the same moment)."""
        have = {row[1] for row in conn.execute("PRAGMA table_info(generations)")}
        if "tool_calls" not in have:
            try:
                conn.execute("ALTER TABLE generations ADD COLUMN tool_calls TEXT")
            except sqlite3.OperationalError as e:
                if "duplicate column" not in str(e).lower():
                    raise

    # connections ---------------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        if self._closed:
            raise InfraError(f"the generation cache {self.path} is closed")
        # autocommit (isolation_level=None): every statement is its own short transaction, so
        # no read-then-write upgrade that could fail without waiting for busy_timeout.
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                               check_same_thread=False)
        # a damaged name in a row shows with U+FFFD in stats; answers are checked by _answer
        conn.text_factory = lambda b: b.decode("utf-8", errors="replace")
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            conn.execute("PRAGMA synchronous=NORMAL")  # safe with WAL; commits need no fsync
        except BaseException:
            conn.close()
            raise
        self._local.conn = conn
        with self._lock:
            self._connections.append(conn)
        return conn

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as e:
            self._fail(e)

    def _fail(self, e: sqlite3.Error) -> NoReturn:
        message = str(e)
        lowered = message.lower()
        if "locked" in lowered or "busy" in lowered:
            raise InfraError(
                f"the generation cache {self.path} stayed locked for over {BUSY_TIMEOUT_MS // 1000} s: "
                f"{message}") from e
        raise UserError(
            f"the generation cache {self.path} is unusable ({message}); reset it with "
            f"'benchwright cache clear --yes' or delete the file (it only holds cached answers)"
        ) from e

    # API -----------------------------------------------------------------------------------

    def get(self, key: str) -> CachedAnswer | None:
        """The answer stored under ``key``; None when there is none, or when the stored row
        cannot be read (text that is not UTF-8, a value of the wrong type): a damaged entry is a
        miss, and the answer asked again replaces it."""
        with self._guard():
            row = self._conn().execute(
                f"SELECT {_READ} FROM generations WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        return _answer(row)

    def put(self, key: str, provider: str, model: str, entry: CachedAnswer) -> None:
        """Store ``entry`` under ``key`` (replacing any), filed under ``provider`` and ``model``
        (the model asked for, as in ``GenerationRequest.model``)."""
        with self._guard():
            self._conn().execute(
                f"INSERT OR REPLACE INTO generations (key, provider, model, {_COLUMNS}) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (key, provider, model, entry.text, entry.tokens_in, entry.tokens_out,
                 int(entry.tokens_estimated), entry.finish_reason, entry.cost_usd, entry.model,
                 entry.latency_ms, entry.created, _dump_calls(entry.tool_calls)),
            )

    def stats(self) -> CacheStats:
        with self._guard():
            rows = self._conn().execute(
                "SELECT provider, model, COUNT(*), TOTAL(latency_ms), TOTAL(cost_usd), "
                "MIN(created), MAX(created) FROM generations GROUP BY provider, model "
                "ORDER BY provider, model").fetchall()
        models = [ModelStats(provider=r[0], model=r[1], entries=r[2], latency_ms=r[3], cost_usd=r[4],
                             oldest=r[5], newest=r[6]) for r in rows]
        return CacheStats(
            path=self.path,
            entries=sum(m.entries for m in models),
            size_bytes=_size_on_disk(self.path),
            latency_ms=sum(m.latency_ms for m in models),
            cost_usd=sum(m.cost_usd for m in models),
            models=models,
        )

    def clear(self, provider: str | None = None, model: str | None = None) -> int:
        """Remove the entries of ``provider`` and/or ``model`` (all of them if neither); return
        how many were removed. Clearing everything also gives the space back to the disk."""
        where, args = [], []
        if provider is not None:
            where.append("provider = ?")
            args.append(provider)
        if model is not None:
            where.append("model = ?")
            args.append(model)
        sql = "DELETE FROM generations" + (" WHERE " + " AND ".join(where) if where else "")
        with self._guard():
            conn = self._conn()
            removed = conn.execute(sql, args).rowcount
            if removed and not where:
                # best effort: other processes may hold the file open
                with contextlib.suppress(sqlite3.OperationalError):
                    conn.execute("VACUUM")
                with contextlib.suppress(sqlite3.OperationalError):
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return max(removed, 0)

    def close(self) -> None:
        """Close every thread's connection. Safe to call twice."""
        with self._lock:
            self._closed = True
            conns, self._connections = self._connections, []
        for conn in conns:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()

    def __enter__(self) -> GenerationCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
