"""FinanceBench (Islam et al. 2023) -> a project dataset; each question mapped by `fb_questions`.

Source layout (the benchmark's repository, or ``../shared/financebench-dev``)::

    SRC/data/financebench_open_source.jsonl          questions: question, answer, question_type, doc_name,
                                                     evidence [{doc_name, evidence_page_num (0-based), ...}]
    SRC/data/financebench_document_information.jsonl doc_name, company, doc_type (10k|10q|8k|Earnings),
                                                     doc_period, gics_sector
    SRC/pdfs/<doc_name>.pdf

Contract:
- ``read_benchmark(src, problems=None) -> Benchmark`` reads both files (errors name file and line).
- Each question is mapped by :func:`rag.importers.fb_questions.map_question` (pure: no file access).
- ``filing_of(doc) -> (period, doc_type)`` in subset.csv's terms ("2024Q2", "10-Q").
- ``import_financebench(src, out, companies=None) -> ImportResult`` writes ``out`` (subset.csv with period,
  doc_type, file and aliases columns (aliases: tickers and the registrant's printed name from each company's
  cover pages, rag.init_aliases), questions.json (each question's ``filing``: the sha1 of its doc_name, for
  the per-filing setting ``retrieve.given_filing``), answers.json, financebench.jsonl with the metadata,
  pdf_dirs.txt pointing at SRC/pdfs: no PDF is copied; rag-settings.toml: :data:`SETTINGS_TOML`). Filings: every document of the asked companies
  whose PDF is present (a user's folder: several filings per company; routing must pick). Assembled
  beside ``out`` and renamed into place; ``out`` must not exist (or be empty).
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..core.config import DATASET_SETTINGS
from ..core.dataset import DatasetError, normalize_doc_type, sha1_of
from ..init_aliases import aliases_cell, company_aliases, read_covers
from .fb_questions import FORMS, map_question

# The dataset's own defaults (rag.core.config reads them over the preset; --set still wins).
SETTINGS_TOML = """\
# Written by `rag import financebench`: this dataset's defaults over the preset (--set overrides them).
# FinanceBench asks for figures a filing does not print (margins, ratios, growth, averages) and its gold is
# the value computed from printed line items, where ERC's gold for an unprinted figure is N/A: compute them.
[answer]
computed_figures = true
# Its gold is never N/A and a refusal scores nothing (the paper counts it as not correct): where no line names the
# metric in the question's words, the reader's choice among the lines closest in meaning stands at any probability.
metric_choice = true
metric_choice_min_p = 0.0
# A text question whose first 3 pages give no answer reads on, to the 6th (the first part with an answer stands):
# only a refusal or an answer from the last part can change (fb-dev tuning half: no text answer changed; report
# half 19 -> 19 of 32, its one text refusal now an answer, judged incorrect).
max_pages_by_kind = {text = 6}
# Its yes/no questions judge figures ("Is X capital-intensive?", "Was there any drop in cash?") more than they ask
# whether a page mentions an event: a page's P(true) alone said yes to all 16 of the tuning side's read by the reader
# (0.39-0.52); its reasoning agreeing as well answers 13 of 16 (fb-gen's 11 with computed figures off, the tuning
# half's 5: gold No 0 -> 4 of 7, gold Yes 9 -> 9 of 9; RESULTS.md).
boolean_decision = "both"
# The dense ranking reads a pool of 300 BM25 chunks, not 100: evidence hit@10 on fb-dev's tuning half 29 -> 30
# of 33, report half 28 -> 29 of 32; on ERC's catalogue tuning half it cost a value, so it is FinanceBench's own.
[retrieve]
dense_pool = 300
# Its questions may name no company (the benchmark hands each its filing): one naming none goes to a filing printing
# the asked period, the one whose text the embedder finds closest (fb-dev, company names taken out: tuning 7 of 33
# right, 6.9 expected by chance among those filings; report half 10 of 32, 9.8 by chance): a guess, where the
# alternative, N/A, is never FinanceBench's gold.
route_by_content = true
"""
QUESTIONS_FILE = "data/financebench_open_source.jsonl"
DOCS_FILE = "data/financebench_document_information.jsonl"
PDF_DIR = "pdfs"
META_FILE = "financebench.jsonl"  # per imported question: id, type, form, unit, gold as written, doc_name, filing


class FinanceBenchError(DatasetError):
    """A FinanceBench folder that cannot be imported; one line per problem (file and line named)."""

    def __init__(self, src: Path, problems: list[str]):
        self.problems = problems
        ValueError.__init__(self, f"FinanceBench folder {src}: " + "; ".join(problems))


@dataclass(frozen=True)
class Benchmark:
    src: Path
    docs: dict[str, dict]  # doc_name -> document_information row
    questions: list[dict]  # open_source rows, file order


@dataclass(frozen=True)
class ImportResult:
    out: Path
    questions: int
    filings: int
    companies: int
    forms: dict[str, int]
    warnings: tuple[str, ...]
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)  # company -> aliases written


def _read_jsonl(path: Path, problems: list[str]) -> list[dict]:
    if not path.exists():
        problems.append(f"{path}: missing file")
        return []
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8-sig").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            problems.append(f"{path}:{n}: not valid JSON ({e.msg})")
            continue
        if not isinstance(row, dict):
            problems.append(f"{path}:{n}: expected an object")
            continue
        rows.append(row)
    return rows


def read_benchmark(src: Path | str, problems: list[str] | None = None) -> Benchmark:
    """Both jsonl files of a FinanceBench folder; raises FinanceBenchError naming every bad file/line, or, given
    a ``problems`` list, appends them there and returns the rows that are whole (the caller raises once with
    every problem it found, the missing PDFs too)."""
    src = Path(src)
    collect, problems = problems is not None, problems if problems is not None else []
    docs_rows = _read_jsonl(src / DOCS_FILE, problems)
    q_rows = _read_jsonl(src / QUESTIONS_FILE, problems)
    docs = {}
    for i, d in enumerate(docs_rows, 1):
        if not d.get("doc_name") or not d.get("company"):
            problems.append(f"{src / DOCS_FILE}: row {i}: doc_name and company are required")
            continue
        docs[d["doc_name"]] = d
    whole = []
    for i, q in enumerate(q_rows, 1):
        missing = [k for k in ("question", "answer", "doc_name") if not q.get(k)]
        if missing:
            problems.append(f"{src / QUESTIONS_FILE}: row {i}: missing {', '.join(missing)}")
        else:
            whole.append(q)
    if problems and not collect:
        raise FinanceBenchError(src, problems)
    return Benchmark(src=src, docs=docs, questions=whole)


def filing_of(doc: dict) -> tuple[str, str]:
    """(period, doc_type) of a document_information row, in subset.csv's terms.

    The benchmark gives a year (``doc_period``); its file names carry the quarter ("BESTBUY_2024Q2_10Q") and
    an 8-K's date ("PEPSICO_2023_8K_dated-2023-05-05"), which the period keeps.
    """
    name = str(doc.get("doc_name", ""))
    doc_type = normalize_doc_type(str(doc.get("doc_type", ""))) or ""
    if m := re.search(r"dated-(\d{4}-\d{2}-\d{2})", name):
        return m.group(1), doc_type
    if m := re.search(r"(?<!\d)(\d{4})Q([1-4])(?!\d)", name):
        return f"{m.group(1)}Q{m.group(2)}", doc_type
    period = str(doc.get("doc_period", "")).strip()
    return (period if re.fullmatch(r"\d{4}", period) else ""), doc_type


def _selected(bench: Benchmark, companies: set[str] | None) -> tuple[list[dict], list[str]]:
    """Questions to import (company filter, duplicates of an earlier text dropped) and warnings."""
    keep, seen, warnings = [], set(), []
    for q in bench.questions:
        company = q.get("company") or bench.docs.get(q["doc_name"], {}).get("company", "")
        if companies is not None and company.casefold() not in companies:
            continue
        norm = " ".join(q["question"].split())
        if norm in seen:
            warnings.append(f"{q.get('financebench_id', '?')}: same text as an earlier question, skipped")
            continue
        seen.add(norm)
        keep.append(q)
    return keep, warnings


def _subset_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    cols = ["sha1", "company_name", "cur", "major_industry", "period", "doc_type", "file", "aliases"]
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def import_financebench(src: Path | str, out: Path | str, companies: list[str] | None = None) -> ImportResult:
    """Write the dataset folder ``out`` from the FinanceBench folder ``src`` (module contract)."""
    src, out = Path(src), Path(out)
    problems: list[str] = []  # every problem of the folder, reported together (not one per try)
    bench = read_benchmark(src, problems)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FinanceBenchError(src, [f"{out} exists and is not an empty folder (choose another --out)"])
    wanted = {c.casefold() for c in companies} if companies else None
    questions, warnings = _selected(bench, wanted)
    if not questions:
        raise FinanceBenchError(src, problems + ["no question selected" + (f" for companies {companies}" if companies
                                                                           else "")])
    asked = {(q.get("company") or bench.docs.get(q["doc_name"], {}).get("company", "")).casefold() for q in questions}
    pdf_dir = src / PDF_DIR
    rows, sha1_by_doc = [], {}
    for name, doc in sorted(bench.docs.items()):
        if doc["company"].casefold() not in asked:
            continue
        pdf = pdf_dir / f"{name}.pdf"
        if not pdf.exists():
            if any(q["doc_name"] == name for q in questions):
                problems.append(f"{pdf}: missing (a question is asked about it)")
            else:
                warnings.append(f"{pdf}: missing, filing left out")
            continue
        sha1_by_doc[name] = sha1 = sha1_of(pdf)
        period, doc_type = filing_of(doc)
        rows.append({"sha1": sha1, "company_name": doc["company"], "cur": "USD",
                     "major_industry": doc.get("gics_sector", "") or "", "period": period,
                     "doc_type": doc_type, "file": pdf.name})
    for q in questions:
        if q["doc_name"] not in bench.docs:
            problems.append(f"{src / QUESTIONS_FILE}: {q.get('financebench_id', '?')}: doc_name {q['doc_name']!r} "
                            f"is not in {DOCS_FILE}")
    if problems:
        raise FinanceBenchError(src, problems)
    aliases = _aliases(rows, pdf_dir)
    for r in rows:
        r["aliases"] = aliases_cell(aliases[r["company_name"]])
    mapped = [map_question(q, sha1_by_doc) for q in questions]
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        (tmp / "subset.csv").write_text(_subset_csv(rows), encoding="utf-8")
        (tmp / "questions.json").write_text(json.dumps([m.question_json(sha1_by_doc) for m in mapped], indent=2) + "\n")
        (tmp / "answers.json").write_text(json.dumps({m.text: m.gold_json() for m in mapped}, indent=2) + "\n")
        (tmp / META_FILE).write_text("".join(json.dumps({"text": m.text, **m.meta,
                                                         "filing": sha1_by_doc.get(m.doc_name, "")}) + "\n"
                                             for m in mapped))
        rel = os.path.relpath(pdf_dir.resolve(), out.resolve())
        (tmp / "pdf_dirs.txt").write_text(f"# FinanceBench PDFs ({src}), not copied\n{rel}\n")
        (tmp / DATASET_SETTINGS).write_text(SETTINGS_TOML, encoding="utf-8")
        os.chmod(tmp, 0o755)
        if out.exists():
            out.rmdir()
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    forms = {f: sum(m.form == f for m in mapped) for f in FORMS}
    return ImportResult(out=out, questions=len(mapped), filings=len(rows),
                        companies=len({r["company_name"] for r in rows}), forms=forms, warnings=tuple(warnings),
                        aliases={c: tuple(a) for c, a in aliases.items()})


def _aliases(rows: list[dict], pdf_dir: Path) -> dict[str, list[str]]:
    """``{company: aliases}`` read from the cover pages of each company's filings (rag.init_aliases); a PDF
    whose pages cannot be read adds none (the import does not depend on it)."""
    covers: dict[str, list[list[str]]] = {}
    for r in rows:
        try:
            pages = read_covers(pdf_dir / r["file"])
        except Exception:  # noqa: BLE001 - an unreadable cover only costs its aliases; 01 reports the PDF
            pages = []
        covers.setdefault(r["company_name"], []).append(pages)
    return {c: company_aliases(c, cs) for c, cs in covers.items()}


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="rag import financebench",
                                 description="A project dataset from a FinanceBench folder (the benchmark's layout).")
    ap.add_argument("src", help="folder with data/financebench_open_source.jsonl, "
                    "data/financebench_document_information.jsonl and pdfs/")
    ap.add_argument("--out", required=True, help="new dataset folder, e.g. data/fb-dev")
    ap.add_argument("--companies", default=None, help="comma-separated companies to keep (default: all)")
    a = ap.parse_args(argv)
    comps = [c.strip() for c in a.companies.split(",") if c.strip()] if a.companies else None
    res = import_financebench(a.src, a.out, comps)
    for w in res.warnings:
        print(f"warning: {w}")
    named = [f"{c}: {', '.join(a)}" for c, a in res.aliases.items() if a]
    if named:
        print("aliases from the cover pages (subset.csv 'aliases', ';'-separated: correct them, add short names): "
              + "; ".join(named))
    print(f"wrote {res.out}: {res.questions} questions ({', '.join(f'{k} {v}' for k, v in res.forms.items())}), "
          f"{res.filings} filings of {res.companies} companies; PDFs stay in {Path(a.src) / PDF_DIR} (pdf_dirs.txt)")
    return 0
