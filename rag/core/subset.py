"""The reports of a dataset: ``subset.csv`` rows checked and matched to their PDFs (``pdfs/`` or the folders
``pdf_dirs.txt`` lists), as :class:`Report` records. rag.core.dataset (the layout, questions, gold) calls
:func:`load_reports` and re-exports every public name here.

Contract: ``load_reports(root, problems, check_hashes) -> [Report]`` appends one ``"file:row: message"`` per
problem (a file that is not UTF-8 (a BOM is fine): its offset and the fix; a missing column, a duplicated or
empty sha1, a row with more fields than the header, a currency that is not ISO 4217, a bad ``period`` /
``doc_type``, an absent PDF, a PDF whose sha1 differs); ``unlisted_pdfs(root, reports)``: warnings for PDFs in
``pdfs/`` that no row lists; ``sha1_of(path)``; ``normalize_doc_type(text)``; ``parse_aliases(cell)``: the
optional ``aliases`` column (``;``-separated other names of the company: ticker, short names), read into
``Report.aliases``.
"""
from __future__ import annotations

import csv
import hashlib
import io
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from .text_files import NotUtf8, read_utf8

SUBSET_COLUMNS = ("sha1", "company_name", "cur")
# Filing types a subset.csv row may name (``doc_type``); spellings users write map to these.
DOC_TYPES = ("10-K", "10-Q", "8-K", "annual report", "earnings release")
_DOC_TYPE_SPELLINGS = {"10k": "10-K", "10q": "10-Q", "8k": "8-K", "annualreport": "annual report",
                       "earnings": "earnings release", "earningsrelease": "earnings release"}
# ``period``: a fiscal year, a fiscal quarter of a fiscal year, or the date of an event filing.
PERIOD_RE = re.compile(r"^(?:\d{4}|\d{4}Q[1-4]|\d{4}-\d{2}-\d{2})$")
# Active ISO 4217 currency codes: anything else in ``cur`` is a shifted column ("Inc.") or a typo ("Euro").
ISO_CURRENCIES = frozenset("""
AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF
CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD
HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD
MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN
PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY
TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW ZWL
""".split())


class _Rec(BaseModel):
    model_config = ConfigDict(frozen=True)


class Report(_Rec):
    sha1: str
    company: str
    currency: str
    industry: str = ""
    pdf: Path
    period: str = ""  # "" (not known), "2018", "2024Q2" or "2023-05-05" (see PERIOD_RE)
    doc_type: str = ""  # "" or one of DOC_TYPES
    # Other ways questions write the company (subset.csv ``aliases``, ";"-separated): the ticker, short names.
    aliases: tuple[str, ...] = ()

    @property
    def filing(self) -> str:
        """Short label of the filing: "3M 10-K 2018" (company alone when period and type are unknown)."""
        return " ".join(x for x in (self.company, self.doc_type, self.period) if x)


def sha1_of(path: Path) -> str:
    h = hashlib.sha1()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def _pdf_dirs(root: Path, problems: list[str]) -> list[Path]:
    """Folders searched for ``<sha1>.pdf``: ``pdfs/`` or, when absent, those ``pdf_dirs.txt`` lists."""
    listing = root / "pdf_dirs.txt"
    if (root / "pdfs").is_dir() or not listing.exists():
        return [root / "pdfs"]
    dirs = []
    try:
        text = read_utf8(listing)
    except NotUtf8 as e:
        problems.append(str(e))
        return []
    for line_no, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        folder = root / line  # an absolute line replaces root
        if not folder.is_dir():
            problems.append(f"{listing}:{line_no}: listed PDF folder {folder} does not exist")
            continue
        dirs.append(folder)
    if not dirs:
        problems.append(f"{listing}: lists no existing PDF folder")
    return dirs


