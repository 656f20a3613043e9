"""Validation set: PDFs found through pdf_dirs.txt, the question generator, gold from labels, labeller
tools, and (when the shared PDFs and data/erc2-val/labels.jsonl exist) every label's evidence on its pages."""
from __future__ import annotations

import collections
import csv
import hashlib
import json
import re
import unicodedata
from pathlib import Path

import pytest

from rag import valgen, valgen_labels
from rag.answer.comparative import comparison_direction
from rag.core.config import PROJECT_ROOT
from rag.core.dataset import DatasetError, load_dataset
from rag.core.labels import append_label, latest_labels
from rag.retrieve.route import route, split_comparative

VAL = PROJECT_ROOT / "data" / "erc2-val"
SHARED = PROJECT_ROOT.parent / "shared"


def _fake_pdf(folder: Path, tag: str) -> str:
    data = f"%PDF-1.4 fake {tag}".encode()
    sha = hashlib.sha1(data).hexdigest()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{sha}.pdf").write_bytes(data)
    return sha


def _text_pdf(pages: list[str]) -> bytes:
    """A minimal real PDF (Helvetica, one text line per page) that pdfium can read."""
    n = len(pages)
    objs = ["<< /Type /Catalog /Pages 2 0 R >>",
            f"<< /Type /Pages /Kids [{' '.join(f'{4 + 2 * i} 0 R' for i in range(n))}] /Count {n} >>",
            "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for i, text in enumerate(pages):
        stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
        objs.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                    f"/Contents {5 + 2 * i} 0 R >>")
        objs.append(f"<< /Length {len(stream)} >>\nstream\n{stream.decode()}\nendstream")
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for k, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{k} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objs) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{o:010d} 00000 n \n" for o in offsets).encode()
    out += f"trailer\n<< /Size {len(objs) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def _write_ds(root: Path, shas: list[str], questions=None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    rows = ["sha1,company_name,cur,major_industry"]
    rows += [f"{s},Company {i} Inc.,USD,Technology" for i, s in enumerate(shas)]
    (root / "subset.csv").write_text("\n".join(rows) + "\n")
    (root / "questions.json").write_text(json.dumps(questions or [{"text": "What is X?", "kind": "number"}]))
    return root


# ---- pdf_dirs.txt ---------------------------------------------------------------------------------
def test_pdf_dirs_search_in_order_relative_and_absolute(tmp_path):
    a = _fake_pdf(tmp_path / "store_a", "a")
    b = _fake_pdf(tmp_path / "elsewhere" / "b", "b")
    _fake_pdf(tmp_path / "elsewhere" / "b", "a")  # the same report in a later folder: the first listed wins
    root = _write_ds(tmp_path / "ds", [a, b])
    (root / "pdf_dirs.txt").write_text(f"# PDFs live elsewhere\n\n../store_a\n{tmp_path / 'elsewhere' / 'b'}\n")
    ds = load_dataset(root, check_hashes=False)
    assert ds.report(a).pdf.resolve() == (tmp_path / "store_a" / f"{a}.pdf").resolve()
    assert ds.report(b).pdf.resolve() == (tmp_path / "elsewhere" / "b" / f"{b}.pdf").resolve()
    assert load_dataset(root).report(a).sha1 == a  # hashes check out too


def test_pdf_dirs_problems_are_named_and_pdfs_folder_wins(tmp_path):
    a = _fake_pdf(tmp_path / "store", "a")
    root = _write_ds(tmp_path / "ds", [a, "0" * 40])
    (root / "pdf_dirs.txt").write_text("../store\n# comment\n../missing\n")
    with pytest.raises(DatasetError) as e:
        load_dataset(root, check_hashes=False)
    msg = str(e.value)
    assert "pdf_dirs.txt:3: listed PDF folder" in msg and "missing does not exist" in msg
    assert re.search(rf"subset.csv:3: listed PDF \S*{'0' * 40}.pdf is absent", msg)
    (root / "pdf_dirs.txt").write_text("../store\n")
    with pytest.raises(DatasetError, match=r"subset.csv:3: listed PDF .* is absent"):
        load_dataset(root, check_hashes=False)
    _fake_pdf(root / "pdfs", "x")  # a pdfs/ folder exists: pdf_dirs.txt is not read
    with pytest.raises(DatasetError, match=r"subset.csv:2: listed PDF .*pdfs/" + a):
        load_dataset(root, check_hashes=False)


