"""The ``hf`` provider: a local Hugging Face ``transformers`` causal language model.

Configured in ``benchwright.yaml``::

    providers:
      hf: {type: hf, device: cpu, dtype: float32, concurrency: 1}
    # then, in an execution config:  models: [hf//models/tiny-coder, hf/Qwen/Qwen2.5-Coder-0.5B]

The model after ``hf/`` is a folder (absolute, or relative to the workspace root) holding a model
saved with ``save_pretrained``, or a Hugging Face hub id that is *already* in the local cache:
nothing is ever downloaded (``local_files_only``), so fetch the model beforehand (``hf download
ORG/NAME`` on a machine that can) or point at its folder. In a run the folder is confined like
every path a file names: inside the workspace or a folder listed under ``allowed_folders`` in
``benchwright.yaml`` (see :mod:`benchwright.workspace.confine`). A provider used on its own
(no workspace set) also tries the current directory and reads any folder.

Unless set, ``concurrency`` is 1 and ``timeout_s`` 600 for this provider type. Settings
extras: ``device`` (``cpu``, ``cuda``, ``cuda:1``, ``mps``; default ``cpu``), ``dtype``
(``float32``, ``bfloat16``, ``float16`` or ``auto``; default ``float32``), ``trust_remote_code``
(default false) and ``models`` (ids that ``preflight`` checks when it is not told which).

Request params: ``temperature`` (0 or absent: greedy), ``top_p``, ``max_tokens`` (new tokens,
default 512), ``stop`` (a string or a list: the answer ends before the first one), ``seed``
(``torch.manual_seed`` before each request, so sampling is reproducible).

``torch`` and ``transformers`` are imported on first use (``pip install 'benchwright[hf]'``).
A model is loaded once per provider, in a worker thread; requests to one model run one at a
time (a CPU is busy with one), in a worker thread, so the event loop keeps going.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchwright.config.settings import ProviderSettings
from benchwright.errors import MissingDependency
from benchwright.model.base import Answer, GenerationRequest, Provider, ProviderError
from benchwright.workspace.confine import FIX

DEFAULT_MAX_TOKENS = 512
INSTALL_HINT = "pip install 'benchwright[hf]'"
DEFAULT_SETTINGS: dict[str, Any] = {"concurrency": 1, "timeout_s": 600.0}
"""ProviderSettings defaults of this provider type (where a setting is not given)."""
DTYPES = ("float32", "float16", "bfloat16", "float64", "auto")


def _import() -> tuple[Any, Any]:
    """``(torch, transformers)``, imported now.

    Raises:
        MissingDependency: either is not installed.
    """
    try:
        import torch
        import transformers
    except ImportError as e:
        raise MissingDependency(
            f"the hf provider needs torch and transformers ({e.name or e} is not installed): "
            f"{INSTALL_HINT}") from None
    return torch, transformers


@dataclass
class _Loaded:
    model: Any
    tokenizer: Any
    device: Any


@dataclass(frozen=True)
class _Output:
    text: str
    tokens_in: int
    tokens_out: int
    finish_reason: str


def _stops(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value else []
    return [str(s) for s in value if s]


def _truncate(text: str, stops: Sequence[str]) -> tuple[str, bool]:
    """``text`` up to the earliest stop string, and whether one was found."""
    cut = min((i for i in (text.find(s) for s in stops) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


class HFProvider(Provider):
    """A local Hugging Face transformers causal LM: hf/<folder> or hf/<cached hub id>."""

    cacheable = True
    shared_service = False

    def __init__(self, name: str, settings: ProviderSettings) -> None:
        # One CPU runs one generation at a time: unless the settings say otherwise, send one
        # request at a time (so none waits here on the clock of its time limit), and allow for
        # the first request loading the model and for slow generation.
        defaults = {k: v for k, v in DEFAULT_SETTINGS.items() if k not in settings.model_fields_set}
        super().__init__(name, settings.model_copy(update=defaults) if defaults else settings)
        extra = dict(settings.model_extra or {})
        self.device = str(extra.get("device") or "cpu")
        self.dtype = str(extra.get("dtype") or "float32")
        self.trust_remote_code = bool(extra.get("trust_remote_code", False))
        models = extra.get("models") or []
        self.models: list[str] = [models] if isinstance(models, str) else [str(m) for m in models]
        self._loaded: dict[str, _Loaded] = {}
        self._load_lock = threading.Lock()
        self._run_locks: dict[str, threading.Lock] = {}
        """Held by the thread that runs a model: one generation at a time per model, even when
        a cancelled request's thread is still finishing."""
        self._queue_locks: dict[tuple[int, str], asyncio.Lock] = {}
        """Per event loop and model: requests wait here, not in a worker thread."""

    # -- finding models -------------------------------------------------------------------

    def _candidates(self, model: str) -> list[Path]:
        """Where the folder ``model`` names may be: itself when absolute, else under the
        workspace root of a run (on its own: under the current directory, then the workspace
        root)."""
        from benchwright.workspace.workspace import find_root

        p = Path(model).expanduser()
        if p.is_absolute():
            return [p]
        return [self.workspace / p] if self.workspace is not None else [Path.cwd() / p, find_root() / p]

    def _outside(self, model: str) -> bool:
        """Whether, in a run, every place ``model`` may name leads outside the workspace and its
        allowed folders (then nothing there is looked at)."""
        confinement = self.confinement()
        return confinement is not None and not any(confinement.contains(c) for c in self._candidates(model))

    def local_path(self, model: str) -> Path | None:
        """The folder ``model`` names, if one exists where it may be looked for (in a run: only
        inside the workspace and its allowed folders)."""
        confinement = self.confinement()
        return next((c for c in self._candidates(model)
                     if (confinement is None or confinement.contains(c)) and c.is_dir()), None)

    def _source(self, model: str) -> str:
        path = self.local_path(model)
        return str(path) if path is not None else model

    def check_model(self, model: str) -> str | None:
        """A problem if ``model`` cannot be loaded without downloading, else None. Reads only its
        configuration (the weights are loaded on first use).

        Raises:
            MissingDependency: torch or transformers is not installed.
        """
        _torch, transformers = _import()
        if not model:
            return ("no model given: write hf/<folder> or hf/<org>/<name> "
                    "(a hub id already in the local Hugging Face cache)")
        path = self.local_path(model)
        if path is not None:
            if not (path / "config.json").is_file():
                return f"model folder {path} has no config.json (save the model with save_pretrained)"
            source = str(path)
        else:
            looks_like_path = model.startswith(("/", ".", "~")) or model.count("/") > 1 or "\\" in model
            if self._outside(model):  # a path, or a name that a link in the workspace leads out
                return f"model {model!r}: the folder leads outside the workspace ({FIX})"
            if looks_like_path:
                return (f"model {model!r}: no such folder (relative paths are read from the workspace "
                        "root; the hf provider never downloads a model)")
            if not _in_hub_cache(model):
                return (f"model {model!r} is not available locally: it is neither a folder nor in "
                        f"the local Hugging Face cache ({_hub_cache()}); the hf provider never "
                        f"downloads, so download it beforehand (e.g. 'hf download {model}') or "
                        "write the path of its folder")
            source = model
        try:
            transformers.AutoConfig.from_pretrained(
                source, local_files_only=True, trust_remote_code=self.trust_remote_code)
        except Exception as e:
            where = f"model folder {path}" if path is not None else f"cached model {model!r}"
            return f"{where} cannot be read: {_first_line(e)}"
        return None

    async def preflight(self, models: Sequence[str] = ()) -> list[str]:
        """Problems with the installation, the settings and ``models`` (default: the settings'
        ``models`` extra)."""
        problems = await super().preflight(models)
        if self.dtype not in DTYPES:
            problems.append(f"dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        wanted = list(dict.fromkeys(models or self.models))
        try:
            await asyncio.to_thread(_import)
        except MissingDependency as e:
            return [*problems, str(e)]
        found = await asyncio.to_thread(lambda: [self.check_model(m) for m in wanted])
        return problems + [p for p in found if p]

    # -- loading --------------------------------------------------------------------------

    def _torch_dtype(self, torch: Any) -> Any:
        if self.dtype == "auto":
            return "auto"
        dtype = getattr(torch, self.dtype, None) if self.dtype in DTYPES else None
        if not isinstance(dtype, torch.dtype):
            raise ProviderError(f"dtype {self.dtype!r} is not one of {', '.join(DTYPES)}", retryable=False)
        return dtype

    def load(self, model: str) -> _Loaded:
        """The model and its tokenizer, loaded on first call (blocking: call it in a thread).

        Raises:
            MissingDependency: torch or transformers is not installed.
            ProviderError: the model cannot be loaded (not retryable).
        """
        with self._load_lock:
            loaded = self._loaded.get(model)
            if loaded is not None:
                return loaded
            torch, transformers = _import()
            problem = self.check_model(model)
            if problem:
                raise ProviderError(problem, retryable=False)
            source = self._source(model)
            transformers.utils.logging.disable_progress_bar()
            dtype_key = "dtype" if _version(transformers.__version__) >= (4, 56) else "torch_dtype"
            try:
                tokenizer = transformers.AutoTokenizer.from_pretrained(
                    source, local_files_only=True, trust_remote_code=self.trust_remote_code)
                lm = transformers.AutoModelForCausalLM.from_pretrained(
                    source, local_files_only=True, trust_remote_code=self.trust_remote_code,
                    **{dtype_key: self._torch_dtype(torch)})
                device = torch.device(self.device)
                lm.to(device)
                lm.eval()
            except ProviderError:
                raise
            except Exception as e:
                raise ProviderError(f"cannot load model {model!r} from {source}: {_first_line(e)}",
                                    retryable=False) from e
            loaded = _Loaded(lm, tokenizer, device)
            self._loaded[model] = loaded
            self._run_locks[model] = threading.Lock()
            return loaded

    # -- generating -----------------------------------------------------------------------

    def _queue_lock(self, model: str) -> asyncio.Lock:
        key = (id(asyncio.get_running_loop()), model)
        lock = self._queue_locks.get(key)
        if lock is None:
            # One asyncio.Run per preflight/run: drop locks of loops that are gone.
            self._queue_locks = {k: v for k, v in self._queue_locks.items() if k[1] != model}
            lock = self._queue_locks[key] = asyncio.Lock()
        return lock

    async def generate(self, request: GenerationRequest) -> Answer:
        cancel = threading.Event()
        async with self._queue_lock(request.model):
            try:
                loaded = await asyncio.to_thread(self.load, request.model)
                out = await asyncio.to_thread(self._generate, loaded, request, cancel)
            except asyncio.CancelledError:
                cancel.set()
                raise
        return Answer(text=out.text, tokens_in=out.tokens_in, tokens_out=out.tokens_out,
                      tokens_estimated=False, finish_reason=out.finish_reason, cost_usd=0.0,
                      model=request.model)

    @staticmethod
    def prompt_text(tokenizer: Any, request: GenerationRequest) -> tuple[str, bool]:
        """The text the model continues, and whether the tokenizer should add its special
        tokens (not after a chat template, which writes them itself)."""
        if request.mode == "complete":
            return request.prompt, True
        messages = request.messages or [{"role": "user", "content": request.prompt}]
        if getattr(tokenizer, "chat_template", None):
            try:
                text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            except Exception:
                # Some templates (Gemma, older Mistral) refuse a system message: put it at the
                # top of the first user message instead.
                merged = _merge_system(messages)
                if merged == messages:
                    raise
                text = tokenizer.apply_chat_template(merged, tokenize=False, add_generation_prompt=True)
            return str(text), False
        return "\n\n".join(m["content"] for m in messages) + "\n", True

    def _generate(self, loaded: _Loaded, request: GenerationRequest, cancel: threading.Event) -> _Output:
        torch, transformers = _import()
        tok, lm = loaded.tokenizer, loaded.model
        params = request.params
        try:
            text, special = self.prompt_text(tok, request)
            enc = tok(text, return_tensors="pt", add_special_tokens=special)
        except Exception as e:
            raise ProviderError(f"cannot make the prompt for {request.model!r}: {_first_line(e)}",
                                retryable=False) from e
        input_ids = enc["input_ids"].to(loaded.device)
        attention_mask = enc["attention_mask"].to(loaded.device) if "attention_mask" in enc else None
        n_in = int(input_ids.shape[1])
        max_new = int(params.get("max_tokens") or DEFAULT_MAX_TOKENS)
        context = _context_length(lm.config)
        if context is not None:
            if n_in >= context:
                raise ProviderError(
                    f"the prompt has {n_in} tokens; model {request.model!r} reads at most {context}",
                    retryable=False)
            max_new = min(max_new, context - n_in)
        stops = _stops(params.get("stop"))
        temperature = float(params.get("temperature") or 0.0)

        class Stop(transformers.StoppingCriteria):  # type: ignore[misc,name-defined]
            """Ends generation when the request is cancelled or a stop string appears."""

            def __call__(self, ids: Any, scores: Any, **kwargs: Any) -> Any:
                done = cancel.is_set() or bool(
                    stops and _truncate(tok.decode(ids[0, n_in:], skip_special_tokens=True), stops)[1])
                return torch.full((ids.shape[0],), done, dtype=torch.bool, device=ids.device)

        kwargs: dict[str, Any] = {"max_new_tokens": max_new, "do_sample": temperature > 0,
                                  "stopping_criteria": transformers.StoppingCriteriaList([Stop()])}
        if temperature > 0:
            kwargs["temperature"] = temperature
            kwargs["top_p"] = float(params.get("top_p") or 1.0)
            kwargs["top_k"] = 0
        else:
            kwargs.update(temperature=None, top_p=None, top_k=None)
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        if pad is not None:
            kwargs["pad_token_id"] = pad
        if attention_mask is not None:
            kwargs["attention_mask"] = attention_mask
        with self._run_locks[request.model]:
            if cancel.is_set():
                raise ProviderError("cancelled", retryable=True)
            seed = params.get("seed")
            if seed is not None:
                torch.manual_seed(int(seed))
            try:
                with torch.inference_mode():
                    out = lm.generate(input_ids, **kwargs)
            except Exception as e:
                raise ProviderError(f"generation failed: {_first_line(e)}", retryable=False) from e
        new = out[0, n_in:].tolist()
        eos = tok.eos_token_id
        eos_ids = set(eos if isinstance(eos, list) else [eos]) - {None}
        if lm.generation_config is not None and lm.generation_config.eos_token_id is not None:
            gen_eos = lm.generation_config.eos_token_id
            eos_ids |= set(gen_eos if isinstance(gen_eos, list) else [gen_eos])
        # Nothing after the first end token was generated (it would be padding).
        ends = [i for i, t in enumerate(new) if t in eos_ids]
        if ends:
            new = new[:ends[0] + 1]
        answer, stopped = _truncate(tok.decode(new, skip_special_tokens=True), stops)
        ended = bool(new) and new[-1] in eos_ids
        finish = "length" if len(new) >= max_new and not ended and not stopped else "stop"
        return _Output(answer, n_in, len(new), finish)

    async def aclose(self) -> None:
        self._loaded.clear()


def _merge_system(messages: list[dict[str, str]]) -> list[dict[str, str]]:
    """``messages`` with the system messages' text moved to the top of the first user message."""
    system = "\n\n".join(m["content"] for m in messages if m.get("role") == "system")
    rest = [dict(m) for m in messages if m.get("role") != "system"]
    if not system:
        return messages
    first = next((m for m in rest if m.get("role") == "user"), None)
    if first is None:
        return [{"role": "user", "content": system}, *rest]
    first["content"] = f"{system}\n\n{first['content']}"
    return rest


def _context_length(config: Any) -> int | None:
    """The most tokens (prompt and answer) the model's position embeddings allow, if it says."""
    for attr in ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length"):
        value = getattr(config, attr, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def _first_line(e: BaseException) -> str:
    lines = str(e).strip().splitlines()
    return lines[0] if lines else type(e).__name__


def _version(text: str) -> tuple[int, int]:
    parts = text.split(".")
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except (IndexError, ValueError):
        return 0, 0


def _in_hub_cache(model: str) -> bool:
    """Whether the local Hugging Face cache holds ``model``'s config.json."""
    try:
        from huggingface_hub import try_to_load_from_cache

        return isinstance(try_to_load_from_cache(model, "config.json"), str)
    except Exception:  # not a valid repo id, or no huggingface_hub: let transformers say
        return True


def _hub_cache() -> str:
    try:
        from huggingface_hub import constants

        return str(constants.HF_HUB_CACHE)
    except ImportError:  # pragma: no cover - transformers depends on huggingface_hub
        return os.environ.get("HF_HUB_CACHE", "~/.cache/huggingface/hub")
