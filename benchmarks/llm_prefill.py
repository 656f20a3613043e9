"""Prompt-processing speed (tokens/s) of the offline reader on this machine, per llama.cpp setting.

    python benchmarks/llm_prefill.py --run outputs/RUN [--tokens 1000,2000] [--reps 3] [--gguf A.gguf,B.gguf]

Stage 06's time on CPU is almost all prompt processing (a yes/no page ~1,000-1,700 prompt tokens, a names
question ~2,000-3,700, a few dozen generated tokens): this measures that alone. The prompt is real report text
(the cleaned pages of the run's first 02_clean reports), cut to each length in tokens; every variant loads
the model in this process as the server does (``llm.n_ctx``, ``llm.n_threads``/``n_threads_batch``), evaluates
the prompt from an empty cache ``--reps`` times and keeps the best and the median. Variants: flash attention
off and on, for each weights file (default ``llm.gguf``; ``--gguf`` takes other files, e.g. a requantized copy).
Wall time on this machine: run it on a quiet box and say which (``llama_cpp.llama_print_system_info()`` is printed).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag.core.config import load_config  # noqa: E402
from rag.models import weights  # noqa: E402

# Pages skipped at the start of each report (covers and contents pages are short and unlike the body).
SKIP_PAGES = 5
# Reports whose pages make up the prompt text (enough for the longest --tokens).
N_REPORTS = 3


def report_text(run: Path) -> str:
    """The markdown of the run's first cleaned reports, body pages only, joined."""
    parts = []
    for f in sorted((run / "02_clean").glob("*.json"))[:N_REPORTS]:
        parts += [r["markdown"] for r in json.loads(f.read_text())["pages"][SKIP_PAGES:]]
    if not parts:
        raise SystemExit(f"{run / '02_clean'}: no cleaned pages (run 02 first)")
    return "\n".join(parts)


def measure(path: Path, cfg, text: str, lengths: list[int], reps: int, flash_attn: bool) -> list[dict]:
    from llama_cpp import Llama

    m = Llama(str(path), n_ctx=cfg.llm.n_ctx, n_threads=cfg.llm.n_threads,
              n_threads_batch=cfg.llm.n_threads_batch or cfg.llm.n_threads, flash_attn=flash_attn, verbose=False)
    toks = m.tokenize(text.encode("utf-8"))
    rows = []
    for n in lengths:
        if n > len(toks) or n > cfg.llm.n_ctx:
            raise SystemExit(f"--tokens {n}: the text has {len(toks)} tokens, n_ctx is {cfg.llm.n_ctx}")
        secs = []
        for _ in range(reps):
            m.reset()  # an empty cache: the whole prompt is processed
            t0 = time.perf_counter()
            m.eval(toks[:n])
            secs.append(time.perf_counter() - t0)
        rows.append({"weights": path.name, "flash_attn": flash_attn, "tokens": n,
                     "best_tok_s": n / min(secs), "median_tok_s": n / statistics.median(secs)})
    del m
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", type=Path, required=True, help="a run folder with 02_clean")
    ap.add_argument("--tokens", default="1000,2000", help="comma-separated prompt lengths in tokens")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--gguf", help="comma-separated .gguf paths (default: the preset's llm.gguf)")
    ap.add_argument("--preset", default="offline")
    a = ap.parse_args(argv)
    cfg = load_config(a.preset)
    import llama_cpp

    paths = [Path(p) for p in a.gguf.split(",")] if a.gguf else [weights.gguf_path(cfg.llm.gguf, cfg.path("models_dir"))]
    lengths = [int(x) for x in a.tokens.split(",")]
    text = report_text(a.run)
    rows = [r for p in paths for fa in (False, True) for r in measure(p, cfg, text, lengths, a.reps, fa)]
    print(f"llama-cpp-python {llama_cpp.__version__}; {llama_cpp.llama_print_system_info().decode().strip()}")
    print(f"n_threads {cfg.llm.n_threads}, n_ctx {cfg.llm.n_ctx}, {a.reps} reps, best and median of them")
    print(f"{'weights':32} {'flash_attn':>10} {'tokens':>7} {'best tok/s':>11} {'median tok/s':>13}")
    for r in rows:
        print(f"{r['weights']:32} {str(r['flash_attn']):>10} {r['tokens']:>7} {r['best_tok_s']:>11.1f} "
              f"{r['median_tok_s']:>13.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
