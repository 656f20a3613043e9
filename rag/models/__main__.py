"""``python -m rag.models --check [--preset offline]``: one real structured call through the configured LLM.

Prints backend, model, the structured answer to a small real prompt, usage and the seconds it took; also
the embedder's dimension and the tiktoken count of the prompt. Exit code 1 with the reason when a model
is unavailable.
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rag.models")
    ap.add_argument("--check", action="store_true", required=True)
    ap.add_argument("--preset", default="offline")
    ap.add_argument("--no-cache", action="store_true", help="bypass the completion cache (a real call)")
    args = ap.parse_args(argv)
    from ..core.config import load_config
    from . import count_tokens, get_embedder, get_llm, shutdown_all
    from .base import ModelError

    cfg = load_config(args.preset, overrides={"llm.cache": False} if args.no_cache else None)
    print(f"backend: {cfg.llm.backend}  model: {cfg.llm.model}  structured: {cfg.llm.structured}")
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
        print(f"embedder: {cfg.embed.backend} {e.model_name} dim={e.embed(['check']).shape[1]}")
    except ModelError as e:
        print(f"UNAVAILABLE: {e}", file=sys.stderr)
        return 1
    finally:
        shutdown_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
