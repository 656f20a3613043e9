"""How well ``rag init`` guesses company and currency: every PDF of the given datasets against its subset.csv.

    .venv/bin/python benchmarks/init_guess.py [--data ../shared/erc2-dev ../shared/erc2-extra] [--verbose]

Company: "exact" (same string), "short form" (equal once case, punctuation, a leading "The" and trailing
legal suffixes are dropped, i.e. rag.retrieve.route.name_variants' shortest form, so a question written
with either name routes the same), else "wrong". Currency: agreement with ``cur``, and with ``cur`` corrected
by benchmarks/init_guess_currency.csv: the ERC subset's ``cur`` is often not the report's currency (Seiko
Epson listed as AUD, Australian companies as USD); that file holds the currency each such report states,
checked by hand, with the evidence. Relative --data paths are taken from the project root. Prints numbers
only; nothing is asserted.
"""
from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag.clean.currency import guess_currency  # noqa: E402
from rag.init_guess import guess_company, page_texts  # noqa: E402
from rag.retrieve.route import name_variants  # noqa: E402


def short(name: str) -> tuple[str, ...]:
    return name_variants(name)[-1]


def reviewed() -> dict[str, str]:
    with open(Path(__file__).with_name("init_guess_currency.csv"), newline="", encoding="utf-8") as f:
        return {r["sha1"]: r["cur"] for r in csv.DictReader(f)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=["../shared/erc2-dev", "../shared/erc2-extra"])
    ap.add_argument("--verbose", action="store_true", help="one line per report, not only the misses")
    a = ap.parse_args()
    tally = {"exact": 0, "short form": 0, "wrong": 0}
    cur_ok = cur_checked = n = 0
    checked = reviewed()
    t0 = time.perf_counter()
    for d in a.data:
        root = Path(d) if Path(d).is_absolute() else ROOT / d
        with open(root / "subset.csv", newline="", encoding="utf-8-sig") as f:
            truth = {r["sha1"]: r for r in csv.DictReader(f)}
        for pdf in sorted((root / "pdfs").glob("*.pdf")):
            row = truth.get(pdf.stem)
            if row is None:
                continue
            pages = page_texts(pdf)
            company, cur = guess_company(pages) or "", guess_currency(pages) or ""
            verdict = ("exact" if company == row["company_name"] else
                       "short form" if company and short(company) == short(row["company_name"]) else "wrong")
            tally[verdict] += 1
            cur_ok += cur == row["cur"]
            cur_checked += cur == checked.get(pdf.stem, row["cur"])
            n += 1
            if a.verbose or verdict != "exact" or cur != row["cur"]:
                print(f"{pdf.stem[:8]}  {verdict:<10}  {company!r:<45} truth {row['company_name']!r:<45} "
                      f"cur {cur or '-'}{' ' if cur == row['cur'] else ' != '}{row['cur']}"
                      + (f" (checked: {checked[pdf.stem]})" if pdf.stem in checked else ""))
    print(f"\n{n} reports ({', '.join(a.data)}), {time.perf_counter() - t0:.1f}s")
    print("company: " + ", ".join(f"{k} {v}/{n}" for k, v in tally.items())
          + f"  (exact or short form: {tally['exact'] + tally['short form']}/{n})")
    print(f"currency agrees with subset.csv: {cur_ok}/{n}; with subset.csv as corrected by "
          f"init_guess_currency.csv ({len(checked)} rows): {cur_checked}/{n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
