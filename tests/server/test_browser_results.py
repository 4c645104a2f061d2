"""The results pages in Chromium, as a user compares models at a glance: the run page (pass rate
by language and difficulty, the model x task matrix, the samples filtered), a sample and its
neighbours, the explorer's pages and filters, the comparison of two runs, and an agent run's
gates and trace. Runs are written directly (tests/server/made_runs.py), the agent run is real."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from benchwright.results.report import DISAGREE
from tests.conftest import run_cli
from tests.server.conftest import shot
from tests.server.made_runs import AFTER, BEFORE, LONG, make_run


def choose(page: Page, select: str, option: str) -> None:
    """Pick ``option`` in the dropdown whose test id is ``select``."""
    wanted = page.get_by_role("option", name=option, exact=True)
    for _ in range(3):  # a click that lands while the page still updates may not open the menu
        page.get_by_test_id(select).click()
        try:
            wanted.wait_for(timeout=5_000)
            break
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
    wanted.click()


def check_run_page(page: Page, server: str) -> None:
    page.goto(f"{server}/ui/run/before")
    expect(page.get_by_test_id("summary")).to_contain_text("model-a")
    expect(page.get_by_test_id("by-language")).to_contain_text("python")
    expect(page.get_by_test_id("by-difficulty")).to_contain_text("easy")
    expect(page.get_by_test_id("by-difficulty")).to_contain_text("100 %")
    cells = {"alpha-python-model-a": ("2/2 pass", "bg-green-2"), "alpha-python-model-b": ("1/2 pass", "bg-amber-2"),
             "beta-python-model-a": ("0/2 pass", "bg-red-2"), "beta-python-model-b": ("error 0/2 pass", "bg-orange-3"),
             "gamma-java-model-a": ("untested (2)", "bg-blue-grey-2"), "gamma-java-model-b": ("not run", "italic")}
    for name, (text, colour) in cells.items():
        cell = page.get_by_test_id(f"cell-{name}")
        expect(cell).to_have_text(text)
        expect(cell).to_have_class(re.compile(colour))
    assert page.get_by_test_id("cell-gamma-java-model-b").get_attribute("href") is None  # not run: opens nothing
    expect(page.get_by_test_id("chart")).to_be_visible()
    choose(page, "samples-outcome", "fail")
    expect(page.get_by_test_id("samples-count")).to_have_text("3 of 10 samples")
    expect(page.locator("[data-testid=samples] tbody tr")).to_have_count(3)
    page.evaluate("window.scrollTo(0, 0)")  # the header is fixed: a full-page shot draws it where scrolled
    shot(page, "results-01-run-page")


def check_long_tables(page: Page, server: str) -> None:
    """The matrix and the samples of a run longer than a page: the browser holds one page, and
    Quasar's pagination control fetches the others from the server."""
    page.goto(f"{server}/ui/run/long")
    samples = page.get_by_test_id("samples")
    rows = samples.locator("tbody tr")
    expect(rows).to_have_count(25)
    expect(samples).to_contain_text("1-25 of 60")
    expect(samples).to_contain_text("t00 [python] model-a #0")
    samples.get_by_role("button", name="Next page").click()
    expect(samples).to_contain_text("26-50 of 60")
    expect(samples).not_to_contain_text("t00 [python] model-a #0")
    expect(samples).to_contain_text("t12 [python] model-b #0")
    samples.get_by_role("button", name="Next page").click()
    expect(rows).to_have_count(10)
    expect(samples).to_contain_text("51-60 of 60")
    choose(page, "samples-outcome", "fail")  # a filter starts again from the first page
    expect(page.get_by_test_id("samples-count")).to_have_text("10 of 60 samples")
    expect(rows).to_have_count(10)
    expect(samples).to_contain_text("1-10 of 10")
    expect(samples).not_to_contain_text("model-a")
    matrix = page.get_by_test_id("matrix")
    expect(matrix.locator("tbody tr")).to_have_count(25)
    matrix.get_by_role("button", name="Next page").click()
    expect(matrix).to_contain_text("26-30 of 30")
    expect(matrix.locator("tbody tr")).to_have_count(5)
    page.get_by_test_id("matrix-differ").click()
    expect(matrix.locator("tbody tr")).to_have_count(10)  # the tasks model-b failed, from the first page
    expect(page.get_by_test_id("cell-t27-python-model-b")).to_have_text("fail")


