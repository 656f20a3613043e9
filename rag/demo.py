"""Generate the demo corpus: four FICTIONAL annual reports in the ERC dataset layout.

Contract:
- ``generate(out_dir) -> out_dir`` writes, deterministically (same bytes on every run)::

      pdfs/<sha1>.pdf     one report per company, named by the SHA-1 of its bytes
      subset.csv          sha1, company_name, cur, major_industry
      questions.json      [{text, kind}] (all five kinds, ~10 questions)
      answers.json        gold in the erc2-dev format; page_index is 0-BASED there
      demo_truth.json     what was printed where, with 1-BASED pages (see ``_truth``)

  It is idempotent (nothing happens when ``out_dir`` already holds this generator's output, checked by
  a hash of the generator's source and of every file it wrote) and atomic (built in a sibling temp
  folder, then renamed into place, under a lock so concurrent callers do not collide). Files it does
  not write (hand labels ``labels.jsonl``) are ignored by the check and kept on regeneration; stray
  PDFs are not (they would be read as reports).
- ``ensure_demo(out_dir="data/demo")`` = ``generate`` with the project-relative default.
- CLI: ``python -m rag.demo --out data/demo``.

Parts: the reports' content is data in :mod:`rag.demo_content`; :mod:`rag.demo_pdf` draws each report
with reportlab and says on which page every table and text landed; this module writes the questions,
the gold and the files.
"""
from __future__ import annotations

import argparse
import csv
import fcntl
import hashlib
import json
import os
import shutil
import sys
import tempfile
from decimal import Decimal
from pathlib import Path

from reportlab import Version as REPORTLAB_VERSION

from rag import demo_content as content
from rag import demo_pdf
from rag.demo_content import Table
from rag.demo_pdf import DemoError, render_report

DEFAULT_OUT = Path("data/demo")
TRUTH_FILE = "demo_truth.json"

# ------------------------------------------------------------------------------------------------
# Questions and gold
# ------------------------------------------------------------------------------------------------
# A pool reference is ("fact", fact_key) -> the page of the text with that key, or
# ("row", table_id, row_label) -> the page of the table part that prints that row.

_NA_SUFFIX = "If data is not available, return 'N/A'."
_BOOL_SUFFIX = "If there is no mention, return False."


def _questions(companies: dict[str, dict]) -> list[dict]:
    """The demo questions with their gold (value strings as in erc2-dev, pools as references)."""
    nw, au, hw, ks = (companies[k] for k in ("northwind", "aurelia", "harrow", "kitsune"))
    cfo_label = "Net cash provided by operating activities"
    cfo = _table(nw, "northwind/cashflow").value(cfo_label)
    assets = _table(ks, "kitsune/balance").value("Total assets")
    # head count as printed in the sentence with that fact key (checked below, so they cannot drift apart)
    staff = {"northwind": (14260, "nw_employees"), "aurelia": (6840, "au_employees"),
             "harrow": (38520, "hw_employees"), "kitsune": (22140, "ks_employees")}
    for k, (n, fact) in staff.items():
        if f"{n:,}" not in _fact_text(companies[k], fact):
            raise DemoError(f"{k}: fact {fact} does not print the head count {n:,}")
    names = [companies[k]["name"] for k in staff]
    top = max(staff, key=lambda k: staff[k][0])
    quoted = ", ".join(f'"{n}"' for n in names)
    return [
        dict(kind="number",  # the table is "(in thousands of USD)": gold = printed value x 1,000
             text=f"According to the annual report, what is the Cash flow from operations (in USD) for "
                  f"{nw['name']} (within the last period or at the end of the last period)? {_NA_SUFFIX}",
             answers=[_number(cfo, 1000)],
             pools=[[("row", "northwind/cashflow", cfo_label), ("fact", "nw_cfo_text")]]),
        dict(kind="number",  # "(in millions of yen)", printed on the continuation page of a split table
             text=f"What was the Total assets (in JPY) for {ks['name']} according to the annual report (within "
                  f"the last period or at the end of the last period)? {_NA_SUFFIX}",
             answers=[_number(assets, 1_000_000)],
             pools=[[("row", "kitsune/balance", "Total assets")]]),
        dict(kind="number",  # Aurelia reports in EUR only: no USD figure exists
             text=f"What was the Capital expenditures (in USD) for {au['name']} according to the annual report "
                  f"(within the last period or at the end of the last period)? {_NA_SUFFIX}",
             answers=["N/A"], pools=[]),
        dict(kind="name",
             text=f"What is the name of the Chief Executive Officer of {hw['name']} at the end of the reporting "
                  f"period? {_NA_SUFFIX}",
             answers=["Daniel Okafor"], pools=[[("fact", "hw_ceo_change"), ("fact", "hw_board")]]),
        dict(kind="names",
             text=f"Which leadership positions changed at {hw['name']} in the reporting period? {_NA_SUFFIX} "
                  f"Give me the title of the position.",
             answers=["Chief Executive Officer", "Chief Financial Officer"],
             pools=[[("fact", "hw_ceo_change"), ("fact", "hw_cfo_change")]]),
        dict(kind="names",
             text=f"What are the names of all new products launched by {ks['name']} according to the annual "
                  f"report? {_NA_SUFFIX} Give me the product names as mentioned in the report.",
             answers=["KR-7 Cobot", "Vixen AMR 300", "FoxEye Vision Suite"], pools=[[("fact", "ks_products")]]),
        dict(kind="boolean",
             text=f"Did {nw['name']} mention any mergers or acquisitions in the annual report? {_BOOL_SUFFIX}",
             answers=["True"],
             pools=[[("fact", "nw_acquisition"),
                     ("row", "northwind/cashflow", "Acquisition of Bayline Freight Services, net of cash acquired")]]),
        dict(kind="boolean",
             text=f"Did {hw['name']} announce a share buyback plan in the annual report? {_BOOL_SUFFIX}",
             answers=["True"], pools=[[("fact", "hw_buyback"), ("row", "harrow/cashflow", "Purchase of own shares")]]),
        dict(kind="boolean",  # the report says the policy is unchanged: gold False, with the page saying so
             text=f"Did {au['name']} announce any changes to its dividend policy in the annual report? "
                  f"{_BOOL_SUFFIX}",
             answers=["False"], pools=[[("fact", "au_dividend_policy")]]),
        dict(kind="comparative",  # one pool per company: the page printing its head count
             text=f"Which of the companies had the highest number of employees at the end of the last period: "
                  f"{quoted}? If data for the company is not available, exclude it from the comparison.",
             answers=[companies[top]["name"]],
             pools=[[("fact", fact)] for _, fact in staff.values()]),
    ]


