"""Boolean answers by gold (True-gold answered True, False-gold answered True) for the chain-of-thought decision
and for P(true) thresholds read from the log-probabilities 06 records (``answer.boolean_p_true``), and the
paired flips between two runs of the same questions (another CPU build, batch size or machine).

    python benchmarks/booleans.py --data D --run RUN [--run RUN2 ...] [--thresholds 0.5,0.7,0.9]
        [--both 0.15,0.2] [--claim 0.3,0.5] [--agree 0.3,1.1] [--gate 0.7,0.715] [--totals-only]

Per run and rule: True-gold answered True / n, False-gold answered True / n, right / n, and how many
questions the rule could not be replayed for ("unread": the run's reasoning said true on page k and stopped,
P(true) stayed below t on pages 1..k, so a logprob run would have read pages the run never read). A run made
with ``answer.boolean_decision=logprob`` is replayed exactly for its own threshold. With two or more runs:
flips against the first run per rule (questions answered differently), counted over questions replayable in
both. P(true) per page: the value token's probability of "true" against "false" (rag.models.logprobs). ``--both t``
replays ``answer.boolean_decision=both`` at t: true at the first page whose reasoning says true with P(true) >= t
(unread when the run stopped at a reasoning "true" below t). ``--claim t`` replays ``answer.boolean_claim_check``
at ``boolean_claim_min_p`` t from a run made with the note check, over that run's own decision: exact for every t
at or below the run's own (a run at 1.0 checked every true page and read on after each).
``--gate t`` replays ``both`` at ``--gate-both`` (0.2) with a topic gate by meaning: true only when some chunk of
the question's top ``--gate-pages`` (10) retrieved pages has the embedder's cosine >= t to the question (the
report discusses the asked topic at all). The gate is decided per question before any page is read, so its
replay is exact.
``--totals-only`` prints the group totals and no per-question line (a report half).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag.core.config import load_config  # noqa: E402
from rag.core.dataset import load_dataset  # noqa: E402


def boolean_calls(run_dir: Path, qid: str) -> tuple[list[dict], dict]:
    """06's page calls of one boolean question, in reading order, and its debug record."""
    d = json.loads((run_dir / "06_answer" / "debug" / f"{qid}.json").read_text())
    return [c for c in d.get("calls", []) if "value" in c or "p_true" in c], d


def page_says_true(call: dict, t: float) -> bool:
    """The "both" rule on one page call of a 06 debug record: its reasoning says true (``cot_answer``, else the
    page's value) and its P(true) is at least ``t``."""
    cot = (call.get("interpretation") or {}).get("cot_answer", call.get("value"))
    return cot is True and (call.get("p_true") or 0.0) >= t


def replay(calls: list[dict], record: dict, rule: str | float, early_stop: bool = True) -> bool | None:
    """The answer ``rule`` gives on these calls: "cot" = the recorded answer; a float t = true at the first
    page with P(true) >= t; "both:t" = true at the first page whose reasoning says true with P(true) >= t;
    "claim:t" = true at the first page the run's own decision made true (before its note check) whose note check
    (``claim_p``, answer.boolean_claim_check) is >= t, None for a run without the note check; false
    when no page does and every page the rule would read was read; None when the run stopped at a reasoning
    "true" (``early_stop``) before the pages the rule would read next. "agree:h" = true when two or more pages
    say true as "both:0.2" does, or one does with P(true) >= h; it needs every page read (a run with
    ``answer.early_stop=false``), None for a run that stopped early."""
    if rule == "cot":
        return record.get("value") is True
    ps = [c.get("p_true") for c in calls]
    if any(p is None for p in ps):
        return None
    if isinstance(rule, str) and rule.startswith("claim:"):  # "claim:t"
        t = float(rule.split(":")[1])
        hit = False
        for c in calls:
            if c.get("value") is True or (c.get("interpretation") or {}).get("claim_rejected"):  # a true page
                if c.get("claim_p") is None:
                    return None  # a run without the note check
                if c["claim_p"] >= t:
                    hit = True
                    break
    elif isinstance(rule, str) and rule.startswith("agree:"):  # "agree:h"
        if early_stop:
            return None  # the pages after the first true were never read
        h = float(rule.split(":")[1])
        says = [c["p_true"] for c in calls if page_says_true(c, 0.2)]
        hit = len(says) >= 2 or any(p >= h for p in says)
    elif isinstance(rule, str):  # "both:t"
        hit = any(page_says_true(c, float(rule.split(":")[1])) for c in calls)
    else:
        hit = any(p >= rule for p in ps)
    if hit:
        return True
    stopped_early = early_stop and bool(calls) and calls[-1].get("value") is True  # reading ended on a "true"
    return None if stopped_early else False