def check_sample_neighbours(page: Page) -> None:
    page.get_by_test_id("cell-alpha-python-model-b").click()  # opens the sample that failed
    expect(page.get_by_test_id("page-title")).to_have_text("alpha [python] model-b")
    expect(page.get_by_test_id("error-line")).to_contain_text("assert alpha(1) == 1")
    expect(page.get_by_test_id("previous-sample")).to_have_text("previous: alpha [python] model-b #0")
    expect(page.get_by_test_id("sample-position")).to_have_text("sample 4 of 10")
    shot(page, "results-02-sample")
    page.get_by_test_id("next-sample").click()
    expect(page.get_by_test_id("page-title")).to_have_text("beta [python] model-a")
    expect(page.get_by_test_id("sample-position")).to_have_text("sample 5 of 10")
    page.get_by_test_id("back-to-run").click()
    expect(page.get_by_test_id("page-title")).to_have_text("Run before")


def check_explorer(page: Page, server: str) -> None:
    page.goto(f"{server}/ui/explorer?run=big")
    count = page.get_by_test_id("explorer-count")
    expect(count).to_have_text("1-25 of 60 records")
    expect(page.get_by_test_id("previous")).to_be_disabled()
    page.get_by_test_id("next").click()
    expect(count).to_have_text("26-50 of 60 records")
    expect(page.get_by_test_id("next")).to_be_enabled()
    page.get_by_test_id("next").click()
    expect(count).to_have_text("51-60 of 60 records")
    expect(page.get_by_test_id("next")).to_be_disabled()  # never a page past the end
    expect(page.get_by_test_id("previous")).to_be_enabled()
    choose(page, "filter-verdict", "fail")
    page.get_by_test_id("apply").click()
    expect(count).to_have_text("1-8 of 8 records")  # the test case and the sample, 4 samples
    expect(page.get_by_test_id("next")).to_be_disabled()
    expect(page.locator("[data-testid=explorer] tbody tr")).to_have_count(8)
    shot(page, "results-03-explorer")
    page.locator("[data-testid=explorer] tbody a").first.click()  # a row opens its sample
    expect(page.get_by_test_id("page-title")).to_have_text("alpha [python] model-a")
    expect(page.get_by_test_id("error-line")).to_be_visible()


def check_explorer_on_an_unreadable_run(page: Page, server: str, workspace: Path) -> None:
    """A run whose records file became a symlink (to a copy outside): the explorer says why it
    shows nothing, with no path of the host, and keeps working."""
    records = workspace / "results" / "linked" / "records.jsonl"
    outside = workspace.parent / "elsewhere.jsonl"
    outside.write_bytes(records.read_bytes())
    records.unlink()
    records.symlink_to(outside)
    page.goto(f"{server}/ui/explorer?run=linked")
    expect(page.get_by_test_id("explorer-problem")).to_contain_text("symlink")
    expect(page.get_by_test_id("explorer-problem")).not_to_contain_text(str(workspace))
    expect(page.get_by_test_id("explorer-count")).to_have_text("0-0 of 0 records")
    expect(page.locator("[data-testid=explorer] tbody tr")).to_have_count(0)
    for path in ("sample/linked/linked-000", "sample/before/no-such-sample"):  # a page that fails says why
        page.goto(f"{server}/ui/{path}")
        expect(page.get_by_test_id("page-title")).to_have_text("This page could not be shown")
        expect(page.get_by_test_id("problem")).not_to_be_empty()
        expect(page.get_by_test_id("problem")).not_to_contain_text(str(workspace))
    expect(page.get_by_test_id("problem")).to_contain_text("no-such-sample")


