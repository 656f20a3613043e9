"""What notebook 05 shows: ``retrieval_questions``, per question: routing, top pages with scores, gold rank.

Every function reads the run's artifacts through the owner readers only (never runs a stage), returns a pandas
DataFrame (or PNG bytes) and is cheap enough for every headless run. Views sit on top of the stages
(tests/test_layers.py): no stage code imports one. Pages are 1-based physical pages; scores "higher = better".
"""
from __future__ import annotations

import pandas as pd

from ..core.config import RunConfig
from ..core.dataset import Dataset
from ..evaluate.retrieval_metrics import rank_lists
from ..retrieve import load_retrievals
from .common import QUESTION_CHARS, short

TOP_PAGES_SHOWN = 5  # candidate pages listed per question in the 05 table


def _gold_rank(ranked: dict[str, list[int]], pools) -> str:
    """Best 1-based rank of any gold page per pool ("-" = pool missed), "" without gold pools."""
    out = []
    for pool in pools:
        ranks = [ranked.get(p.sha1, []).index(p.page) + 1 for p in pool if p.page in ranked.get(p.sha1, [])]
        out.append(str(min(ranks)) if ranks else "-")
    return ",".join(out)



def retrieval_questions(cfg: RunConfig, ds: Dataset) -> pd.DataFrame:
    """One row per retrieved question: routing status, routed companies, the top pages with final scores,
    and the gold rank per gold pool (1 = first page; "-" = not among the candidates; empty without gold)."""
    recs = load_retrievals(cfg, [q.qid for q in ds.questions])
    rows = []
    for q in ds.questions:
        rec = recs.get(q.qid)
        if rec is None:
            continue
        top = []
        for sha1, cands in rec.candidates.items():
            top += [f"{sha1[:6]}:p{c.page} ({(c.scores.get('final') or 0):.2f})" for c in cands[:TOP_PAGES_SHOWN]]
        g = ds.gold.get(q.text)
        rows.append({"qid": q.qid, "kind": q.kind, "question": short(q.text, QUESTION_CHARS),
                     "routing": rec.routing, "routed": "; ".join(r.company for r in rec.routed),
                     "top pages (final score)": "  ".join(top[: TOP_PAGES_SHOWN * 2]),
                     "gold rank": _gold_rank(rank_lists(rec), g.pools) if g and g.pools else ""})
    return pd.DataFrame(rows)