# The answer-format sentence of a yes/no question ("If there is no mention, return False."): how to answer.
_ANSWER_FORMAT = re.compile(r"\s*\bif (?:data|there|the company|no )[^?!]*?(?:[.?!](?=\s|$)|$)", re.I)


def gate_query(question: str, how: str) -> str:
    """The text the topic gate embeds: "question" = the question less its answer-format sentence (company and
    "in the annual report" kept); "search" = 05's search text (rag.core.questions.search_text, company kept)."""
    if how == "search":
        from rag.core.questions import search_text

        return search_text(question)
    return _ANSWER_FORMAT.sub("", question).strip()


def topic_cos(cfg, embedder, query: str, record: dict, pages: int, cache: dict) -> float:
    """Largest cosine between ``query`` and any chunk of the question's first ``pages`` retrieved pages (06's
    debug record ``retrieved``; pages as 03_chunk numbers them), embedded as retrieval embeds a query."""
    from rag.chunk import load_chunks
    from rag.models.embed import prefixes

    q_prefix, d_prefix = prefixes(cfg.embed)
    qv = embedder.embed([q_prefix + query])[0]
    best = 0.0
    for hit in record.get("retrieved", [])[:pages]:
        key = (hit["sha1"], hit["page"])
        if key not in cache:
            sha = hit["sha1"]
            if sha not in cache:
                cache[sha] = load_chunks(cfg, sha, cfg.retrieve.chunk_size)
            texts = [d_prefix + c.text for c in cache[sha] if c.page == hit["page"]]
            cache[key] = embedder.embed(texts) if texts else None
        if cache[key] is not None:
            best = max(best, float((cache[key] @ qv).max()))
    return best


