"""``rag init DATASET --pdfs DIR [--link]``: a dataset folder (rag.core.dataset layout) from a folder of PDFs.

Contract:
- ``init_dataset(out, pdfs, link=False) -> InitResult(rows, warnings)``: every ``*.pdf`` directly in
  ``pdfs`` (hidden files skipped) is hashed and copied (``link``: symlinked, absolute target) to
  ``out/pdfs/<sha1>.pdf``; ``out/subset.csv`` gets one row per distinct file (sha1, company_name, cur,
  major_industry left empty, period, doc_type, aliases) with company, currency, filing type and fiscal period
  guessed from the report's text (rag.init_filing) and the company's tickers from its cover pages
  (rag.init_aliases; ``;``-separated, for the user to correct and extend with short names), and
  ``out/questions.json`` a few example questions (each with a ``note`` saying it is an example). The result
  loads through :func:`rag.core.dataset.load_dataset`. Raises :class:`InitError` (a ``DatasetError``, so
  ``rag init`` prints one ``error:`` line and exits 2) when ``out`` exists and is not an empty folder,
  ``pdfs`` has no PDF, or no PDF can be read (every such file named). A PDF that cannot be read (corrupt, or
  0 pages) beside readable ones is listed under its file name with a warning naming it and the problem, as
  ``rag run`` carries such a report through (01 fails it, the others go on). Nothing is written before all
  PDFs are read; the folder is assembled beside ``out`` and renamed into place, so a failure leaves no
  half-written dataset. Duplicate files (same sha1) become one row and a warning.
- Company and currency come from :mod:`rag.init_guess` (``guess_company``) and :mod:`rag.clean.currency`
  (``guess_currency``).
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import secrets
import shlex
import shutil
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

from .core.dataset import DatasetError, sha1_of
from .init_aliases import COVER_PAGES, aliases_cell, company_aliases
from .init_filing import FilingGuess, assign_quarters, detect_filing
from .clean.currency import guess_currency
from .init_guess import guess_company, page_texts

DEFAULT_CURRENCY = "USD"  # when the text names no currency at all (a warning says so)


class InitError(DatasetError):
    """A folder of PDFs that cannot become a dataset. ``str()`` is one line (rag init prints it as is)."""

    def __init__(self, message: str):
        self.problems = [message]
        ValueError.__init__(self, message)


@dataclass(frozen=True)
class Row:
    sha1: str
    file: str  # the source file's name
    company: str
    currency: str
    period: str = ""  # rag.init_filing: "2018", "2024Q2", "2023-05-03"; "" when not found
    doc_type: str = ""  # "10-K", "10-Q", "8-K", "annual report", "earnings release" or ""
    aliases: tuple[str, ...] = ()  # rag.init_aliases: tickers (and the registrant's printed name) of its company


@dataclass(frozen=True)
class InitResult:
    rows: tuple[Row, ...]
    warnings: tuple[str, ...]


# ---- the dataset folder ----------------------------------------------------------------------------
def _examples(rows: list[Row]) -> list[dict]:
    """Example questions (ERC wording) about the first report(s): the user replaces them."""
    note = "EXAMPLE: edit or replace; kind is one of number, name, names, boolean, comparative"
    a = rows[0]
    qs = [dict(text=f"What was the total revenue (in {a.currency}) of {a.company} at the end of the period listed "
                    "in annual report? If data is not available, return 'N/A'.", kind="number"),
          dict(text=f"Did {a.company} announce a share buyback plan in the annual report? If there is no "
                    "mention, return False.", kind="boolean"),
          dict(text=f"Who is the chief executive officer of {a.company}?", kind="name")]
    if len(rows) > 1:
        names = ", ".join(f'"{r.company}"' for r in rows[:3])
        qs.append(dict(text=f"Which of the companies had the highest total assets in {a.currency} at the end of the "
                            f"period listed in annual report: {names}? If data for the company is not available, "
                            "exclude it from the comparison.", kind="comparative"))
    return [dict(q, note=note) for q in qs]


def init_dataset(out: Path | str, pdfs: Path | str, link: bool = False) -> InitResult:
    """See the module docstring."""
    out, pdfs = Path(out), Path(pdfs)
    if out.exists() and not (out.is_dir() and not any(out.iterdir())):
        raise InitError(f"{out} already exists and is not an empty folder: refusing to overwrite it "
                        "(choose a new dataset folder)")
    from .core.run_guard import require_writable

    # Before reading any PDF: the dataset is assembled beside ``out`` (nothing is written by the check).
    for place in (out.parent, *([out] if out.is_dir() else [])):
        require_writable("dataset folder", place, create=False)
    if not pdfs.is_dir():
        raise InitError(f"{pdfs}: not a folder")
    # Hidden files are skipped: macOS "._x.pdf" AppleDouble files are not PDFs.
    files = sorted(p for p in pdfs.iterdir() if p.suffix.lower() == ".pdf" and p.is_file()
                   and not p.name.startswith("."))
    if not files:
        raise InitError(f"{pdfs}: no .pdf files in this folder (subfolders are not searched)")
    rows: list[Row] = []
    warnings: list[str] = []
    filings: dict[str, FilingGuess] = {}
    covers: dict[str, list[str]] = {}  # sha1 -> first pages, for the aliases
    first: dict[str, Path] = {}
    bad: list[str] = []
    for path in files:
        sha1 = sha1_of(path)
        if sha1 in first:
            warnings.append(f"{path.name} is the same file as {first[sha1].name} (sha1 {sha1[:8]}): listed once")
            continue
        first[sha1] = path
        try:
            pages = page_texts(path)
        except Exception as e:  # noqa: BLE001 - pdfium's errors name no file: collect and report them all
            bad.append(f"{path}: not a readable PDF ({str(e).strip() or type(e).__name__})")
            # Carried through as rag run carries it: listed, named in a warning, failed by 01 with its reason.
            rows.append(Row(sha1=sha1, file=path.name, company=path.stem.replace("_", " ").strip() or sha1[:8],
                            currency=DEFAULT_CURRENCY))
            filings[sha1], covers[sha1] = detect_filing([]), []
            continue
        company, cur = guess_company(pages), guess_currency(pages)
        if company is None:
            company = path.stem.replace("_", " ").strip() or sha1[:8]
            warnings.append(f"{path.name}: no company name found in its first pages; {company!r} written, "
                            "correct it in subset.csv")
        if cur is None:
            cur = DEFAULT_CURRENCY
            warnings.append(f"{path.name}: no currency found in its text; {cur} written, check it")
        rows.append(Row(sha1=sha1, file=path.name, company=company, currency=cur))
        filings[sha1] = detect_filing(pages)
        covers[sha1] = pages[:COVER_PAGES]
    if len(bad) == len(first):
        raise InitError(f"{len(bad)} of {len(files)} PDFs cannot be read: " + "; ".join(bad))
    warnings += [f"{b}; listed with its file name as company: stage 01 will fail it and go on with the others "
                 "(replace the file, or remove its row and file)" for b in bad]
    rows = _with_filings(rows, filings)
    by_company: dict[str, list[list[str]]] = defaultdict(list)
    for r in rows:
        by_company[r.company].append(covers[r.sha1])
    aliases = {c: tuple(company_aliases(c, cs)) for c, cs in by_company.items()}
    rows = [replace(r, aliases=aliases[r.company]) for r in rows]
    same = Counter(r.company for r in rows)
    apart = Counter((r.company, r.period, r.doc_type) for r in rows)
    warnings += [f"{n} reports are guessed as {c!r} with no period/doc_type telling them apart (questions naming "
                 "it go to all of them): check subset.csv" for c, n in same.items()
                 if n > 1 and any(apart[(r.company, r.period, r.doc_type)] > 1 for r in rows if r.company == c)]
    _write(out, rows, first, link)
    return InitResult(rows=tuple(rows), warnings=tuple(warnings))


def _with_filings(rows: list[Row], filings: dict[str, FilingGuess]) -> list[Row]:
    """Rows with period and doc_type; a 10-Q's fiscal quarter from its company's fiscal year end."""
    by_company: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        by_company[r.company].append(r)
    done: dict[str, FilingGuess] = {}
    for group in by_company.values():
        for r, g in zip(group, assign_quarters([filings[r.sha1] for r in group])):
            done[r.sha1] = g
    return [replace(r, period=done[r.sha1].period, doc_type=done[r.sha1].doc_type) for r in rows]


def _write(out: Path, rows: list[Row], source: dict[str, Path], link: bool) -> None:
    """Assemble the folder beside ``out`` (same file system) and rename it into place: either the whole
    dataset appears or nothing does."""
    out.parent.mkdir(parents=True, exist_ok=True)
    # Not mkdtemp: its mode 0700 would hide the dataset from the other users of a shared machine.
    tmp = out.parent / f".{out.name}.init-{os.getpid()}-{secrets.token_hex(4)}"
    (tmp / "pdfs").mkdir(parents=True)
    try:
        for r in rows:
            dest = tmp / "pdfs" / f"{r.sha1}.pdf"
            # Absolute target: the link stays valid wherever the dataset folder is used from.
            dest.symlink_to(source[r.sha1].resolve()) if link else shutil.copyfile(source[r.sha1], dest)
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["sha1", "company_name", "cur", "major_industry", "period", "doc_type", "aliases"])
        w.writerows([r.sha1, r.company, r.currency, "", r.period, r.doc_type, aliases_cell(r.aliases)] for r in rows)
        (tmp / "subset.csv").write_text(buf.getvalue(), encoding="utf-8")
        (tmp / "questions.json").write_text(json.dumps(_examples(rows), indent=1, ensure_ascii=False) + "\n",
                                            encoding="utf-8")
        os.replace(tmp, out)  # replaces an empty folder; fails if someone filled ``out`` meanwhile
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="rag init", description="Make a dataset folder from a folder of PDFs: "
                                 "pdfs/<sha1>.pdf, subset.csv (company and currency guessed from the reports' "
                                 "text: check them) and an example questions.json. Never overwrites.")
    ap.add_argument("dataset", type=Path, help="new dataset folder (must not exist, or be empty)")
    ap.add_argument("--pdfs", type=Path, required=True, help="folder with the reports (*.pdf, not recursive)")
    ap.add_argument("--link", action="store_true", help="symlink the PDFs instead of copying them "
                    "(the dataset then breaks if they are moved or changed)")
    a = ap.parse_args(argv)
    print(f"reading the PDFs in {a.pdfs} (about a second per report)...", flush=True)
    res = init_dataset(a.dataset, a.pdfs, link=a.link)
    wf = max(len("file"), *(len(r.file) for r in res.rows))
    wc = max(len("company (guessed)"), *(len(r.company) for r in res.rows))
    print(f"{'sha1':<8}  {'file':<{wf}}  {'company (guessed)':<{wc}}  cur  {'doc_type':<16}  {'period':<10}  aliases")
    for r in res.rows:
        print(f"{r.sha1[:8]}  {r.file:<{wf}}  {r.company:<{wc}}  {r.currency}  {r.doc_type or '?':<16}  "
              f"{r.period or '?':<10}  {aliases_cell(r.aliases) or '-'}")
    for w in res.warnings:
        print(f"warning: {w}")
    d, question = a.dataset, f"Did {res.rows[0].company} announce a share buyback plan?"
    print(f"\n{d}: {len(res.rows)} report(s) {'linked' if a.link else 'copied'} into pdfs/, subset.csv, "
          f"questions.json.\nCheck the company names, currencies, doc types and periods (fiscal year '2018', "
          f"fiscal quarter '2024Q2', an 8-K's date) in {d / 'subset.csv'} (a question must name "
          f"a company as written there, without its 'Inc.'/'plc', by its leading words, or by an alias: the "
          f"'aliases' column, ';'-separated, holds the tickers found; add short names),\nand replace the example questions in "
          f"{d / 'questions.json'}. Then:\n  rag ask {shlex.quote(question)} --data {shlex.quote(str(d))}")
    return 0
