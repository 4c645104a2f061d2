"""Generation throughput: 2,000 requests to a loopback OpenAI-compatible server that answers in
100 ms, at concurrency 64, through benchwright's generation engine and the real ``openai`` SDK;
then the same 2,000 again, fully cached. Prints the wall time against the ideal
(2,000 x 0.1 s / 64) and the cached rerun's speed-up. The server runs in its own process so the
measurement is of the client side. Usage::

    .venv/bin/python benchmarks/generation.py [--requests 2000] [--concurrency 64] [--delay 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchwright.config.settings import ProviderSettings, Settings
from benchwright.model.base import GenerationRequest
from benchwright.model.cache import GenerationCache
from benchwright.model.engine import GenerationEngine
from benchwright.registry import registry

SERVER = """
import sys, time
from benchwright.testing import OpenAIServer, Reply
srv = OpenAIServer(answer=lambda body: Reply.answer("def f():\\n    return 1\\n", usage=(20, 8)),
                   delay_s=float(sys.argv[1])).start()
print(srv.base_url, flush=True)
sys.stdin.read()
srv.stop()
"""


async def batch(engine: GenerationEngine, n: int) -> tuple[float, int]:
    requests = [GenerationRequest(model="coder", mode="instruct", language="python", prompt=f"task {i}",
                                  messages=[{"role": "user", "content": f"task {i}"}]) for i in range(n)]
    start = time.perf_counter()
    outcomes = await asyncio.gather(*(engine.answer("bench", r) for r in requests))
    wall = time.perf_counter() - start
    failed = sum(o.answer is None for o in outcomes)
    return wall, failed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--delay", type=float, default=0.1)
    args = parser.parse_args()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(args.delay)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    base_url = server.stdout.readline().strip()
    try:
        conf = ProviderSettings(type="openai-compatible", base_url=base_url, concurrency=args.concurrency)
        provider = registry.create("provider", "openai-compatible", name="bench", settings=conf)
        with tempfile.TemporaryDirectory() as tmp:
            cache = GenerationCache(Path(tmp) / "cache.sqlite3")

            async def both() -> tuple[tuple[float, int], tuple[float, int]]:
                engine = GenerationEngine({"bench": provider}, Settings(), cache, True)
                try:
                    cold = await batch(engine, args.requests)
                    warm = await batch(engine, args.requests)
                finally:
                    await engine.aclose()
                return cold, warm

            (cold, cold_failed), (warm, warm_failed) = asyncio.run(both())
            cache.close()
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    ideal = args.requests * args.delay / args.concurrency
    print(f"{args.requests} requests, {args.delay * 1000:.0f} ms each, concurrency {args.concurrency}")
    print(f"  ideal wall time:            {ideal:6.2f} s")
    print(f"  benchwright (openai SDK):   {cold:6.2f} s  = {ideal / cold * 100:5.1f} % of ideal"
          f"  ({cold_failed} failed)")
    print(f"  fully cached rerun:         {warm:6.3f} s  = {cold / warm:6.1f}x faster  ({warm_failed} failed)")


if __name__ == "__main__":
    main()