def load_reports(root: Path, problems: list[str], check_hashes: bool) -> list[Report]:
    """subset.csv's rows as Reports (each problem appended to ``problems``; see the module docstring)."""
    path = root / "subset.csv"
    if not path.exists():
        problems.append(f"{path}: missing file")
        return []
    reports: list[Report] = []
    seen: dict[str, int] = {}
    pdf_dirs = _pdf_dirs(root, problems)
    try:
        text = read_utf8(path)
    except NotUtf8 as e:
        problems.append(str(e))
        return []
    with io.StringIO(text, newline="") as f:
        reader = csv.DictReader(f)
        missing = [c for c in SUBSET_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            problems.append(f"{path}:1: missing column(s) {', '.join(missing)} (have {reader.fieldnames})")
            return []
        for row_no, row in enumerate(reader, 2):  # row 1 is the header
            sha1 = (row.get("sha1") or "").strip().lower()
            where = f"{path}:{row_no}"
            if not sha1:
                problems.append(f"{where}: empty sha1")
                continue
            if sha1 in seen:
                problems.append(f"{where}: duplicated sha1 {sha1} (first on row {seen[sha1]})")
                continue
            seen[sha1] = row_no
            if None in row:  # csv.DictReader keeps fields beyond the header under the key None
                problems.append(f"{where}: {len(reader.fieldnames) + len(row[None])} fields, the header has "
                                f"{len(reader.fieldnames)} (a company name with an unquoted comma? quote it)")
                continue
            if not (row.get("company_name") or "").strip():
                problems.append(f"{where}: empty company_name for {sha1}")
            cur = (row.get("cur") or "").strip()
            if cur and cur.upper() not in ISO_CURRENCIES:
                problems.append(f"{where}: currency {cur!r} is not an ISO 4217 code such as USD, EUR, GBP")
                continue
            period, doc_type = _filing_fields(row, where, problems)
            name = (row.get("file") or "").strip() or f"{sha1}.pdf"
            if Path(name).name != name:
                problems.append(f"{where}: file {name!r} must be a file name in the PDF folder, not a path")
                continue
            pdf = next((d / name for d in pdf_dirs if (d / name).exists()), None)
            if pdf is None:
                if len(pdf_dirs) == 1:
                    problems.append(f"{where}: listed PDF {pdf_dirs[0] / name} is absent")
                else:
                    places = ", ".join(str(d) for d in pdf_dirs) or "(no PDF folder)"
                    problems.append(f"{where}: listed PDF {name} is absent from {places}")
                continue
            if check_hashes and sha1_of(pdf) != sha1:
                problems.append(f"{pdf}: file's sha1 {sha1_of(pdf)} does not match its name")
                continue
            reports.append(Report(sha1=sha1, company=row["company_name"].strip(),
                                  currency=cur.upper(),
                                  industry=(row.get("major_industry") or "").strip(), pdf=pdf,
                                  period=period, doc_type=doc_type, aliases=parse_aliases(row.get("aliases") or "")))
    return reports


def parse_aliases(cell: str) -> tuple[str, ...]:
    """subset.csv's ``aliases`` cell ("AMZN; Amazon.com") as a tuple: ``;``-separated, stripped, empties and
    repeats dropped, order kept."""
    return tuple(dict.fromkeys(a.strip() for a in (cell or "").split(";") if a.strip()))


def normalize_doc_type(text: str) -> str | None:
    """"10K", "10-k", "Earnings" ... -> the DOC_TYPES spelling; "" stays ""; None when unknown."""
    key = re.sub(r"[^a-z0-9]", "", text.lower())
    if not key:
        return ""
    canon = {re.sub(r"[^a-z0-9]", "", d.lower()): d for d in DOC_TYPES}
    return canon.get(key) or _DOC_TYPE_SPELLINGS.get(key)


def _filing_fields(row: dict, where: str, problems: list[str]) -> tuple[str, str]:
    """The optional ``period`` and ``doc_type`` of a subset.csv row ("" when absent), problems noted."""
    period = (row.get("period") or "").strip().upper()
    if period and not PERIOD_RE.match(period):
        problems.append(f"{where}: period {period!r} is not a fiscal year (2018), a fiscal quarter (2024Q2) "
                        "or a date (2023-05-05)")
        period = ""
    doc_type = normalize_doc_type(row.get("doc_type") or "")
    if doc_type is None:
        problems.append(f"{where}: doc_type {row.get('doc_type')!r} is not one of {', '.join(DOC_TYPES)}")
        doc_type = ""
    return period, doc_type


def unlisted_pdfs(root: Path, reports: list[Report]) -> list[str]:
    """A warning for PDFs in ``pdfs/`` that subset.csv does not list (they are never parsed or asked about).
    Folders shared through pdf_dirs.txt are not checked: they may hold other datasets' reports."""
    folder = root / "pdfs"
    if not folder.is_dir():
        return []
    listed = {r.pdf.name.lower() for r in reports}
    extra = sorted(p.name for p in folder.glob("*.pdf") if p.name.lower() not in listed)
    if not extra:
        return []
    shown = ", ".join(extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
    return [f"{folder}: {len(extra)} PDF(s) not listed in subset.csv are ignored: {shown}"]
