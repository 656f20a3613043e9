"""The local models on the GPU against the CPU, for ``rag check --gpu`` (rag.gpu_check prints the table):
the embedder (both ``embed.long_text`` modes) and the cross-encoder, timed on each device and compared.

Contract: ``embedder_rows(cfg, gpu, n_gpu, n_cpu, cpu_seconds)`` / ``cross_encoder_rows(cfg, gpu, n_pairs,
cpu_seconds) -> [Row]`` (the rows rag.gpu_check documents); ``sample_chunks(n, chars)``: distinct demo-prose
chunks; ``compare(a, b)``: min row cosine and nearest neighbours kept of two vector sets. :class:`Row` is one
line of the check's table (every part's rows).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

# Characters per sample chunk: the erc2-dev page chunks the issue-32 H200 figures were measured on average ~1,080.
CHUNK_CHARS = 1080
# Texts embedded (and discarded) before timing: CUDA context, kernels, lazy imports.
WARMUP_TEXTS = 8
LONG_TEXT_MODES = ("truncate", "mean")
# The CPU embeds CPU_STEP chunks at a time until CPU_SECONDS per mode are spent (a 2-core machine under load
# does 2-12 chunks/s, a 16-core box ~80): the whole check stays within ~3 minutes.
CPU_STEP = 16
CPU_SECONDS = 30.0
# GPU vs CPU vectors of one model: float32 kernels differ in summation order only (H200: 1.00000).
MIN_COSINE = 0.999
# GPU vs CPU cross-encoder scores (sigmoid of a logit, in [0, 1]).
MAX_SCORE_DIFF = 1e-2


@dataclass
class Row:
    part: str
    status: str  # ok | missing | FAILED | info
    result: str
    numbers: dict = field(default_factory=dict)



def _status(e: BaseException) -> str:
    """Absent weights say how to get them ("missing"); anything else raised is a failure."""
    from .models.base import ModelUnavailable

    return "missing" if isinstance(e, ModelUnavailable) else "FAILED"


def _first_line(e: BaseException) -> str:
    lines = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    return f"{type(e).__name__}: {lines[0][:300] if lines else ''}"


def sample_chunks(n: int, chars: int = CHUNK_CHARS) -> list[str]:
    """``n`` distinct chunks of ``chars`` characters cut from the demo corpus's prose (deterministic)."""
    from .demo_content import COMPANIES

    parts: list[str] = []

    def walk(x) -> None:
        if isinstance(x, str):
            if len(x) > 40 and " " in x:  # prose, not labels or keys
                parts.append(x)
        elif isinstance(x, dict):
            for v in x.values():
                walk(v)
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)

    for company in COMPANIES:
        walk(company())
    stream = " ".join(dict.fromkeys(parts))
    stream2 = stream + " " + stream[:chars]  # wrap around
    # A prime stride spreads the starts over the stream; the number in front keeps every chunk distinct.
    return [f"{i}. " + stream2[(i * 7919) % len(stream):][:chars] for i in range(n)]


def _timed(fn, items: list, budget_s: float | None = None) -> tuple[np.ndarray, float]:
    """``fn(items)`` (embed / score) after a warm-up, and its seconds; with a time budget, of the first
    items only, ``CPU_STEP`` at a time, until the budget is spent."""
    fn(items[:WARMUP_TEXTS])
    step = CPU_STEP if budget_s else len(items)
    out, t0 = [], time.perf_counter()
    for i in range(0, len(items), step):
        out.append(fn(items[i:i + step]))
        if budget_s and time.perf_counter() - t0 > budget_s:
            break
    return np.concatenate(out), time.perf_counter() - t0


def _local_embedder(cfg, device: str):
    """A LocalEmbedder for ``cfg.embed`` loaded on ``device``, no cache (the process setting is restored)."""
    from .models import device as dev
    from .models.embed_local import LocalEmbedder

    e = cfg.embed
    emb = LocalEmbedder(e.model, e.batch_size, e.max_input_tokens, None, e.long_text, e.long_text_overlap, e.hub)
    dev.configure(device)
    try:
        emb._load()
    finally:
        dev.configure(cfg)
    return emb


def compare(a: np.ndarray, b: np.ndarray) -> dict:
    """Row-wise cosine of two sets of unit vectors, and how many nearest neighbours (inside the set) agree."""
    cos = np.sum(a * b, axis=1)
    sa, sb = a @ a.T, b @ b.T
    np.fill_diagonal(sa, -np.inf)
    np.fill_diagonal(sb, -np.inf)
    same = int(np.sum(sa.argmax(1) == sb.argmax(1)))
    return {"min_cosine": round(float(cos.min()), 5), "nn_identical": same, "n": len(a)}


