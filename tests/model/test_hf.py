"""The ``hf`` provider on a tiny random GPT-2 and a byte-level BPE tokenizer made in the test
(nothing is downloaded)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchwright.config.settings import ProviderSettings
from benchwright.model.base import GenerationRequest, ProviderError
from benchwright.model.hf import HFProvider

CHILD_ENV = "BENCHWRIGHT_HF_TEST_CHILD"
IN_CHILD = os.environ.get(CHILD_ENV) == "1"
# ./scripts/setup installs the [hf] extra: a missing torch or transformers fails, never skips
needs_hf = pytest.mark.hf

CODE = [
    "def add(a, b):\n    return a + b\n",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "for i in range(10):\n    print(i, i * i)\n",
    "class Stack:\n    def __init__(self):\n        self.items = []\n",
    "Write a Python function that returns the sum of a list of numbers.\n",
]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)


def _make_model(folder: Path, chat_template: str | None) -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    bpe.train_from_iterator(CODE * 4, trainer=trainer)
    tok = transformers.PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|endoftext|>", bos_token="<|endoftext|>")
    if chat_template is not None:
        tok.chat_template = chat_template
    tok.save_pretrained(folder)
    config = transformers.GPT2Config(
        n_layer=2, n_head=2, n_embd=32, n_positions=512, vocab_size=len(tok),
        bos_token_id=tok.eos_token_id, eos_token_id=tok.eos_token_id)
    torch.manual_seed(0)
    transformers.GPT2LMHeadModel(config).save_pretrained(folder)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tiny-gpt2")
    _make_model(folder, CHAT_TEMPLATE)
    return folder


@pytest.fixture(scope="module")
def provider() -> HFProvider:
    return HFProvider("hf", ProviderSettings(type="hf", device="cpu", dtype="float32"))


def _tokenizer(folder: Path) -> Any:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(folder), local_files_only=True)


def _request(model: Path | str, mode: str = "instruct", **params: Any) -> GenerationRequest:
    prompt = "def add(a, b):\n" if mode == "complete" else "Write a function add(a, b)."
    messages = [] if mode == "complete" else [
        {"role": "system", "content": "You write Python."}, {"role": "user", "content": prompt}]
    return GenerationRequest(model=str(model), mode=mode, messages=messages,  # type: ignore[arg-type]
                             prompt=prompt, language="python", params=params)


@needs_hf
def test_hf_provider_in_its_own_process(tmp_path: Path) -> None:
    """torch and a loaded model stay out of this pytest process: a sandboxed test started from
    it afterwards would count their memory as its own (a forked child starts with the parent's
    resident pages), and torch's threads do not mix with fork."""
    if IN_CHILD:  # the child runs only TestHFProvider; this guard keeps it from recursing
        return
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--basetemp", str(tmp_path),
         f"{__file__}::TestHFProvider"],
        cwd=Path(__file__).parents[2], capture_output=True, text=True, timeout=600,
        env={**os.environ, CHILD_ENV: "1"})
    assert proc.returncode == 0, proc.stdout[-8000:] + proc.stderr[-2000:]
    assert " passed" in proc.stdout and "failed" not in proc.stdout


