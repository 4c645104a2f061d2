"""The generation cache: keys, round trips, stats, clear, several processes, a broken file."""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchwright.errors import UserError
from benchwright.model.base import GenerationRequest
from benchwright.model.cache import CachedAnswer, GenerationCache, cache_key, cache_path

REQ = GenerationRequest(
    model="gpt-4o", mode="instruct",
    messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Write f."}],
    prompt="Write f.", language="python",
    params={"temperature": 0.2, "max_tokens": 512, "stop": ["```\n"]}, sample=0,
    golden="def f(): pass\n", task="src/t1",
)


def key(req: GenerationRequest = REQ, provider: str = "openai", type_: str = "openai-compatible",
        base_url: str | None = "https://api.openai.com/v1") -> str:
    return cache_key(provider, type_, base_url, req)


def answer(text: str = "```python\ndef f(): pass\n```", **kw: object) -> CachedAnswer:
    fields: dict[str, object] = {"tokens_in": 12, "tokens_out": 7, "finish_reason": "stop",
                                 "cost_usd": 0.0002, "model": "gpt-4o-2024-08-06", "latency_ms": 850.0}
    fields.update(kw)
    return CachedAnswer(text=text, **fields)  # type: ignore[arg-type]


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[GenerationCache]:
    c = GenerationCache(cache_path(tmp_path / ".benchwright"))
    yield c
    c.close()


def test_key_is_stable_and_hex() -> None:
    k = key()
    assert k == key()
    assert len(k) == 64 and int(k, 16) >= 0
    # dict order does not matter
    reordered = dataclasses.replace(REQ, params=dict(reversed(list(REQ.params.items()))))
    assert key(reordered) == k
    # a pinned value: the key must not change between releases without a KEY_VERSION bump
    again = subprocess.run(
        [sys.executable, "-c",
         "from benchwright.model.cache import cache_key\n"
         "from benchwright.model.base import GenerationRequest as R\n"
         "print(cache_key('p','t',None,R(model='m',mode='complete',messages=[],prompt='def f():',"
         "language='python')))"],
        capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONHASHSEED": "123"})
    assert again.stdout.strip() == cache_key(
        "p", "t", None, GenerationRequest(model="m", mode="complete", messages=[], prompt="def f():",
                                          language="python"))


@pytest.mark.parametrize("change", [
    {"model": "gpt-4o-mini"},
    {"mode": "complete"},
    {"prompt": "Write g."},
    {"sample": 1},
    {"messages": [{"role": "system", "content": "Be brief!"}, {"role": "user", "content": "Write f."}]},
    {"messages": [{"role": "user", "content": "Write f."}]},
    {"params": {**REQ.params, "temperature": 0.3}},
    {"params": {**REQ.params, "max_tokens": 513}},
    {"params": {**REQ.params, "stop": ["```"]}},
    {"params": {**REQ.params, "seed": 1}},
    {"params": {**REQ.params, "top_p": 0.9}},
    {"params": {k: v for k, v in REQ.params.items() if k != "temperature"}},
])
def test_key_changes_with_what_is_sent(change: dict[str, object]) -> None:
    assert key(dataclasses.replace(REQ, **change)) != key()  # type: ignore[arg-type]


def test_key_changes_with_provider_type_and_endpoint() -> None:
    k = key()
    assert key(provider="openrouter") != k
    assert key(type_="anthropic") != k
    assert key(base_url="http://localhost:8000/v1") != k
    assert key(base_url=None) != k


def test_key_ignores_what_is_not_sent() -> None:
    k = key()
    assert key(dataclasses.replace(REQ, golden="something else")) == k
    assert key(dataclasses.replace(REQ, golden=None)) == k
    assert key(dataclasses.replace(REQ, task="other/t2")) == k
    assert key(dataclasses.replace(REQ, language="java")) == k


def test_put_get_round_trip(cache: GenerationCache) -> None:
    assert cache.get(key()) is None
    a = answer(tokens_estimated=True)
    cache.put(key(), "openai", "gpt-4o", a)
    assert cache.get(key()) == a
    b = answer("another answer", tokens_in=None, tokens_out=None, cost_usd=None, model=None,
               finish_reason=None, latency_ms=None)
    cache.put(key(), "openai", "gpt-4o", b)  # replaces
    assert cache.get(key()) == b
    assert cache.stats().entries == 1


def test_persists_across_instances_and_threads(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite3"
    first = GenerationCache(path)
    first.put("k", "p", "m", answer("unicode: é ✓ \x00 end"))
    first.close()
    second = GenerationCache(path)
    got: list[CachedAnswer | None] = []
    t = threading.Thread(target=lambda: got.append(second.get("k")))
    t.start()
    t.join()
    assert got[0] is not None and got[0].text == "unicode: é ✓ \x00 end"
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    second.close()
    second.close()  # twice is fine


def test_stats_and_clear_with_filters(cache: GenerationCache) -> None:
    for i in range(3):
        cache.put(f"a{i}", "openai", "gpt-4o", answer(latency_ms=100.0, cost_usd=0.01))
    for i in range(2):
        cache.put(f"b{i}", "openai", "gpt-4o-mini", answer(latency_ms=50.0, cost_usd=None))
    cache.put("c0", "local", "gpt-4o", answer(latency_ms=None))
    s = cache.stats()
    assert s.entries == 6
    assert s.size_bytes > 0
    assert s.latency_ms == pytest.approx(400.0)
    assert s.cost_usd == pytest.approx(0.0302)
    per = {(m.provider, m.model): m for m in s.models}
    assert {k: m.entries for k, m in per.items()} == {
        ("local", "gpt-4o"): 1, ("openai", "gpt-4o"): 3, ("openai", "gpt-4o-mini"): 2}
    assert per[("openai", "gpt-4o")].latency_ms == pytest.approx(300.0)
    assert per[("openai", "gpt-4o")].newest is not None
    assert s.to_dict()["models"][0]["provider"] == "local"

    assert cache.clear(provider="nobody") == 0
    assert cache.clear(model="gpt-4o") == 4  # both providers
    assert cache.get("a0") is None and cache.get("c0") is None and cache.get("b0") is not None
    cache.put("a0", "openai", "gpt-4o", answer())
    assert cache.clear(provider="openai", model="gpt-4o-mini") == 2
    assert cache.stats().entries == 1
    assert cache.clear() == 1
    assert cache.stats().entries == 0
    assert cache.stats().models == []


WRITER = """
import sys
from pathlib import Path
from benchwright.model.cache import CachedAnswer, GenerationCache
path, tag, n = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
sys.stdin.readline()  # start together
c = GenerationCache(path)
for i in range(n):
    c.put(f"{tag}-{i}", "p-" + tag, "m", CachedAnswer(text=f"{tag} answer {i}", latency_ms=1.0))
    if i % 7 == 0:
        assert c.get(f"{tag}-{i}") is not None
        c.stats()
c.close()
print("done", tag)
"""


def test_two_processes_write_concurrently(tmp_path: Path) -> None:
    path = tmp_path / ".benchwright" / "cache.sqlite3"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), tag, "500"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for tag in ("a", "b")]
    for p in procs:  # both open the (not yet existing) file and write at the same time
        assert p.stdin is not None
        p.stdin.write("go\n")
        p.stdin.close()
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read() if p.stderr else ""
        assert p.stdout is not None and p.stdout.read().startswith("done")
        for stream in (p.stdout, p.stderr):
            if stream is not None:
                stream.close()
    cache = GenerationCache(path)
    try:
        s = cache.stats()
        assert s.entries == 1000
        assert {(m.provider, m.entries) for m in s.models} == {("p-a", 500), ("p-b", 500)}
        got = cache.get("b-499")
        assert got is not None and got.text == "b answer 499"
    finally:
        cache.close()


