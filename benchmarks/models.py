"""Model-layer throughput: local LLM prompt / generation tokens per second and embedding chunks per second.

Usage: ``.venv/bin/python benchmarks/models.py [--preset offline] [--chunks 200] [--gen-tokens 64]``
Caches are off (every number is a real computation). The first LLM request after server start loads the
model and is timed separately. LLM speeds come from one streamed request (see ``bench_llm``). Machine load matters: the script prints the load average next to the numbers.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag.core.config import load_config  # noqa: E402
from rag.models import count_tokens, get_embedder, get_llm, shutdown_all  # noqa: E402

FILLER = ("The group's revenue for the financial year rose by 4.2 percent to EUR 1,284.6 million, driven by "
          "higher volumes in the industrial segment, while operating expenses were held flat. ")


def bench_llm(cfg, gen_tokens: int) -> None:
    """Streams one request: prompt speed = prompt tokens / time to first token; generation speed = streamed
    tokens after the first / time from first to last. A nonce at the start of the prompt defeats the
    server's prefix cache (which would otherwise skip the prompt)."""
    llm = get_llm(cfg)
    t = time.time()
    client = llm._connect()  # start the server (not counted in the speeds)
    print(f"llm: {cfg.llm.backend} {llm.model}  server start {time.time() - t:.1f}s")
    t = time.time()
    llm.complete([{"role": "user", "content": "Say OK."}], max_tokens=1)
    print(f"llm: first request (model load) {time.time() - t:.1f}s")
    content = f"Document {time.time_ns()}.\n" + FILLER * 12 + "\nSummarize the text above in detail."
    msgs = [{"role": "user", "content": content}]
    prompt_tokens = llm.complete(msgs, max_tokens=1).usage.prompt_tokens  # exact count in the model's tokens
    msgs = [{"role": "user", "content": f"Document {time.time_ns()}.\n" + content.split("\n", 1)[1]}]
    t0 = time.time()
    first = last = None
    n = 0
    stream = client.chat.completions.create(model=llm.model, messages=msgs, max_tokens=gen_tokens, stream=True,
                                            temperature=cfg.llm.temperature, seed=cfg.llm.seed)
    for ev in stream:
        if ev.choices and ev.choices[0].delta and ev.choices[0].delta.content:
            now = time.time()
            first = first or now
            last = now
            n += 1
    ttft = first - t0
    print(f"llm: prompt ~{prompt_tokens} tokens, first token after {ttft:.2f}s -> {prompt_tokens / ttft:.1f} "
          f"prompt tokens/s")
    print(f"llm: {n} streamed tokens, {n - 1} after the first in {last - first:.2f}s -> "
          f"{(n - 1) / max(last - first, 1e-6):.1f} generation tokens/s")


def bench_embed(cfg, n: int) -> None:
    emb = get_embedder(cfg)
    emb.embed(["warm up"])  # model load not counted
    chunks = [f"[{i}] " + FILLER * 5 for i in range(n)]
    tok = sum(count_tokens(c, cfg) for c in chunks) / n
    t = time.time()
    emb.embed(chunks)
    dt = time.time() - t
    print(f"embed: {cfg.embed.backend} {cfg.embed.model} {n} chunks (~{tok:.0f} cl100k tokens each, truncated to "
          f"{cfg.embed.max_input_tokens} wordpieces) in {dt:.2f}s -> {n / dt:.1f} chunks/s")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="offline")
    ap.add_argument("--chunks", type=int, default=200)
    ap.add_argument("--gen-tokens", type=int, default=64)
    ap.add_argument("--skip-llm", action="store_true")
    args = ap.parse_args()
    cfg = load_config(args.preset, overrides={"llm.cache": False, "embed.cache": False})
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    try:
        bench_embed(cfg, args.chunks)
        if not args.skip_llm:
            bench_llm(cfg, args.gen_tokens)
    finally:
        shutdown_all()
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
