"""P(true) of a yes/no question set against the same company's other yes/no questions on the same page
("contextual calibration"): does a page the reader says true on for this question also get a high P(true)
for questions about other events? Replays a 06 run; asks the local reader only for the other questions'
P(true) (one short decision call each; llama.cpp's prompt cache reuses the page, so ~1 s a call).

    python benchmarks/bool_calibration.py --data D --run RUN [--both 0.2] [--cuts 0.11,0.13] [--cache-dir C] [--totals-only]
        [--decision both|logprob] [--ts 0.2,0.3] [--json OUT]

The rule replayed is ``answer.boolean_calibration`` (rag.answer.booleans.calibration) at each cut as
``boolean_calibration_min``: a page says true as ``answer.boolean_decision = "both"`` at ``--both`` does (its
reasoning says true with P(true) >= t), and the page's score -- its own P(true) minus the mean P(true) of the
other yes/no templates (prompts/checks/controls.txt) with the question's company on that page -- is at least the
cut; a page that fails the cut is passed over and reading goes on, as 06 does. ``--decision logprob`` replays
``answer.boolean_decision = "logprob"`` instead (a page says true on its P(true) >= t alone); ``--ts`` replays several
t (default: ``--both``). True at the first page that passes, false when none does. Pages after the first true are read only by a
run made with ``answer.early_stop=false``; where the rule needs one an early-stopped run never read, the
question counts as unread. Prints per cut: True-gold answered True, False-gold answered False, right,
unread, and the balanced accuracy (the mean of the two groups' shares). ``--totals-only``: no per-question line
(a report half). ``--json OUT``: the table's rows also written to OUT, so the rows of two builds' runs can be set
side by side (benchmarks/bool_builds.py).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from booleans import boolean_calls, page_says_true  # noqa: E402

from rag.core.config import load_config  # noqa: E402
from rag.core.dataset import load_dataset  # noqa: E402


def decide(scores: list[float | None], read_all: bool, cut: float) -> bool | None:
    """The rule's answer from the scores of the pages that say true (reading order): True at the first score
    >= cut; False when none is and every page was read; None when an unread page could still decide."""
    if any(s is not None and s >= cut for s in scores):
        return True
    return False if read_all else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python benchmarks/bool_calibration.py")
    ap.add_argument("--data", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--both", type=float, default=0.2)
    ap.add_argument("--decision", choices=("both", "logprob"), default="both")
    ap.add_argument("--ts", default=None, help="thresholds t of the decision (default: --both)")
    ap.add_argument("--json", default=None, help="also write the table's rows here")
    ap.add_argument("--cuts", default="-1,0,0.05,0.09,0.1,0.11,0.12,0.13,0.15,0.2",
                    help="cuts of own - mean(others) (a report half: the tuning half's choice only)")
    ap.add_argument("--cache-dir", default=None, help="the run's model cache (another build's)")
    ap.add_argument("--totals-only", action="store_true")
    a = ap.parse_args(argv)

    from rag.answer.booleans import calibration_call
    from rag.answer.common.context import candidates_by_report, pack_parts
    from rag.answer.common.prompts import format_context
    from rag.chunk import token_counter
    from rag.models import get_llm
    from rag.retrieve import load_retrieval

    ds = load_dataset(a.data, check_hashes=False)
    cfg = load_config("offline", data_dir=a.data, run=a.run, cache_dir=a.cache_dir)
    man = json.loads((cfg.run_dir / "06_answer" / "manifest.json").read_text())
    early = man.get("config", {}).get("answer", {}).get("early_stop", True)
    counter, llm = token_counter(cfg), get_llm(cfg)
    qs = [q for q in ds.questions if q.kind == "boolean" and q.text in ds.gold]

    def score(cands: list, text: str, call: dict) -> float | None:
        """The calibration score of one true page, its own P(true) as 06 recorded it."""
        page = call["pages"][0]
        mine = [p for p in cands[page["sha1"]] if p.page == page["page"]]
        context = format_context([p.text for p in pack_parts(mine, cfg.answer.max_context_tokens, counter, 1)[0]])
        return calibration_call(llm, cfg, text, context, call.get("p_true"))["calib_score"]

    cuts = [float(c) for c in a.cuts.split(",") if c]
    ts = [float(t) for t in (a.ts or str(a.both)).split(",") if t]
    says = page_says_true if a.decision == "both" else (lambda c, t: (c.get("p_true") or 0.0) >= t)
    golds = {q.qid: ds.gold[q.text].answers[0].strip().lower() == "true" for q in qs}
    per: dict[tuple[float, str], tuple[bool, list, bool]] = {}
    for q in qs:
        calls, _ = boolean_calls(cfg.run_dir, q.qid)
        gold = golds[q.qid]
        read_all = not (early and calls and calls[-1].get("value") is True)  # reading did not end on a true
        cands, scored = None, {}  # a page true at several t is scored once (index of its call)
        for t in ts:
            trues = [i for i, c in enumerate(calls) if says(c, t)]
            if trues and cands is None:
                cands = candidates_by_report(load_retrieval(cfg, q.qid))
            for i in trues:
                if i not in scored:
                    scored[i] = score(cands, q.text, calls[i])
            scores = [scored[i] for i in trues]
            per[(t, q.qid)] = (gold, scores, read_all)
            if not a.totals_only and scores:
                print(f"t={t:.2f} {q.qid} {'T' if gold else 'F'} scores "
                      f"{' '.join('-' if s is None else f'{s:.3f}' for s in scores)}")
    n_t = sum(golds.values())
    n_f = len(qs) - n_t
    print(f"{a.data} / {a.run}: {len(qs)} yes/no questions ({n_t} True-gold, {n_f} False-gold), "
          f"decision {a.decision}")
    print(f"{'t':>5} {'cut':>6} {'True-gold->True':>16} {'False-gold->False':>18} {'right':>6} {'unread':>7} "
          f"{'balanced':>9}")
    rows = []
    for t in ts:
        for cut in cuts:
            ans = {qid: (decide(s, r, cut), g) for (tt_, qid), (g, s, r) in per.items() if tt_ == t}
            tt = sum(1 for v, g in ans.values() if v is True and g)
            ff = sum(1 for v, g in ans.values() if v is False and not g)
            unread = sum(1 for v, _ in ans.values() if v is None)
            bal = (tt / n_t if n_t else 0.0) / 2 + (ff / n_f if n_f else 0.0) / 2
            rows.append({"decision": a.decision, "t": t, "cut": cut, "true_gold_true": tt, "true_gold": n_t,
                         "false_gold_false": ff, "false_gold": n_f, "unread": unread, "balanced": round(bal, 4)})
            print(f"{t:>5.2f} {cut:>6.2f} {tt:>10} / {n_t:<4} {ff:>11} / {n_f:<4} {tt + ff:>6} {unread:>7} "
                  f"{bal:>9.3f}")
    if a.json:
        Path(a.json).write_text(json.dumps({"data": a.data, "run": a.run, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
