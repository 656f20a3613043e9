"""Seconds per yes/no page of the offline reader (Qwen2.5-Coder 1.5B on llama.cpp) as stage 06 asks it, with
llama-cpp-python's own logits handling and with :mod:`rag.models.llama_logits` (what the project's server runs).

    python benchmarks/llm_speed.py --run outputs/round39 [--sha1 SHA1] [--pages 79,80,81] [--question Q]

The model is loaded in this process the way the server loads it (``logits_all=True``, ``llm.n_ctx``,
``llm.n_threads``), once per variant; pages are read in order after one warm-up call, so the shared prompt
prefix (system prompt + example) is reused from the KV cache as in 06. Per page and variant: the decision call
alone (``answer.boolean_reasoning=false``: the P(true) call is the page's only call), then the chain-of-thought
call followed by the decision call (the default before this change), and P(true) of each decision call (it must
not change). Seconds are wall time on this machine: run it on a quiet box, and say which.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag.answer.booleans.bool_logprob import BooleanDecision  # noqa: E402
from rag.answer.common.calls import prompts_dir  # noqa: E402
from rag.answer.common.prompts import SCHEMAS, build_messages, format_context  # noqa: E402
from rag.core.config import load_config  # noqa: E402
from rag.models import llama_logits, weights  # noqa: E402
from rag.models.logprobs import field_p_true  # noqa: E402

QUESTION = "Did the company mention any mergers or acquisitions in the annual report? If there is no mention, return False."


def page_texts(run: Path, sha1: str | None, pages: list[int] | None, n: int) -> list[tuple[str, int, str]]:
    """(sha1, page, markdown) of the asked pages, else the n longest pages of the first cleaned report."""
    files = sorted((run / "02_clean").glob("*.json"))
    f = next(p for p in files if sha1 is None or p.stem == sha1)
    recs = json.loads(f.read_text())["pages"]
    chosen = [r for r in recs if r["page"] in pages] if pages else sorted(recs, key=lambda r: -len(r["markdown"]))[:n]
    return [(f.stem, r["page"], r["markdown"]) for r in chosen]


def _logprobs(resp: dict) -> list:
    """The in-process response's log-probabilities in rag.models.logprobs' form (as the client caches them)."""
    return [(t["token"], [(a["token"], a["logprob"]) for a in t["top_logprobs"]])
            for t in resp["choices"][0]["logprobs"]["content"]]


def run_variant(cfg, texts, question: str, patched: bool) -> list[dict]:
    from llama_cpp import Llama

    llama_logits.uninstall()
    if patched:
        llama_logits.install()
    m = Llama(str(weights.gguf_path(cfg.llm.gguf, cfg.path("models_dir"))), n_ctx=cfg.llm.n_ctx,
              n_threads=cfg.llm.n_threads, n_threads_batch=cfg.llm.n_threads_batch or cfg.llm.n_threads,
              logits_all=True, verbose=False)
    fmt = {"type": "json_object", "schema": BooleanDecision.model_json_schema()}
    cot = {"type": "json_object", "schema": SCHEMAS["boolean"].model_json_schema()}
    lp = dict(logprobs=True, top_logprobs=cfg.answer.boolean_top_logprobs)
    m.create_chat_completion(build_messages("boolean", format_context(["Warm-up page."]), question,
                                            prompts_dir(cfg)), response_format=fmt, temperature=0,
                             max_tokens=cfg.answer.boolean_decision_max_tokens, **lp)
    rows = []
    for mode in ("decision", "reasoning+decision"):
        for sha1, page, text in texts:
            msgs = build_messages("boolean", format_context([text]), question, prompts_dir(cfg))
            t0 = time.perf_counter()
            if mode != "decision":
                m.create_chat_completion(msgs, response_format=cot, temperature=0, max_tokens=cfg.llm.max_tokens)
            t1 = time.perf_counter()
            r = m.create_chat_completion(msgs, response_format=fmt, temperature=0,
                                         max_tokens=cfg.answer.boolean_decision_max_tokens, **lp)
            t2 = time.perf_counter()
            rows.append({"variant": "patched" if patched else "llama-cpp-python", "mode": mode, "page": page,
                         "prompt_tokens": r["usage"]["prompt_tokens"], "reasoning_s": round(t1 - t0, 1),
                         "decision_s": round(t2 - t1, 1), "page_s": round(t2 - t0, 1),
                         "p_true": field_p_true(_logprobs(r), "final_answer")})
    del m
    llama_logits.uninstall()
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=Path, required=True, help="a run folder with 02_clean")
    ap.add_argument("--sha1")
    ap.add_argument("--pages", help="comma-separated 1-based pages of --sha1 (default: the 3 longest)")
    ap.add_argument("--question", default=QUESTION)
    ap.add_argument("--preset", default="offline")
    a = ap.parse_args(argv)
    cfg = load_config(a.preset)
    texts = page_texts(a.run, a.sha1, [int(x) for x in a.pages.split(",")] if a.pages else None, 3)
    rows = run_variant(cfg, texts, a.question, False) + run_variant(cfg, texts, a.question, True)
    import llama_cpp

    print(f"llama-cpp-python {llama_cpp.__version__}, {cfg.llm.gguf}, n_threads {cfg.llm.n_threads}, "
          f"pages {[p for _, p, _ in texts]} of {texts[0][0][:12]}")
    print(f"{'variant':18} {'mode':20} {'page':>5} {'prompt':>7} {'reason s':>9} {'decide s':>9} {'page s':>7} {'P(true)':>8}")
    for r in rows:
        print(f"{r['variant']:18} {r['mode']:20} {r['page']:>5} {r['prompt_tokens']:>7} {r['reasoning_s']:>9} "
              f"{r['decision_s']:>9} {r['page_s']:>7} {r['p_true'] if r['p_true'] is None else round(r['p_true'], 4):>8}")
    for mode in ("decision", "reasoning+decision"):
        tot = {v: sum(r["page_s"] for r in rows if r["variant"] == v and r["mode"] == mode)
               for v in ("llama-cpp-python", "patched")}
        print(f"{mode}: {tot['llama-cpp-python']:.1f} s -> {tot['patched']:.1f} s for {len(texts)} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