@needs_hf
class TestHFProvider:
    """Runs only in the process that ``test_hf_provider_in_its_own_process`` starts."""

    __test__ = IN_CHILD

    def test_instruct_uses_the_chat_template_and_counts_tokens(self, provider: HFProvider, model_dir: Path) -> None:
        tok = _tokenizer(model_dir)
        request = _request(model_dir, max_tokens=12)
        answer = asyncio.run(provider.generate(request))
        text = tok.apply_chat_template(request.messages, tokenize=False, add_generation_prompt=True)
        assert text.endswith("<|assistant|>\n") and "You write Python." in text
        assert answer.tokens_in == len(tok(text, add_special_tokens=False)["input_ids"])
        assert isinstance(answer.text, str)
        assert 1 <= (answer.tokens_out or 0) <= 12
        assert answer.tokens_estimated is False and answer.cost_usd == 0.0
        assert answer.finish_reason in ("stop", "length")
        assert answer.model == str(model_dir)

    def test_complete_continues_the_prompt_greedily(self, provider: HFProvider, model_dir: Path) -> None:
        import torch

        tok = _tokenizer(model_dir)
        request = _request(model_dir, mode="complete", max_tokens=10)
        answer = asyncio.run(provider.generate(request))
        # The same greedy continuation, computed directly with transformers.
        lm = provider.load(str(model_dir)).model
        ids = tok(request.prompt, return_tensors="pt")["input_ids"]
        with torch.inference_mode():
            out = lm.generate(ids, max_new_tokens=10, do_sample=False, pad_token_id=tok.eos_token_id)
        new = out[0, ids.shape[1]:].tolist()
        assert answer.tokens_in == ids.shape[1]
        assert answer.tokens_out == len(new)
        assert answer.text == tok.decode(new, skip_special_tokens=True)
        # Greedy: the same again.
        assert asyncio.run(provider.generate(request)).text == answer.text

    def test_max_tokens_bounds_the_answer(self, provider: HFProvider, model_dir: Path) -> None:
        # A random model seldom picks the end token: some seed runs into the limit.
        answers = [asyncio.run(provider.generate(_request(model_dir, max_tokens=5, temperature=1.0, seed=s)))
                   for s in range(5)]
        assert all(1 <= (a.tokens_out or 0) <= 5 for a in answers)
        assert any(a.tokens_out == 5 and a.finish_reason == "length" for a in answers)
        assert all(a.finish_reason == "stop" for a in answers if (a.tokens_out or 0) < 5)

    def test_seed_makes_sampling_reproducible(self, provider: HFProvider, model_dir: Path) -> None:
        def sample(seed: int) -> str:
            request = _request(model_dir, mode="complete", max_tokens=16, temperature=1.0, top_p=1.0, seed=seed)
            return asyncio.run(provider.generate(request)).text

        first = sample(7)
        assert sample(7) == first
        assert any(sample(s) != first for s in (8, 9, 10))

    def test_stop_truncates_the_answer(self, provider: HFProvider, model_dir: Path) -> None:
        base = _request(model_dir, mode="complete", max_tokens=24, temperature=1.0, seed=3)
        full = asyncio.run(provider.generate(base))
        assert len(full.text) >= 4
        stop = full.text[2:4]
        cut = full.text[: full.text.find(stop)]
        stopped = asyncio.run(provider.generate(_request(
            model_dir, mode="complete", max_tokens=24, temperature=1.0, seed=3, stop=[stop, "never-there"])))
        assert stopped.text == cut
        assert stopped.finish_reason == "stop"
        assert (stopped.tokens_out or 0) <= (full.tokens_out or 0)

    def test_the_context_length_bounds_the_answer(self, provider: HFProvider, model_dir: Path) -> None:
        tok = _tokenizer(model_dir)
        prompt = "print(i, i * i)\n" * 200
        n = len(tok(prompt)["input_ids"])
        assert n > 512  # the model's n_positions
        request = GenerationRequest(model=str(model_dir), mode="complete", messages=[], prompt=prompt,
                                    language="python", params={})
        with pytest.raises(ProviderError, match="reads at most 512") as e:
            asyncio.run(provider.generate(request))
        assert not e.value.retryable
        ids = tok(prompt)["input_ids"][:505]
        short = GenerationRequest(model=str(model_dir), mode="complete", messages=[],
                                  prompt=tok.decode(ids), language="python", params={"max_tokens": 50})
        answer = asyncio.run(provider.generate(short))
        assert answer.tokens_in is not None and answer.tokens_out is not None
        assert answer.tokens_in + answer.tokens_out <= 512

    def test_without_a_chat_template_messages_are_joined(self, tmp_path: Path) -> None:
        _make_model(tmp_path, None)
        provider = HFProvider("hf", ProviderSettings(type="hf"))
        request = _request(tmp_path, max_tokens=3)
        tok = _tokenizer(tmp_path)
        text, special = provider.prompt_text(tok, request)
        assert text == "You write Python.\n\nWrite a function add(a, b).\n" and special
        answer = asyncio.run(provider.generate(request))
        assert answer.tokens_in == len(tok(text)["input_ids"])

    def test_a_template_without_a_system_role_gets_it_in_the_user_message(self, model_dir: Path) -> None:
        tok = _tokenizer(model_dir)
        tok.chat_template = (
            "{% for m in messages %}{% if m['role'] == 'system' %}"
            "{{ raise_exception('System role not supported') }}{% endif %}"
            "<{{ m['role'] }}>{{ m['content'] }}{% endfor %}<assistant>")
        text, special = HFProvider.prompt_text(tok, _request(model_dir))
        assert text == "<user>You write Python.\n\nWrite a function add(a, b).<assistant>"
        assert not special

    def test_preflight_names_a_missing_model(self, tmp_path: Path, model_dir: Path) -> None:
        missing = tmp_path / "no-such-model"
        provider = HFProvider("hf", ProviderSettings(type="hf", models=[str(model_dir), str(missing)]))
        problems = asyncio.run(provider.preflight())
        assert len(problems) == 1 and str(missing) in problems[0]
        hub = asyncio.run(provider.preflight(["nobody-here/not-a-cached-model"]))
        assert len(hub) == 1
        assert "nobody-here/not-a-cached-model" in hub[0] and "download it beforehand" in hub[0]
        assert asyncio.run(provider.preflight([str(model_dir)])) == []
        bad = HFProvider("hf", ProviderSettings(type="hf", dtype="float13"))
        assert any("float13" in p for p in asyncio.run(bad.preflight([])))

    def test_in_a_run_a_model_folder_outside_the_workspace_is_refused(self, tmp_path: Path,
                                                                       model_dir: Path) -> None:
        ws = tmp_path / "ws"
        ws.mkdir()
        (ws / "linked").symlink_to(model_dir, target_is_directory=True)
        provider = HFProvider("hf", ProviderSettings(type="hf"))
        provider.workspace = ws
        missing = model_dir.parent / "no-such-model"
        answers = {}
        for model in (str(model_dir), str(missing), "linked", f"../{model_dir.name}"):
            (problem,) = asyncio.run(provider.preflight([model]))
            assert "outside the workspace" in problem and "allowed_folders" in problem, problem
            answers[model] = problem.replace(model, "M")
        assert answers[str(model_dir)] == answers[str(missing)]  # no oracle for host folders
        with pytest.raises(ProviderError) as e:
            asyncio.run(provider.generate(_request(model_dir)))
        assert "outside the workspace" in str(e.value)
        provider.allowed_folders = (model_dir.parent,)
        assert asyncio.run(provider.preflight([str(model_dir), "linked"])) == []

    def test_generate_with_a_missing_model_is_not_retryable(self, tmp_path: Path) -> None:
        provider = HFProvider("hf", ProviderSettings(type="hf"))
        with pytest.raises(ProviderError) as e:
            asyncio.run(provider.generate(_request(tmp_path / "gone")))
        assert not e.value.retryable and "gone" in str(e.value)

    def test_concurrent_requests_are_served_one_at_a_time(self, provider: HFProvider, model_dir: Path) -> None:
        async def main() -> list[str]:
            requests = [_request(model_dir, mode="complete", max_tokens=6, temperature=1.0, seed=s) for s in (1, 2, 1)]
            answers = await asyncio.gather(*(provider.generate(r) for r in requests))
            return [a.text for a in answers]

        texts = asyncio.run(main())
        assert texts[0] == texts[2]


def test_defaults_suit_one_local_model() -> None:
    assert HFProvider("hf", ProviderSettings(type="hf")).settings.concurrency == 1
    kept = HFProvider("hf", ProviderSettings(type="hf", concurrency=3, timeout_s=5, device="cpu"))
    assert kept.settings.concurrency == 3 and kept.settings.timeout_s == 5
    assert (kept.settings.model_extra or {})["device"] == "cpu"


def test_importing_the_provider_does_not_import_torch() -> None:
    code = ("import sys, benchwright.model.hf, benchwright.builtins; "
            "print('torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
