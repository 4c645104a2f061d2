"""The error-bar helpers against values computed by hand (or from published tables)."""

from __future__ import annotations

import math

import pytest

from benchwright.results.stats import (
    Z95,
    bootstrap_mean,
    clustered_se,
    estimate,
    mcnemar_midp,
    paired_difference,
    t_quantile,
    t_two_sided_p,
    task_variance,
    tasks_needed,
    wilson,
)


def test_wilson_for_none_and_all_of_ten_is_not_a_point() -> None:
    lo, hi = wilson(0.0, 10)
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(0.2775, abs=1e-4)
    lo, hi = wilson(1.0, 10)
    assert lo == pytest.approx(0.7225, abs=1e-4) and hi == pytest.approx(1.0)
    # 5/10: centre 0.5, half-width z sqrt(0.025 + z^2/400) / (1 + z^2/10)
    half = Z95 * math.sqrt(0.025 + Z95**2 / 400) / (1 + Z95**2 / 10)
    assert wilson(0.5, 10) == pytest.approx((0.5 - half, 0.5 + half))


def test_clustered_se_equal_clusters_is_the_sd_of_task_means_over_root_tasks() -> None:
    clusters = [[1.0, 1.0], [0.0, 0.0], [1.0, 0.0]]  # task means 1, 0, 0.5: variance 0.25
    assert clustered_se(clusters) == pytest.approx(math.sqrt(0.25 / 3))
    assert clustered_se(clusters) == pytest.approx(math.sqrt(3) / 6)


def test_clustered_se_unequal_clusters_follows_the_cluster_formula() -> None:
    # n = 4, mean 0.5; residual sums 1 - 1 * 0.5 = 0.5 and 1 - 3 * 0.5 = -0.5: sqrt(2/1 * 0.5) / 4
    assert clustered_se([[1.0], [0.0, 0.0, 1.0]]) == pytest.approx(math.sqrt(2 * 0.5) / 4) == pytest.approx(0.25)
    assert clustered_se([[1.0, 0.0]]) is None


def test_estimate_picks_wilson_near_the_edges_and_normal_in_the_middle() -> None:
    all_pass = estimate([[1.0, 1.0]] * 10)
    assert all_pass is not None and all_pass.ci_method == "wilson-clustered"
    assert all_pass.se == 0.0 and all_pass.ci95 is not None
    assert all_pass.ci95[0] == pytest.approx(0.7225, abs=1e-4)  # ten tasks, not twenty samples
    assert all_pass.n == 20 and all_pass.tasks == 10
    half = estimate([[1.0], [0.0]] * 50)
    assert half is not None and half.ci_method == "normal-clustered" and half.se is not None
    assert half.ci95 == pytest.approx([0.5 - Z95 * half.se, 0.5 + Z95 * half.se])
    ms = estimate([[10.0, 12.0], [20.0, 22.0], [30.0, 32.0]])
    assert ms is not None and ms.ci_method == "normal-clustered" and ms.mean == pytest.approx(21.0)
    assert ms.se == pytest.approx(math.sqrt(100 / 3))  # task means 11, 21, 31
    assert estimate([]) is None
    one = estimate([[5.0, 7.0]])
    assert one is not None and one.se is None and one.ci95 is None and one.ci_method == "none"


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    values = [0.0, 1.0, 0.5, 1.0, 0.0, 1.0, 1.0, 0.25]
    a, b = bootstrap_mean(values, 16), bootstrap_mean(values, 16)
    assert a == b and a is not None and a.ci_method == "bootstrap-tasks" and a.ci95 is not None
    assert a.ci95[0] < a.mean < a.ci95[1] and a.ci95[0] >= 0 and a.ci95[1] <= 1


def test_mcnemar_mid_p_by_hand() -> None:
    # 2 vs 10 discordant pairs: exact = 2 (1 + 12 + 66) / 4096, mid-p subtracts C(12, 2) / 4096
    assert mcnemar_midp(2, 10) == pytest.approx(92 / 4096)
    assert mcnemar_midp(10, 2) == pytest.approx(92 / 4096)
    assert mcnemar_midp(0, 0) == 1.0
    assert mcnemar_midp(3, 3) == pytest.approx(1 - math.comb(6, 3) / 64)


def test_student_t_matches_tables() -> None:
    assert t_two_sided_p(2.0, 10) == pytest.approx(0.07339, abs=1e-5)
    assert t_quantile(0.975, 10) == pytest.approx(2.228139, abs=1e-5)
    assert t_quantile(0.975, 1) == pytest.approx(12.7062, abs=1e-3)


def test_paired_difference_same_and_significant() -> None:
    a = {t: [1.0, 0.0] for t in range(20)}
    same = paired_difference("m", "unit-test", a, dict(a), higher_is_better=True)
    assert same.diff == 0 and same.verdict == "same" and not same.significant and same.p_value == 1.0
    worse = paired_difference("m", "unit-test", a, {t: [0.0, 0.0] for t in range(20)}, True)
    assert worse.verdict == "worse" and worse.significant and worse.ci95 is not None and worse.ci95[1] < 0
    noisy = {t: [1.0, 0.0] if t % 2 else [1.0, 1.0] for t in range(20)}
    noisy_b = {t: [1.0, 1.0] if t % 2 else [1.0, 0.0] for t in range(20)}
    close = paired_difference("m", "unit-test", noisy, noisy_b, True)
    assert close.diff == 0 and close.verdict == "no significant difference" and close.test == "paired-t"


def test_paired_difference_one_sample_a_task_is_mcnemar() -> None:
    a = {t: [1.0] for t in range(12)}
    b = {t: [0.0] if t < 10 else [1.0] for t in range(12)}
    b[11] = [1.0]
    a[0] = [0.0]
    b[0] = [1.0]  # one task fixed, nine broken
    d = paired_difference("m", "unit-test", a, b, True)
    assert d.test == "mcnemar-midp" and d.p_value == pytest.approx(mcnemar_midp(9, 1))
    assert d.verdict == "worse"


def test_power_formula() -> None:
    z = 1.959964 + 0.841621
    assert tasks_needed(0.25, 0.10) == math.ceil(2 * 0.25 * z * z / 0.01) == 393
    assert tasks_needed(0.0, 0.10) is None
    assert task_variance([[1.0, 1.0], [0.0, 0.0], [1.0, 0.0]]) == pytest.approx(0.25)


def test_docs_name_every_method_and_the_power_formula() -> None:
    from pathlib import Path
    from typing import get_args

    from benchwright.results.stats import POWER_FORMULA, CiMethod, TestName

    text = (Path(__file__).parents[2] / "docs" / "statistics.md").read_text()
    for name in [*get_args(CiMethod), *get_args(TestName)]:
        if name != "none":
            assert name in text, name
    assert "n = 2 σ² (z(1 - " in text and "z(1 - alpha/2)" in POWER_FORMULA
    for ref in ("arXiv:2411.00640", "Wilson (1927)", "McNemar (1947)", "Tibshirani (1993)"):
        assert ref in text, ref
    assert "docs/statistics.md" in (Path(__file__).parents[2] / "README.md").read_text()
