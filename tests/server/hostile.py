"""A workspace whose every name and text carries script: the task source, its file name, the
tasks, test cases, golden solutions, a model's answers and id, a coding agent's name, its change,
trajectory and response, a scenario's scorers and the judge's verdict. The runs are made by the
real CLI (the reference model, a replay model, a command agent), so the pages show what a real
run of hostile inputs leaves.

Every payload sets ``window.__bw_pwned`` to its own number when it runs, so a failure says which
field got through (:data:`FIELDS`)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli

FIELDS: dict[int, str] = {}
"""Payload number -> the field it was put in."""


def hostile(n: int, field: str, *, slash: bool = True) -> str:
    """One line that tries every way into the page, marked ``n``: out of a props string (a
    ``:``-prop is evaluated as JavaScript, ``innerHTML`` is set as markup), an HTML tag with an
    event handler, a script element, ECharts rich text and a bold tag. ``slash=False`` for a
    file or run name (no ``/``)."""
    FIELDS[n] = field
    tail = f"<script>window.__bw_pwned={n}</script> {{a|x}}<b>bold</b>" if slash else " {a|x}<b>bold #&%?"
    return (f'x{n}" :title="window.__bw_pwned={n}" innerHTML="<img src=x onerror=window.__bw_pwned={n}>" '
            f'y="<img src=x onerror=window.__bw_pwned={n}>{tail}')


def block(n: int, field: str) -> str:
    """Several lines that end a markdown code fence and go on as markup."""
    return f"{hostile(n, field)}\n```\n<img src=x onerror=window.__bw_pwned={n}> <b>bold</b>\n```\n"


def q(text: str) -> str:
    """``text`` as a YAML (JSON) double-quoted scalar."""
    return json.dumps(text)


SOURCE_FILE = hostile(1, "task source file name", slash=False) + ".yaml"
CONFIG_FILE = hostile(2, "config file name", slash=False) + ".yaml"
SCENARIO_FILE = hostile(3, "scenario file name", slash=False) + ".yaml"
AGENTS_FILE = hostile(4, "agents config file name", slash=False) + ".yaml"
SOURCE = hostile(5, "task source name")
TASK = hostile(6, "task name")
CASE = hostile(7, "test case name")
MESSAGE = hostile(8, "assertion message")
PROMPT = hostile(9, "prompt")
DIFFICULTY = hostile(10, "difficulty")
AREA = hostile(11, "area")
GOLDEN_COMMENT = hostile(12, "golden solution")
LABEL = hostile(13, "model label")
MODEL = hostile(14, "replay model id")
ANSWER = block(15, "raw answer")
CODE_COMMENT = hostile(16, "extracted code")
PARAMETER = hostile(17, "config parameter name")
RUN = hostile(18, "run id", slash=False)
BEFORE = "javascript:window.__bw_pwned=19"
"""The id of the run before :data:`RUN` (the links to a run start with it)."""
FIELDS[19] = "run id in a link"
SCENARIO = hostile(20, "scenario name")
AGENT_TASK = hostile(21, "agent task name")
AGENT = hostile(22, "agent name")
SCORER = hostile(23, "scorer name")
SCORER_OUTPUT = block(24, "scorer output")
CHANGED_FILE = hostile(25, "changed file name", slash=False)
CHANGED_TEXT = block(26, "changed file content")
STEP = hostile(27, "trajectory step")
RESPONSE = hostile(28, "agent response")
REASONING = hostile(29, "judge reasoning")
FAILURE_MODE = hostile(30, "judge failure mode")
CLAIM = hostile(31, "judge fact-check claim")
EVIDENCE = hostile(32, "judge fact-check evidence")
TAG = hostile(33, "task tag")
LANGUAGE = hostile(34, "task language")

GOLDEN = f"def double(x):\n    # {GOLDEN_COMMENT}\n    return 2 * x\n"
TASKS = f"""\
version: 1
name: {q(SOURCE)}
tasks:
  - name: {q(TASK)}
    difficulty: {q(DIFFICULTY)}
    area: {q(AREA)}
    tags: [{q(TAG)}]
    languages: [python, {q(LANGUAGE)}]
    task:
      common_prompt: {q(PROMPT)}
      languages_specific:
        {q(LANGUAGE)}:
          public_tests:
            - {{name: {q(CASE)}, code: "true"}}
        python:
          public_tests:
            - {{name: passes, code: "assert double(2) == 4"}}
          hidden_tests:
            - {{name: {q(CASE)}, code: {q(f"assert double(5) == EXPECTED, {MESSAGE!r}")}}}
    golden_solution:
      python: {q(GOLDEN)}
