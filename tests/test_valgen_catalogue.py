"""The catalogue-worded validation set (data/erc2-cat): questions from the generator's catalogue, the labels'
checks (every question labelled, how found, a number label's figure printed on a cited page), the halves of
data/splits.json and the report half's group totals."""
from __future__ import annotations

import collections
import json
import re
import unicodedata

import pandas as pd
import pytest

from rag import valgen_catalogue as vc
from rag.core.config import PROJECT_ROOT
from rag.core.dataset import load_dataset
from rag.core.labels import latest_labels
from rag.core.pdf import pdf_page_texts
from rag.evaluate import halves

CAT = PROJECT_ROOT / "data" / "erc2-cat"
SHARED = PROJECT_ROOT.parent / "shared"
needs_shared = pytest.mark.skipif(not (SHARED / "erc2-catalogue.json").exists() or not (SHARED / "erc2-dev").is_dir(),
                                  reason="needs ../shared (catalogue, erc2-dev, erc2-extra)")


def _report(company="Acme Corp", industry="Retail", cur="USD", sha1="a" * 40) -> dict:
    return {"sha1": sha1, "company_name": company, "cur": cur, "major_industry": industry}


CAT_SMALL = {"financial_metrics": ["Total revenue (in {cur})", "Gross margin (%)"],
             "industry_metrics": {"Retail": ["Number of stores at year-end", "Total store floor area (sqm)",
                                             "Value of inventory on hand at year-end"]}}


def test_every_metric_is_asked_in_the_generator_words_and_booleans_on_every_second_report():
    qs = vc.generate([_report(sha1="b" * 40, company="Beta Ltd", cur="EUR"), _report()], CAT_SMALL)
    acme, beta = qs[:len(qs) - 6], qs[len(qs) - 6:]  # sha1 order: Acme (aaa..) first, with the yes/no
    assert [q["kind"] for q in acme] == ["number"] * 6 + ["boolean"] * 10
    assert acme[0]["text"] == ("What was the value of Number of stores at year-end of Acme Corp at the end of the "
                               "period listed in annual report? If data is not available, return 'N/A'.")
    assert acme[1]["text"].startswith("For Acme Corp, what was the value of Total store floor area (sqm) at the end")
    assert "Total revenue (in USD) for Acme Corp according to the annual report" in acme[3]["text"]
    assert acme[4]["text"].startswith("According to the annual report, what is the Gross margin (%) for Acme Corp  (")
    assert "laid off by Acme Corp" in acme[5]["text"] and "let go by Beta Ltd" in beta[-1]["text"]
    assert "Total revenue (in EUR) for Beta Ltd" in beta[3]["text"] and all(q["kind"] == "number" for q in beta)
    assert len({q["text"] for q in qs}) == len(qs)


@needs_shared
def test_the_committed_questions_are_what_the_generator_writes(tmp_path):
    vc.write_set(tmp_path, SHARED / "erc2-extra", SHARED / "erc2-dev")
    for f in ("questions.json", "subset.csv"):
        assert (tmp_path / f).read_bytes() == (CAT / f).read_bytes(), f


def test_a_labeller_line_is_checked_before_it_is_appended():
    num, yes = {"kind": "number"}, {"kind": "boolean"}
    ok = {"qid": "q1", "value": 5.0, "pages": [3], "how_found": "synonym", "evidence": "p3 '5 stores'"}
    assert vc.check_part_line(ok, num, 10) == []
    assert vc.check_part_line({**ok, "pages": [11]}, num, 10)  # past the last page
    assert vc.check_part_line({**ok, "pages": [0]}, num, 10)  # 1-based
    assert vc.check_part_line({**ok, "how_found": "guessed"}, num, 10)
    assert vc.check_part_line({**ok, "evidence": ""}, num, 10)
    assert vc.check_part_line({**ok, "value": True}, num, 10)
    na = {"qid": "q1", "value": "N/A", "pages": [], "how_found": "na", "searched": "stores|outlets: none"}
    assert vc.check_part_line(na, num, 10) == []
    assert vc.check_part_line({**na, "searched": ""}, num, 10)
    assert vc.check_part_line({**na, "how_found": "verbatim"}, num, 10)
    assert vc.check_part_line({**na, "value": False}, yes, 10) == []
    assert vc.check_part_line({**ok, "value": 1.0}, yes, 10)  # a yes/no needs true/false


# ---- the labels of data/erc2-cat --------------------------------------------------------------------------
def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).casefold()


def _printed_forms(value: float) -> set[str]:
    """How a figure worth ``value`` may be printed: at a scale of 1, 10^-2 (cents, pence), 10^3, 10^6 or
    10^9, with thousands separators or without, up to two decimals."""
    out = set()
    for s in (1, 1e-2, 1e3, 1e6, 1e9):
        x = abs(value) / s
        if x < 0.01:
            continue
        for d in (0, 1, 2):
            if abs(round(x, d) - x) <= 1e-9 * max(1.0, x):
                out |= {f"{x:,.{d}f}", f"{x:.{d}f}"}
                break
    return out


