"""Right filing for FinanceBench questions with their company taken out, routed by content (``retrieve.route_by_content``).

    python benchmarks/fb_content_routing.py --data data/fb-dev --run fb [--half tuning|report|all] [--misses]

FinanceBench hands each question its filing, so some of its questions name no company. fb-dev has almost none,
so this makes them: every span routing reads as the company (its name, short form, ticker, acronym) is
replaced by "the company" (possessive kept), until routing finds no company. The question then goes to the
filing whose text fits it best (:func:`rag.retrieve.by_content.route_by_content`, over the 04 indexes of run
``--run``). Printed: right company and right filing (the question's doc_name), by answer form, beside the
right filings expected by chance (one of the candidate filings, those printing the asked period, at random). The report half is scored by group totals only
(``--misses`` is refused there).
"""
from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag.core.dataset import load_dataset  # noqa: E402
from rag.evaluate.financebench import load_meta  # noqa: E402
from rag.retrieve.names import normalize_tokens  # noqa: E402
from rag.retrieve.route import route_filings  # noqa: E402

NOT_A_NAME = ("period only", "one company", "given")  # routed without the company being written


def strip_company(text: str, reports) -> str | None:
    """``text`` with every company span routing reads replaced by "the company"; None when a span cannot be
    found back in the text (then the question is left out)."""
    for _ in range(6):
        routed = [r for r in route_filings(text, reports) if r.how not in NOT_A_NAME]
        if not routed:
            return text
        toks = normalize_tokens(text, lower=False)
        s, e = routed[0].span
        words = [re.escape(w) for w in toks[s:e]]
        pat = re.compile(r"(?<![\w])(?:the\s+)?" + r"[\W_]+".join(words) + r"(?P<pos>['’]s\b|['’](?!\w))?", re.I)
        new = pat.sub(lambda m: "the company" + ("'s" if m.group("pos") else ""), text, count=1)
        if new == text:
            return None
        text = new
    return None


def main(argv: list[str] | None = None) -> int:
    from rag.core.config import load_config
    from rag.retrieve.by_content import content_candidates, route_by_content
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from fb_routing import halves

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="data/fb-dev")
    ap.add_argument("--run", required=True, help="a run whose 04 indexes cover the dataset's filings")
    ap.add_argument("--half", choices=("tuning", "report", "all"), default="tuning")
    ap.add_argument("--misses", action="store_true", help="one line per question (tuning half only)")
    ap.add_argument("--pool", type=int, default=None, help="BM25 chunks per filing (default: by_content.POOL)")
    ap.add_argument("--top", type=int, default=None, help="cosines averaged (default: by_content.TOP)")
    a = ap.parse_args(argv)
    import rag.retrieve.by_content as bc

    bc.POOL, bc.TOP = a.pool or bc.POOL, a.top or bc.TOP
    if a.misses and a.half != "tuning":
        print("error: --misses shows questions: the tuning half only", file=sys.stderr)
        return 2
    ds = load_dataset(a.data, check_hashes=False)
    cfg = load_config("offline", data_dir=str(ds.root), run=a.run)
    meta = load_meta(ds)
    keep = None if a.half == "all" else halves(Path(a.data))[a.half]
    sha1_of_doc = {r.pdf.stem: r.sha1 for r in ds.reports}
    company_of = {r.sha1: tuple(normalize_tokens(r.company)) for r in ds.reports}
    by = defaultdict(lambda: [0, 0, 0, 0.0])  # form -> [questions, right company, right filing, chance]
    skipped = 0
    for q in ds.questions:
        m = meta.get(q.text)
        if m is None or (keep is not None and m.get("company", "").casefold() not in keep):
            continue
        stripped = strip_company(q.text, ds.reports)
        if stripped is None:
            skipped += 1
            continue
        got = route_by_content(cfg, stripped, ds.reports)
        gold = sha1_of_doc.get(m["doc_name"])
        cands = [r.sha1 for r in content_candidates(stripped, ds.reports)]
        chance = (gold in cands) / max(1, len(cands))  # one of the filings printing the asked period, at random
        right_co = bool(got) and company_of[got.sha1] == company_of.get(gold)
        right = bool(got) and got.sha1 == gold
        for form in (m.get("form") or q.kind, "all"):
            by[form][0] += 1
            by[form][1] += right_co
            by[form][2] += right
            by[form][3] += chance
        if a.misses:
            print(f"  {'ok  ' if right else 'MISS'} {m.get('financebench_id')} {m['doc_name']}: {stripped!r}\n"
                  f"       -> {got.why if got else 'nothing'}")
    n_co = len(set(company_of.values()))
    print(f"{a.data}, {a.half} half, run {a.run}: questions with their company taken out, routed by content "
          f"(pool {bc.POOL}, mean of {bc.TOP}) "
          f"({skipped} left out: a span not found back in the text); {n_co} companies\n")
    print("| form | questions | right company | right filing | right filing by chance |\n|---|---|---|---|---|")
    for form in sorted(by, key=lambda f: (f == "all", f)):
        n, co, fi, ch = by[form]
        print(f"| {form} | {n} | {co} ({co / n:.0%}) | {fi} ({fi / n:.0%}) | {ch:.1f} ({ch / n:.0%}) |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
