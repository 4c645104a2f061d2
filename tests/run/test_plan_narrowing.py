"""``Narrowing`` in ``build_plan``: which tasks, models and samples a narrowed plan keeps."""

from __future__ import annotations

import pytest

from benchwright.config.settings import Settings
from benchwright.errors import InputError
from benchwright.results.folder import Narrowing
from benchwright.run.plan import Plan, build_plan
from tests.run.test_plan import config, source


def _plan(narrowing: Narrowing, **fields: object) -> Plan:
    return build_plan(config(**fields), "configs/c.yaml", [source()], Settings(), narrowing=narrowing)


def _tasks(plan: Plan) -> list[str]:
    return list(dict.fromkeys(u.task.name for u in plan.units))


def test_limit_counts_the_tasks_the_config_keeps() -> None:
    plan = _plan(Narrowing(limit=2), difficulties=["easy", "hard"])
    assert _tasks(plan) == ["add", "sort"]  # concat is filtered out by the config, so sort is second
    assert plan.counts["demo"].filtered_out == 2  # concat (config) and untested (the limit)


def test_limit_skips_tasks_no_model_is_asked() -> None:
    plan = _plan(Narrowing(limit=1), llms=[{"id": "reference", "cutoff": "2024-01-01"}])
    assert _tasks(plan) == ["add"]  # concat (2023) is before the cut-off and does not count
    plan = _plan(Narrowing(limit=1), llms=[{"id": "reference", "cutoff": "2024-12-01"}])
    assert _tasks(plan) == ["untested"]


def test_task_globs_keep_any_match() -> None:
    plan = _plan(Narrowing(tasks=["s*", "add"]))
    assert _tasks(plan) == ["add", "sort"]


def test_a_glob_matching_nothing_names_the_closest_tasks() -> None:
    with pytest.raises(InputError) as e:
        _plan(Narrowing(tasks=["add", "srot*"]))
    [problem] = e.value.problems
    assert problem.path == "--task" and "'srot*'" in problem.message
    assert problem.hint == "did you mean sort?"


def test_a_glob_matching_only_filtered_tasks_matches_nothing() -> None:
    with pytest.raises(InputError, match="matches none of the 2 tasks"):
        _plan(Narrowing(tasks=["concat"]), difficulties=["easy"])


def test_models_replace_llms_and_keep_listed_settings() -> None:
    llms = [{"id": "reference/a", "temperature": 0.3}, {"id": "reference/b", "name": "bee"}]
    plan = _plan(Narrowing(models=["bee", "reference/a", "reference/new"]), llms=llms)
    specs = {u.model.label: u.model for u in plan.units}
    assert list(specs) == ["bee", "reference/a", "reference/new"]
    assert specs["reference/a"].temperature == 0.3
    assert specs["reference/new"].temperature is None


def test_an_unknown_model_is_bad_input_with_a_hint() -> None:
    with pytest.raises(InputError) as e:
        _plan(Narrowing(models=["refrence"]))
    assert e.value.problems[0].path == "--model"
    assert e.value.problems[0].hint == "did you mean reference?"


def test_samples_replace_samples() -> None:
    plan = _plan(Narrowing(samples=3, tasks=["sort"]), samples=1)
    assert sorted(u.sample for u in plan.units) == [0, 1, 2]


def test_flags_and_activity() -> None:
    assert not Narrowing().active
    n = Narrowing(limit=2, tasks=["a*"], models=["m"], samples=4)
    assert n.active
    assert n.flags() == ["--limit 2", "--task a*", "--model m", "--samples 4"]
