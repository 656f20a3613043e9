"""``python -m rag.models --check [--preset offline] [--set KEY=VALUE ...] [--setup]``: real calls through the
configured models (``--set`` as in ``rag.pipeline``: ``--set llm.gguf=path/to/any.gguf``).

``--check``: prints backend, model, the llama.cpp build and system info line (which SIMD sets it uses),
the structured answer to a small real prompt, usage and seconds, then the embedder's dimension.
``--check --setup`` (run by ``make run`` / ``make test`` before any notebook): one short uncached
completion only; on failure ONE message naming the model, how it failed, the build flags, the CPU and
the fix. Exit code 1 when a model is unavailable.
"""
from __future__ import annotations

import argparse
import sys
import time

from pydantic import BaseModel, Field


class CheckAnswer(BaseModel):
    company: str = Field(description="company name as written in the text")
    revenue_musd: float = Field(description="revenue in millions of USD")
    grew: bool = Field(description="true when revenue grew compared with the prior year")


PROMPT = [
    {"role": "system", "content": "You extract facts from annual report excerpts. Reply in JSON."},
    {"role": "user", "content": "Excerpt: 'Northwind Traders Inc. reported revenue of USD 412.5 million in 2023, "
                                "up from USD 380.2 million in 2022.' Give company, revenue_musd and grew."},
]
SETUP_PROMPT = [{"role": "user", "content": "Say OK."}]
# Tokens the setup check asks for: enough to prove generation works, few enough to take a second.
SETUP_MAX_TOKENS = 4
FIX = ("Fix: rebuild llama-cpp-python with portable flags, `make llama-rebuild LLAMA_VARIANT=avx2` "
       "(or LLAMA_VARIANT=basic on a CPU without AVX2), then re-run; see README 'When the model check fails'.")


def _llama_lines(cfg) -> list[str]:
    if cfg.llm.backend != "llama_cpp":
        return []
    from .llama_build import build_info, cpu_summary, system_info

    return [f"llama.cpp build: {build_info()}", f"llama.cpp system info: {system_info()}", f"cpu: {cpu_summary()}"]


def model_label(cfg) -> str:
    """The chat model in words: the served name and, for a GGUF, its file."""
    if cfg.llm.backend != "llama_cpp":
        return cfg.llm.model + (f" at {cfg.llm.base_url}" if cfg.llm.base_url else "")
    from .weights import gguf_alias, gguf_path

    return f"{gguf_alias(cfg.llm.gguf)} ({gguf_path(cfg.llm.gguf, cfg.path('models_dir'))})"


def setup_check(cfg) -> int:
    """One short real completion; 0 when the model answers, else 1 with one clear message."""
    from . import get_llm, shutdown_all
    from .base import ModelError

    t0 = time.time()
    try:
        r = get_llm(cfg).complete(SETUP_PROMPT, max_tokens=SETUP_MAX_TOKENS)
    except ModelError as e:
        first = str(e).strip().splitlines()[0]
        print(f"MODEL CHECK FAILED: {cfg.llm.backend} model {model_label(cfg)} did not answer: {first}",
              file=sys.stderr)
        for line in _llama_lines(cfg):
            print(f"  {line}", file=sys.stderr)
        if cfg.llm.backend == "llama_cpp":
            print(f"  {FIX}", file=sys.stderr)
        return 1
    finally:
        shutdown_all()
    print(f"model check: {cfg.llm.backend} {model_label(cfg)} answered {r.raw.strip()[:40]!r} "
          f"({r.usage.completion_tokens} tokens, {time.time() - t0:.1f}s incl. server start)")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rag.models", epilog="rag check --gpu [--help]: a CUDA box's "
                                 "self-check (rag.gpu_check): one table, outputs/gpu-check.json")
    ap.add_argument("--check", action="store_true", required=True)
    ap.add_argument("--preset", default="offline")
    ap.add_argument("--setup", action="store_true", help="one short uncached completion (setup's proof)")
    ap.add_argument("--no-cache", action="store_true", help="bypass the completion cache (a real call)")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                    help="config override, e.g. llm.gguf=data/models/x.gguf or embed.model=path/to/folder")
    args = ap.parse_args(argv)
    from ..core.config import load_config, parse_set
    from . import count_tokens, get_embedder, get_llm, shutdown_all
    from .base import ModelError

    no_cache = args.no_cache or args.setup
    overrides = {**parse_set(args.set), **({"llm.cache": False} if no_cache else {})}
    cfg = load_config(args.preset, overrides=overrides)
    if args.setup:
        return setup_check(cfg)
    print(f"backend: {cfg.llm.backend}  model: {model_label(cfg)}  structured: {cfg.llm.structured}")
    for line in _llama_lines(cfg):
        print(line)
    try:
        print(f"prompt tokens (cl100k): {sum(count_tokens(m['content'], cfg) for m in PROMPT)}")
        llm = get_llm(cfg)
        t0 = time.time()
        r = llm.complete(PROMPT, schema=CheckAnswer)
        dt = time.time() - t0
        print(f"answer: {r.value.model_dump_json()}  repaired: {r.repaired}")
        print(f"usage: {r.usage.as_dict()}")
        print(f"seconds: {dt:.2f} (incl. server start when not cached)")
        e = get_embedder(cfg)
        where = f" at {cfg.embed.base_url}" if cfg.embed.base_url else ""
        print(f"embedder: {cfg.embed.backend} {e.model_name}{where} dim={e.embed(['check']).shape[1]} "
              f"max_input_tokens={cfg.embed.max_input_tokens} long_text={cfg.embed.long_text}"
              + (f" precision={e.precision}" if getattr(e, "precision", None) else ""))
    except ModelError as e:
        print(f"UNAVAILABLE: {e}", file=sys.stderr)
        return 1
    finally:
        shutdown_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
