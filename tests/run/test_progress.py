"""How a run's status.yaml is read by every interface: the counts (errors are done, and apart),
the ETA from the rate so far, and a dead or replaced process never left 'running'."""

from __future__ import annotations

import datetime as dt
import os
import socket
import subprocess

from benchwright.run.progress import format_eta, process_token, read_progress

NOW = dt.datetime(2026, 11, 25, 12, 10, tzinfo=dt.UTC)


def _status(**extra: object) -> dict[str, object]:
    return {"statusVersion": 2, "state": "running", "pid": os.getpid(), "pidStarted": process_token(),
            "host": socket.gethostname(),
            "session": {"started": "2026-11-25T12:00:00+00:00", "completed": 10, "models": {"a": 5, "b": 5}},
            "taskSourceStatuses": {"src": {"total": 100, "completed": 40, "filteredOut": 3, "error": 4}},
            "modelStatuses": {"a": {"total": 50, "completed": 35, "error": 4}, "b": {"total": 50, "completed": 5,
                                                                                  "error": 0}},
            **extra}


def test_counts_include_the_errors_and_the_eta_comes_from_the_rate_since_the_process_started() -> None:
    p = read_progress(_status(), now=NOW)
    assert (p.state, p.total, p.done, p.errors, p.filtered_out) == ("running", 100, 40, 4, 3)
    # model a: 30 samples in the 600 s since this process started, 15 left: 300 s
    assert p.models["a"].eta_s == 300.0 and format_eta(p.models["a"], "running") == "about 5 min left"
    assert p.models["b"].eta_s is None and format_eta(p.models["b"], "running") == "estimating"
    assert p.eta_s is None and p.estimating  # model b has no rate yet: the end is not known
    both = _status(modelStatuses={"a": {"total": 50, "completed": 35, "error": 4},
                                  "b": {"total": 50, "completed": 6, "error": 0}})
    p = read_progress(both, now=NOW)  # b: 1 sample in 600 s, 44 left: the slowest sets the end
    assert p.eta_s == 44 * 600.0 and format_eta(p, p.state) == "about 7 h 20 min left"
    finished = _status(modelStatuses={"a": {"total": 50, "completed": 50, "error": 0}})
    assert format_eta(read_progress(finished, now=NOW).models["a"], "running") == "done"
    legacy = read_progress({**_status(), "modelStatuses": None}, now=NOW)  # the whole run's rate
    assert legacy.eta_s == 60 / (30 / 600) and format_eta(legacy, "running") == "about 20 min left"


def test_no_rate_yet_is_estimating_and_a_finished_run_has_no_eta() -> None:
    fresh = _status(session={"started": "2026-11-25T12:09:59+00:00", "completed": 40, "models": {"a": 35, "b": 5}})
    p = read_progress(fresh, now=NOW)
    assert p.eta_s is None and p.estimating and format_eta(p, p.state) == "estimating"
    done = read_progress(_status(state="completed"), now=NOW)
    assert done.eta_s is None and format_eta(done, done.state) == ""


def test_a_status_written_before_the_errors_were_counted_as_done_reads_the_old_way() -> None:
    old = {"state": "completed", "taskSourceStatuses": {"src": {"total": 46, "completed": 43, "error": 3}}}
    p = read_progress(old)
    assert (p.done, p.total, p.errors) == (46, 46, 3)


def test_a_running_status_whose_process_is_gone_or_replaced_is_interrupted_and_resumable() -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    p = read_progress(_status(pid=gone.pid))
    assert p.state == "interrupted" and p.resumable and "ended without finishing" in (p.reason or "")
    reused = read_progress(_status(pidStarted="1"))  # this pid, but not the process that wrote it
    assert reused.state == "interrupted"
    assert read_progress(_status()).state == "running"  # this very process: alive
    elsewhere = read_progress(_status(host="another-machine", pid=gone.pid))
    assert elsewhere.state == "running"  # another machine's process cannot be looked at from here


def test_an_interrupted_run_whose_process_still_finishes_its_samples_is_stopping() -> None:
    p = read_progress(_status(state="interrupted"))
    assert p.state == "stopping" and not p.resumable
    cancelled = read_progress(_status(state="interrupted", cancelled="2026-11-25T12:05:00+00:00"), alive=False)
    assert cancelled.state == "interrupted" and cancelled.resumable
    assert cancelled.reason == "cancelled at 2026-11-25 12:05:00 UTC"
