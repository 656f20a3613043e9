"""Notebook widget: step through questions and see each candidate page with its scores and reasons.

``retrieval_viewer(run, gold=None, page_chars=1500) -> ipywidgets.VBox``

- ``run``: a RunConfig or run folder (records read through ``rag.retrieve.load_retrievals``; the run's
  05_retrieve folder also works), or a ``{qid: record}`` dict.
- ``gold``: optional ``{qid: set of (sha1, page)}`` (1-based pages) to mark gold pages with a star;
  :func:`gold_pages` builds it from a :class:`rag.core.dataset.Dataset`.

Prev / Next buttons and a question dropdown pick the question; for each routed report the candidate
pages are listed best first: page, final / retrieval / llm / dense / bm25 / fused scores, the reranker's
reason, and the first ``page_chars`` characters of the page under a collapsible <details>.
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any, Mapping


SCORE_COLUMNS = ("final", "retrieval", "llm", "cross_encoder", "dense", "bm25", "fused")
_STYLE = ("<style>.rag-rv table{border-collapse:collapse;font-size:12px}.rag-rv td,.rag-rv th{border:1px solid "
          "#ccc;padding:2px 5px;vertical-align:top}.rag-rv th{background:#eef}.rag-rv .gold{background:#efe}"
          ".rag-rv pre{white-space:pre-wrap;font-size:11px;max-height:300px;overflow:auto}</style>")


def viewer_records(source: Any) -> dict[str, dict[str, Any]]:
    """``{qid: record dict}`` from a run (RunConfig or run folder; the run's 05_retrieve folder also works),
    read through ``rag.retrieve.load_retrievals``; a ``{qid: record}`` mapping is taken as it is."""
    if isinstance(source, Mapping):
        return dict(source)
    from ...retrieve import STAGE, load_retrievals

    if isinstance(source, (str, Path)) and Path(source).name == STAGE:
        source = Path(source).parent
    return {q: r.model_dump(mode="json") for q, r in load_retrievals(source).items()}


def gold_pages(ds) -> dict[str, set[tuple[str, int]]]:
    """``{qid: {(sha1, page)}}`` from a Dataset's gold pools (1-based pages)."""
    out = {}
    for q in ds.questions:
        g = ds.gold.get(q.text)
        if g is not None:
            out[q.qid] = {(p.sha1, p.page) for pool in g.pools for p in pool}
    return out


def _fmt(v: Any) -> str:
    return "" if v is None else f"{v:.3f}" if isinstance(v, float) else html.escape(str(v))


def record_html(rec: Mapping[str, Any], gold: set[tuple[str, int]] | None = None, page_chars: int = 1500) -> str:
    """HTML of one 05_retrieve record (usable without ipywidgets, e.g. ``IPython.display.HTML``)."""
    gold = gold or set()
    parts = [_STYLE, "<div class='rag-rv'>",
             f"<p><b>{html.escape(rec['qid'])}</b> ({html.escape(rec['kind'])}): {html.escape(rec['question'])}</p>"]
    if not rec.get("routed"):
        parts.append("<p><i>No known company named: no report (the answer becomes N/A).</i></p>")
    u = rec.get("usage", {})
    parts.append(f"<p style='color:#666'>{rec.get('seconds', 0)} s · {u.get('prompt_tokens', 0)} prompt + "
                 f"{u.get('completion_tokens', 0)} completion tokens</p>")
    subs = rec.get("sub_questions", {})
    for r in rec.get("routed", []):
        sha1 = r["sha1"]
        parts.append(f"<h4>{html.escape(r['company'])} <small>{sha1[:10]}</small></h4>")
        if sha1 in subs:
            parts.append(f"<p>Sub-question: <i>{html.escape(subs[sha1])}</i></p>")
        search = rec.get("search", {}).get(sha1)
        if search:
            topics = ", ".join(search.get("lexicon_topics", [])) or "none"
            parts.append(f"<p style='color:#666'>Search: <i>{html.escape(search.get('query', ''))}</i> · "
                         f"lexicon topics: {html.escape(topics)}<details><summary>BM25 query</summary>"
                         f"<pre>{html.escape(search.get('bm25_query', ''))}</pre></details></p>")
        cands = rec.get("candidates", {}).get(sha1, [])
        cols = [c for c in SCORE_COLUMNS if any(p["scores"].get(c) is not None for p in cands)]
        parts.append("<table><tr><th>#</th><th>page</th>" + "".join(f"<th>{c}</th>" for c in cols)
                     + "<th>reason / text</th></tr>")
        for i, p in enumerate(cands, 1):
            is_gold = (sha1, p["page"]) in gold
            text = html.escape(p.get("text", "")[:page_chars])
            parts.append(
                f"<tr class='{'gold' if is_gold else ''}'><td>{i}</td><td>{p['page']}{' ★' if is_gold else ''}</td>"
                + "".join(f"<td>{_fmt(p['scores'].get(c))}</td>" for c in cols)
                + f"<td>{html.escape(p.get('reason', ''))}<details><summary>page text</summary><pre>{text}</pre>"
                  f"</details></td></tr>")
        parts.append("</table>")
        missed = sorted(pg for s, pg in gold if s == sha1 and pg not in {p["page"] for p in cands})
        if missed:
            parts.append(f"<p style='color:#a00'>Gold pages not retrieved: {missed}</p>")
    parts.append("</div>")
    return "".join(parts)


def retrieval_viewer(retrieve_dir: Path | str | Mapping[str, Any],
                     gold: Mapping[str, set[tuple[str, int]]] | None = None, page_chars: int = 1500):
    """The stepping widget (see the module docstring)."""
    import ipywidgets as w

    records = viewer_records(retrieve_dir)
    gold = gold or {}
    qids = list(records)
    if not qids:
        return w.HTML("<i>No 05_retrieve records.</i>")
    pick = w.Dropdown(options=[(f"{q} · {records[q]['question'][:70]}", q) for q in qids], value=qids[0],
                      layout=w.Layout(width="70%"))
    prev_b, next_b = w.Button(description="◀ Prev"), w.Button(description="Next ▶")
    body = w.HTML()

    def show(*_):
        body.value = record_html(records[pick.value], gold.get(pick.value), page_chars)

    def step(d):
        def go(_):
            i = qids.index(pick.value) + d
            if 0 <= i < len(qids):
                pick.value = qids[i]
        return go

    prev_b.on_click(step(-1))
    next_b.on_click(step(1))
    pick.observe(show, names="value")
    show()
    return w.VBox([w.HBox([prev_b, next_b, pick]), body])