def embedder_rows(cfg, gpu: bool, n_gpu: int, n_cpu: int, cpu_seconds: float | None) -> list[Row]:
    if cfg.embed.backend != "local":
        return [Row("embedder", "info", f"embed.backend={cfg.embed.backend}: a remote model, nothing local to time")]
    texts = sample_chunks(max(n_gpu if gpu else 0, n_cpu) + WARMUP_TEXTS)
    rows = []
    devices = (["cuda"] if gpu else []) + ["cpu"]
    loaded = {}
    for d in devices:
        try:
            loaded[d] = _local_embedder(cfg, d)
        except Exception as e:  # noqa: BLE001 - ModelUnavailable or a CUDA error: one row
            rows.append(Row(f"embedder {d}", _status(e), _first_line(e)))
    for mode in LONG_TEXT_MODES:
        vecs = {}
        for d, emb in loaded.items():
            emb.long_text = mode  # same model, other long-text mode (no cache: nothing keyed on it)
            n = n_gpu if d != "cpu" else n_cpu
            try:
                v, s = _timed(emb.embed, texts[WARMUP_TEXTS:WARMUP_TEXTS + n], cpu_seconds if d == "cpu" else None)
            except Exception as e:  # noqa: BLE001 - the issue-32 crash was one of these
                rows.append(Row(f"embed {mode} {d}", "FAILED", _first_line(e)))
                continue
            n = len(v)
            vecs[d] = v
            rate = n / s if s > 0 else float("inf")
            windows = sum(emb.windows_per_text(t) for t in texts[WARMUP_TEXTS:WARMUP_TEXTS + n]) if mode == "mean" else n
            rows.append(Row(f"embed {mode} {d}", "ok", f"{n} chunks in {s:.2f} s = {rate:,.1f} chunks/s"
                            + (f" ({windows} windows)" if mode == "mean" else ""),
                            {"chunks": n, "seconds": round(s, 3), "chunks_per_s": round(rate, 1), "windows": windows}))
        if "cuda" in vecs and "cpu" in vecs:
            k = len(vecs["cpu"])  # the CPU's (budgeted) share of the same texts
            c = compare(vecs["cuda"][:k], vecs["cpu"])
            ok = c["min_cosine"] >= MIN_COSINE
            rows.append(Row(f"embed {mode} cuda vs cpu", "ok" if ok else "FAILED",
                            f"min cosine {c['min_cosine']:.5f} over {c['n']}; nearest neighbours identical "
                            f"{c['nn_identical']}/{c['n']}", c))
    if not gpu:
        rows.append(Row("embed cuda vs cpu", "missing", "no GPU: CPU speeds only; vectors compared on a CUDA box"))
    return rows


def cross_encoder_rows(cfg, gpu: bool, n_pairs: int, cpu_seconds: float | None) -> list[Row]:
    names = cfg.rerank.cross_encoder_models
    if not names:
        return [Row("cross-encoder", "missing", "not configured: --set 'rerank.cross_encoder_models=[\"FOLDER\"]' "
                    "(a local cross-encoder folder, e.g. `huggingface-cli download cross-encoder/ms-marco-MiniLM-L-6-v2` "
                    "where there is internet)")]
    from .models import get_cross_encoder

    chunks = sample_chunks(n_pairs)
    pairs = [("What was the revenue growth in the year?", c) for c in chunks]
    rows, scores = [], {}
    for d in (["cuda"] if gpu else []) + ["cpu"]:
        try:
            ce = get_cross_encoder(cfg.model_copy(update={"device": d}), names[0])
            scores[d], s = _timed(ce.score, pairs, cpu_seconds if d == "cpu" else None)
        except Exception as e:  # noqa: BLE001
            rows.append(Row(f"cross-encoder {d}", _status(e), _first_line(e)))
            continue
        n = len(scores[d])
        rows.append(Row(f"cross-encoder {d}", "ok", f"{names[0]}: {n} pairs in {s:.2f} s = {n / s:,.1f} pairs/s",
                        {"pairs": n, "seconds": round(s, 3), "pairs_per_s": round(n / s, 1)}))
    if len(scores) == 2:
        k = len(scores["cpu"])
        diff = float(np.max(np.abs(scores["cuda"][:k] - scores["cpu"])))
        rows.append(Row("cross-encoder cuda vs cpu", "ok" if diff < MAX_SCORE_DIFF else "FAILED",
                        f"max score difference {diff:.5f} over {k} pairs", {"max_abs_diff": diff, "n": k}))
    return rows
