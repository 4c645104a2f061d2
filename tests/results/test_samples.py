"""A run's samples at a glance: the order, the filter values, the model x task matrix, the
neighbours of a sample and where the judge and the objective checks disagree."""

from __future__ import annotations

from typing import Any

from benchwright.results.samples import NOT_RUN, disagree, index_records, neighbours, task_matrix


def rec(eid: str, task: str, model: str, sample: int, outcome: str | None, criterion: str = "unit-test",
        verdict: str | None = None, language: str = "python") -> dict[str, Any]:
    return {"execution_id": eid, "task_source": "src", "task": task, "language": language, "model": model,
            "sample": sample, "outcome": outcome, "criterion": criterion, "verdict": verdict}


RECORDS = [
    rec("e4", "beta", "m2", 0, "error"),
    rec("e1", "alpha", "m1", 1, "fail", verdict="fail"),
    rec("e0", "alpha", "m1", 0, "pass", verdict="pass"),
    rec("e0", "alpha", "m1", 0, "pass", criterion="ram-usage"),
    rec("e2", "alpha", "m2", 0, "pass", verdict="pass"),
    rec("e3", "beta", "m1", 0, "untested", verdict="n/a"),
]


def test_samples_come_in_the_runs_order_with_the_values_each_filter_can_take() -> None:
    index = index_records(RECORDS)
    assert [s.execution_id for s in index.samples] == ["e0", "e1", "e2", "e3", "e4"]
    assert index.models == ["m2", "m1"]  # as they first appear
    assert index.facets["criterion"] == ["ram-usage", "unit-test"]
    assert index.facets["verdict"] == ["fail", "n/a", "pass"]  # a missing verdict is no value
    assert index.facets["outcome"] == ["error", "fail", "pass", "untested"]


def test_the_matrix_counts_passes_over_counted_samples_and_says_what_did_not_run() -> None:
    rows = task_matrix(index_records(RECORDS))
    assert [(r.task, r.language) for r in rows] == [("alpha", "python"), ("beta", "python")]
    alpha, beta = rows[0].cells, rows[1].cells
    assert (alpha["m1"].state, alpha["m1"].text, alpha["m1"].execution_id) == ("partial", "1/2 pass", "e1")
    assert (alpha["m2"].state, alpha["m2"].text, alpha["m2"].execution_id) == ("pass", "pass", "e2")
    assert (beta["m1"].state, beta["m1"].text) == ("untested", "untested")  # not counted, not a fail
    assert (beta["m2"].state, beta["m2"].text) == ("error", "error")
    assert alpha["m1"].counted == 2 and beta["m1"].counted == 0


def test_a_model_without_a_sample_of_a_task_is_not_run_and_opens_nothing() -> None:
    rows = task_matrix(index_records([rec("e0", "alpha", "m1", 0, "pass"), rec("e1", "beta", "m2", 0, "fail"),
                                      rec("e2", "beta", "m2", 1, "fail")]))
    cell = rows[0].cells["m2"]
    assert (cell.state, cell.text, cell.execution_id) == (NOT_RUN, NOT_RUN, None)
    assert rows[1].cells["m2"].text == "0/2 pass" and rows[1].cells["m2"].state == "fail"


def test_a_samples_neighbours_are_the_ones_listed_before_and_after_it() -> None:
    samples = index_records(RECORDS).samples
    middle = neighbours(samples, "e2")
    assert (middle["previous"]["execution_id"], middle["next"]["execution_id"]) == ("e1", "e3")
    assert (middle["position"], middle["count"]) == (3, 5)
    first, last = neighbours(samples, "e0"), neighbours(samples, "e4")
    assert first["previous"] is None and first["next"]["execution_id"] == "e1"
    assert last["next"] is None and last["position"] == 5
    assert neighbours(samples, "nope")["position"] == 0


def test_the_gates_disagree_only_when_the_judge_and_the_objective_checks_are_opposite() -> None:
    index = index_records([rec("a", "t", "agent", 0, "fail", "objective", "fail", "agent"),
                           rec("a", "t", "agent", 0, "fail", "judge", "pass", "agent"),
                           rec("b", "t", "other", 0, "fail", "objective", "fail", "agent"),
                           rec("b", "t", "other", 0, "fail", "judge", None, "agent")])
    fooled, unjudged = index.samples
    assert fooled.gates == {"objective": "FAIL", "judge": "PASS"} and fooled.disagree and fooled.agent
    assert unjudged.gates["judge"] == "N/A" and not unjudged.disagree
    assert not disagree({"objective": "PASS", "judge": "PASS"})