def _fact_text(company: dict, fact: str) -> str:
    for blocks in company["pages"]:
        for b in blocks:
            if b[0] == "p" and len(b) > 2 and b[2] == fact:
                return b[1]
    raise DemoError(f"{company['key']}: no paragraph with fact key {fact}")


def _table(company: dict, table_id: str) -> Table:
    for blocks in company["pages"]:
        for b in blocks:
            if b[0] == "table" and b[1].key == table_id:
                return b[1]
    raise DemoError(f"{company['key']}: no table {table_id}")


def _number(printed: float, scale: int) -> str:
    """Gold number string as in erc2-dev ("406100000.0"): printed value x unit scale, exact in decimal."""
    return str(float(Decimal(str(printed)) * scale))


# ------------------------------------------------------------------------------------------------
# Generation
# ------------------------------------------------------------------------------------------------

def _generator_hash() -> str:
    """Changes whenever the generator's code, its content or reportlab change (=> regenerate)."""
    h = hashlib.sha256(REPORTLAB_VERSION.encode())
    content_files = sorted(Path(content.__file__).parent.glob("*.py"))  # the package: one module per company
    for mod in (Path(__file__), Path(demo_pdf.__file__), *content_files):
        h.update(mod.read_bytes())
    return h.hexdigest()


def _build(out: Path) -> None:
    """Write the whole corpus into the (empty) folder ``out``."""
    companies = {c["key"]: c for c in (f() for f in content.COMPANIES)}
    (out / "pdfs").mkdir(parents=True)
    reports, where_fact, where_row = [], {}, {}
    for key, c in companies.items():
        pdf, tables, texts = render_report(c)
        sha1 = hashlib.sha1(pdf).hexdigest()
        (out / "pdfs" / f"{sha1}.pdf").write_bytes(pdf)
        for t in texts:
            if t["key"]:
                where_fact.setdefault(t["key"], (sha1, t["page"]))
        for t in tables:
            for row in t["cells"][t["header_rows"]:]:
                where_row[(t["table_id"], row[0])] = (sha1, t["page"])
        reports.append(dict(sha1=sha1, company=c["name"], currency=c["cur"], industry=c["industry"],
                            pages=len(c["pages"]), running_header=c["header"],
                            tables=[dict(sha1=sha1, **t) for t in tables],
                            sentences=[dict(sha1=sha1, page=t["page"], key=t["key"], kind=t["kind"], text=t["text"])
                                       for t in texts if t["key"]],
                            texts=texts))

    def ref(r) -> str:  # -> "sha1:page_index" with the 0-BASED page index of answers.json
        sha1, page = where_fact[r[1]] if r[0] == "fact" else where_row[(r[1], r[2])]
        return f"{sha1}:{page - 1}"

    qs = _questions(companies)
    questions = [dict(text=q["text"], kind=q["kind"]) for q in qs]
    answers = {q["text"]: dict(kind=q["kind"], answers=q["answers"],
                               reference_pools=[sorted({ref(r) for r in pool}) for pool in q["pools"]])
               for q in qs}
    with open(out / "subset.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["sha1", "company_name", "cur", "major_industry"])
        for r in reports:
            w.writerow([r["sha1"], r["company"], r["currency"], r["industry"]])
    _dump(out / "questions.json", questions)
    _dump(out / "answers.json", answers)
    files = {p.relative_to(out).as_posix(): _sha256(p) for p in sorted(out.rglob("*")) if p.is_file()}
    _dump(out / TRUTH_FILE, dict(
        note="FICTIONAL reports generated by rag.demo. Pages here are 1-based; answers.json uses 0-based "
             "page_index. Table 'cells' are the grid exactly as printed (header row first when header_rows=1).",
        generator_hash=_generator_hash(), files=files, reports=reports))


def _dump(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def is_current(out_dir: Path) -> bool:
    """True when ``out_dir`` holds this generator's output, every file intact."""
    try:
        truth = json.loads((out_dir / TRUTH_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if truth.get("generator_hash") != _generator_hash():
        return False
    files = truth.get("files", {})
    pdfs = {p.relative_to(out_dir).as_posix() for p in (out_dir / "pdfs").glob("*")}
    return (bool(files) and pdfs == {f for f in files if f.startswith("pdfs/")}
            and all((out_dir / rel).is_file() and _sha256(out_dir / rel) == h for rel, h in files.items()))


def generate(out_dir: Path | str = DEFAULT_OUT) -> Path:
    """Write the demo corpus to ``out_dir`` (see module doc); a no-op when it is already current."""
    out_dir = Path(out_dir)
    if is_current(out_dir):
        return out_dir
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    # Several test processes may call this at once: serialise on a lock keyed by the folder's path
    # (kept in the temp dir, so no stray file lands in data/).
    lock_name = hashlib.sha1(str(out_dir.resolve()).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"rag-demo-{lock_name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not is_current(out_dir):  # another process may have finished it while we waited
            _replace(out_dir)
    return out_dir


def _replace(out_dir: Path) -> None:
    """Build into a sibling temp folder, then swap it in with renames (never a half-written corpus)."""
    tmp = out_dir.parent / f".{out_dir.name}.tmp-{os.getpid()}"
    old = out_dir.parent / f".{out_dir.name}.old-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        _build(tmp)
        if out_dir.exists():
            if not (out_dir / TRUTH_FILE).exists() and any(out_dir.iterdir()):
                raise DemoError(f"{out_dir}: exists and is not a demo corpus (no {TRUTH_FILE}); not replacing it")
            _keep_user_files(out_dir, tmp)
            out_dir.rename(old)
        tmp.rename(out_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def _keep_user_files(out_dir: Path, new: Path) -> None:
    """Carry files the generator does not write (e.g. hand labels ``labels.jsonl``) into ``new``."""
    for p in sorted(out_dir.rglob("*")):
        rel = p.relative_to(out_dir)
        if p.is_file() and rel.parts[0] != "pdfs" and not (new / rel).exists() and rel.as_posix() != TRUTH_FILE:
            (new / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, new / rel)


def ensure_demo(out_dir: Path | str = DEFAULT_OUT) -> Path:
    """The demo corpus folder, generated if absent or stale. A relative path is taken from the project root."""
    out_dir = Path(out_dir)
    if not out_dir.is_absolute():
        out_dir = Path(__file__).resolve().parent.parent / out_dir
    return generate(out_dir)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m rag.demo", description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: data/demo)")
    args = ap.parse_args(argv)
    out = generate(args.out)
    truth = json.loads((out / TRUTH_FILE).read_text(encoding="utf-8"))
    for r in truth["reports"]:
        print(f"{r['sha1']}  {r['pages']:>2} pages  {len(r['tables'])} tables  {r['company']} ({r['currency']})")
    print(f"demo corpus in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