def test_threads_share_one_cache(cache: GenerationCache) -> None:
    errors: list[BaseException] = []

    def work(tag: int) -> None:
        try:
            for i in range(200):
                cache.put(f"{tag}-{i}", "p", f"m{tag}", answer(str(i)))
                assert cache.get(f"{tag}-{i}") is not None
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert cache.stats().entries == 800


def test_corrupted_file_is_a_clear_user_error(tmp_path: Path) -> None:
    path = tmp_path / ".benchwright" / "cache.sqlite3"
    path.parent.mkdir()
    path.write_bytes(b"this is not a database, just garbage " * 200)
    with pytest.raises(UserError) as info:
        GenerationCache(path)
    message = str(info.value)
    assert str(path) in message
    assert "benchwright cache clear" in message and "delete" in message


def test_damaged_database_is_a_clear_user_error(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    c = GenerationCache(path)
    for i in range(300):
        c.put(f"k{i}", "p", "m", answer("x" * 500))
    c.clear(model="none")
    c.close()
    with sqlite3.connect(path) as conn:  # fold the WAL into the main file
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    data[4096 + 10:4096 + 4000] = b"\xff" * 3990  # trash the second page
    path.write_bytes(bytes(data))
    with pytest.raises(UserError) as info:
        c2 = GenerationCache(path)
        try:
            for i in range(300):
                c2.get(f"k{i}")
            c2.stats()
        finally:
            c2.close()
    assert str(path) in str(info.value)
    assert "benchwright cache clear" in str(info.value)


def test_a_folder_in_place_of_the_file_is_a_clear_user_error(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    path.mkdir()
    with pytest.raises(UserError) as info:
        GenerationCache(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("damage", [
    "text = CAST(X'68FF69' AS TEXT)",              # an answer that is not UTF-8
    "text = X'6869'",                               # an answer that is not text (a blob)
    "tokens_in = 'many'",                           # a count that is not a number
    "tool_calls = CAST(X'5B7B22FF' AS TEXT)",       # tool calls that are not UTF-8
    "answer_model = X'00FF'",                       # a name stored as bytes
])
def test_a_damaged_entry_is_a_miss_and_the_answer_asked_again_replaces_it(
        cache: GenerationCache, damage: str) -> None:
    cache.put("k", "openai", "gpt-4o", answer("first"))
    cache.put("other", "openai", "gpt-4o", answer("kept"))
    with sqlite3.connect(cache.path) as conn:
        conn.execute(f"UPDATE generations SET {damage} WHERE key = 'k'")
    assert cache.get("k") is None
    kept = cache.get("other")
    assert kept is not None and dataclasses.replace(kept, created="") == dataclasses.replace(
        answer("kept"), created="")
    stats = cache.stats()  # the damaged row is still counted, its names shown as best they can be
    assert stats.entries == 2
    cache.put("k", "openai", "gpt-4o", answer("again"))
    again = cache.get("k")
    assert again is not None and again.text == "again"
