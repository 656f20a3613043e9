"""Reasoning viewer: question -> retrieved pages with scores -> a ranking made in code -> each model call's
reasoning -> answer.

``reasoning_viewer(cfg, ds=None)`` (or a path to ``06_answer/debug``) returns an ipywidgets VBox with a
question picker; ``render_debug_html(record)`` is the plain-HTML body (usable without widgets).
Reads only the stage-06 debug records; page numbers shown are 1-based physical pages.
"""
from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any


def _e(x: Any) -> str:
    return html.escape(x if isinstance(x, str) else json.dumps(x, ensure_ascii=False, default=str))


def _pages_table(rows: list[dict[str, Any]], cited: set[tuple[str, int]]) -> str:
    out = ["<table><tr><th>rank</th><th>report</th><th>page</th><th>score</th><th>cited</th></tr>"]
    for r in rows:
        mark = "&#10003;" if (r["sha1"], r["page"]) in cited else ""
        score = "" if r.get("score") is None else f"{r['score']:.3f}"
        out.append(f"<tr><td>{r.get('rank', '')}</td><td>{_e(r['sha1'][:8])}</td><td>{r['page']}</td>"
                   f"<td>{score}</td><td>{mark}</td></tr>")
    return "".join(out) + "</table>"


def _calls_html(calls: list[dict[str, Any]]) -> str:
    out = []
    for i, c in enumerate(calls, 1):
        parsed = c.get("parsed") or {}
        pages = ", ".join(f"{p['page']}" for p in c.get("pages", []))
        p_true = f" (P(true) {c['p_true']:.3f})" if c.get("p_true") is not None else ""
        out.append(
            f"<details{' open' if i == 1 else ''}><summary>call {i} ({_e(c.get('kind', ''))}, pages {pages}, "
            f"{c.get('seconds', '')} s, prompt {_e(c.get('prompt_version', ''))}"
            f"{', repaired' if c.get('repaired') else ''}) &rarr; <b>{_e(c.get('value', ''))}</b>{p_true}</summary>"
            f"<p><i>step by step:</i> {_e(parsed.get('step_by_step_analysis', ''))}</p>"
            f"<p><i>summary:</i> {_e(parsed.get('reasoning_summary', ''))}</p>"
            f"<p><i>cited labels:</i> {_e(c.get('cited_labels', []))} "
            f"<i>dropped:</i> {_e(c.get('dropped_labels', []))}</p>"
            + (f"<p><i>number:</i> {_e(c.get('interpretation'))}</p>" if c.get("interpretation") else "")
            + (f"<p style='color:#b00'>error: {_e(c['error'])}</p>" if c.get("error") else "")
            + f"<pre style='white-space:pre-wrap'>{_e(c.get('raw', ''))}</pre></details>")
    return "".join(out)


def _ranking_html(ranking: dict[str, Any] | None) -> str:
    """A text answer ranked in code (answer.text_ranking): the row groups scored, the one taken first."""
    if not ranking:
        return ""
    head = ("ranked in code: " + ("by the change to the next column" if ranking.get("by_change") else "by the figure")
            if ranking.get("taken") else "ranking: no group printed enough of the question's words (the free answer)")
    rows = "".join(f"<tr><td>{g.get('score')}</td><td>{g.get('cos')}</td><td>{g.get('page')}</td>"
                   f"<td>{_e(g.get('describe', ''))}</td></tr>" for g in ranking.get("groups", []))
    return (f"<h5>{_e(head)}</h5><table><tr><th>words</th><th>cosine</th><th>page</th><th>rows</th></tr>{rows}"
            "</table>")


def render_debug_html(d: dict[str, Any]) -> str:
    """HTML of one debug record (``06_answer/debug/<qid>.json``)."""
    refs = {(r["sha1"], r["page"]) for r in d.get("references", [])}
    parts = [f"<h4>{_e(d['qid'])} · {_e(d['kind'])}</h4><p>{_e(d['question_text'])}</p>",
             f"<p>answer: <b>{_e(d.get('value'))}</b>"
             + (f" <i>({_e(d['na_reason'])})</i>" if d.get("na_reason") else "")
             + f" · references: {_e([(r['sha1'][:8], r['page']) for r in d.get('references', [])])}"
             + f" · {d.get('n_calls', 0)} call(s), {d.get('seconds', '')} s, tokens {_e(d.get('usage', {}))}</p>"]
    if d.get("sanity"):
        parts.append(f"<p>scale sanity: <b>{_e(d['sanity']['status'])}</b> {_e(d['sanity'].get('matches', [])[:3])}</p>")
    parts.append("<h5>retrieved pages</h5>" + _pages_table(d.get("retrieved", []), refs))
    parts.append(_ranking_html((d.get("interpretation") or {}).get("ranking")))
    parts.append(_calls_html(d.get("calls", [])))
    for s in d.get("sub_answers", []):
        srefs = {(r["sha1"], r["page"]) for r in s.get("references", [])}
        parts.append(f"<h5>{_e(s['company'])}: {_e(s['value'])}</h5><p>{_e(s['question'])}</p>"
                     + _pages_table(s.get("retrieved", []), srefs) + _calls_html(s.get("calls", [])))
    if d.get("pick_call"):
        parts.append("<h5>comparison</h5>" + _calls_html([d["pick_call"]]))
    return "".join(parts)


def reasoning_viewer(cfg_or_dir: Any, ds: Any = None):
    """Widget over the debug records of a run: ``cfg`` (reads ``outputs/<run>/06_answer/debug``) or a
    folder path. ``ds`` is accepted for symmetry with the other viewers and unused."""
    import ipywidgets as w

    from ...answer import load_answers

    # a folder: the run's 06_answer/debug folder (as before) or the run folder itself
    run = Path(cfg_or_dir).parent.parent if isinstance(cfg_or_dir, (str, Path)) and Path(cfg_or_dir).name == "debug" \
        else cfg_or_dir
    records = {q: r.model_dump(mode="json") for q, r in load_answers(run).items()}
    if not records:
        return w.HTML(f"<p>No debug records in {html.escape(str(run))}: run stage 06_answer first.</p>")
    options = [(f"{k} [{r['kind']}] {r['question_text'][:70]}", k) for k, r in records.items()]
    pick = w.Dropdown(options=options, description="question", layout=w.Layout(width="95%"))
    body = w.HTML(render_debug_html(records[options[0][1]]))
    pick.observe(lambda ch: setattr(body, "value", render_debug_html(records[ch["new"]])), names="value")
    return w.VBox([pick, body])
