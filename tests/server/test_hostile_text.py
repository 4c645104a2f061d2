"""No string reaches the page as markup: a workspace whose every name and text carries script
(tests/server/hostile.py: task source and file names, task, test case, model, agent and scorer
names, a run id, a model's answer, test output, an assertion message, an agent's change and
trajectory, the judge's verdict), run by the real CLI, then every page of the web UI opened in
Chromium. On each page no payload ran (``window.__bw_pwned`` unset) and no element was made from
one (no ``<img src=x>``, ``<b>``, ``<script>`` of the payloads), while the payloads are shown as
the literal text they are, so the test cannot pass by leaving the data out."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.conftest import run_cli
from tests.server import hostile as h
from tests.server.conftest import serving, shot

PROBE = """() => ({
  ran: window.__bw_pwned ?? null,
  made: [...document.querySelectorAll('img[src="x"], b, script, [y^="<img"]')]
    .filter(e => e.tagName !== 'SCRIPT' || e.textContent.trim().startsWith('window.__bw_pwned'))
    .map(e => e.outerHTML.slice(0, 160)),
})"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    ws = tmp_path_factory.mktemp("hostile") / "ws"
    made = run_cli("init", ws)
    assert made.returncode == 0, made.stderr
    h.build(ws)
    with serving(ws) as (base, _):
        yield f"{base}/ui"


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A page; when the test ends (passed or not), nothing on the last page it opened ran or
    was made from data (so a failure to find a text also says which payload ran)."""
    made = browser.new_page(viewport={"width": 1300, "height": 900})
    yield made
    inert(made, f"the last page of the test ({made.url})")


def inert(page: Page, where: str) -> None:
    """No payload ran on the page and none became an element."""
    found = page.wait_for_function(PROBE, timeout=30_000).json_value()  # bounded, unlike evaluate
    ran = found["ran"]
    assert ran is None, f"{where}: the payload in the {h.FIELDS.get(ran, ran)} ran"
    assert found["made"] == [], f"{where}: markup made from data: {found['made']}"


def shows(page: Page, *texts: str) -> None:
    """Each of ``texts`` is on the page as literal, visible text."""
    for text in texts:
        expect(page.get_by_text(text).first).to_be_visible()


def img(n: int) -> str:
    """The part of payload ``n`` that survives any quoting (no quote, no backslash)."""
    return f"<img src=x onerror=window.__bw_pwned={n}>"


def path(folder: str, name: str) -> str:
    return quote(f"{folder}/{name}", safe="")


@pytest.mark.slow
def test_the_file_list_and_the_editors_show_hostile_names_as_text(server: str, page: Page) -> None:
    page.goto(f"{server}/")
    shows(page, f"tasks/{h.SOURCE_FILE}", f"configs/{h.CONFIG_FILE}", f"scenarios/{h.SCENARIO_FILE}",
          f"{h.RUN} (completed)")
    inert(page, "files")
    shot(page, "hostile-01-files")
    page.get_by_test_id(f"file-configs/{h.CONFIG_FILE}").click()  # the link keeps '#&%?' in the path
    expect(page.get_by_test_id("page-title")).to_have_text(f"Edit configs/{h.CONFIG_FILE}")
    shows(page, img(14))  # the YAML, in the code editor
    inert(page, "YAML editor")
    page.goto(f"{server}/config?path=configs/form.yaml")
    expect(page.get_by_test_id(f"model-hostile/{h.MODEL}")).to_have_text(f"hostile/{h.MODEL}")
    shows(page, h.PARAMETER)
    inert(page, "config form")
    page.goto(f"{server}/scenario?path={path('scenarios', h.SCENARIO_FILE)}")
    expect(page.get_by_test_id("scorer-0-name")).to_have_value(h.SCORER)
    inert(page, "scenario form")
    shot(page, "hostile-02-scenario-form")


@pytest.mark.slow
def test_the_task_editor_and_its_golden_run_show_hostile_names_as_text(server: str, page: Page) -> None:
    page.goto(f"{server}/tasks?path={path('tasks', h.SOURCE_FILE)}")
    expect(page.get_by_test_id(f"task-{h.TASK}")).to_contain_text(h.TASK)
    expect(page.get_by_test_id("field-name")).to_have_value(h.TASK)
    expect(page.get_by_test_id("field-difficulty")).to_have_value(h.DIFFICULTY)
    expect(page.get_by_test_id("hidden-python-0-name")).to_have_value(h.CASE)
    expect(page.get_by_test_id(f"lang-{h.LANGUAGE}")).to_contain_text(h.LANGUAGE)
    shows(page, img(12))  # the golden solution, in the code editor
    inert(page, "task editor")
    page.get_by_test_id("run-golden-python").click()
    expect(page.get_by_test_id("golden-outcome")).to_have_text("golden solution: FAIL", timeout=120_000)
    expect(page.get_by_test_id(f"case-{h.CASE}")).to_have_text(f"FAIL  {h.CASE} (line 4): {h.MESSAGE}")
    inert(page, "golden run")
    shot(page, "hostile-03-task-editor")


@pytest.mark.slow
def test_launch_and_the_run_list_show_hostile_names_as_text(server: str, page: Page) -> None:
    page.goto(f"{server}/launch")
    page.get_by_test_id("config").click()
    shows(page, f"configs/{h.CONFIG_FILE}")
    inert(page, "launch")
    page.goto(f"{server}/runs")
    for run in (h.BEFORE, h.RUN):
        page.get_by_role("link", name=run, exact=True).click()  # the link quotes the run id
        expect(page.get_by_test_id("page-title")).to_have_text(f"Run {run}")
        inert(page, f"run {run}")
        page.go_back()
    inert(page, "runs")


@pytest.mark.slow
def test_a_run_page_and_its_sample_show_hostile_names_and_answers_as_text(server: str, page: Page) -> None:
    page.goto(f"{server}/run/{quote(h.RUN, safe='')}")
    expect(page.get_by_test_id("summary")).to_contain_text(h.LABEL)
    shows(page, f"hostile/{h.MODEL}", h.SOURCE, "2 of 2 samples done")
    link = page.get_by_test_id(f"sample-{h.TASK}-python-hostile/{h.MODEL}-0")
    expect(link).to_have_text(f"{h.TASK} [python] hostile/{h.MODEL} #0")
    expect(page.get_by_test_id("samples").locator("tr", has=link)).to_contain_text("fail")
    inert(page, "run page")
    shot(page, "hostile-04-run")
    link.click()
    expect(page.get_by_test_id("page-title")).to_have_text(f"{h.TASK} [python] hostile/{h.MODEL}")
    page.get_by_text("Raw answer").click()
    page.get_by_text("Prompt", exact=True).click()
    shows(page, h.PROMPT, h.hostile(15, "raw answer"), f"{img(15)} <b>bold</b>", h.CODE_COMMENT)
    failing = page.get_by_test_id(f"record-unit-test-{h.CASE}")
    expect(failing).to_contain_text(h.CASE)
    expect(failing.get_by_test_id("record-error")).to_have_text(h.MESSAGE)
    inert(page, "sample page")
    shot(page, "hostile-05-sample")


@pytest.mark.slow
def test_the_chart_tooltip_shows_model_names_as_text(server: str, page: Page) -> None:
    page.goto(f"{server}/run/{quote(h.BEFORE, safe='')}")
    chart = page.locator(".nicegui-echart")
    expect(chart).to_be_visible()
    chart.hover()  # the tooltip of the category under the pointer: every model's name and value
    expect(chart.get_by_text(h.LABEL)).to_be_visible()
    expect(chart.get_by_text(f"hostile/{h.MODEL}")).to_be_visible()
    inert(page, "chart tooltip")
    shot(page, "hostile-06-chart")


@pytest.mark.slow
def test_an_agent_trace_shows_hostile_names_output_and_judge_as_text(server: str, page: Page) -> None:
    page.goto(f"{server}/run/agent")
    page.get_by_test_id(f"sample-{h.AGENT_TASK}-agent-{h.AGENT}-0").click()
    expect(page.get_by_test_id("page-title")).to_have_text(
        f"Agent trace: {h.AGENT} on {h.SCENARIO}/{h.AGENT_TASK}")
    scorer = page.get_by_test_id(f"scorer-{h.SCORER}")
    expect(scorer).to_contain_text(h.SCORER)
    scorer.click()
    page.get_by_test_id("scorer-allowed_paths").click()
    page.get_by_text("Trajectory").click()
    shows(page, h.hostile(24, "scorer output"), f"{img(24)} <b>bold</b>",  # test output, a fence left
          f"outside src/*: {h.CHANGED_FILE}",  # a changed file's name, in a scorer's output
          f"+{img(26)} <b>bold</b>", img(25),  # the diff: the change and the file's name
          img(27))  # the trajectory (JSON)
    judge = page.get_by_test_id("judge-card")
    for text in (h.REASONING, h.CLAIM, h.EVIDENCE):
        expect(judge.get_by_text(text)).to_be_visible()
    inert(page, "agent trace")
    shot(page, "hostile-07-agent")


@pytest.mark.slow
def test_the_explorer_and_compare_show_hostile_names_as_text(server: str, page: Page) -> None:
    page.goto(f"{server}/explorer?run={quote(h.RUN, safe='')}")
    table = page.get_by_test_id("explorer")
    for text in (h.TASK, h.LABEL, h.CASE):
        expect(table.get_by_text(text).first).to_be_visible()
    shows(page, h.RUN)  # the chosen run, a chip
    inert(page, "explorer")
    page.goto(f"{server}/compare?a={quote(h.BEFORE, safe='')}&b={quote(h.RUN, safe='')}")
    expect(page.get_by_test_id("deltas")).to_contain_text(h.LABEL)
    expect(page.get_by_test_id("regressions")).to_have_text("regressions: 2")
    shows(page, f"{h.SOURCE}/{h.TASK} [python] {h.LABEL}: 1/1 -> 0/1")
    inert(page, "compare")
    shot(page, "hostile-08-compare")
