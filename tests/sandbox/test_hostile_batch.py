"""Samples are independent and cannot forge results, in every language, with the harness as
root and as an unprivileged user: a hostile sample (:mod:`tests.sandbox.hostile`), then a wrong
and a correct sample of another task through the same language object (for Python, the same
fork server), in bwrap and in unshare."""

from __future__ import annotations

import pytest

from benchwright.sandbox.select import availability
from tests.sandbox.hostile import (
    LANGUAGES,
    POISONERS,
    check,
    check_build_cache,
    check_coverage,
    check_exec_server,
)
from tests.unprivileged import HARNESS_USERS, run_script


@pytest.mark.parametrize("user", HARNESS_USERS)
@pytest.mark.parametrize("backend", ["bwrap", "unshare"])
@pytest.mark.parametrize("language", LANGUAGES)
def test_a_hostile_sample_changes_no_other_verdict(language: str, backend: str, user: str) -> None:
    why = availability(backend)
    if why is not None:
        pytest.fail(f"sandbox {backend!r} is not available here: {why}")  # setup installs it
    outcome = run_script("hostile.py", language, backend, user=user)
    assert check(outcome) == [], outcome
    if language == "java":  # the hostile sample in a JVM of its own, the two after it in the warm one
        assert [outcome[k]["test_jvm"] for k in ("hostile", "wrong", "right")] == ["own", "warm", "warm"]


@pytest.mark.parametrize("user", HARNESS_USERS)
@pytest.mark.parametrize("backend", ["bwrap", "unshare"])
def test_a_hostile_stdin_program_changes_no_other_verdict(backend: str, user: str) -> None:
    """The same attack as a standard-input program (each case runs it as ``__main__`` on an
    in-memory stdin/stdout in the fork server's sample process): its forged lines are only its
    own output, and the wrong and correct programs after it are judged as they are."""
    why = availability(backend)
    if why is not None:
        pytest.fail(f"sandbox {backend!r} is not available here: {why}")
    outcome = run_script("hostile.py", "python-stdio", backend, user=user)
    assert check(outcome) == [], outcome


@pytest.mark.parametrize("user", HARNESS_USERS)
@pytest.mark.parametrize("backend", ["bwrap", "unshare"])
def test_the_sandbox_init_is_out_of_reach(backend: str, user: str) -> None:
    """As root and as an unprivileged harness: PID 1 of the sandbox holds nothing but /dev/null
    and cannot be ptraced (tests/sandbox/test_conformance.py runs the same probe in-process)."""
    found = run_script("hostile.py", "init", backend, user=user)
    assert set(found.values()) <= {"/dev/null"}, found


@pytest.mark.parametrize("user", HARNESS_USERS)
@pytest.mark.parametrize("backend", ["bwrap", "unshare"])
def test_a_hostile_sample_changes_no_later_coverage(backend: str, user: str) -> None:
    """python-coverage's warm server runs each sample's tests in a process it forks: the same
    attack (it steals nonces, forges lines and files, lowers its server's limits, leaves files,
    IPC objects and a daemon that kills what it sees) ends that server, and the two samples
    after it are measured exactly as the per-sample driver measures them in fresh sandboxes."""
    why = availability(backend)
    if why is not None:
        pytest.fail(f"sandbox {backend!r} is not available here: {why}")
    outcome = run_script("hostile.py", "coverage", backend, user=user)
    assert check_coverage(outcome) == [], outcome


@pytest.mark.parametrize("user", HARNESS_USERS)
@pytest.mark.parametrize("attack", sorted(POISONERS))
def test_a_sample_that_rewrites_its_program_poisons_no_later_copy(attack: str, user: str) -> None:
    """The compiled languages keep a sample's program for its later copies: a sample that
    replaces its program in the work folder (by a forger that passes every test, or a link to
    a host file) has every copy compiled again and failed, as root and as an unprivileged
    harness, while a correct sample's copy runs the kept program."""
    why = availability("bwrap")
    if why is not None:
        pytest.fail(f"sandbox 'bwrap' is not available here: {why}")
    outcome = run_script("hostile.py", "build-cache", attack, "bwrap", user=user)
    assert check_build_cache(outcome) == [], outcome


@pytest.mark.parametrize("user", HARNESS_USERS)
@pytest.mark.parametrize("backend", ["bwrap", "unshare"])
@pytest.mark.parametrize("language", ["c", "cpp", "go", "rust"])
def test_a_hostile_command_in_a_warm_sandbox_changes_no_later_copy(
        language: str, backend: str, user: str) -> None:
    """The compiled languages run a kept program's tests in a warm sandbox of their thread: the
    attacker's kit run there (it steals nonces, forges lines and files, lowers its server's
    limits, leaves files, IPC objects and a daemon that kills what it sees) ends that server,
    and the copies of a wrong and a correct sample after it run in a new one, judged as before,
    with their own figures, as root and as an unprivileged harness."""
    why = availability(backend)
    if why is not None:
        pytest.fail(f"sandbox {backend!r} is not available here: {why}")
    outcome = run_script("hostile.py", "exec-server", language, backend, user=user)
    assert check_exec_server(outcome) == [], outcome
