"""The labeller's tools of the validation set (``python -m rag.valgen CMD``; :mod:`rag.valgen` generates the
questions and hands these commands here).

- ``gold``: ``DIR/answers.json`` (ERC gold: value strings, names as a list, "sha1:page_index" 0-based, a pool
  per report) from ``DIR/labels.jsonl`` (rag.core.labels, 1-based pages; last line wins; accepted/corrected only).
- ``page --sha1 S --page N`` (1-based), ``grep --sha1 S REGEX``, ``label --q QID --value V [--pages S:N,...]
  [--evidence T] [--searched T]`` (appends a labels.jsonl line); S: sha1 prefix; ``--data DIR``: data/erc2-val.
- ``subset --data D --kinds K[,K] --out O [--qids Q,...]``: a dataset folder with only those questions (:func:`write_subset`).
"""
from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from .core.dataset import load_dataset
from .core.labels import append_label, labels_as_gold
from .core.pdf import pdf_page_texts
from .label import parse_pages, parse_value  # what the labeller types, parsed as the widget does

COMMANDS = ("gold", "page", "grep", "label", "subset")


def gold_from_labels(questions: list[dict], labels_file: Path) -> dict:
    """ERC ``answers.json`` object (questions order) from the accepted/corrected labels."""
    gold = labels_as_gold(labels_file)
    return {q["text"]: {"kind": q["kind"],  # questions.json's kind, not the label's
                        "answers": [str(float(v)) if q["kind"] == "number" and v != "N/A" else v for v in g.answers],
                        "reference_pools": [[f"{p.sha1}:{p.page - 1}" for p in pool] for pool in g.pools]}
            for q in questions if (g := gold.get(q["text"]))}


def page_texts(pdf: Path, pages: list[int] | None = None) -> list[tuple[int, str]]:
    """[(1-based page, text)] for ``pages`` (default: every page); the document is closed (rag.core.pdf)."""
    return pdf_page_texts(pdf, pages or None)


def write_subset(src: Path, out: Path, kinds: list[str], qids: list[str] | None = None) -> int:
    """A dataset folder ``out`` with the questions of ``src`` of the given kinds (and, with ``qids``, only
    those ids of ``src``: q000, q001...) with their gold, the
    same reports (``subset.csv`` copied) and the same PDFs (``pdf_dirs.txt`` with absolute folders), so an
    expensive experiment can run on one answer kind. Returns the number of questions kept."""
    import shutil

    ds = load_dataset(src, check_hashes=False)
    qs = [{"text": q.text, "kind": q.kind} for q in ds.questions
          if q.kind in kinds and (qids is None or q.qid in qids)]
    out.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src / "subset.csv", out / "subset.csv")
    dirs = sorted({str(r.pdf.parent.resolve()) for r in ds.reports})
    (out / "pdf_dirs.txt").write_text("".join(d + "\n" for d in dirs), encoding="utf-8")
    (out / "questions.json").write_text(json.dumps(qs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    gold_path = src / "answers.json"
    if gold_path.exists():
        gold = json.loads(gold_path.read_text(encoding="utf-8"))
        keep = {q["text"] for q in qs}
        (out / "answers.json").write_text(json.dumps({t: g for t, g in gold.items() if t in keep}, indent=1,
                                                     ensure_ascii=False) + "\n", encoding="utf-8")
    return len(qs)


def main(argv: list[str]) -> None:
    """``argv[0]`` is one of :data:`COMMANDS`."""
    cmd = argv[0]
    ap = argparse.ArgumentParser(prog=f"python -m rag.valgen {cmd}")
    if cmd == "subset":  # python -m rag.valgen subset --data data/erc2-val --kinds number --out outputs/datasets/x
        ap.add_argument("--data", type=Path, required=True), ap.add_argument("--out", type=Path, required=True)
        ap.add_argument("--kinds", required=True, help="comma-separated answer kinds to keep")
        ap.add_argument("--qids", default=None, help="comma-separated question ids of --data to keep (q003,q017)")
        a = ap.parse_args(argv[1:])
        n = write_subset(a.data, a.out, a.kinds.split(","), a.qids.split(",") if a.qids else None)
        return print(f"{a.out}: {n} questions of kind {a.kinds} from {a.data}")
    ap.add_argument("--data", type=Path, default=Path("data/erc2-val"))
    ap.add_argument("--sha1", required=cmd in ("page", "grep")), ap.add_argument("--page", type=int)
    ap.add_argument("regex", nargs="?", help="grep: a Python regex, case-insensitive")
    ap.add_argument("--q", required=cmd == "label", help="qid (q012) or index (12)")
    ap.add_argument("--value", required=cmd == "label", help="406100000.0 | N/A | True | CEO; CFO | name")
    ap.add_argument("--pages", default="", help="sha1[-prefix]:page, ... (1-based)")
    ap.add_argument("--evidence"), ap.add_argument("--searched")
    ap.add_argument("--status", default="corrected"), ap.add_argument("--labeller", default="val-1")
    a = ap.parse_args(argv[1:])
    if cmd != "gold":
        ds = load_dataset(a.data, check_hashes=False)
        pdf = ds.report(parse_pages(f"{a.sha1}:1", ds)[0].sha1).pdf if a.sha1 else None
    if cmd == "gold":
        qs = json.loads((a.data / "questions.json").read_text(encoding="utf-8"))
        gold = gold_from_labels(qs, a.data / "labels.jsonl")
        (a.data / "answers.json").write_text(json.dumps(gold, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"{a.data / 'answers.json'}: gold for {len(gold)} of {len(qs)} questions")
    elif cmd == "page":
        print(page_texts(pdf, [a.page])[0][1])
    elif cmd == "grep":
        for n, text in page_texts(pdf):
            print("".join(f"p{n}: {ln.strip()}\n" for ln in text.split("\n") if re.search(a.regex, ln, re.I)), end="")
    else:
        q = ds.questions[int(a.q.lstrip("q"))]
        rec = append_label(a.data / "labels.jsonl", q.text, parse_value(a.value, q.kind), parse_pages(a.pages, ds),
                           a.status, a.labeller, q.kind, q.qid, evidence=a.evidence, searched=a.searched)
        print(json.dumps(rec, ensure_ascii=False))