"""
CONFIG = f"""\
version: 1
task_sources: [{q("tasks/" + SOURCE_FILE)}]
criteria: [unit-test]
languages: [python]
llms:
  - {{id: reference, name: {q(LABEL)}}}
  - {q("hostile/" + MODEL)}
"""
FORM_CONFIG = CONFIG + f"parameters: [{{name: {q(PARAMETER)}, enabled: false}}]\n"
"""The config the form editor shows (its parameter is not one benchwright knows: not run)."""
MODEL_CODE = f"def double(x):\n    # {CODE_COMMENT}\n    return 2 * x\n"
MODEL_ANSWER = f"{ANSWER}\n```python\n{MODEL_CODE}```\n"

SCENARIO_TEXT = f"""\
version: 1
name: {q(SCENARIO)}
workspace:
  repo: hostile-repo
scorers:
  - {{name: {q(SCORER)}, type: command, command: "cat src/report.txt; exit 1"}}
  - {{type: allowed_paths, patterns: ["src/*"]}}
  - {{type: llm_judge, rubric: "Judge it."}}
tasks:
  - name: {q(AGENT_TASK)}
    prompt: {q(PROMPT)}
"""
AGENT_SCRIPT = f"""\
import json, os
from pathlib import Path
Path({CHANGED_FILE!r}).write_text({CHANGED_TEXT!r})
Path("src/report.txt").write_text({SCORER_OUTPUT!r})
Path("src/app.py").write_text("# " + {CHANGED_TEXT!r}.replace("\\n", "\\n# "))
with open(os.environ["BENCHWRIGHT_TRAJECTORY_FILE"], "w") as f:
    f.write(json.dumps({{"type": "tool_call", "tool": "shell", "input": {STEP!r}}}) + "\\n")
Path(os.environ["BENCHWRIGHT_RESPONSE_FILE"]).write_text({RESPONSE!r})
"""
AGENTS_CONFIG = f"""\
version: 1
scenarios: [{q("scenarios/" + SCENARIO_FILE)}]
agents:
  - name: {q(AGENT)}
    command: python3 "$BENCHWRIGHT_AGENT_DIR/hostile.py"
    files: [agents/hostile.py]
    network: false
    timeout_s: 120
llm-judge: hostile-judge/recorded
"""
JUDGE_ANSWER = (f"task_completion: 2\ninstruction_adherence: 3\nefficiency: 4\nverdict: FAIL\n"
                f"failure_mode: {q(FAILURE_MODE)}\nreasoning: {q(REASONING)}\n"
                f"fact_check:\n  - {{claim: {q(CLAIM)}, supported: false, evidence: {q(EVIDENCE)}}}\n")
PROVIDERS = ("providers:\n"
             "  hostile: {type: replay, path: models/hostile.jsonl}\n"
             "  hostile-judge: {type: replay, path: judge/hostile.jsonl}\n")


def _jsonl(path: Path, *records: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def build(ws: Path) -> None:
    """Write the hostile files into ``ws`` (made by ``benchwright init``), then make the runs:
    :data:`BEFORE` (the hidden test passes) and :data:`RUN` (it fails: a regression on the
    compare page) of the code config, and ``agent`` of the agents config."""
    (ws / "configs" / CONFIG_FILE).write_text(CONFIG)
    (ws / "configs" / "form.yaml").write_text(FORM_CONFIG)
    (ws / "configs" / AGENTS_FILE).write_text(AGENTS_CONFIG)
    (ws / "scenarios" / SCENARIO_FILE).write_text(SCENARIO_TEXT)
    repo = ws / "scenarios" / "hostile-repo"
    (repo / "src").mkdir(parents=True)
    (repo / "src" / "app.py").write_text("print('hello')\n")
    (ws / "agents" / "hostile.py").write_text(AGENT_SCRIPT)
    settings = ws / "benchwright.yaml"
    settings.write_text(settings.read_text().replace("providers:\n", PROVIDERS, 1))
    _jsonl(ws / "models" / "hostile.jsonl", {"task_source": SOURCE, "task": TASK, "language": "python",
                                             "sample": 0, "model": MODEL, "prompt": "", "raw": MODEL_ANSWER})
    _jsonl(ws / "judge" / "hostile.jsonl", {"task_source": SCENARIO, "task": f"{AGENT_TASK}/{AGENT}",
                                            "language": "agent", "sample": 0, "model": "recorded",
                                            "prompt": "", "raw": JUDGE_ANSWER})
    for config, run_id, expected in ((CONFIG_FILE, BEFORE, "10"), (CONFIG_FILE, RUN, "11"),
                                     (AGENTS_FILE, "agent", "11")):
        (ws / "tasks" / SOURCE_FILE).write_text(TASKS.replace("EXPECTED", expected))
        proc = run_cli("run", f"configs/{config}", "--run-id", run_id, cwd=ws)
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # 1: a threshold missed
