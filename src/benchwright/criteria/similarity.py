"""``similarity-chrf`` and ``codebleu``: how close the solution is to the task's golden solution.

Both compare text only (nothing is executed) and run in the harness process as libraries:
sacrebleu's chrF and the ``codebleu`` package, from the ``benchwright[metrics]`` extra.

What is compared (:func:`comparison`): the extracted solution (``ctx.code``) with the task's
golden solution in the sample's language. For a completion task whose solution and golden
solution both start with the prompt (HumanEval: the golden solution is the prompt plus the
canonical body, and the solution is the prompt plus the model's continuation), the prompt is
cut from both, so that the model's own text is compared with the canonical continuation and
the docstring both share does not inflate the score. Otherwise the whole texts are compared.

A task without a golden solution in the language gets an ``n/a`` record that says so (not an
absent record), so a summary shows why there is no figure.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.resources
import threading
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any, Literal

from benchwright.criteria.base import Criterion, Measurement, SampleContext
from benchwright.task.model import Task
from benchwright.task.render import RenderedTask

__all__ = ["CodeBleu", "Comparison", "SimilarityChrf", "chrf", "codebleu", "comparison"]

INSTALL_HINT = "pip install 'benchwright[metrics]' (./scripts/setup installs it)"


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "(not installed)"


@dataclass(frozen=True)
class Comparison:
    """The two texts a similarity criterion compares, and how they were chosen."""

    hypothesis: str
    """The solution's text (``ctx.code``, less the prompt for a completion)."""
    reference: str
    """The golden solution's text (less the prompt for a completion)."""
    basis: Literal["continuation", "whole"]
    """``continuation``: the prompt was cut from both; ``whole``: the texts as they are."""

    def details(self) -> dict[str, Any]:
        return {"basis": self.basis, "hypothesis_chars": len(self.hypothesis),
                "reference_chars": len(self.reference)}


def comparison(code: str, golden: str, prompt: str | None) -> Comparison:
    """What to compare: for a completion (``prompt`` given) where both texts start with the
    prompt, what follows it in each; otherwise both texts whole."""
    if prompt and prompt.strip():
        for head in (prompt, prompt.rstrip()):
            if code.startswith(head) and golden.startswith(head):
                return Comparison(code[len(head):], golden[len(head):], "continuation")
    return Comparison(code, golden, "whole")


def _sample_comparison(ctx: SampleContext) -> Comparison | Measurement:
    """The sample's comparison, or the ``n/a`` measurement when there is no golden solution."""
    golden = ctx.task.golden_solution.get(ctx.language)
    if golden is None or not golden.strip():
        return Measurement(score=None, verdict="n/a", output=(
            f"task {ctx.task.name} has no golden solution in {ctx.language} to compare with: "
            f"add one under golden_solution.{ctx.language} in the task"))
    prompt = ctx.rendered.prompt if ctx.task.mode == "complete" else None
    return comparison(ctx.code, golden, prompt)


# --- chrF -------------------------------------------------------------------------------------


def chrf(hypothesis: str, reference: str) -> float:
    """sacrebleu's sentence-level chrF (character 6-grams, beta 2, whitespace ignored), 0-1.

    Raises:
        ImportError: sacrebleu is not installed.
    """
    from sacrebleu.metrics.chrf import CHRF

    # a new metric object per call: it is cheap, and the objects are not documented thread-safe
    return float(CHRF().sentence_score(hypothesis, [reference]).score) / 100.0


class SimilarityChrf(Criterion):
    """chrF of the solution against the golden solution, normalised to 0-1 (sacrebleu gives
    0-100): 1 for the same text (whitespace aside), 0 for no character n-gram in common."""

    name = "similarity-chrf"
    unit = "score"
    higher_is_better = True

    def __init__(self) -> None:
        self.tool = f"sacrebleu {_version('sacrebleu')}"

    def missing(self) -> str | None:
        try:
            importlib.import_module("sacrebleu.metrics.chrf")
        except ImportError as e:
            return f"similarity-chrf needs sacrebleu ({e}): {INSTALL_HINT}"
        return None

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        pair = _sample_comparison(ctx)
        if isinstance(pair, Measurement):
            return [pair]
        score = chrf(pair.hypothesis, pair.reference)
        return [Measurement(score=score, unit=self.unit, output=f"chrF {score * 100:.1f} / 100",
                            details={**pair.details(), "chrf": round(score * 100, 6),
                                     "char_order": 6, "word_order": 0, "beta": 2})]


