"""What a run's ``status.yaml`` says of its progress, read one way for the API, the web UI and
``benchwright status`` (so the three always agree).

The run writes its state (``running``, ``interrupted``, ``completed``; a cancel leaves
``interrupted`` with the time under ``cancelled``), its
process (``pid``, ``host``, ``pidStarted``) and counts per task source and per model: ``total``,
``completed`` (every finished sample, those that ended in an error included) and ``error`` (of
those, how many ended in an error). A run whose process is gone while its status still says
``running`` is reported ``interrupted``: it stopped without saying so (killed, the machine
restarted) and ``--resume`` finishes it. Status files written before the counts included the
errors (no ``statusVersion``) are read the old way: done = completed + error.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
from typing import Any

from pydantic import BaseModel, Field

STATUS_VERSION = 2
"""``statusVersion`` of the status files whose ``completed`` includes the samples in error."""

ACTIVE = ("starting", "running", "stopping")
"""States of a run whose process is at work (``stopping``: it was interrupted and its process
is still finishing the samples it had started)."""
RESUMABLE = ("interrupted", "failed")
"""States a resume finishes."""


class Counts(BaseModel):
    """Samples of one task source or model (or of the whole run)."""

    total: int = Field(0, description="Samples to run.")
    done: int = Field(0, description="Samples finished, those that ended in an error included.")
    errors: int = Field(0, description="Of the finished samples, those that ended in an error.")
    eta_s: float | None = Field(None, description="Seconds left at the rate so far; None: not known yet.")


class RunProgress(BaseModel):
    """A run's state and counts as every interface shows them."""

    state: str = Field(description="starting, running, stopping, interrupted, completed, failed, "
                       "damaged or unknown.")
    reason: str | None = Field(None, description="Why the state is what it is, when it is not what "
                               "status.yaml says (a process that ended without saying so).")
    resumable: bool = Field(False, description="Whether resume (and retry-errors) applies.")
    total: int = 0
    done: int = 0
    errors: int = 0
    filtered_out: int = 0
    sources: dict[str, Counts] = Field(default_factory=dict, description="Per task source or scenario.")
    models: dict[str, Counts] = Field(default_factory=dict, description="Per model (or agent); empty "
                                      "for runs recorded before the per-model counts.")
    eta_s: float | None = Field(None, description="Seconds left for the run at the rate so far.")
    estimating: bool = Field(False, description="Running, with no rate yet to estimate from.")
    updated: str | None = None


