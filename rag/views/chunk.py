"""What notebook 03 shows: ``chunk_length_table``, chunk lengths in the embedder's own tokens against its
input limit.

Every function reads the run's artifacts through the owner readers only (never runs a stage), returns a pandas
DataFrame (or PNG bytes) and is cheap enough for every headless run. Views sit on top of the stages
(tests/test_layers.py): no stage code imports one. Pages are 1-based physical pages; scores "higher = better".
"""
from __future__ import annotations

import pandas as pd

from ..core.config import RunConfig
from ..core.dataset import Dataset
from ..chunk import item_state, load_chunks

LENGTH_BINS = (0, 64, 128, 192, 320, 384, 512)  # embedder-token bins of the 03 histogram (+ limit + 1)
LENGTH_SAMPLE = 5000  # chunks tokenized for the 03 histogram at most (evenly spaced; all when fewer)


def embedder_token_lengths(cfg: RunConfig, ds: Dataset, size: int | None = None) -> list[int] | None:
    """Length of every chunk (at most ``LENGTH_SAMPLE``, evenly spaced) of ``size`` (default ``retrieve.chunk_size``) in the local embedder's own tokens
    ([CLS]/[SEP] included, as the model reads them); None for a non-local embedder."""
    from .. import index  # the embedder of 04 (tests monkeypatch rag.index.get_embedder)

    if cfg.embed.backend != "local":
        return None
    size = size or cfg.retrieve.chunk_size
    texts = [c.text for r in ds.reports if item_state(cfg, r.sha1, size).status == "done"
             for c in load_chunks(cfg, r.sha1, size)]
    if len(texts) > LENGTH_SAMPLE:  # evenly spaced sample: a big corpus keeps the notebook cell quick
        texts = [texts[i * len(texts) // LENGTH_SAMPLE] for i in range(LENGTH_SAMPLE)]
    tok = index.get_embedder(cfg).tokenizer
    return [len(tok(t, verbose=False)["input_ids"]) for t in texts]



def chunk_length_table(cfg: RunConfig, ds: Dataset, lengths: list[int] | None = None) -> pd.DataFrame:
    """Histogram of chunk lengths (embedder tokens) with the model's input limit marked: rows = bins, and a
    last row with the share of chunks and of tokens past the limit (what ``embed.long_text="truncate"`` drops;
    ``"mean"`` embeds them in extra windows)."""
    lengths = embedder_token_lengths(cfg, ds) if lengths is None else lengths
    if not lengths:
        return pd.DataFrame(columns=["tokens", "chunks"])
    limit = cfg.embed.max_input_tokens
    # A chunk of exactly ``limit`` tokens still fits: the first bin past the limit starts at limit + 1.
    edges = sorted(set(LENGTH_BINS) | {limit + 1}) + [max(max(lengths), limit) + 2]
    rows = []
    for lo, hi in zip(edges, edges[1:]):
        n = sum(lo <= x < hi for x in lengths)
        rows.append({"tokens": f"{lo}-{hi - 1}", "chunks": n, "share_%": round(100 * n / len(lengths), 1),
                     "past_limit": lo > limit})
    cut = sum(max(0, x - limit) for x in lengths)
    rows.append({"tokens": f"over {limit} ({cfg.embed.long_text})",
                 "chunks": sum(x > limit for x in lengths),
                 "share_%": round(100 * sum(x > limit for x in lengths) / len(lengths), 1),
                 "past_limit": f"{100 * cut / sum(lengths):.1f}% of tokens "
                               + ("in extra windows" if cfg.embed.long_text == "mean" else "never embedded")})
    return pd.DataFrame(rows)
