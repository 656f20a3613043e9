"""``rag init DATASET --pdfs DIR [--link]``: a dataset folder (rag.core.dataset layout) from a folder of PDFs.

Contract:
- ``init_dataset(out, pdfs, link=False) -> InitResult(rows, warnings)``: every ``*.pdf`` directly in
  ``pdfs`` (hidden files skipped) is hashed and copied (``link``: symlinked, absolute target) to
  ``out/pdfs/<sha1>.pdf``; ``out/subset.csv`` gets one row per distinct file (sha1, company_name, cur,
  major_industry left empty, period, doc_type) with company, currency, filing type and fiscal period guessed
  from the report's text (rag.init_filing), and
  ``out/questions.json`` a few example questions (each with a ``note`` saying it is an example). The result
  loads through :func:`rag.core.dataset.load_dataset`. Raises :class:`InitError` (a ``DatasetError``, so
  ``rag init`` prints one ``error:`` line and exits 2) when ``out`` exists and is not an empty folder,
  ``pdfs`` has no PDF, or a PDF cannot be read (every such file named). Nothing is written before all
  PDFs are read; the folder is assembled beside ``out`` and renamed into place, so a failure leaves no
  half-written dataset. Duplicate files (same sha1) become one row and a warning.
- ``guess_company(pages) -> str | None`` and ``guess_currency(pages) -> str | None``: heuristics on the text
  of the pages (``page_texts``; the first FIRST_PAGES, and a stated currency on any page), measured by
  benchmarks/init_guess.py; None when nothing is found.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import os
import re
import secrets
import shlex
import shutil
from collections import Counter, defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

from .core.dataset import DatasetError, sha1_of
from .core.pdf import pdf_page_texts
from .init_filing import FilingGuess, assign_quarters, detect_filing
from .retrieve.route import normalize_tokens

FIRST_PAGES = 20  # company and currency are read here: cover, contents, letters, 10-K cover page
MAX_PAGES = 400  # ... and a stated presentation currency ("presented in Australian dollars") anywhere up to here
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


@dataclass(frozen=True)
class InitResult:
    rows: tuple[Row, ...]
    warnings: tuple[str, ...]


def page_texts(pdf: Path, n: int = MAX_PAGES) -> list[str]:
    """Text of the first ``n`` pages (pypdfium2: fast, no layout analysis). Raises pypdfium2's
    PdfiumError (or OSError) on a file that is not a readable PDF."""
    texts = [text for _, text in pdf_page_texts(pdf, first=n)]
    if not texts:
        raise ValueError("the PDF has no pages")
    return texts


# ---- company name ---------------------------------------------------------------------------------
# Legal forms that end a company name. Group/Holdings also end names ("Epson Group") but mostly of the
# group, not the issuer: they count less (WEAK).
_FORMS = ("Inc Incorporated Corp Corporation Ltd Limited plc Plc LLC L.P. LP AG SE SA S.A. N.V. NV B.V. "
          "S.p.A. SpA GmbH KGaA ASA AB Oyj K.K. Bhd Berhad Co Company Group Holdings Holding").split()
_SUFFIX = "(?:" + "|".join(sorted({re.escape(v) for f in _FORMS for v in (f, f.upper())}, key=len, reverse=True)) + ")"
_SUF = rf"{_SUFFIX}\.?(?![\w.])"
_WORD = r"(?:[A-Z][\w'’.&-]*|\d+[A-Za-z][\w-]*|&|\([A-Z][\w .&-]*\))"  # capitalized, "3M", "&", "(HOLDINGS)"
# A name inside running text: up to 7 capitalized words, then the legal form(s) ("Co., Ltd.").
_NAME_RE = re.compile(rf"(?:{_WORD}[ \t]+){{0,6}}{_WORD},?[ \t]+{_SUF}(?:,?[ \t]+{_SUF})*")
_PARTICLE = r"(?:of|and|de|du|des|la|le|di|del|der|van|von|for|the)"  # "Bank of America Corporation"
# A line that is nothing but a name may start in lower case ("abrdn Japan Investment Trust plc").
_LINE_NAME_RE = re.compile(rf"[\w(][\w'’.&()-]*(?:[ \t]+(?:{_WORD}|{_PARTICLE})){{0,6}},?[ \t]+{_SUF}"
                           rf"(?:,?[ \t]+{_SUF})*")
# Running headers add the document title and a page number around the name.
_HEADER_NOISE = re.compile(r"(?i)^\s*\d{1,3}\s+|\s+\d{1,3}\s*$|\s*(?:annual|integrated|sustainability)?\s*"
                           r"report(?:\s+and\s+(?:accounts|financial\s+statements))?(?:\s+20\d\d(?:/\d\d)?)?\s*$")
_REGISTRANT = re.compile(r"([^\n]+)\n[ \t(]*exact name of (?:the )?registrant", re.IGNORECASE)
# "X Inc. (the "Company")", "X Limited (referred to hereafter as the 'Company'", "“Company” X (Holdings) Limited".
_DEFINES = re.compile(r"\s*\([^()]{0,50}?\b(?:the\s+)?[“\"‘']?(?:Company|Registrant|Issuer)\b", re.IGNORECASE)
_DEFINED = re.compile(r"(?:[“\"‘']Company[”\"’']|parent company,|Company name)\s*$", re.IGNORECASE)
_CANON = {"ltd": "limited", "corp": "corporation", "inc": "incorporated", "co": "company", "holding": "holdings"}
_WEAK = {"group", "holdings", "company"}
_LEGAL = {f.lower().replace(".", "") for f in _FORMS} | set(_CANON.values())
# Words that make a match a phrase, not a name ("The Company", "Notes to the Group", "Stock Exchange ... Limited").
_NOT_NAME = {"the", "our", "its", "this", "annual", "report", "statements", "notes", "directors", "auditor",
             "auditors", "exchange", "item", "form", "section", "consolidated", "parent", "subsidiaries",
             "contents"}


def _key(name: str) -> tuple[str, ...] | None:
    """Grouping key: case-folded tokens, "Ltd"/"Limited" alike, a leading "The" dropped; None when the
    phrase has no word of its own besides legal forms and generic words."""
    toks = [_CANON.get(t, t) for t in normalize_tokens(name)]
    if toks[:1] == ["the"]:
        toks = toks[1:]
    if not any(t not in _LEGAL for t in toks) or _NOT_NAME & set(toks):
        return None
    return tuple(toks)


def guess_company(pages: list[str]) -> str | None:
    """The issuer's name as printed, or None. Every name ending in a legal form in the first pages scores
    per occurrence: 1 (x2 as a line of its own: titles and running headers; x0.4 when it ends in
    Group/Holdings/Company or is an Australian "Pty" subsidiary), +1 on pages 1-3, +10 as a line of the
    cover (first page with text) or where the text defines it as "the Company", +50 on a 10-K/20-F
    "exact name of registrant" line; then +1 per page it is on and +0.5 per mention of its short form
    ("Microsoft" of "Microsoft Corporation", up to 40). Spellings group by :func:`_key` ("Ltd" = "Limited");
    the most frequent spelling in mixed case wins (covers often print the name in capitals)."""
    score: dict[tuple, float] = defaultdict(float)
    spellings: dict[tuple, Counter] = defaultdict(Counter)
    on_pages: dict[tuple, set] = defaultdict(set)
    pages = pages[:FIRST_PAGES]
    cover = next((i for i, t in enumerate(pages, 1) if t.strip()), 0)

    def add(name: str, page: int, weight: float) -> None:
        name = name.strip(" ,_")
        key = _key(name)
        if key is None:
            return
        weak = key[-1] in _WEAK or "pty" in key
        score[key] += weight * (0.4 if weak else 1.0) + (1.0 if page <= 3 else 0.0)
        spellings[key][name] += 1
        on_pages[key].add(page)

    for page, text in enumerate(pages, 1):
        for m in _REGISTRANT.finditer(text):
            add(m.group(1), page, 50.0)
        for m in _NAME_RE.finditer(text):
            if _DEFINES.match(text, m.end()) or _DEFINED.search(text[max(0, m.start() - 30):m.start()]):
                add(m.group(0), page, 10.0)
        for line in text.splitlines():
            for seg in re.split(r"\s+[|–—]\s+|\t", line):  # "02 | Downer EDI Limited"
                seg = _HEADER_NOISE.sub("", seg).strip()
                if _LINE_NAME_RE.fullmatch(seg) and len(seg.split()) <= 8:
                    add(seg, page, 10.0 if page == cover else 2.0)
                else:
                    for m in _NAME_RE.finditer(seg):
                        add(m.group(0), page, 1.0)
    if not score:
        return None
    words = " " + " ".join(normalize_tokens(" ".join(pages))) + " "
    best = max(score, key=lambda k: score[k] + len(on_pages[k]) + 0.5 * min(40, words.count(f" {_short(k)} ")))
    forms = spellings[best].most_common()
    mixed = [s for s, _ in forms if s != s.upper()]
    return (mixed or [forms[0][0]])[0]


def _short(key: tuple[str, ...]) -> str:
    """The key without its trailing legal forms, as text ("microsoft" of microsoft corporation)."""
    toks = list(key)
    while len(toks) > 1 and toks[-1] in _LEGAL:
        toks.pop()
    return " ".join(toks)


# ---- currency --------------------------------------------------------------------------------------
_CURRENCY = {cur: re.compile(rx) for cur, rx in {
    "USD": r"\bUSD\b|\bUS\$|\bU\.S\.\s?\$|(?i:\bU\.\s?S\.? dollars?\b|\bUnited States dollars?\b)",
    "AUD": r"\bAUD\b|\bA\$|\bAU\$|(?i:\bAustralian dollars?\b)",
    "CAD": r"\bCAD\b|\bC\$|\bCDN\$|(?i:\bCanadian dollars?\b)",
    "NZD": r"\bNZD\b|\bNZ\$|(?i:\bNew Zealand dollars?\b)",
    "HKD": r"\bHKD\b|\bHK\$|(?i:\bHong Kong dollars?\b)",
    "SGD": r"\bSGD\b|\bS\$|(?i:\bSingapore dollars?\b)",
    "EUR": r"\bEUR\b|€|(?i:\beuros?\b)",
    "GBP": r"\bGBP\b|£|(?i:\bpounds? sterling\b|\bsterling\b)",
    "JPY": r"\bJPY\b|[¥￥]|(?i:\byen\b)",
    "CHF": r"\bCHF\b|(?i:\bSwiss francs?\b)",
    "CNY": r"\bCNY\b|\bRMB\b|(?i:\brenminbi\b)",
    "INR": r"\bINR\b|₹|(?i:\brupees?\b)",
    "SEK": r"\bSEK\b", "NOK": r"\bNOK\b", "DKK": r"\bDKK\b", "ZAR": r"\bZAR\b", "BRL": r"\bBRL\b|R\$",
}.items()}
_STATED = re.compile(r"(?i)\b(?:presented|expressed|reported|stated)\s+in\s+"
                     r"(?:(?:thousands|millions|billions)\s+of\s+)?([^.,;()\n]{2,40})"
                     r"|presentation currency[^.]{0,30}?\bis\s+([^.,;\n]{2,30})")
_DOLLARS = ("USD", "AUD", "CAD", "NZD", "HKD", "SGD")
_BARE_DOLLAR = re.compile(r"(?<![A-Za-z.$])\$")
# Where a report prints only "$": the exchange or business number names the country.
_DOLLAR_HINTS = {"AUD": re.compile(r"\bABN\b|\bASX\b|\bPty\.? Ltd\b"), "CAD": re.compile(r"\bTSX\b"),
                 "NZD": re.compile(r"\bNZX\b"), "SGD": re.compile(r"\bSGX\b")}


def guess_currency(pages: list[str]) -> str | None:
    """The currency the report says it is presented in ("presented in pounds sterling", "expressed in
    thousands of Canadian dollars": the most stated one on any page), else the most mentioned currency
    (ISO codes, symbols, "US$"/"A$", "Australian dollars", "yen"...) of the first pages, or None. A bare "$"
    counts for the dollar the text names most, or else the one its exchange or business number implies
    (ASX/ABN: AUD, TSX: CAD), or else USD. Narrative often quotes other currencies (a UK miner's US$
    deals), hence the statement first."""
    stated = Counter(cur for t in pages for m in _STATED.finditer(t)
                     for cur, rx in _CURRENCY.items() if rx.search(m.group(1) or m.group(2)))
    if stated:
        return stated.most_common(1)[0][0]
    text = "\n".join(pages[:FIRST_PAGES])
    counts = Counter({cur: len(rx.findall(text)) for cur, rx in _CURRENCY.items()})
    dollars = {c: counts[c] for c in _DOLLARS if counts[c]}
    hinted = [c for c, rx in _DOLLAR_HINTS.items() if rx.search(text)]
    dollar = max(dollars, key=dollars.get) if dollars else (hinted[0] if hinted else "USD")
    if hinted and counts[hinted[0]] and counts[hinted[0]] >= counts[dollar] / 4:
        dollar = hinted[0]  # an Australian report quoting US$ prices still prints its own figures in "$"
    counts[dollar] += len(_BARE_DOLLAR.findall(text))
    cur, n = counts.most_common(1)[0]
    return cur if n else None


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
    if bad:
        raise InitError(f"{len(bad)} of {len(files)} PDFs cannot be read: " + "; ".join(bad))
    rows = _with_filings(rows, filings)
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
        w.writerow(["sha1", "company_name", "cur", "major_industry", "period", "doc_type"])
        w.writerows([r.sha1, r.company, r.currency, "", r.period, r.doc_type] for r in rows)
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
    print(f"{'sha1':<8}  {'file':<{wf}}  {'company (guessed)':<{wc}}  cur  {'doc_type':<16}  period")
    for r in res.rows:
        print(f"{r.sha1[:8]}  {r.file:<{wf}}  {r.company:<{wc}}  {r.currency}  {r.doc_type or '?':<16}  {r.period or '?'}")
    for w in res.warnings:
        print(f"warning: {w}")
    d, question = a.dataset, f"Did {res.rows[0].company} announce a share buyback plan?"
    print(f"\n{d}: {len(res.rows)} report(s) {'linked' if a.link else 'copied'} into pdfs/, subset.csv, "
          f"questions.json.\nCheck the company names, currencies, doc types and periods (fiscal year '2018', "
          f"fiscal quarter '2024Q2', an 8-K's date) in {d / 'subset.csv'} (a question must name "
          f"a company as written there, without its 'Inc.'/'plc', or by its leading words),\nand replace the example questions in "
          f"{d / 'questions.json'}. Then:\n  rag ask {shlex.quote(question)} --data {shlex.quote(str(d))}")
    return 0
