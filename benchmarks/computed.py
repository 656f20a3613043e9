"""Benchmark computed figures (rag.answer.computed.computed) on FinanceBench number questions, on ORACLE pages.

    .venv/bin/python benchmarks/computed.py [--data data/fb-dev] [--cache outputs/bench-computed/pages.json]
        [--preset offline] [--set K=V] [--show]

For every number question of an imported FinanceBench dataset (``rag import financebench``): is a formula
recognised in its wording (``recognise``), and does the benchmark's justification say the gold was computed
("calculated using other simpler metrics", "execute the desired ... calculation")? Then, on the gold
evidence pages only (oracle retrieval: the filing's gold pages, parsed by the project's model-free parser
and cleaned by 02's code, cached in ``--cache``; no index, no model), each question is answered
(a) by the existing number path (table + sentence candidates, code pick: ``answer.figure_pick="code"``,
``figure_fallback="na"``, so no model call) and (b) with ``answer.computed_figures`` on, and scored with
FinanceBench's tolerance (:func:`rag.evaluate.financebench.judge_number`). Prints counts by group:
computed-gold questions (recognised, computed, right) and the other number questions (unchanged?).
These are oracle-page numbers: retrieval misses are not in them.

``--run RUN``: the pages a real run's stage 05 retrieved instead (``outputs/RUN/05_retrieve``, the routed
reports' candidates in rank order, as 06 reads them), so retrieval misses count.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rag.answer.computed.formulas import load_lexicon, lexicon_path, recognise  # noqa: E402
from rag.answer.common.context import CtxPage  # noqa: E402
from rag.answer.fuse import answer_pages  # noqa: E402
from rag.core.artifacts import write_json_atomic  # noqa: E402
from rag.core.config import load_config  # noqa: E402
from rag.core.dataset import load_dataset  # noqa: E402
from rag.evaluate.financebench import judge_number, load_meta  # noqa: E402
from rag.pipeline import parse_set  # noqa: E402

COMPUTED_GOLD = re.compile(r"calculated using other simpler metrics|execute the desired .{0,30}calculation", re.I)


def oracle_pages(ds, answers: dict, cache: Path, cfg, neighbours: int = 0) -> dict[str, str]:
    """``{"sha1:page" (1-based): clean Markdown}`` of every gold evidence page (and its ``neighbours`` pages on
    each side), parsed once and cached."""
    from rag.clean import clean_report
    from rag.core.records import ParsedReport
    from rag.parse import count_pages
    from rag.parse.docling_pages import _native_window

    have = json.loads(cache.read_text()) if cache.exists() else {}
    want: dict[str, set[int]] = {}
    for a in answers.values():
        for pool in a.get("reference_pools", []):
            for ref in pool:
                sha1, idx = ref.split(":")
                p = int(idx) + 1  # gold is 0-based; pages in rag are 1-based
                want.setdefault(sha1, set()).update(range(max(1, p - neighbours), p + neighbours + 1))
    by_sha = {r.sha1: r for r in ds.reports}
    for sha1, pages in want.items():
        n = count_pages(by_sha[sha1].pdf)
        todo = sorted(p for p in pages if f"{sha1}:{p}" not in have and p <= n)
        if not todo:
            continue
        pdf = by_sha[sha1].pdf
        parsed = [pg for p in todo for pg in _native_window(Path(pdf), p, p, cfg.parse)]
        rep = ParsedReport(sha1=sha1, pdf=str(pdf), pipeline="native", n_pages=len(parsed), pages=parsed)
        clean, _ = clean_report(rep, by_sha[sha1].company, cfg, str(pdf), by_sha[sha1].currency or "USD")
        have.update({f"{sha1}:{p.page}": p.markdown for p in clean.pages})
        write_json_atomic(cache, have, indent=None)
    return have


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default="data/fb-dev")
    ap.add_argument("--cache", default="outputs/bench-computed/pages.json")
    ap.add_argument("--preset", default="offline")
    ap.add_argument("--set", action="append", default=[], help="config override K=V")
    ap.add_argument("--show", action="store_true", help="one line per question")
    ap.add_argument("--neighbours", type=int, default=0,
                    help="also the N pages before and after each gold page, ranked after the gold pages (distractors)")
    ap.add_argument("--gold-last", action="store_true", help="rank the neighbour pages above the gold pages")
    ap.add_argument("--run", help="answer from this run's 05 candidates (outputs/RUN) instead of the gold pages")
    a = ap.parse_args(argv)
    base = {"answer.figure_pick": "code", "answer.figure_fallback": "na", **parse_set(a.set)}
    cfg_off = load_config(a.preset, {**base, "answer.computed_figures": False})
    cfg_on = load_config(a.preset, {**base, "answer.computed_figures": True})
    ds = load_dataset(Path(a.data))
    meta = load_meta(ds)
    answers = json.loads((Path(a.data) / "answers.json").read_text())
    lex = load_lexicon(lexicon_path(cfg_on))
    t0 = time.perf_counter()
    texts = {} if a.run else oracle_pages(ds, answers, Path(a.cache), cfg_on, a.neighbours)
    if a.run:
        from rag.answer.common.context import candidates_by_report, merged_pages
        from rag.retrieve import load_retrievals

        records = load_retrievals(cfg_on.path("outputs_dir") / a.run)  # a run's name or folder
    t_pages = time.perf_counter() - t0
    counter = len  # token counts only go into the debug record
    groups: dict[str, dict[str, int]] = {}
    t1 = time.perf_counter()
    for q in ds.questions:
        m = meta.get(q.text)
        if not m or m["form"] != "number":
            continue
        gold = answers[q.text]
        group = "computed gold" if COMPUTED_GOLD.search(m.get("justification", "")) else "extracted gold"
        g = groups.setdefault(group, dict.fromkeys(("questions", "recognised", "computed", "right_computed",
                                                    "right_before", "right_after", "changed"), 0))
        g["questions"] += 1
        ask = recognise(q.text, lex)
        g["recognised"] += ask is not None
        refs = [(r.split(":")[0], int(r.split(":")[1]) + 1) for pool in gold.get("reference_pools", []) for r in pool]
        extra = [(s, p + d) for s, p in refs for d in range(-a.neighbours, a.neighbours + 1) if d]
        if a.run:
            rec = records.get(q.qid)
            pages = merged_pages(candidates_by_report(rec), rec.routed_sha1s) if rec else []
        else:
            pages = [CtxPage(s, p, texts[f"{s}:{p}"], rank) for rank, (s, p) in
                     enumerate(k for k in dict.fromkeys(extra + refs if a.gold_last else refs + extra)
                               if f"{k[0]}:{k[1]}" in texts)]
        rep = next((r for r in ds.reports if pages and r.sha1 == pages[0].sha1), None)
        cur, company = (rep.currency if rep else None), (rep.company if rep else "")
        before = answer_pages(None, cfg_off, "number", q.text, pages, cur, counter, company)
        after = answer_pages(None, cfg_on, "number", q.text, pages, cur, counter, company)
        ans = (gold.get("answers") or [""])[0]  # the gold in the question's unit, as the scorer reads it (07)
        ok_b = judge_number(before["value"], ans, m["unit"], int(m["decimals"]))
        ok_a = judge_number(after["value"], ans, m["unit"], int(m["decimals"]))
        comp = after["interpretation"].get("computed") if after["interpretation"] else None
        done = bool(comp and "value" in comp)
        g["computed"] += done
        g["right_computed"] += done and ok_a
        g["right_before"] += ok_b
        g["right_after"] += ok_a
        g["changed"] += before["value"] != after["value"]
        if a.show:
            why = (comp or {}).get("fallback", "")
            ops = "; ".join(f"{o['operand']} {o['year']}={o['value']:g} p{o['page']} '{o['label'][:30]}'"
                            for o in (comp or {}).get("operands", []))
            print(f"{q.qid} {m['financebench_id'][-5:]} {group[:4]} "
                  f"formula={ask.formula.name if ask else '-'} gold={m['gold_as_written']} "
                  f"before={before['value']} ({'ok' if ok_b else 'x'}) after={after['value']} "
                  f"({'ok' if ok_a else 'x'}) {why} | {ops}")
    secs = time.perf_counter() - t1
    around = (f" + {a.neighbours} neighbour page(s) each side, ranked {'above' if a.gold_last else 'after'} them"
              if a.neighbours else "")
    if a.run:
        print(f"pages retrieved by outputs/{a.run}/05_retrieve (the routed reports' candidates); no model")
    else:
        print(f"ORACLE pages (gold evidence pages{around}; "
              f"parsed+cleaned pages in cache: {len(texts)}, {t_pages:.1f}s); no retrieval, no model")
    for name, g in groups.items():
        print(f"{name}: {g['questions']} number questions | formula recognised {g['recognised']} | computed "
              f"{g['computed']} (right {g['right_computed']}) | right: existing path {g['right_before']}, "
              f"with computed_figures {g['right_after']} | answers changed {g['changed']}")
    print(f"answering seconds, both paths, all number questions: {secs:.1f}s (shared 2-core machine, contended)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
