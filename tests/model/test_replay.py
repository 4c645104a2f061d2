"""The ``replay`` provider: answers from a recorded generations.jsonl."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from benchwright.config.settings import ProviderSettings
from benchwright.model.base import Answer, GenerationRequest, ProviderError
from benchwright.model.replay import ReplayProvider, resolve_path
from benchwright.registry import registry
from tests.conftest import read_jsonl, run_cli


def gen(task: str, model: str, raw: str | None, *, language: str = "python", sample: int = 0,
        prompt: str = "", source: str = "src", **extra: Any) -> dict[str, Any]:
    return {"run_id": "run-1", "execution_id": f"{task}-{model}-{sample}", "task_source": source,
            "task": task, "language": language, "model": model, "provider": model.split("/")[0],
            "sample": sample, "mode": "instruct", "messages": [], "prompt": prompt or f"Write {task}.",
            "raw": raw, "code": raw, "tokens_in": 10, "tokens_out": 5, "latency_ms": 100.0,
            "finish_reason": "stop", "cost_usd": 0.001, "cached": False, **extra}


def write_run(folder: Path, rows: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "run.yaml").write_text("run_id: run-1\n")
    path = folder / "generations.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def provider(path: str | Path | None, name: str = "old") -> ReplayProvider:
    settings = ProviderSettings.model_validate({"type": "replay", **({"path": str(path)} if path else {})})
    p = registry.create("provider", "replay", name=name, settings=settings)
    assert isinstance(p, ReplayProvider)
    return p


def req(task: str, model: str, *, language: str = "python", sample: int = 0, prompt: str | None = None,
        source: str = "src") -> GenerationRequest:
    return GenerationRequest(model=model, mode="instruct", messages=[], language=language,
                             prompt=f"Write {task}." if prompt is None else prompt, sample=sample,
                             task=f"{source}/{task}" if task else "")


def answer(p: ReplayProvider, r: GenerationRequest) -> Answer:
    return asyncio.run(p.generate(r))


ROWS = [
    gen("add", "gpt-4o", "A0 gpt-4o"),
    gen("add", "gpt-4o", "A1 gpt-4o", sample=1),
    gen("add", "gpt-4o", "A0 java gpt-4o", language="java", prompt="Write add in Java."),
    gen("add", "openai/gpt-4o-mini", "A0 mini"),
    gen("sub", "gpt-4o", None, error="HTTP 500"),           # no answer: ignored
    gen("mbpp/2", "gpt-4o", "first try", source="mbpp"),   # a task name with a slash
    gen("mbpp/2", "gpt-4o", "resumed", source="mbpp"),     # recorded twice: the last wins
    gen("only-mini", "openai/gpt-4o-mini", "mini only", tokens_estimated=True),
]


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    return write_run(tmp_path / "ws" / "results" / "run-1", ROWS)


def test_matches_task_language_sample_and_model(recorded: Path) -> None:
    p = provider(recorded)
    assert asyncio.run(p.preflight()) == []
    a = answer(p, req("add", "gpt-4o"))
    assert a == Answer(text="A0 gpt-4o", tokens_in=10, tokens_out=5, tokens_estimated=False,
                       finish_reason="stop", cost_usd=0.001, model="gpt-4o")
    assert answer(p, req("add", "gpt-4o", sample=1)).text == "A1 gpt-4o"
    assert answer(p, req("add", "gpt-4o", language="java", prompt="Write add in Java.")).text == "A0 java gpt-4o"
    assert answer(p, req("mbpp/2", "gpt-4o", source="mbpp")).text == "resumed"
    # the full label, or the part after the provider when unambiguous
    assert answer(p, req("add", "openai/gpt-4o-mini")).text == "A0 mini"
    mini = answer(p, req("only-mini", "gpt-4o-mini"))
    assert mini.text == "mini only" and mini.model == "openai/gpt-4o-mini" and mini.tokens_estimated
    assert p.cacheable is False


def test_falls_back_to_the_prompt_text(recorded: Path) -> None:
    p = provider(recorded)
    # renamed task source, same prompt
    assert answer(p, req("add", "gpt-4o", source="renamed")).text == "A0 gpt-4o"
    # no task name at all
    r = GenerationRequest(model="gpt-4o", mode="instruct", messages=[], prompt="Write add.",
                          language="python", sample=1)
    assert answer(p, r).text == "A1 gpt-4o"


def test_any_model_when_only_one_answered(recorded: Path) -> None:
    p = provider(recorded)
    for wanted in ("", "*"):
        assert answer(p, req("only-mini", wanted)).text == "mini only"
        assert answer(p, req("mbpp/2", wanted, source="mbpp")).text == "resumed"
    with pytest.raises(ProviderError) as info:
        answer(p, req("add", "*"))
    assert info.value.retryable is False
    assert "gpt-4o" in str(info.value) and "openai/gpt-4o-mini" in str(info.value)


@pytest.mark.parametrize("request_", [
    req("sub", "gpt-4o"),                       # recorded with an error only
    req("mul", "gpt-4o", prompt="Write mul."),  # never recorded
    req("add", "claude"),                       # another model
    req("add", "gpt-4o", sample=2),             # another sample
    req("add", "gpt-4o", language="rust"),      # another language
])
def test_missing_answer_is_not_retryable(recorded: Path, request_: GenerationRequest) -> None:
    p = provider(recorded)
    with pytest.raises(ProviderError) as info:
        answer(p, request_)
    assert info.value.retryable is False
    assert request_.task in str(info.value)


def test_path_forms(tmp_path: Path, recorded: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    (ws / "benchwright.yaml").write_text("version: 1\n")
    assert resolve_path(recorded) == recorded                      # the file
    assert resolve_path(recorded.parent) == recorded               # the run folder
    assert resolve_path("results/run-1", cwd=ws) == recorded       # relative to the cwd
    assert resolve_path("run-1", cwd=ws) == recorded               # a run id
    sub = ws / "configs"
    sub.mkdir()
    assert resolve_path("run-1", cwd=sub) == recorded              # from inside the workspace
    monkeypatch.chdir(ws)
    p = provider("run-1")
    assert asyncio.run(p.preflight()) == []
    assert p.path == recorded
    assert answer(p, req("add", "gpt-4o")).text == "A0 gpt-4o"


def test_preflight_names_a_missing_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    p = provider("results/nope")
    problems = asyncio.run(p.preflight())
    assert len(problems) == 1
    assert str(tmp_path / "results" / "nope" / "generations.jsonl") in problems[0]
    assert "results/nope" in problems[0]
    with pytest.raises(ProviderError) as info:
        answer(p, req("add", "gpt-4o"))
    assert info.value.retryable is False and "nope" in str(info.value)

    missing_file = provider(tmp_path / "gone.jsonl")
    assert str(tmp_path / "gone.jsonl") in asyncio.run(missing_file.preflight())[0]
    assert "path" in asyncio.run(provider(None).preflight())[0]


def test_preflight_names_a_malformed_line(tmp_path: Path) -> None:
    path = tmp_path / "generations.jsonl"
    path.write_text(json.dumps(gen("add", "m", "x")) + "\n{broken\n" + json.dumps(gen("b", "m", "y")) + "\n")
    problems = asyncio.run(provider(path).preflight())
    assert len(problems) == 1 and f"{path}:2" in problems[0]
    # a partial last line (a run killed mid-write) is skipped
    path.write_text(json.dumps(gen("add", "m", "x")) + "\n" + '{"run_id": "r", "tas')
    p = provider(path)
    assert asyncio.run(p.preflight()) == []
    assert answer(p, req("add", "m")).text == "x"


@pytest.mark.parametrize(("line", "reason"), [
    (b'{"task": "caf\xe9"}\n', "not UTF-8"),
    (b"[1, 2]\n", "expected a generation object"),
    (b'{"task_source": "s", "task": 3, "language": "python", "model": "m"}\n', "no task"),
])
def test_preflight_names_a_line_that_is_not_utf8_or_not_a_generation(tmp_path: Path, line: bytes,
                                                                      reason: str) -> None:
    path = tmp_path / "generations.jsonl"
    path.write_bytes(json.dumps(gen("add", "m", "x")).encode() + b"\n" + line
                     + json.dumps(gen("b", "m", "y")).encode() + b"\n")
    problems = asyncio.run(provider(path).preflight())
    assert len(problems) == 1 and f"{path}:2: " in problems[0] and reason in problems[0], problems
    with pytest.raises(ProviderError) as info:  # a run that skipped preflight still fails cleanly
        answer(provider(path), req("add", "m"))
    assert f"{path}:2" in str(info.value) and info.value.retryable is False


def test_rescore_a_real_run_through_the_cli(tmp_path: Path) -> None:
    """Run the reference model, then re-score its generations with replay: same answers."""
    ws = tmp_path / "ws"
    assert run_cli("init", ws).returncode == 0
    config = ws / "configs" / "small.yaml"
    config.write_text("version: 1\ntask_sources: [tasks/basics.yaml]\nlanguages: [python]\n"
                      "criteria: [unit-test]\nllms: [reference]\nsamples: 2\n")
    proc = run_cli("run", config, "--run-id", "first", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    first = read_jsonl(ws / "results" / "first" / "generations.jsonl")
    assert first and {g["model"] for g in first} == {"reference"}

    (ws / "benchwright.yaml").write_text("version: 1\nproviders:\n  old: {type: replay, path: first}\n")
    config.write_text(config.read_text().replace("llms: [reference]", "llms: [old/reference]"))
    proc = run_cli("run", config, "--run-id", "second", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    second = read_jsonl(ws / "results" / "second" / "generations.jsonl")

    def by_sample(gens: list[dict[str, Any]]) -> dict[tuple[str, str, str, int], str]:
        return {(g["task_source"], g["task"], g["language"], g["sample"]): g["raw"] for g in gens}

    assert all(g["error"] is None for g in second), second
    assert by_sample(second) == by_sample(first)
    outcomes = {(r["task"], r["sample"], r["outcome"]) for r in read_jsonl(ws / "results" / "second" / "records.jsonl")}
    assert outcomes == {(r["task"], r["sample"], r["outcome"])
                        for r in read_jsonl(ws / "results" / "first" / "records.jsonl")}

    # a replay that lacks samples the config asks for stops before any work, saying what lacks
    config.write_text(config.read_text().replace("samples: 2", "samples: 3"))
    proc = run_cli("run", config, "--run-id", "more", cwd=ws)
    assert proc.returncode == 2, proc.stderr
    assert "have no answer it can give" in proc.stderr and "sample 2" in proc.stderr, proc.stderr
    assert not (ws / "results" / "more" / "generations.jsonl").exists()
    # narrowed to what is there, it runs
    proc = run_cli("run", config, "--run-id", "narrowed", "--samples", "2", cwd=ws)
    assert proc.returncode == 0, proc.stderr
    config.write_text(config.read_text().replace("samples: 3", "samples: 2"))

    # a replay of a missing run stops before any work, naming the path
    (ws / "benchwright.yaml").write_text("version: 1\nproviders:\n  old: {type: replay, path: results/nope}\n")
    proc = run_cli("run", config, "--run-id", "third", cwd=ws)
    assert proc.returncode == 2, proc.stderr
    assert "results/nope" in proc.stderr


def test_in_a_run_the_recordings_stay_inside_the_workspace(tmp_path: Path) -> None:
    """``path`` in benchwright.yaml is confined like every path a file names, once a run has
    given the provider its workspace."""
    from benchwright.workspace.confine import PathRefused

    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "benchwright.yaml").write_text("version: 1\n")
    outside = write_run(tmp_path / "other" / "results" / "run-1", ROWS)
    for value in (outside, outside.parent, "../other/results/run-1", tmp_path / "other" / "gone.jsonl"):
        p = provider(value)
        p.workspace = ws
        with pytest.raises(PathRefused) as info:
            asyncio.run(p.preflight())
        assert info.value.problem.file == str(ws / "benchwright.yaml")
        assert info.value.problem.path == "providers.old.path"
        assert "A0 gpt-4o" not in info.value.problem.render()
        with pytest.raises(ProviderError) as failed:  # and it never answers from there
            answer(p, req("add", "gpt-4o"))
        assert not failed.value.retryable
    opened = provider(outside)
    opened.workspace, opened.allowed_folders = ws, (tmp_path / "other",)
    assert asyncio.run(opened.preflight()) == []
    write_run(ws / "results" / "run-1", ROWS)
    inside = provider("run-1")
    inside.workspace = ws
    assert asyncio.run(inside.preflight()) == [] and answer(inside, req("add", "gpt-4o")).text == "A0 gpt-4o"
