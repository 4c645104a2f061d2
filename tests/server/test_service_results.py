"""The service's views of a run's results, as the web UI's results pages read them: the samples
in order, the model x task matrix, a sample's neighbours, the explorer's filter values and the
chart's options."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchwright.results.record import Record
from benchwright.server.service import NotFound, Service
from benchwright.server.ui.results import chart_options
from benchwright.workspace import Workspace
from benchwright.workspace.workspace import init_workspace
from tests.server.made_runs import AFTER, BEFORE, make_run


@pytest.fixture
def service(tmp_path: Path) -> Service:
    ws = tmp_path / "ws"
    init_workspace(ws)
    make_run(ws, "before", BEFORE)
    make_run(ws, "after", AFTER)
    return Service(Workspace.open(ws))


def test_the_matrix_has_a_row_per_task_and_a_cell_per_model(service: Service) -> None:
    rows = {(r.task, r.language): r.cells for r in service.task_matrix("before")}
    assert list(rows) == [("alpha", "python"), ("beta", "python"), ("gamma", "java")]
    assert rows[("alpha", "python")]["model-b"].text == "1/2 pass"
    assert rows[("beta", "python")]["model-b"].state == "error"
    assert rows[("gamma", "java")]["model-b"].state == "not run"
    assert rows[("gamma", "java")]["model-a"].text == "untested (2)"


def test_the_index_is_read_once_and_again_when_the_records_change(service: Service) -> None:
    first = service.run_index("before")
    assert service.run_index("before") is first  # the same file: nothing read again
    folder = service.folder("before")
    folder.append_records([Record(run_id="before", execution_id="late", task_source="made", task="zeta",
                                  language="python", model="model-a", sample=0, criterion="unit-test",
                                  executor="UnitTest", outcome="pass", score=1.0)])
    again = service.run_index("before")
    assert again is not first and again.samples[-1].task == "zeta"


def test_a_samples_neighbours_follow_the_runs_order(service: Service) -> None:
    ids = [s.execution_id for s in service.run_index("before").samples]
    n = service.sample_neighbours("before", ids[1])
    assert (n["previous"]["execution_id"], n["next"]["execution_id"], n["position"]) == (ids[0], ids[2], 2)
    with pytest.raises(NotFound):
        service.sample_neighbours("no-such-run", ids[1])


def test_the_explorer_offers_the_values_the_chosen_runs_hold(service: Service) -> None:
    facets = service.explorer_facets(["before", "after"])
    assert facets["model"] == ["model-a", "model-b"]
    assert facets["language"] == ["java", "python"]
    assert facets["outcome"] == ["error", "fail", "pass", "untested"]
    assert facets["criterion"] == ["ram-usage", "unit-test"]
    assert service.explorer_facets([]) == {f: [] for f in facets}


def test_the_chart_labels_every_criterion_and_keeps_zero_apart_from_not_measured() -> None:
    summary = {"models": ["a", "b"], "units": {f"c{i}": "score" for i in range(6)},
               "by_model": {"a": {"criteria": {f"c{i}": {"mean": 0.0 if i == 0 else 0.5} for i in range(6)}},
                            "b": {"criteria": {"c1": {"mean": 1.0}}}}}
    options = chart_options(summary, ["a", "b"])
    assert options is not None
    assert options["xAxis"]["data"] == [f"c{i}" for i in range(6)]
    assert options["xAxis"]["axisLabel"]["interval"] == 0  # no label dropped
    a, b = options["series"]
    assert a["data"][0] == 0.0 and a["barMinHeight"] > 0  # a zero shows as a sliver
    assert b["data"] == [None, 1.0, None, None, None, None]  # not measured: no bar, never 0
    assert chart_options({"models": ["a"], "by_model": {"a": {}}}, ["a"]) is None