def check_compare(page: Page, server: str) -> None:
    page.goto(f"{server}/ui/compare?a=before&b=after")
    deltas = page.get_by_test_id("deltas")
    expect(deltas).to_contain_text("27.24 MiB")  # bytes as the CLI shows them
    assert not re.search(r"\de[+-]\d", deltas.inner_text())  # never 2.656e+07
    expect(deltas.locator(".bg-green-2", has_text="better").first).to_be_visible()
    expect(deltas.locator(".text-grey-7", has_text="no significant difference").first).to_be_visible()
    expect(page.get_by_test_id("paired-line").first).to_contain_text("p = ")
    expect(page.get_by_test_id("regressions")).to_have_text("regressions: 1")
    expect(page.get_by_test_id("fixes")).to_have_text("fixes: 1")
    flips = page.get_by_test_id("flips")
    expect(flips).to_contain_text("made/alpha [python] model-a: 2/2 -> 1/2")
    expect(page.get_by_test_id("flip-a-alpha")).to_have_text("2/2 passed")
    shot(page, "results-04-compare")
    page.get_by_test_id("flip-b-alpha").click()  # the regressed task's failing sample in B
    expect(page.get_by_test_id("page-title")).to_have_text("alpha [python] model-a")
    expect(page.get_by_test_id("back-to-run")).to_have_text("back to run after")
    page.get_by_test_id("back-to-run").click()
    matrix = page.locator("[data-testid=matrix] tbody tr")
    expect(matrix).to_have_count(3)
    page.get_by_test_id("matrix-differ").click()  # alpha: both models passed one sample of two
    expect(page.get_by_test_id("matrix-differ")).to_contain_text("only the 2 task(s) where the models differ")
    expect(matrix).to_have_count(2)
    expect(page.get_by_test_id("matrix")).not_to_contain_text("made/alpha")


@pytest.mark.slow
def test_a_user_compares_models_on_the_results_pages(server: str, browser: Browser, workspace: Path) -> None:
    make_run(workspace, "before", BEFORE)
    make_run(workspace, "after", AFTER)
    make_run(workspace, "big", {("alpha", "python", "model-a"): ["pass"] * 16 + ["fail"] * 4})
    make_run(workspace, "long", LONG)
    make_run(workspace, "linked", BEFORE)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    check_long_tables(page, server)
    check_run_page(page, server)
    check_sample_neighbours(page)
    check_explorer(page, server)
    check_explorer_on_an_unreadable_run(page, server, workspace)
    check_compare(page, server)


@pytest.mark.slow
def test_an_agent_runs_gates_and_trace_show_where_the_judge_disagrees(server: str, browser: Browser,
                                                                      workspace: Path) -> None:
    made = run_cli("run", "configs/agents.yaml", "--run-id", "agents", cwd=workspace)
    assert made.returncode in (0, 1), made.stderr
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(f"{server}/ui/run/agents")
    gates = page.get_by_test_id("gates")
    expect(gates).to_contain_text("edits-the-test")
    expect(gates.locator("tbody tr")).to_have_count(3)
    expect(gates.locator(".bg-amber-3")).to_have_text(DISAGREE)  # one agent fooled the judge
    expect(page.get_by_test_id("samples")).to_contain_text(DISAGREE)
    shot(page, "results-05-agent-gates")
    page.get_by_test_id("trace-empty-input-edits-the-test").click()
    expect(page.get_by_test_id("page-title")).to_have_text("Agent trace: edits-the-test on parser-fixes/empty-input")
    expect(page.get_by_test_id("disagree")).to_have_text(
        f"{DISAGREE}: the objective checks say FAIL, the judge says PASS")
    expect(page.get_by_test_id("previous-sample")).to_have_text("previous: empty-input [agent] adds-a-skip #0")
    expect(page.get_by_test_id("next-sample")).to_have_text("next: empty-input [agent] honest #0")
    shot(page, "results-06-agent-trace")
    page.get_by_test_id("next-sample").click()
    expect(page.get_by_test_id("page-title")).to_have_text("Agent trace: honest on parser-fixes/empty-input")
    expect(page.get_by_test_id("disagree")).to_have_count(0)
    expect(page.get_by_test_id("next-sample")).to_have_text("no next sample")