def rule_name(rule: str | float) -> str:
    if isinstance(rule, str) and rule.startswith("agree:"):
        return f"2pages|p>={float(rule.split(':')[1]):g}"
    if isinstance(rule, str) and rule.startswith("gate:"):
        return f"gate>={float(rule.split(':')[1]):g}"
    if isinstance(rule, str) and rule.startswith("claim:"):
        return f"note>={float(rule.split(':')[1]):g}"
    if isinstance(rule, str):
        return rule if rule == "cot" else f"cot&p>={float(rule.split(':')[1]):g}"
    return f"p>={rule:g}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python benchmarks/booleans.py")
    ap.add_argument("--data", required=True)
    ap.add_argument("--run", action="append", required=True)
    ap.add_argument("--thresholds", default="0.1,0.15,0.2,0.25,0.3,0.4,0.5")
    ap.add_argument("--both", default="0.15,0.2,0.25", help="thresholds of the 'both' rule")
    ap.add_argument("--claim", default="", help="thresholds of the note check (answer.boolean_claim_check)")
    ap.add_argument("--agree", default="", help="thresholds h of the two-pages rule (runs with early_stop off)")
    ap.add_argument("--gate", default="", help="topic-gate cosine thresholds over the 'both' rule")
    ap.add_argument("--gate-both", type=float, default=0.2, help="the 'both' threshold the gate applies to")
    ap.add_argument("--gate-query", choices=("question", "search"), default="question",
                    help="what the gate embeds (see gate_query)")
    ap.add_argument("--gate-pages", type=int, default=10, help="retrieved pages whose chunks the gate reads")
    ap.add_argument("--totals-only", action="store_true", help="no per-question line (a report half)")
    a = ap.parse_args(argv)
    ds = load_dataset(a.data, check_hashes=False)
    qs = [q for q in ds.questions if q.kind == "boolean" and q.text in ds.gold]
    rules: list[str | float] = (["cot"] + [float(t) for t in a.thresholds.split(",") if t]
                                + [f"both:{t}" for t in a.both.split(",") if t]
                                + [f"claim:{t}" for t in a.claim.split(",") if t]
                                + [f"agree:{t}" for t in a.agree.split(",") if t])
    gates = [float(t) for t in a.gate.split(",") if t]
    answers: dict[str, dict] = {}
    for run in a.run:
        cfg = load_config("offline", data_dir=a.data, run=run)
        man = json.loads((cfg.run_dir / "06_answer" / "manifest.json").read_text())
        early = man.get("config", {}).get("answer", {}).get("early_stop", True)
        per: dict = {}
        embedder, cache = None, {}
        if gates:
            from rag.models.embedders import get_embedder

            embedder = get_embedder(cfg)
        for q in qs:
            calls, rec = boolean_calls(cfg.run_dir, q.qid)
            per[q.qid] = {r: replay(calls, rec, r, early) for r in rules}
            if gates:
                both = replay(calls, rec, f"both:{a.gate_both}", early)
                cos = topic_cos(cfg, embedder, gate_query(q.text, a.gate_query), rec, a.gate_pages, cache)
                for t in gates:
                    per[q.qid][f"gate:{t}"] = None if both is None else (both and cos >= t)
            per[q.qid]["ps"] = [c.get("p_true") for c in calls]
        answers[run] = per
    gold = {q.qid: ds.gold[q.text].answers[0].strip().lower() == "true" for q in qs}
    n_t, n_f = sum(gold.values()), sum(not g for g in gold.values())
    rules += [f"gate:{t}" for t in gates]
    print(f"{a.data}: {len(qs)} boolean questions ({n_t} True-gold, {n_f} False-gold)")
    print(f"{'run':<16} {'rule':<12} {'True-gold->True':>16} {'False-gold->True':>17} {'right':>7} {'unread':>7}")
    for run, per in answers.items():
        for r in rules:
            vals = {qid: v[r] for qid, v in per.items()}
            tt = sum(1 for q, v in vals.items() if v is True and gold[q])
            ft = sum(1 for q, v in vals.items() if v is True and not gold[q])
            right = sum(1 for q, v in vals.items() if v is not None and v == gold[q])
            unread = sum(1 for v in vals.values() if v is None)
            print(f"{run:<16} {rule_name(r):<12} {tt:>10} / {n_t:<3} {ft:>11} / {n_f:<3} {right:>7} {unread:>7}")
    if len(a.run) > 1:
        base = a.run[0]
        print(f"\nflips against {base} (questions replayable in both runs)")
        for run in a.run[1:]:
            for r in rules:
                both = [q for q in gold if answers[base][q][r] is not None and answers[run][q][r] is not None]
                flips = [q for q in both if answers[base][q][r] != answers[run][q][r]]
                ids = "" if a.totals_only else " ".join(flips)
                print(f"{run:<16} {rule_name(r):<12} {len(flips)} of {len(both)}  {ids}")
    if a.totals_only:
        return 0
    print("\nP(true) per page read (run: qid gold [p...])")
    for run, per in answers.items():
        for q in gold:
            ps = " ".join("-" if p is None else f"{p:.3f}" for p in per[q]["ps"])
            print(f"{run:<16} {q} {'T' if gold[q] else 'F'} [{ps}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