def _int(value: object) -> int:
    """A count of ``status.yaml``; anything but a whole number counts as 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _stat(pid: int | str) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name (state first); [] when unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[-1].split()
    except OSError:
        return []


def process_token(pid: int | str = "self") -> str | None:
    """When process ``pid`` started (clock ticks since boot, from ``/proc``): with the pid it
    names one process, whatever later reuses the pid. None where ``/proc`` cannot tell."""
    fields = _stat(pid)
    return fields[19] if len(fields) > 19 else None


def process_alive(status: dict[str, Any]) -> bool | None:
    """Whether the process a status names is still there: None when this host cannot tell (no
    pid recorded, or the run is on another machine)."""
    pid = status.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0 or status.get("host") != socket.gethostname():
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    fields = _stat(pid)
    if fields and fields[0] in ("Z", "X"):
        return False  # it has exited; its parent has not collected it yet
    recorded = status.get("pidStarted")
    # with another start time, the pid now belongs to another process
    return not (isinstance(recorded, str) and len(fields) > 19 and fields[19] != recorded)


def _counts(entry: object, old: bool) -> Counts:
    if not isinstance(entry, dict):
        return Counts()
    completed, errors = _int(entry.get("completed")), _int(entry.get("error"))
    return Counts(total=_int(entry.get("total")), done=completed + errors if old else completed, errors=errors)


def _parse_time(value: object) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        when = dt.datetime.fromisoformat(value)
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=dt.UTC)


def _eta(counts: Counts, done_at_start: int, elapsed_s: float) -> float | None:
    gained = counts.done - done_at_start
    if gained <= 0 or elapsed_s <= 0:
        return None
    return max(counts.total - counts.done, 0) / (gained / elapsed_s)


def read_progress(status: dict[str, Any], *, alive: bool | None = None,
                  now: dt.datetime | None = None) -> RunProgress:
    """The progress ``status`` (a ``status.yaml``) records. ``alive``: whether the run's process
    is known to be there (None: look for the pid ``status`` names)."""
    old = status.get("statusVersion") != STATUS_VERSION
    raw_sources = status.get("taskSourceStatuses")
    raw_models = status.get("modelStatuses")
    sources = {str(k): _counts(v, old) for k, v in (raw_sources.items() if isinstance(raw_sources, dict) else [])}
    models = {str(k): _counts(v, old) for k, v in (raw_models.items() if isinstance(raw_models, dict) else [])}
    filtered = sum(_int(v.get("filteredOut")) for v in (raw_sources or {}).values()
                   if isinstance(v, dict)) if isinstance(raw_sources, dict) else 0
    state = str(status.get("state") or "unknown")
    reason = None
    if state in ACTIVE or state == "interrupted":
        alive = process_alive(status) if alive is None else alive
    if state in ACTIVE and alive is False:
        state = "interrupted"
        reason = "its process ended without finishing the run (killed, or the machine restarted)"
    elif state == "interrupted" and alive is True:
        state = "stopping"
        reason = "interrupted: its process is finishing the samples it had started"
    elif state == "interrupted" and (cancelled := _parse_time(status.get("cancelled"))) is not None:
        reason = f"cancelled at {cancelled.astimezone(dt.UTC):%Y-%m-%d %H:%M:%S} UTC"
    whole = Counts(total=sum(c.total for c in sources.values()), done=sum(c.done for c in sources.values()),
                   errors=sum(c.errors for c in sources.values()))
    progress = RunProgress(state=state, reason=reason, resumable=state in RESUMABLE, total=whole.total,
                           done=whole.done, errors=whole.errors, filtered_out=filtered, sources=sources,
                           models=models, updated=status.get("updated") if isinstance(status.get("updated"), str)
                           else None)
    if state == "running":
        _estimate(progress, status, now or dt.datetime.now(dt.UTC))
    return progress


def _estimate(progress: RunProgress, status: dict[str, Any], now: dt.datetime) -> None:
    """Fill in the ETAs from the rate since this process started (a resume starts afresh)."""
    session = status.get("session")
    session = session if isinstance(session, dict) else {}
    started = _parse_time(session.get("started"))
    elapsed = (now - started).total_seconds() if started is not None else 0.0
    models_at_start = session.get("models")
    at_start: dict[str, Any] = models_at_start if isinstance(models_at_start, dict) else {}
    for label, counts in progress.models.items():
        counts.eta_s = _eta(counts, _int(at_start.get(label)), elapsed)
    unfinished = [c for c in progress.models.values() if c.done < c.total]
    if progress.models:  # the slowest model sets the end; one with no rate yet leaves it unknown
        known = [c.eta_s for c in unfinished if c.eta_s is not None]
        progress.eta_s = max(known) if known and len(known) == len(unfinished) else None
    else:  # a status without per-model counts: the whole run's rate
        progress.eta_s = _eta(Counts(total=progress.total, done=progress.done), _int(session.get("completed")),
                              elapsed)
    progress.estimating = progress.eta_s is None and progress.done < progress.total


def format_eta(progress: RunProgress | Counts, state: str) -> str:
    """The ETA as people read it: ``about 3 min left``, ``estimating`` until there is a rate."""
    if state != "running":
        return ""
    if progress.done >= progress.total:
        return "finishing" if isinstance(progress, RunProgress) else "done"
    if progress.eta_s is None:
        return "estimating"
    seconds = int(progress.eta_s + 0.5)
    if seconds < 60:
        return f"about {seconds} s left"
    if seconds < 3600:
        return f"about {(seconds + 30) // 60} min left"
    return f"about {seconds // 3600} h {(seconds % 3600 + 30) // 60} min left"
