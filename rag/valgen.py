"""Validation-set questions: ERC round-2 style question generation (the labeller's tools: :mod:`rag.valgen_labels`).

- ``python -m rag.valgen --out DIR --seed N [--count C --extra E --dev D]`` writes ``DIR/subset.csv`` (reports of
  E and D by sha1), ``DIR/pdf_dirs.txt`` (E/pdfs, D/pdfs relative to DIR) and ``DIR/questions.json``: E's questions
  verbatim (counted in C) plus the challenge generator's templates word for word, drawn by a seeded LCG (same
  seed, same files) to fill per-kind quotas (:data:`MIX`), families weighted as its step2 reaches them; no text
  equals a D question; each report gets 1..:data:`CAP` single-company questions; comparatives (kind
  "comparative") list min(5, n >= 2) companies of one currency. Metadata flags (has_layoffs...) gate eligibility
  only where subset.csv has that column; industry metrics need a ``major_industry`` the generator knows.
- ``gold``, ``page``, ``grep``, ``label``, ``subset``: the labeller's tools, :mod:`rag.valgen_labels` (same command line).
- ``values ...`` (``rag valgen values``, dispatched by rag.cli): :mod:`rag.valgen_values` (questions where the report prints the value, appended after these).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import re
import sys
from pathlib import Path

from . import valgen_labels

MIX = {"number": 0.575, "boolean": 0.225, "names": 0.085, "name": 0.025, "comparative": 0.09}
CAP = 5
COLUMNS = ("sha1", "company_name", "cur", "major_industry")
SHARED = Path(__file__).resolve().parents[2] / "shared"

# The challenge generator's wording (trustbit/enterprise-rag-challenge main.py), verbatim.
_NA, _NO = "If data is not available, return 'N/A'.", "If there is no mention, return False."
_PERIOD = "(within the last period or at the end of the last period)?"
_LISTED = "at the end of the period listed in annual report"
FIN_METRICS = ("Total revenue (in {cur})|Operating income (in {cur})|Net income (in {cur})|Gross margin (%)|"
               "Operating margin (%)|EPS (earnings per share) (in {cur})|EBITDA (in {cur})|Capital expenditures (in "
               "{cur})|Cash flow from operations (in {cur})|Long-term debt (in {cur})|Shareholders' equity (in {cur})|"
               "Dividend per share (in {cur})").split("|")
_META = [("has_regulatory_or_litigation_issues", "mention any ongoing litigation or regulatory inquiries?"),
         ("has_capital_structure_changes", "report any changes to its capital structure?"),
         ("has_share_buyback_plans", "announce a share buyback plan in the annual report?"),
         ("has_dividend_policy_changes", "announce any changes to its dividend policy in the annual report?"),
         ("has_strategic_restructuring", "detail any restructuring plans in the latest filing?"),
         ("has_supply_chain_disruptions", "report any supply chain disruptions in the annual report?"),
         ("has_esg_initiatives", "outline any new ESG initiatives in the annual report?")]
_MA, _LEAD, _PROD = "mentions_recent_mergers_and_acquisitions", "has_leadership_changes", "has_new_product_launches"
# kind -> [(weight as step2 reaches the template, gating metadata flag, family, [variants])]
FAMILIES = {
    "number": [
        (2, None, "fin", [f"What was the {{metric}} for {{company}} according to the annual report {_PERIOD} {_NA}",
                          f"According to the annual report, what is the {{metric}} for {{company}}  {_PERIOD} {_NA}"]),
        (3, None, "industry", [f"What was the value of {{metric}} of {{company}} {_LISTED}? {_NA}",
                               f"For {{company}}, what was the value of {{metric}} {_LISTED}? {_NA}"]),
        (1, "has_executive_compensation", "", [
            "What was the largest single spending of {company} on executive compensation in {cur}? If data is not "
            "available in this currency, return 'N/A'."]),
        (1, "has_layoffs", "", [
            f"How many employees were laid off by {{company}} during the period covered by the annual report? {_NA}",
            f"What is the total number of employees let go by {{company}} according to the annual report? {_NA}"])],
    "boolean": [
        (42, _MA, "", [f"Did {{company}} mention any mergers or acquisitions in the annual report? {_NO}"]),
        (21, _LEAD, "", [f"Did {{company}} announce any changes to its executive team in the annual report? {_NO}"]),
        (28, _PROD, "", [f"Did {{company}} announce any new product launches in the annual report? {_NO}"]),
        *((12, flag, "", [f"Did {{company}} {text} {_NO}"]) for flag, text in _META)],
    "names": [
        (3, _LEAD, "", ["What are the names of all executives removed from their positions in {company}?"]),
        (3, _LEAD, "", ["What are the names of all new executives that took on new leadership positions in "
                        "{company}?"]),
        (3, _LEAD, "", [f"Which leadership positions changed at {{company}} in the reporting period? {_NA} "
                        "Give me the title of the position."]),
        (4, _PROD, "", ["What are the names of new products launched by {company} as mentioned in the annual "
                        "report?"])],
    "name": [
        (6, _MA, "", ["What was the latest merger or acquisition that {company} was involved in? "
                      "Return name of the entity or 'N/A'"]),
        (4, _PROD, "", ["What is the name of the last product launched by {company} as mentioned in the annual "
                        "report?"])],
}
COMPARE = (f"Which of the companies had the {{ref}} {{metric}} in {{cur}} {_LISTED}: {{companies}}? If data for the "
           "company is not available, exclude it from the comparison. If only one company is left, return this "
           "company.")
# The generator's industry_metrics as "Industry=metric|metric|...;Industry=..." (a line break is a space).
INDUSTRY_METRICS = {k: v.split("|") for k, v in (e.split("=") for e in """\
Technology=Number of patents at year-end|Total capitalized R&D expenditure|Total expensed R&D expenditure|End-of-year
tech staff headcount|End-of-year total headcount|Annual recurring revenue (ARR)|Total intangible assets (IP
valuation)|Number of active software licenses|Data center capacity (MW)|Data center capacity (sq. ft.)|Cloud storage
capacity (TB)|End-of-period market capitalization|Year-end customer base|Year-end user base;Financial Services=Total
assets on balance sheet at year-end|Total deposits at year-end|Loans outstanding at year-end|Assets under management
(AUM)|Non-performing loan ratio (NPL) at year-end|Tier 1 capital ratio at year-end|Number of customer accounts at
year-end|Branch count at year-end|End-of-year net interest margin (NIM)|Return on equity (ROE) at
year-end;Healthcare=Number of hospital beds at year-end|Number of owned clinics at year-end|Number of managed clinics at
year-end|Active patient count (registered patients)|Value of medical equipment (balance sheet)|End-of-year bed occupancy
rate|Number of healthcare professionals on staff|Number of laboratories at year-end|Number of diagnostic centers at
year-end|Healthcare plan memberships (if applicable)|Outstanding insurance claims (if applicable)|R&D pipeline (number
of therapies in phases);Automotive=Vehicle production capacity (units/year)|Inventory of finished vehicles at
year-end|Global dealership network size|Number of electric models available|Number of hybrid models available|Battery
production capacity (if applicable)|End-of-year automotive patent portfolio|End-of-period market share (by units
sold)|Number of EV charging stations in network|Year-end fleet average CO₂ emissions|R&D workforce
headcount;Retail=Number of stores at year-end|Total store floor area (sqm)|Total store floor area (sq. ft.)|Value of
inventory on hand at year-end|Number of distribution centers at year-end|Number of fulfillment centers at
year-end|Loyalty program membership at year-end|Online active customer accounts|E-commerce active customer
accounts|Year-end store employee headcount|Private label SKUs in portfolio|Number of new store openings (cumulative in
year)|Online order fulfillment capacity (daily);Energy and Utilities=Total power generation capacity (MW)|Number of
power plants at year-end|Number of facilities at year-end|Percentage of renewable energy capacity|Transmission network
length|Distribution network length|Total number of customers connected|Proven oil reserves (if applicable)|Proven gas
reserves (if applicable)|Refinery throughput capacity|Pipeline network length|Greenhouse gas emissions intensity
(CO₂/MWh)|Year-end weighted average cost of energy production;Hospitality=Number of properties at year-end|Number of
hotels at year-end|Total number of rooms available|Year-end occupancy rate|Average daily rate (ADR) at final
period|Revenue per available room (RevPAR) at final period|Loyalty program membership at year-end|Number of
restaurants|Number of bars|Conference/banquet space capacity (sq. ft.)|Franchise agreements in force|Hospitality
workforce headcount;Telecommunications=Mobile subscriber base at year-end|Broadband subscriber base at year-end|Mobile
coverage area (population %)|Mobile coverage area (geography %)|Number of broadband subscribers|Number of fiber
subscribers|Fiber network length (km)|Fiber network length (miles)|Average revenue per user (ARPU) at year-end|5G
coverage ratio (population %)|Data center capacity (MW)|Data center capacity (racks)|Number of retail stores|Number of
service stores|Network downtime (hours) in final reporting period;Media & Entertainment=Number of streaming platform
subscribers|Number of online platform subscribers|Broadcast coverage area (population reach)|Advertising inventory at
year-end|Number of active licensing deals|Size of film/TV content library (hours)|Size of film/TV content library
(titles)|Social media follower count (all platforms)|Year-end box office market share (if applicable)|Number of
production facilities|In-house production capacity (titles/year)|Headcount for creative roles|Headcount for production
roles;Pharmaceuticals=Number of drugs on the market (approved)|Number of compounds in Phase I|Number of compounds in
Phase II|Number of compounds in Phase III|Manufacturing capacity (units/year)|Manufacturing capacity
(liters/year)|Global distribution network (markets served)|Number of active pharmaceutical patents|Clinical trial sites
operating at year-end|Inventory of active pharmaceutical ingredients|Size of sales force (year-end)|Pharmacovigilance
reports (adverse events logged)|Branded product count|Generic product count;Aerospace & Defense=Order backlog (value) at
year-end|Order backlog (units) at year-end|Production capacity (aircraft/year)|Production capacity (units/year)|Number
of defense contracts active|Number of government contracts active|R&D spending on advanced programs|Number of employees
with security clearance|Military products in service (units)|Defense products in service (units)|Satellite capacity in
orbit|Spacecraft capacity in orbit|Facilities footprint (sq. ft.)|Facilities footprint (number of sites)|Year-end patent
portfolio (aerospace tech)|Partnerships with government agencies at year-end;Transport & Logistics=Fleet size (vehicles)
at year-end|Fleet size (aircraft) at year-end|Fleet size (vessels) at year-end|Warehouse capacity (sq. ft.)|Warehouse
capacity (cubic ft.)|Number of distribution hubs|Global route coverage (countries served)|Global route coverage (regions
served)|Final-period on-time delivery rate|Freight volume capacity (TEU)|Freight volume capacity (tons)|Fuel consumption
rate (liters/year)|Fuel consumption rate (per mile)|CO₂ emissions from operations (ton/year)|Year-end logistics staff
headcount|Infrastructure investments completed in the period;Food & Beverage=Production capacity (e.g., bottling
liters/hour)|Number of manufacturing plants|Number of warehouses in distribution network|Number of depots in
distribution network|SKU count in portfolio|Raw material supply contracts|Inventory of raw materials at year-end|Number
of company-owned outlets|Number of franchised outlets|Year-end market share (by product category)|Food safety
certifications (sites certified)|Brand portfolio size (distinct brands at year-end)""".replace("\n", " ").split(";"))}


class LCG:
    """Seeded linear congruential generator (the constants of the challenge's DeterministicRNG)."""

    def __init__(self, seed: int):
        self.state = seed

    def below(self, n: int) -> int:
        self.state = (1664525 * self.state + 1013904223) % 2 ** 32
        return self.state % n

    def pick(self, seq):
        return seq[self.below(len(seq))]

    def sample(self, seq, k: int) -> list:
        pool, out = list(seq), []
        for _ in range(k):  # swap the pick to the end, pop it
            j = self.below(len(pool))
            pool[j], pool[-1] = pool[-1], pool[j]
            out.append(pool.pop())
        return out


def quotas(count: int) -> dict[str, int]:
    """:data:`MIX` rounded to ``count`` questions (largest remainder)."""
    q = {k: int(count * w) for k, w in MIX.items()}
    for k in sorted(MIX, key=lambda k: q[k] - count * MIX[k])[:count - sum(q.values())]:
        q[k] += 1
    return q


def _on(r: dict, flag: str | None) -> bool:  # metadata flag: only a column of that name can say False
    return str(r.get(flag, "True")).lower() in ("true", "1", "yes")


def _draw(rng: LCG, kind: str, reports: list[dict], uses: dict[str, int]) -> tuple[str, str | None]:
    """One question text of ``kind`` and the company it is about (None for comparative; "" if none fits)."""
    if kind == "comparative":
        groups: dict[str, list[str]] = {}
        for r in (r for r in reports if _on(r, "has_financial_performance_indicators")):
            groups.setdefault(r["cur"], []).append(r["company_name"])
        cur = rng.pick(sorted(c for c, names in groups.items() if len(names) >= 2) or [""])
        names = rng.sample(groups.get(cur, []), min(5, len(groups.get(cur, []))))
        ref, metric = rng.pick(["highest", "lowest"]), rng.pick(["total revenue", "net income", "total assets"])
        return (COMPARE.format(ref=ref, metric=metric, cur=cur, companies=", ".join(f'"{n}"' for n in names))
                if cur else ""), None
    w = rng.below(sum(f[0] for f in FAMILIES[kind]))  # a family, by weight
    _, flag, family, variants = next(f for f in FAMILIES[kind] if (w := w - f[0]) < 0)
    pool = [r for r in reports if uses[r["company_name"]] < CAP and _on(r, flag)
            and (family != "industry" or r.get("major_industry") in INDUSTRY_METRICS)]
    if not pool:
        return "", None
    r = rng.pick([r for r in pool if uses[r["company_name"]] == 0] or pool)  # uncovered reports first
    metric = (rng.pick(FIN_METRICS).format(cur=r["cur"]) if family == "fin" else
              rng.pick(INDUSTRY_METRICS[r["major_industry"]]) if family == "industry" else "")
    return rng.pick(variants).format(metric=metric, company=r["company_name"], cur=r["cur"]), r["company_name"]


def generate(reports: list[dict], seed: int, count: int, fixed=(), exclude=()) -> list[dict]:
    """``count`` questions: ``fixed`` verbatim plus generated ones filling :func:`quotas`, shuffled."""
    rng, need = LCG(seed), quotas(count)
    uses = {r["company_name"]: 0 for r in reports}
    out, seen = [{"text": q["text"], "kind": q["kind"]} for q in fixed], set(exclude)
    for q in out:
        seen.add(q["text"])
        need[q["kind"]] = max(0, need[q["kind"]] - 1)
        for name in uses:  # credit the report the question names
            uses[name] += bool(re.search(rf"\b{re.escape(name)}(?=\s|\?|$)", q["text"]))
    for kind in rng.sample([k for k in MIX for _ in range(need[k])], sum(need.values())):
        for _ in range(1000):
            text, name = _draw(rng, kind, reports, uses)
            if text and text not in seen:
                break
        else:
            raise RuntimeError(f"no new {kind} question fits (caps, flags or currencies too tight)")
        uses[name] = uses.get(name, 0) + 1  # (None counts comparatives)
        seen.add(text)
        out.append({"text": text, "kind": kind})
    return rng.sample(out, len(out))


def shared_reports(extra: Path, dev: Path) -> list[dict]:
    """subset.csv rows of both shared folders, stripped, in sha1 order (the validation sets' reports)."""
    rows = []
    for d in (extra, dev):
        with open(d / "subset.csv", newline="", encoding="utf-8-sig") as f:
            rows += [{k: (v or "").strip() for k, v in row.items()} for row in csv.DictReader(f)]
    return sorted(rows, key=lambda r: r["sha1"])


def write_reports(out: Path, rows: list[dict], extra: Path, dev: Path) -> None:
    """``out/subset.csv`` (:data:`COLUMNS` of ``rows``) and ``out/pdf_dirs.txt`` (both folders' pdfs/, relative)."""
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "subset.csv", "w", newline="", encoding="utf-8") as f:
        csv.writer(f, lineterminator="\n").writerows([COLUMNS] + [[r.get(c, "") for c in COLUMNS] for r in rows])
    (out / "pdf_dirs.txt").write_text("".join(os.path.relpath(d / "pdfs", out) + "\n" for d in (extra, dev)))


def write_valset(out: Path, seed: int, count: int, extra: Path, dev: Path) -> list[dict]:
    rows = shared_reports(extra, dev)
    fixed, dev_qs = (json.loads((d / "questions.json").read_text(encoding="utf-8")) for d in (extra, dev))
    qs = generate(rows, seed, count, fixed, [q["text"] for q in dev_qs])
    write_reports(out, rows, extra, dev)
    (out / "questions.json").write_text(json.dumps(qs, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return qs


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in valgen_labels.COMMANDS:  # gold, page, grep, label, subset: the labeller's tools
        return valgen_labels.main(argv)
    ap = argparse.ArgumentParser(prog="python -m rag.valgen")
    ap.add_argument("--out", type=Path, required=True), ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, default=110), ap.add_argument("--extra", default=SHARED / "erc2-extra")
    ap.add_argument("--dev", default=SHARED / "erc2-dev")
    a = ap.parse_args(argv)
    qs = write_valset(a.out, a.seed, a.count, Path(a.extra), Path(a.dev))
    return print(f"{a.out}: {len(qs)} questions", {k: sum(q["kind"] == k for q in qs) for k in MIX})


if __name__ == "__main__":
    main()