# --- CodeBLEU ---------------------------------------------------------------------------------

CODEBLEU_LANGUAGES: dict[str, tuple[str, str]] = {
    "python": ("python", "tree_sitter_python"),
    "java": ("java", "tree_sitter_java"),
    "javascript": ("javascript", "tree_sitter_javascript"),
    "c": ("c", "tree_sitter_c"),
    "cpp": ("cpp", "tree_sitter_cpp"),
    "go": ("go", "tree_sitter_go"),
    "rust": ("rust", "tree_sitter_rust"),
}
"""benchwright language -> (codebleu's name for it, the tree-sitter grammar module)."""

WEIGHTS = (0.25, 0.25, 0.25, 0.25)
"""CodeBLEU's weights of n-gram, weighted n-gram, syntax and data-flow match (the library's
default, as in the paper's reference implementation)."""


@dataclass(frozen=True)
class CodeBleuScore:
    """CodeBLEU and its four components, each 0-1."""

    score: float
    ngram: float
    weighted_ngram: float
    syntax: float
    dataflow: float | None
    """None when the reference has no data flow to match (then it is left out of the score)."""


class _CodeBleuLibrary:
    """The codebleu modules and, per language, the tree-sitter language and the keywords,
    loaded once per process (under a lock: criteria are called from several threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._modules: dict[str, ModuleType] = {}
        self._languages: dict[str, Any] = {}
        self._keywords: dict[str, frozenset[str]] = {}

    def module(self, name: str) -> ModuleType:
        with self._lock:
            if name not in self._modules:
                self._modules[name] = importlib.import_module(f"codebleu.{name}")
            return self._modules[name]

    def language(self, lang: str) -> Any:
        """The tree-sitter ``Language`` of codebleu language ``lang``.

        Raises:
            ImportError: its grammar (or tree-sitter) is not installed.
        """
        with self._lock:
            if lang not in self._languages:
                grammar = next(g for n, g in CODEBLEU_LANGUAGES.values() if n == lang)
                from tree_sitter import Language

                pointer = importlib.import_module(grammar).language()
                self._languages[lang] = Language(pointer)
            return self._languages[lang]

    def keywords(self, lang: str) -> frozenset[str]:
        with self._lock:
            if lang not in self._keywords:
                package = importlib.import_module("codebleu")
                path = importlib.resources.files(package) / "keywords" / f"{lang}.txt"
                text = path.read_text(encoding="utf-8")
                self._keywords[lang] = frozenset(x.strip() for x in text.splitlines())
            return self._keywords[lang]


_LIBRARY = _CodeBleuLibrary()


def _dataflow(reference: str, hypothesis: str, lang: str, language: Any) -> float | None:
    """codebleu's data-flow match of one pair; None when the reference has no data flow (the
    library would log a warning on the root logger and return 0)."""
    from tree_sitter import Parser

    df = _LIBRARY.module("dataflow_match")
    parser = Parser()
    parser.language = language
    pair = [parser, df.dfg_function[lang]]

    def flows(text: str) -> list[Any]:
        with contextlib.suppress(Exception):  # as the library does: else keep the text
            text = df.remove_comments_and_docstrings(text, lang)
        return list(df.normalize_dataflow(df.get_data_flow(text, pair)))

    candidate, ref = flows(hypothesis), flows(reference)
    if not ref:
        return None
    matched = 0
    for flow in ref:
        if flow in candidate:
            matched += 1
            candidate.remove(flow)
    return matched / len(ref)


def codebleu(hypothesis: str, reference: str, language: str) -> CodeBleuScore:
    """CodeBLEU of ``hypothesis`` against ``reference`` in benchwright language ``language``.

    The components are codebleu's own functions; they are combined with :data:`WEIGHTS`, except
    that where the reference has no data flow the data-flow component is left out and the other
    three weights are scaled up to sum to 1 (the library would count it as 1).

    Raises:
        ImportError: codebleu or the language's grammar is not installed.
        KeyError: codebleu does not support ``language``.
    """
    lang = CODEBLEU_LANGUAGES[language][0]
    ts_language = _LIBRARY.language(lang)
    keywords = _LIBRARY.keywords(lang)
    bleu = _LIBRARY.module("bleu")
    weighted = _LIBRARY.module("weighted_ngram_match")
    syntax = _LIBRARY.module("syntax_match")
    hyp, ref = hypothesis.strip(), reference.strip()
    hyp_tokens, ref_tokens = hyp.split(), ref.split()
    if not hyp_tokens or not ref_tokens:
        same = 1.0 if hyp_tokens == ref_tokens else 0.0
        return CodeBleuScore(same, same, same, same, None)
    ngram = float(bleu.corpus_bleu([[ref_tokens]], [hyp_tokens], auto_reweigh=True))
    weights = {token: 1 if token in keywords else 0.2 for token in ref_tokens}
    weighted_ngram = float(weighted.corpus_bleu([[[ref_tokens, weights]]], [hyp_tokens],
                                                auto_reweigh=True))
    syntax_match = float(syntax.corpus_syntax_match([[ref]], [hyp], lang,
                                                    tree_sitter_language=ts_language))
    dataflow = _dataflow(ref, hyp, lang, ts_language)
    a, b, c, d = WEIGHTS
    total = a * ngram + b * weighted_ngram + c * syntax_match
    score = total + d * dataflow if dataflow is not None else total / (a + b + c)
    return CodeBleuScore(score, ngram, weighted_ngram, syntax_match, dataflow)


class CodeBleu(Criterion):
    """CodeBLEU of the solution against the golden solution, 0-1: the mean of BLEU, keyword-
    weighted BLEU, syntax-tree match and data-flow match (each 0-1)."""

    name = "codebleu"
    unit = "score"
    higher_is_better = True
    languages = tuple(CODEBLEU_LANGUAGES)

    def __init__(self) -> None:
        self.tool = f"codebleu {_version('codebleu')}"

    def missing(self) -> str | None:
        try:
            for name in ("bleu", "weighted_ngram_match", "syntax_match", "dataflow_match"):
                _LIBRARY.module(name)
            for lang, _grammar in CODEBLEU_LANGUAGES.values():
                _LIBRARY.language(lang)
        except ImportError as e:
            return f"codebleu needs the codebleu package and its tree-sitter grammars ({e}): {INSTALL_HINT}"
        except Exception as e:  # grammars of another ABI than tree-sitter's: TypeError, ValueError
            return (f"codebleu cannot load a tree-sitter grammar ({type(e).__name__}: {e}); the "
                    f"grammars must fit tree-sitter {_version('tree-sitter')}: {INSTALL_HINT}")
        return None

    def applies(self, task: Task, language: str, rendered: RenderedTask) -> bool:
        return language in CODEBLEU_LANGUAGES

    def evaluate(self, ctx: SampleContext) -> list[Measurement]:
        pair = _sample_comparison(ctx)
        if isinstance(pair, Measurement):
            return [pair]
        result = codebleu(pair.hypothesis, pair.reference, ctx.language)
        dataflow = "n/a (no data flow in the golden solution)" if result.dataflow is None \
            else f"{result.dataflow:.3f}"
        return [Measurement(score=result.score, unit=self.unit, output=(
            f"CodeBLEU {result.score:.3f}: n-gram {result.ngram:.3f}, weighted n-gram "
            f"{result.weighted_ngram:.3f}, syntax {result.syntax:.3f}, data flow {dataflow}"),
            details={**pair.details(), "ngram_match": result.ngram,
                     "weighted_ngram_match": result.weighted_ngram, "syntax_match": result.syntax,
                     "dataflow_match": result.dataflow, "weights": list(WEIGHTS)})]


CRITERIA: tuple[type[Criterion], ...] = (SimilarityChrf, CodeBleu)
"""The criteria of this module, registered by :mod:`benchwright.builtins`."""