# ---- generator ------------------------------------------------------------------------------------
def _fake_reports(n_usd=16, extra=()) -> list[dict]:
    inds = ["Technology", "Financial Services", "Healthcare", "Retail"]
    rows = [{"sha1": f"{i:040x}", "company_name": f"Usco {i}, Inc.", "cur": "USD", "major_industry": inds[i % 4]}
            for i in range(n_usd)]
    rows += [{"sha1": f"{100 + i:040x}", "company_name": f"Euro Firm {i} AG", "cur": "EUR",
              "major_industry": "Healthcare"} for i in range(2)]
    rows += [{"sha1": f"{200:040x}", "company_name": "Mapleco Ltd", "cur": "CAD", "major_industry": "Mining"}]
    return rows + list(extra)


def test_generator_is_deterministic_and_hits_the_mix():
    reps = _fake_reports()
    fixed = [{"text": "What was the Gross margin (%) for Usco 1, Inc. according to the annual report (within the last "
                      "period or at the end of the last period)? If data is not available, return 'N/A'.",
              "kind": "number"}]
    a = valgen.generate(reps, 5, 60, fixed)
    assert a == valgen.generate(reps, 5, 60, fixed) and a != valgen.generate(reps, 6, 60, fixed)
    assert len(a) == 60 and len({q["text"] for q in a}) == 60 and fixed[0] in a
    kinds = collections.Counter(q["kind"] for q in a)
    for kind, share in valgen.MIX.items():
        assert abs(kinds[kind] / 60 - share) <= 0.03, (kind, kinds)
    names = {r["sha1"]: r["company_name"] for r in reps}
    per = collections.Counter()
    for q in a:
        routed = route(q["text"], names)
        if q["kind"] != "comparative":
            assert len(routed) == 1, q
            per[routed[0]] += 1
            continue
        curs = {r["cur"] for r in reps if r["sha1"] in routed}
        assert 2 <= len(routed) <= 5 and len(curs) == 1 and curs != {"CAD"}  # one currency, a group of >= 2
        assert len(split_comparative(q["text"], "comparative", names)) == len(routed)
        assert comparison_direction(q["text"]) in ("max", "min")
        assert re.search(r"^Which of the companies had the (highest|lowest) (total revenue|net income|total assets) in"
                         r" (USD|EUR) at the end of the period listed in annual report: \"", q["text"])
    assert set(per) == set(names) and max(per.values()) <= valgen.CAP  # every report, capped
    mapleco = [q["text"] for q in a if "Mapleco" in q["text"]]  # unknown industry: no industry-metric template
    assert mapleco and not any("what was the value of" in t.lower() for t in mapleco)
    # an excluded (dev) text is never produced
    assert a[1]["text"] not in {q["text"] for q in valgen.generate(reps, 5, 60, fixed, exclude=[a[1]["text"]])}


def test_generator_uses_templates_verbatim_and_flags():
    reps = _fake_reports(extra=[{"sha1": f"{300:040x}", "company_name": "Flagged plc", "cur": "USD",
                                 "major_industry": "Retail"}])
    texts = [q["text"] for q in valgen.generate(reps, 11, 80)]
    fin = [t for t in texts if t.startswith("According to the annual report, what is the ")]
    assert fin and all("  (within the last period or at the end of the last period)? If data is not available, "
                       "return 'N/A'." in t for t in fin)  # the generator's double space
    # a metadata flag column gates eligibility: no layoffs question for a report flagged False
    for r in reps:
        r["has_layoffs"] = "False" if r["company_name"] == "Usco 3, Inc." else "True"
    for seed in range(1, 6):
        assert not any("laid off by Usco 3, Inc." in q["text"] or "let go by Usco 3, Inc." in q["text"]
                       for q in valgen.generate(reps, seed, 80))