@needs_shared
def test_every_question_is_labelled_and_every_number_is_printed_on_a_cited_page():
    ds = load_dataset(CAT, check_hashes=False)
    latest = latest_labels(CAT / "labels.jsonl")
    assert {q.text for q in ds.questions} == set(latest), "every question labelled, nothing else"
    pdfs = {r.sha1: r.pdf for r in ds.reports}
    pages: dict[tuple[str, int], str] = {}
    by_sha = collections.defaultdict(set)
    for rec in latest.values():
        for p in rec["pages"]:
            by_sha[p["sha1"]].add(p["page"])
    for sha, nums in by_sha.items():
        pages.update({(sha, n): _norm(t) for n, t in pdf_page_texts(pdfs[sha], sorted(nums))})
    bad = []
    for rec in latest.values():
        assert rec.get("how_found") in vc.HOW_FOUND, rec["qid"]
        if rec["kind"] != "number" or rec["value"] == "N/A" or not rec["value"]:
            continue
        texts = [pages[(p["sha1"], p["page"])] for p in rec["pages"]]
        if not any(f in t for f in _printed_forms(float(rec["value"])) for t in texts):
            bad.append(f"{rec['qid']}: {rec['value']} printed on none of its pages {[p['page'] for p in rec['pages']]}")
    # A few figures are printed in words ("two facilities") or as a sum the labeller noted: allowed, named.
    print(f"{len(bad)} number labels whose figure no cited page prints:", *bad, sep="\n  ")
    assert len(bad) <= 0.05 * sum(r["kind"] == "number" and r["value"] != "N/A" for r in latest.values()), \
        "\n".join(bad)


@needs_shared
def test_the_makeup_table_counts_every_question_once():
    t = vc.makeup(CAT)
    assert t.n.sum() == len(json.loads((CAT / "questions.json").read_text(encoding="utf-8")))
    assert set(t.half) == {"tuning", "report"} and "unlabelled" not in set(t.gold)
    values = t[(t.kind == "number") & (t.gold == "value")]
    assert values.n.sum() >= 100 and set(values.how_found) == {"verbatim", "synonym"}


# ---- the halves --------------------------------------------------------------------------------------------
def test_the_split_is_by_company_and_erc2_dev_is_report_only():
    s = halves.load_splits()
    rep, tun = set(s["erc2"]["report"]), set(s["erc2"]["tuning"])
    assert rep and tun and not rep & tun
    dev = SHARED / "erc2-dev" / "subset.csv"
    if dev.exists():
        assert set(pd.read_csv(dev).sha1) <= rep
    fb = s["financebench"]
    assert fb["report"] and fb["tuning"] and not set(fb["report"]) & set(fb["tuning"])


def _frame(rows):
    return pd.DataFrame(rows, columns=["question", "kind", "gold", "gold_na", "correct", "answer_na",
                                       "answer_score", "ref_score"])


def test_a_question_is_in_a_half_only_when_every_company_it_names_is(tmp_path):
    root = tmp_path / "d"
    (root / "pdfs").mkdir(parents=True)
    shas = [c * 40 for c in "abc"]
    for s in shas:
        (root / "pdfs" / f"{s}.pdf").write_bytes(b"%PDF-1.4\n")
    (root / "subset.csv").write_text("sha1,company_name,cur\n" + "".join(
        f"{s},{n},USD\n" for s, n in zip(shas, ["Acme Corp", "Beta Ltd", "Gamma Inc"])), encoding="utf-8")
    qs = [{"text": "What was the revenue of Acme Corp?", "kind": "number"},
          {"text": "Did Beta Ltd buy back shares?", "kind": "boolean"},
          {"text": 'Which had the highest revenue: "Acme Corp", "Gamma Inc"?', "kind": "comparative"},
          {"text": 'Which had the highest revenue: "Acme Corp", "Beta Ltd"?', "kind": "comparative"}]
    (root / "questions.json").write_text(json.dumps(qs), encoding="utf-8")
    ds = load_dataset(root, check_hashes=False)
    splits = {"erc2": {"report": {shas[0]: "Acme Corp", shas[2]: "Gamma Inc"}, "tuning": {shas[1]: "Beta Ltd"}}}
    assert halves.half_texts(ds, "report", splits) == {qs[0]["text"], qs[2]["text"]}
    assert halves.half_texts(ds, "tuning", splits) == {qs[1]["text"]}
    per_q = _frame([(q["text"], q["kind"], ["1"], False, i == 0, False, float(i == 0), 1.0) for i, q in enumerate(qs)])
    part = halves.half_per_question(per_q, ds, "report", splits)
    assert list(part.question) == [qs[0]["text"], qs[2]["text"]]
    assert halves.totals(part) == {"n": 2, "G": 1.0, "R": 2.0, "score": 2.0}