def test_write_valset_files(tmp_path):
    extra, dev = tmp_path / "shared" / "extra", tmp_path / "shared" / "dev"
    for d, rows in ((extra, _fake_reports()[:10]), (dev, _fake_reports()[10:])):
        (d / "pdfs").mkdir(parents=True)
        with open(d / "subset.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(valgen.COLUMNS))
            w.writeheader()
            w.writerows(rows)
    (extra / "questions.json").write_text(json.dumps([{"text": "Did Usco 2, Inc. do it?", "kind": "boolean"}]))
    (dev / "questions.json").write_text("[]")
    out = tmp_path / "data" / "val"
    valgen.main(["--out", str(out), "--seed", "3", "--count", "40", "--extra", str(extra), "--dev", str(dev)])
    first = {p.name: p.read_bytes() for p in out.iterdir()}
    valgen.main(["--out", str(out), "--seed", "3", "--count", "40", "--extra", str(extra), "--dev", str(dev)])
    assert first == {p.name: p.read_bytes() for p in out.iterdir()}  # same seed, same files
    assert (out / "pdf_dirs.txt").read_text() == "../../shared/extra/pdfs\n../../shared/dev/pdfs\n"
    raw = (out / "subset.csv").read_text()
    assert raw.startswith("sha1,company_name,cur,major_industry\n") and '"Usco 0, Inc."' in raw
    rows = list(csv.DictReader(raw.splitlines()))
    assert [r["sha1"] for r in rows] == sorted(r["sha1"] for r in _fake_reports())
    assert rows[0]["company_name"] == "Usco 0, Inc."
    qs = json.loads((out / "questions.json").read_text())
    assert len(qs) == 40 and {"text": "Did Usco 2, Inc. do it?", "kind": "boolean"} in qs


# ---- gold and labeller tools ----------------------------------------------------------------------
A, B = "a" * 40, "b" * 40


def test_gold_from_labels(tmp_path):
    qs = [{"text": "Revenue?", "kind": "number"}, {"text": "Staff?", "kind": "number"},
          {"text": "Who?", "kind": "names"}, {"text": "Highest?", "kind": "comparative"},
          {"text": "Buyback?", "kind": "boolean"}, {"text": "Skipped?", "kind": "name"},
          {"text": "Later?", "kind": "number"}]
    p = tmp_path / "labels.jsonl"
    append_label(p, "Revenue?", 1.0, [(A, 9)], "corrected", kind="number")
    append_label(p, "Revenue?", 406100000.0, [(A, 71), (A, 92)], "corrected", kind="number", evidence="406.1")
    append_label(p, "Staff?", "N/A", [], "corrected", kind="number", searched="employees: p1-p40")
    append_label(p, "Who?", ["CEO", "CFO"], [(A, 3)], "accepted", kind="names")
    append_label(p, "Highest?", "Bee Ltd", [(A, 5), (B, 7), (B, 8)], "corrected", kind="comparative")
    append_label(p, "Buyback?", False, [], "corrected", kind="boolean", searched="buyback, repurchase")
    append_label(p, "Skipped?", "X", [(A, 1)], "corrected", kind="name")
    append_label(p, "Skipped?", None, [], "skipped", kind="name")
    with open(p, "a") as f:  # a hand-written line: an int number is still written as ERC's float string
        f.write(json.dumps({"question": "Later?", "kind": "number", "value": 1300, "pages": [{"sha1": B, "page": 1}],
                            "status": "corrected"}) + "\n")
    gold = valgen_labels.gold_from_labels(qs, p)
    assert list(gold) == ["Revenue?", "Staff?", "Who?", "Highest?", "Buyback?", "Later?"]
    assert gold["Revenue?"] == {"kind": "number", "answers": ["406100000.0"],
                                "reference_pools": [[f"{A}:70", f"{A}:91"]]}
    assert gold["Staff?"] == {"kind": "number", "answers": ["N/A"], "reference_pools": []}
    assert gold["Who?"]["answers"] == ["CEO", "CFO"] and gold["Who?"]["reference_pools"] == [[f"{A}:2"]]
    assert gold["Highest?"]["answers"] == ["Bee Ltd"]
    assert gold["Highest?"]["reference_pools"] == [[f"{A}:4"], [f"{B}:6", f"{B}:7"]]  # one pool per report
    assert gold["Buyback?"]["answers"] == ["False"] and gold["Later?"]["answers"] == ["1300.0"]
    assert latest_labels(p)["Revenue?"]["evidence"] == "406.1"


def test_label_gold_page_grep_cli(tmp_path, capsys):
    sha = hashlib.sha1(pdf := _text_pdf(["Cover page", "Net revenue was USD 406.1 million in 2023"])).hexdigest()
    (tmp_path / "pdfs").mkdir()
    (tmp_path / "pdfs" / f"{sha}.pdf").write_bytes(pdf)
    root = _write_ds(tmp_path, [sha], [{"text": "Revenue of Company 0 Inc.?", "kind": "number"},
                                       {"text": "Buyback by Company 0 Inc.?", "kind": "boolean"}])
    valgen.main(["page", "--data", str(root), "--sha1", sha[:8], "--page", "2"])
    assert "USD 406.1 million" in capsys.readouterr().out
    valgen.main(["grep", "--data", str(root), "--sha1", sha[:8], r"revenue\s+was"])
    assert capsys.readouterr().out.startswith("p2: Net revenue was USD 406.1")
    valgen.main(["label", "--data", str(root), "--q", "q000", "--value", "406100000", "--pages", f"{sha[:6]}:2",
                 "--evidence", "USD 406.1 million"])
    valgen.main(["label", "--data", str(root), "--q", "1", "--value", "False", "--searched", "buyback: all pages"])
    rec = latest_labels(root / "labels.jsonl")["Revenue of Company 0 Inc.?"]
    assert rec["value"] == 406100000.0 and rec["pages"] == [{"sha1": sha, "page": 2}] and rec["labeller"] == "val-1"
    assert rec["status"] == "corrected" and rec["qid"] == "q000" and rec["kind"] == "number"
    capsys.readouterr()
    valgen.main(["gold", "--data", str(root)])
    gold = json.loads((root / "answers.json").read_text())
    assert gold["Revenue of Company 0 Inc.?"]["reference_pools"] == [[f"{sha}:1"]]
    assert gold["Buyback by Company 0 Inc.?"] == {"kind": "boolean", "answers": ["False"], "reference_pools": []}
    ds = load_dataset(root)  # the project reads the derived gold back with 1-based pages
    assert ds.gold["Revenue of Company 0 Inc.?"].pools[0][0].page == 2


# ---- the real validation set ------------------------------------------------------------------------
def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip().lower()


@pytest.mark.skipif(not SHARED.is_dir() or not (VAL / "labels.jsonl").exists(),
                    reason="needs ../shared PDFs and data/erc2-val/labels.jsonl")
def test_every_evidence_is_on_a_cited_page():
    ds = load_dataset(VAL, check_hashes=False)
    pdfs = {r.sha1: r.pdf for r in ds.reports}
    texts = {q.text for q in ds.questions}
    bad = []
    for text, rec in latest_labels(VAL / "labels.jsonl").items():
        assert text in texts, f"label for a question not in questions.json: {text[:80]}"
        if rec["status"] == "skipped":
            continue
        if rec.get("value") in ("N/A", False) or rec.get("value") is None:
            assert rec.get("searched"), f"{rec.get('qid')}: an N/A/False label needs 'searched'"
        if not rec.get("evidence"):
            assert rec.get("value") in ("N/A", False), f"{rec.get('qid')}: a non-N/A label needs 'evidence'"
            continue
        by_sha: dict[str, list[int]] = collections.defaultdict(list)
        for p in rec["pages"]:
            by_sha[p["sha1"]].append(p["page"])
        pages = [_norm(t) for sha, nums in by_sha.items() for _, t in valgen_labels.page_texts(pdfs[sha], sorted(nums))]
        for part in rec["evidence"].split(" | "):  # comparative: one snippet per company
            if not any(_norm(part) in t for t in pages):
                bad.append(f"{rec.get('qid')}: {part[:80]!r} not on pages {dict(by_sha)}")
    assert not bad, "\n".join(bad)


def test_subset_by_kind_keeps_reports_pdfs_and_gold(tmp_path, capsys):
    from rag.core.dataset import load_dataset
    from rag.valgen import main

    a = _fake_pdf(tmp_path / "store", "a")
    qs = [{"text": "What was the revenue of Company 0 Inc.?", "kind": "number"},
          {"text": "Did Company 0 Inc. pay a dividend?", "kind": "boolean"}]
    root = _write_ds(tmp_path / "ds", [a], qs)
    (root / "pdf_dirs.txt").write_text("../store\n")
    (root / "answers.json").write_text(json.dumps({q["text"]: {"kind": q["kind"], "answers": ["1"], "reference_pools": []}
                                                   for q in qs}))
    main(["subset", "--data", str(root), "--kinds", "number", "--out", str(tmp_path / "sub")])
    assert "1 questions of kind number" in capsys.readouterr().out
    ds = load_dataset(tmp_path / "sub")
    assert [q.kind for q in ds.questions] == ["number"] and list(ds.gold) == [qs[0]["text"]]
    assert ds.reports[0].pdf.resolve() == (tmp_path / "store" / f"{a}.pdf").resolve()
    main(["subset", "--data", str(root), "--kinds", "number,boolean", "--qids", "q001", "--out", str(tmp_path / "s2")])
    assert [q.kind for q in load_dataset(tmp_path / "s2").questions] == ["boolean"]


# ---- value questions (rag.valgen_values) ----------------------------------------------------------
from rag import valgen_values  # noqa: E402


def _val_ds(tmp_path: Path) -> Path:
    root = tmp_path / "val"
    root.mkdir()
    (root / "subset.csv").write_text("sha1,company_name,cur,major_industry\n" + "".join(
        f"{c * 40},{n},USD,Technology\n" for c, n in (("a", "Alpha Inc."), ("b", '"Beta, Inc."'), ("c", "Gamma plc"))))
    base = [{"text": f"base question {i}?", "kind": "boolean"} for i in range(valgen_values.BASE)]
    (root / "questions.json").write_text(json.dumps(base))
    return root


def _cands(root: Path, rows: list[str]) -> Path:
    p = root / "value_candidates.csv"
    p.write_text("family,sha1,metric,cur,ref,companies\n" + "".join(r + "\n" for r in rows))
    return p


def test_value_questions_use_templates_and_append(tmp_path):
    root = _val_ds(tmp_path)
    rows = ["custom,aaaa,Number of full-time employees,,,", "fin,bbb,Net income (in USD),USD,,",
            "layoffs,ccc,,,,", "compare,,total assets,USD,lowest,aaa;bbb;ccc", "ma,bbb,,,,"]
    qs = valgen_values.append_questions(root, _cands(root, rows), 42)
    first = (root / "questions.json").read_bytes()
    assert len(qs) == valgen_values.BASE + 5 and qs[0] == {"text": "base question 0?", "kind": "boolean"}
    new = qs[valgen_values.BASE:]
    assert [q["kind"] for q in new] == ["number", "number", "number", "comparative", "name"]
    assert new[4]["text"] == ("What was the latest merger or acquisition that Beta, Inc. was involved in? Return name of "
                              "the entity or 'N/A'")
    assert new[0]["text"] in [v.format(metric="Number of full-time employees", company="Alpha Inc.")
                              for v in valgen.FAMILIES["number"][1][3]]
    assert new[1]["text"] in [v.format(metric="Net income (in USD)", company="Beta, Inc.")
                              for v in valgen.FAMILIES["number"][0][3]]
    assert "Gamma plc" in new[2]["text"] and ("laid off" in new[2]["text"] or "let go" in new[2]["text"])
    assert new[3]["text"].startswith('Which of the companies had the lowest total assets in USD at the end of the period '
                                     'listed in annual report: "Alpha Inc.", "Beta, Inc.", "Gamma plc"? If data')
    names = {"a" * 40: "Alpha Inc.", "b" * 40: "Beta, Inc.", "c" * 40: "Gamma plc"}
    assert len(split_comparative(new[3]["text"], "comparative", names)) == 3
    assert comparison_direction(new[3]["text"]) == "min"
    # same seed and rows -> same bytes, also when rerun on its own output; a new row keeps every earlier qid
    from rag import cli

    assert cli.main(["valgen", "values", "--data", str(root), "--seed", "42"]) == 0  # = python -m rag.valgen_values
    assert (root / "questions.json").read_bytes() == first
    more = valgen_values.append_questions(root, _cands(root, rows + ["custom,ccc,Number of stores,,,"]), 42)
    assert more[:-1] == qs and "Number of stores" in more[-1]["text"]
    variants = {valgen_values.append_questions(root, _cands(root, rows[:1]), s)[-1]["text"] for s in range(6)}
    assert len(variants) == 2  # the seed draws between the template's two variants


def test_value_candidates_problems_are_named(tmp_path):
    root = _val_ds(tmp_path)
    for rows, msg in ((["custom,zzz,Staff,,,"], r"value_candidates.csv:2: sha1 prefix 'zzz' names 0 reports"),
                      (["fin,aaa,Net income (in EUR),USD,,"], r":2: 'Net income \(in EUR\)' is not a FIN_METRICS"),
                      (["custom,aaa,Staff,,,", "custom,aaa,Staff,,,"], r":3: question already in the set"),
                      (["compare,,total assets,USD,biggest,aaa;bbb"], r":2: compare needs ref highest\|lowest"),
                      (["custom,aaa,,,,"], r":2: custom needs a metric"),
                      (["budget,aaa,Staff,,,"], r":2: family must be custom, fin, layoffs, ma or compare")):
        with pytest.raises(valgen_values.CandidateError, match=msg):
            valgen_values.append_questions(root, _cands(root, rows), 1)
    (root / "questions.json").write_text("[]")
    with pytest.raises(valgen_values.CandidateError, match="0 questions, expected at least the 110"):
        valgen_values.append_questions(root, _cands(root, ["custom,aaa,Staff,,,"]), 1)


_WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                     "fourteen fifteen sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * i for i, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if i > 1}


def _numbers_in(text: str) -> list[float]:
    """Digits ("1,234.5") and number words up to 99 ("seventy-nine", "three") printed in ``text``."""
    out = [float(x.replace(",", "")) for x in re.findall(r"\d[\d,]*(?:\.\d+)?", text)]
    for tens, unit in re.findall(r"\b(twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety)(?:-(\w+))?\b", text.lower()):
        out.append(_TENS[tens] + _WORDS.get(unit, 0))
    return out + [_WORDS[w] for w in re.findall(r"\b[a-z]+\b", text.lower()) if w in _WORDS]


@pytest.mark.skipif(not (VAL / "labels.jsonl").exists(), reason="needs data/erc2-val/labels.jsonl")
def test_number_labels_print_their_value_and_value_questions_reproduce(tmp_path):
    """Every non-N/A number label's value is a number of its evidence times 1, 10^3, 10^6 or 10^9 (the printed
    figure and its scale: catches typos and scale slips); every question after the rag.valgen ones comes from
    value_candidates.csv (seed 42, byte-identical) and has a real value with evidence (comparative: a listed
    company, cited pages of every compared company)."""
    latest = latest_labels(VAL / "labels.jsonl")
    bad = []
    for rec in latest.values():
        if rec.get("kind") == "number" and rec.get("value") not in ("N/A", None):
            v = abs(float(rec["value"]))
            if not any(abs(n * s - v) <= 1e-9 * max(v, 1) for n in _numbers_in(rec.get("evidence", ""))
                       for s in (1, 1e3, 1e6, 1e9)):
                bad.append(f"{rec.get('qid')}: {rec['value']} not in {rec.get('evidence', '')[:80]!r}")
    assert not bad, "\n".join(bad)
    root = tmp_path / "val"
    root.mkdir()
    for f in ("subset.csv", "questions.json"):
        (root / f).write_bytes((VAL / f).read_bytes())
    qs = valgen_values.append_questions(root, VAL / "value_candidates.csv", 42)
    assert (root / "questions.json").read_bytes() == (VAL / "questions.json").read_bytes()
    for q in qs[valgen_values.BASE:]:
        rec = latest.get(q["text"])
        assert rec and rec["value"] not in ("N/A", None, True, False) and rec.get("evidence"), q["text"][:90]
        if q["kind"] == "comparative":  # the winner as written in the question, one pool per company
            assert f'"{rec["value"]}"' in q["text"] and len({p["sha1"] for p in rec["pages"]}) == q["text"].count('", "') + 1
    table = valgen_values.makeup(VAL)  # kind x gold x source
    new = table[["values: sentence", "values: table"]].sum(axis=1)
    assert new[("all", "")] == len(qs) - valgen_values.BASE
    assert table.at[("all", ""), "all"] == len(qs) and table.at[("all", ""), "valgen draw"] > 0
    assert sum(n for (kind, gold), n in new.items() if gold == "value") == len(qs) - valgen_values.BASE


def test_append_labels_writes_only_changes(tmp_path):
    sha = hashlib.sha1(pdf := _text_pdf(["Cover", "As of December 31, 2022, we had 148 full-time employees."])).hexdigest()
    root = tmp_path / "val"
    (root / "pdfs").mkdir(parents=True)
    (root / "pdfs" / f"{sha}.pdf").write_bytes(pdf)
    (root / "subset.csv").write_text(f"sha1,company_name,cur,major_industry\n{sha},Celldex Inc.,USD,Healthcare\n")
    (root / "questions.json").write_text(json.dumps([{"text": f"base {i}?", "kind": "boolean"}
                                                     for i in range(valgen_values.BASE)]))
    qs = valgen_values.append_questions(root, _cands(root, [f"custom,{sha[:6]},Number of full-time employees,,,"]), 7)
    item = {"text": qs[-1]["text"], "value": "148", "pages": f"{sha[:6]}:2", "evidence": "we had 148 full-time"}
    assert valgen_values.append_labels(root, [item], "t") == 1
    assert valgen_values.append_labels(root, [item], "t") == 0  # same label again: nothing appended
    assert valgen_values.append_labels(root, [dict(item, evidence="148 full-time employees")], "t") == 1
    rec = latest_labels(root / "labels.jsonl")[qs[-1]["text"]]
    assert rec["value"] == 148.0 and rec["qid"] == f"q{valgen_values.BASE:03d}" and rec["pages"] == [{"sha1": sha, "page": 2}]
    with pytest.raises(valgen_values.CandidateError, match="not in .*questions.json"):
        valgen_values.append_labels(root, [dict(item, text="no such question?")], "t")
