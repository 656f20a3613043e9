"""Data of the demo corpus: four FICTIONAL companies, their statements, narrative and facts.

Layout code lives in :mod:`rag.demo`; this module only holds content. Every company, person,
product and number here is invented. A report is a list of pages; a page is a list of blocks:

- ``("h1"|"h2", text)``                      headings
- ``("p", text)`` / ``("p", text, fact_key)`` a paragraph; with a key it is a known sentence whose
                                             page goes to the truth file (and to gold pools)
- ``("bullets", [text, ...], fact_key|None)`` a bulleted list (names of board members, products)
- ``("table", Table)``                        a financial table (title + unit line + cell grid)
- ``("cover", title, subtitle)``              the cover page

Amounts are in the table's unit (``scale`` says what one unit is worth in the currency); negative
values are printed in parentheses.
"""
from __future__ import annotations

from dataclasses import dataclass, field

EM_DASH = "\u2014"  # printed for a zero amount


@dataclass
class Table:
    """A financial table. ``rows``: (label, values, style) with style "", "bold" or "head"."""

    key: str
    title: str
    unit: str
    columns: list[str]  # header row, first cell is the label column's header
    rows: list[tuple[str, tuple[float | None, ...], str]] = field(default_factory=list)
    decimals: int = 0
    # Split after this many body rows (a page break falls inside the table); 0: no split.
    split_after: int = 0
    repeat_header: bool = True

    def value(self, label: str, col: int = 0) -> float:
        for lab, vals, _ in self.rows:
            if lab == label:
                return vals[col]
        raise KeyError(f"table {self.key}: no row {label!r}")


def fmt(v: float | None, decimals: int) -> str:
    """Report-style number: thousands separators, negatives in parentheses, zero as an em dash."""
    if v is None:
        return ""
    if round(v, decimals) == 0:
        return EM_DASH
    s = f"{abs(v):,.{decimals}f}"
    return f"({s})" if v < 0 else s


class Stmt:
    """Builds a statement whose total rows are computed from named rows (so tables add up)."""

    def __init__(self, table: Table):
        self.t = table
        self.vals: dict[str, tuple[float, ...]] = {}

    def head(self, label: str) -> "Stmt":
        self.t.rows.append((label, tuple(None for _ in self.t.columns[1:]), "head"))
        return self

    def item(self, label: str, *vals: float) -> "Stmt":
        self.vals[label] = vals
        self.t.rows.append((label, vals, ""))
        return self

    def total(self, label: str, *parts: str) -> "Stmt":
        n = len(self.t.columns) - 1
        vals = tuple(round(sum(self.vals[p][i] for p in parts), self.t.decimals) for i in range(n))
        self.vals[label] = vals
        self.t.rows.append((label, vals, "bold"))
        return self


# --------------------------------------------------------------------------------------------
# Shared narrative. Placeholders: {name} {short} {year} {fy_end} {activity} {customers} {region}
# {hq} {ceo} {chair}. Each company uses a different subset so reports do not read identically.
# --------------------------------------------------------------------------------------------

RISK = [
    ("h1", "Principal risks and uncertainties"),
    ("p", "The Board has overall responsibility for risk management and internal control. Risks are "
          "identified bottom-up by each business unit and top-down by the executive committee, assessed "
          "against a common scale of likelihood and impact, and reviewed by the Audit and Risk Committee "
          "at every scheduled meeting. The risk register is updated quarterly and the most significant "
          "risks are reported to the Board together with the mitigating actions and their owners."),
    ("h2", "Market and competition"),
    ("p", "Demand for {activity} depends on the general level of economic activity in {region}. A "
          "prolonged slowdown, a sharp rise in interest rates or a change in the purchasing behaviour "
          "of {customers} could reduce volumes and put pressure on prices. We mitigate this risk by "
          "keeping a flexible cost base, by diversifying our customer portfolio and by reviewing our "
          "pricing architecture twice a year."),
    ("h2", "Cyber security and data protection"),
    ("p", "Our operations rely on information systems that could be disrupted by cyber attacks, "
          "software failures or the loss of a data centre. A serious incident could interrupt service "
          "to customers, expose personal data and damage our reputation. During the year we extended "
          "multi-factor authentication to all employees, completed two external penetration tests and "
          "rehearsed our incident response plan with the executive committee."),
    ("h2", "People and talent"),
    ("p", "Our ability to deliver our strategy depends on attracting and retaining skilled people. "
          "Tight labour markets increase wage costs and staff turnover. We monitor engagement through "
          "an annual survey, benchmark pay every year and invest in training and internal promotion."),
    ("h2", "Regulation and compliance"),
    ("p", "Changes in tax law, trade rules, environmental standards or sector regulation could increase "
          "our costs or restrict how we operate. The legal and compliance function tracks proposed "
          "legislation in every market and reports material developments to the Board."),
]

GOVERNANCE_INTRO = (
    "The Board is collectively responsible for the long-term success of {name}. It sets the strategy, "
    "approves the budget and major investments, oversees risk management and monitors the performance "
    "of the executive team. The Board met nine times during the year and each director attended all "
    "meetings for which they were eligible, with one exception caused by illness."
)

COMMITTEES = (
    "The Board has three standing committees. The Audit and Risk Committee reviews financial reporting, "
    "the work of the external auditor and the effectiveness of internal controls. The Remuneration "
    "Committee sets the pay of the executive directors and senior managers. The Nomination Committee "
    "leads the process for board appointments and succession planning."
)

SUSTAINABILITY = [
    ("h1", "Sustainability and our people"),
    ("p", "Sustainability is part of how we run {short} every day. In {year} we published science-based "
          "targets to reduce our scope 1 and 2 emissions by 42 percent by 2030 against a 2021 baseline, "
          "and we began to collect primary emissions data from our largest suppliers. Our sites in "
          "{region} now source a growing share of their electricity from renewable contracts."),
    ("p", "Health and safety remains our first priority. The lost-time injury frequency rate improved "
          "for the third consecutive year, and every site completed a safety leadership programme for "
          "front-line managers. We continue to invest in training, with an average of 21 hours of "
          "learning per employee during the year."),
]

FORWARD = [
    ("h1", "Forward-looking statements"),
    ("p", "This annual report contains forward-looking statements about the financial condition, results "
          "of operations and business of {name}. These statements are based on current expectations and "
          "assumptions and involve risks and uncertainties that could cause actual results to differ "
          "materially. Words such as expects, anticipates, intends, plans, believes and estimates "
          "identify forward-looking statements. {short} undertakes no obligation to update any "
          "forward-looking statement, whether as a result of new information, future events or otherwise."),
    ("h2", "Shareholder information"),
    ("p", "The annual general meeting will be held at the registered office in {hq}. Shareholders can "
          "find the notice of meeting, the financial calendar and previous reports on the investor "
          "relations pages of our website. Questions may be addressed to the company secretary."),
]


def fill(blocks, **kw):
    """Format every text in ``blocks`` with the company's placeholders."""
    out = []
    for b in blocks:
        if b[0] in ("p", "h1", "h2"):
            out.append((b[0], b[1].format(**kw), *b[2:]))
        else:
            out.append(b)
    return out


# --------------------------------------------------------------------------------------------
# Company 1: Northwind Logistics Inc. (USD, amounts in thousands)
# --------------------------------------------------------------------------------------------

def northwind() -> dict:
    kw = dict(name="Northwind Logistics Inc.", short="Northwind", year="2024", fy_end="December 31, 2024",
              activity="freight transport and warehousing", customers="retail and industrial shippers",
              region="North America", hq="Columbus, Ohio", ceo="Rebecca Hollis", chair="Thomas Greer")
    unit = "(in thousands of USD)"
    cols = ["", "2024", "2023"]
    inc = Stmt(Table("northwind/income", "Consolidated Statements of Income", unit, cols))
    (inc.item("Operating revenues", 2847315, 2611904)
        .item("Salaries, wages and benefits", -1102448, -1019377)
        .item("Purchased transportation", -688230, -640118)
        .item("Fuel and fuel taxes", -301552, -322690)
        .item("Depreciation and amortization", -164907, -151023)
        .item("Other operating expenses", -298716, -276412)
        .total("Operating income", "Operating revenues", "Salaries, wages and benefits", "Purchased transportation",
               "Fuel and fuel taxes", "Depreciation and amortization", "Other operating expenses")
        .item("Interest expense, net", -38114, -29871)
        .total("Income before income taxes", "Operating income", "Interest expense, net")
        .item("Income tax expense", -62309, -41236)
        .total("Net income", "Income before income taxes", "Income tax expense"))
    ni = inc.vals["Net income"]
    # split over pages 9-10 WITHOUT repeating title, unit or header row (the Kitsune split repeats them)
    cf = Stmt(Table("northwind/cashflow", "Consolidated Statements of Cash Flows", unit, cols,
                    split_after=13, repeat_header=False))
    (cf.head("Operating activities")
       .item("Net income", *ni)
       .item("Depreciation and amortization", 164907, 151023)
       .item("Deferred income taxes", 8412, -3390)
       .item("Stock-based compensation", 11204, 9876)
       .item("Change in accounts receivable", -54877, -12310)
       .item("Change in accounts payable and accrued liabilities", 21560, -8244)
       .total("Net cash provided by operating activities", "Net income", "Depreciation and amortization",
              "Deferred income taxes", "Stock-based compensation", "Change in accounts receivable",
              "Change in accounts payable and accrued liabilities")
       .head("Investing activities")
       .item("Purchases of property and equipment", -233980, -198455)
       .item("Acquisition of Bayline Freight Services, net of cash acquired", -186400, 0)
       .item("Proceeds from sale of equipment", 19872, 22410)
       .total("Net cash used in investing activities", "Purchases of property and equipment",
              "Acquisition of Bayline Freight Services, net of cash acquired", "Proceeds from sale of equipment")
       .head("Financing activities")
       .item("Proceeds from borrowings", 240000, 60000)
       .item("Repayments of borrowings", -95000, -110000)
       .item("Dividends paid", -58560, -51240)
       .total("Net cash provided by (used in) financing activities", "Proceeds from borrowings",
              "Repayments of borrowings", "Dividends paid")
       .total("Net increase (decrease) in cash", "Net cash provided by operating activities",
              "Net cash used in investing activities", "Net cash provided by (used in) financing activities"))
    seg = Table("northwind/segments", "Segment Information", unit,
                ["Segment", "Revenue 2024", "Revenue 2023", "Op. income 2024"], decimals=0)
    seg.rows = [("Truckload", (1420118, 1355702, 168410), ""),
                ("Less-than-truckload", (812660, 701311, 96233), ""),
                ("Warehousing and distribution", (614537, 554891, 62189), ""),
                ("Corporate and eliminations", (None, None, -35370), ""),
                ("Total", (2847315, 2611904, inc.vals["Operating income"][0]), "bold")]
    assert sum(v[0] for _, v, _ in seg.rows[:3]) == 2847315 and sum(v[1] for _, v, _ in seg.rows[:3]) == 2611904
    assert sum(v[2] for _, v, _ in seg.rows[:4]) == inc.vals["Operating income"][0], inc.vals["Operating income"]
    cfo = cf.vals["Net cash provided by operating activities"][0]
    pages = [
        [("cover", "Northwind Logistics Inc.", "Annual Report 2024"),
         ("p", "Moving the goods that keep North America running.")],
        [("h1", "Letter to shareholders"),
         ("p", "Dear fellow shareholders, 2024 was a year of disciplined growth for Northwind. Operating "
               "revenues rose 9.0 percent to $2.85 billion as new dedicated contracts and the first months "
               "of Bayline offset softer spot rates in truckload. Operating income increased to "
               f"${inc.vals['Operating income'][0] / 1000:,.1f} million and we generated strong cash flow "
               "while continuing to renew our fleet."),
         ("p", "Our teams delivered more than 3.1 million shipments with an on-time performance of 97.4 "
               "percent, the best result in our history. I want to thank every driver, dock worker, "
               "planner and technician for their commitment to safety and service."),
         ("p", "The Board approved an increase of the quarterly dividend from $0.21 to $0.24 per share, "
               "reflecting our confidence in the cash generation of the business.", "nw_dividend"),
         ("p", "Looking ahead, we expect freight markets to recover gradually during 2025. We will keep "
               "investing in our network, in technology and in our people, and we remain committed to "
               "returning excess capital to shareholders over time."),
         ("p", "Rebecca Hollis, President and Chief Executive Officer")],
        [("h1", "Strategy and business review"),
         ("p", "Our strategy rests on three pillars: density in our core truckload lanes, growth in "
               "less-than-truckload and warehousing, and a technology platform that lets customers book, "
               "track and pay for every shipment in one place."),
         ("p", "On August 1, 2024, Northwind completed the acquisition of Bayline Freight Services, a "
               "regional less-than-truckload carrier with 42 terminals in the Southeast, for $186.4 million "
               "in cash.", "nw_acquisition"),
         ("p", "Bayline adds about 1,900 employees and 1,100 tractors to our network and doubles our "
               "less-than-truckload capacity in the fast-growing markets of Georgia, the Carolinas and "
               "Tennessee. Integration is progressing to plan and we expect annual cost synergies of $18 "
               "million by the end of 2026."),
         ("p", "In warehousing and distribution we opened two new fulfilment centres, in Indianapolis and "
               "Reno, adding 1.4 million square feet of capacity for e-commerce customers. Our digital "
               "freight platform now handles 38 percent of all tenders, up from 29 percent a year ago.")],
        fill(RISK, **kw),
        [("h1", "Financial review"),
         ("p", "Operating revenues increased by $235.4 million, or 9.0 percent, driven by growth in "
               "less-than-truckload, including five months of Bayline, and by new warehousing contracts. "
               "Truckload revenue grew 4.8 percent despite lower fuel surcharge revenue."),
         ("p", f"Net cash provided by operating activities was ${cfo / 1000:,.1f} million in 2024. Capital "
               "expenditures of $234.0 million were invested mainly in new tractors, trailers and the two "
               "new fulfilment centres.", "nw_cfo_text"),
         ("table", seg),
         ("p", "Segment operating income excludes corporate costs, acquisition-related expenses and "
               "intersegment eliminations, which are reported in Corporate and eliminations.")],
        [("h1", "Our people"),
         ("p", "At December 31, 2024, Northwind employed 14,260 people across the United States, Canada "
               "and Mexico, including 8,930 professional drivers.", "nw_employees"),
         *fill(SUSTAINABILITY, **kw)[1:]],
        [("h1", "Corporate governance"),
         ("p", GOVERNANCE_INTRO.format(**kw)),
         ("p", "The Board of Directors of Northwind Logistics Inc. consists of the following members:"),
         ("bullets", ["Thomas Greer, Independent Chair", "Rebecca Hollis, President and Chief Executive Officer",
                      "Anita Desai, Independent Director", "Marcus Bell, Independent Director",
                      "Yvonne Carter, Independent Director", "Luis Ortega, Director"], "nw_board"),
         ("p", COMMITTEES)],
        [("table", inc.t),
         ("p", "The accompanying notes are an integral part of these consolidated financial statements.")],
        [("h1", "Liquidity and capital resources"),
         ("p", "Our primary sources of liquidity are cash generated by operations and our $600 million "
               "unsecured revolving credit facility, which matures in 2029. At December 31, 2024, $145 million "
               "was drawn under the facility and we were in compliance with all financial covenants."),
         ("p", "We financed the Bayline acquisition with cash on hand and borrowings under the revolving "
               "credit facility. Net debt increased to 1.4 times earnings before interest, taxes, "
               "depreciation and amortization, within our target range of 1.0 to 2.0 times."),
         ("p", "We expect capital expenditures of $240 million to $260 million in 2025, mainly for the "
               "replacement of tractors and trailers and for technology projects."),
         ("table", cf.t)],
        # the cash flow statement continues at the top of this page (inserted by the layout code)
        fill(FORWARD, **kw),
    ]
    return dict(key="northwind", name=kw["name"], cur="USD", industry="Transport & Logistics",
                header="Northwind Logistics Inc. | Annual Report 2024", pages=pages)


# --------------------------------------------------------------------------------------------
# Company 2: Aurelia Pharma AG (EUR, amounts in € millions, one decimal)
# --------------------------------------------------------------------------------------------

def aurelia() -> dict:
    kw = dict(name="Aurelia Pharma AG", short="Aurelia", year="2024", fy_end="31 December 2024",
              activity="specialty medicines", customers="hospitals, payers and pharmacies",
              region="Europe", hq="Munich", ceo="Dr. Katrin Weiss", chair="Prof. Dr. Hans-Peter Lorenz")
    unit = "\u20ac millions"
    cols = ["", "2024", "2023"]
    inc = Stmt(Table("aurelia/income", "Consolidated Income Statement", unit, cols, decimals=1))
    (inc.item("Revenue", 3412.6, 3188.9)
        .item("Cost of sales", -1041.2, -987.5)
        .total("Gross profit", "Revenue", "Cost of sales")
        .item("Research and development expenses", -802.4, -745.1)
        .item("Selling and marketing expenses", -731.9, -702.3)
        .item("General and administrative expenses", -214.7, -203.6)
        .item("Other operating income (expenses), net", -12.3, 8.4)
        .total("Operating profit (EBIT)", "Gross profit", "Research and development expenses",
               "Selling and marketing expenses", "General and administrative expenses",
               "Other operating income (expenses), net")
        .item("Financial result", -41.8, -36.2)
        .total("Profit before taxes", "Operating profit (EBIT)", "Financial result")
        .item("Income taxes", -141.6, -121.9)
        .total("Net profit", "Profit before taxes", "Income taxes"))
    cf = Stmt(Table("aurelia/cashflow", "Consolidated Statement of Cash Flows", unit, cols, decimals=1))
    (cf.item("Net profit", *inc.vals["Net profit"])
       .item("Depreciation, amortisation and impairment", 236.5, 221.8)
       .item("Change in working capital", -88.3, -61.0)
       .item("Other non-cash items", 24.9, 17.6)
       .total("Cash flow from operating activities", "Net profit", "Depreciation, amortisation and impairment",
              "Change in working capital", "Other non-cash items")
       .item("Purchase of property, plant and equipment", -274.8, -251.3)
       .item("Purchase of intangible assets", -96.2, -143.7)
       .total("Cash flow from investing activities", "Purchase of property, plant and equipment",
              "Purchase of intangible assets")
       .item("Dividends paid", -158.4, -158.4)
       .item("Net change in financial liabilities", -62.0, 35.5)
       .total("Cash flow from financing activities", "Dividends paid", "Net change in financial liabilities"))
    kpi = Table("aurelia/kpis", "Key figures", unit, ["", "2024", "2023", "Change"], decimals=1)
    kpi.rows = [("Revenue", (3412.6, 3188.9, 223.7), ""),
                ("Research and development expenses", (802.4, 745.1, 57.3), ""),
                ("Operating profit (EBIT)", (inc.vals["Operating profit (EBIT)"] +
                                             (round(inc.vals["Operating profit (EBIT)"][0] -
                                                    inc.vals["Operating profit (EBIT)"][1], 1),)), ""),
                ("Net profit", (inc.vals["Net profit"] +
                                (round(inc.vals["Net profit"][0] - inc.vals["Net profit"][1], 1),)), "bold")]
    pages = [
        [("cover", "Aurelia Pharma AG", "Annual Report 2024"),
         ("p", "Science for patients with rare and serious diseases.")],
        [("h1", "Letter from the Chief Executive Officer"),
         ("p", "Dear Shareholders, in 2024 Aurelia delivered solid growth and important progress in our "
               "research pipeline. Group revenue rose 7.0 percent to EUR 3,412.6 million, driven by our "
               "haematology franchise and the launch of Veltrasib in six European markets."),
         ("p", "We invested EUR 802.4 million in research and development, or 23.5 percent of revenue. "
               "Three programmes entered phase III trials during the year, and the European Medicines "
               "Agency accepted our filing for Oranzumab in severe asthma."),
         ("p", "Our strategy remains focused on specialty medicines where we can make a real difference "
               "for patients. We continued to strengthen our manufacturing network with an expansion of "
               "the biologics plant in Regensburg, which will come on stream in 2026."),
         ("p", "Dr. Katrin Weiss, Chief Executive Officer")],
        [("table", kpi),
         ("h1", "Dividend"),
         ("p", "The Management Board and the Supervisory Board will propose to the Annual General Meeting "
               "a dividend of EUR 1.10 per share, the same amount as in the prior year."),
         ("p", "Our dividend policy, which targets a payout ratio of 30 to 40 percent of core net income, "
               "remains unchanged.", "au_dividend_policy"),
         ("p", "The proposal reflects our commitment to a reliable distribution while financing the "
               "investments in our pipeline and in manufacturing capacity from operating cash flow.")],
        [("h1", "Research and development"),
         ("p", "Our research focuses on haematology, immunology and rare metabolic diseases. At year end "
               "the pipeline comprised 19 clinical programmes, of which six were in phase III or under "
               "regulatory review."),
         ("p", "Veltrasib, our oral inhibitor for chronic immune thrombocytopenia, received marketing "
               "authorisation in the European Union in March 2024. Launches in Germany, France, Italy, "
               "Spain, Austria and the Netherlands followed during the year."),
         ("p", "We continued our partnerships with academic centres in Munich, Leiden and Milan, and we "
               "opened a new translational medicine laboratory in Martinsried. The laboratory brings "
               "together biomarker research, clinical pharmacology and data science under one roof.")],
        fill(RISK, **kw),
        [("h1", "Employees"),
         ("p", "As of 31 December 2024, Aurelia employed 6,840 people worldwide, 61 percent of them in "
               "Germany and Switzerland.", "au_employees"),
         *fill(SUSTAINABILITY, **kw)[1:]],
        [("h1", "Supervisory Board and Management Board"),
         ("p", "Aurelia Pharma AG has a two-tier board structure. The Management Board runs the company and "
               "the Supervisory Board appoints, advises and oversees the Management Board."),
         ("p", "Members of the Supervisory Board:"),
         ("bullets", ["Prof. Dr. Hans-Peter Lorenz, Chair", "Claudia Brandt, Deputy Chair",
                      "Dr. Matthias Keller", "Sophie Laurent", "Jens Albrecht", "Dr. Ingrid Solberg"],
          "au_board"),
         ("p", "Members of the Management Board:"),
         ("bullets", ["Dr. Katrin Weiss, Chief Executive Officer", "Florian Haas, Chief Financial Officer",
                      "Dr. Elena Rossi, Chief Scientific Officer"], "au_management")],
        [("table", inc.t),
         ("p", "Core net income, which excludes amortisation of acquired intangible assets and "
               "restructuring charges, amounted to EUR 462.7 million.")],
        [("table", cf.t),
         ("p", "Capital expenditure on property, plant and equipment related mainly to the Regensburg "
               "biologics expansion and to new quality control laboratories.")],
        fill(FORWARD, **kw),
    ]
    return dict(key="aurelia", name=kw["name"], cur="EUR", industry="Healthcare",
                header="Aurelia Pharma AG | Annual Report 2024", pages=pages)


# --------------------------------------------------------------------------------------------
# Company 3: The Harrow Group plc (GBP, amounts in £ millions, one decimal)
# --------------------------------------------------------------------------------------------

def harrow() -> dict:
    kw = dict(name="The Harrow Group plc", short="Harrow", year="2024/25", fy_end="31 March 2025",
              activity="home, clothing and food retail", customers="households",
              region="the United Kingdom and Ireland", hq="London", ceo="Daniel Okafor",
              chair="Lady Fiona Marsh")
    unit = "(\u00a3 in millions)"
    cols = ["", "2025", "2024"]
    inc = Stmt(Table("harrow/income", "Consolidated Income Statement", unit, cols, decimals=1))
    (inc.item("Revenue", 6284.3, 6011.7)
        .item("Cost of sales", -3896.2, -3762.5)
        .total("Gross profit", "Revenue", "Cost of sales")
        .item("Store and distribution costs", -1587.4, -1514.9)
        .item("Administrative expenses", -402.6, -391.3)
        .item("Impairment of store assets", -21.8, -48.2)
        .total("Operating profit", "Gross profit", "Store and distribution costs", "Administrative expenses",
               "Impairment of store assets")
        .item("Net finance costs", -88.9, -93.4)
        .total("Profit before tax", "Operating profit", "Net finance costs")
        .item("Taxation", -97.6, -48.1)
        .total("Profit for the year", "Profit before tax", "Taxation"))
    cf = Stmt(Table("harrow/cashflow", "Consolidated Cash Flow Statement", unit, cols, decimals=1))
    (cf.item("Cash generated from operations", 842.5, 803.1)
       .item("Tax paid", -84.2, -61.7)
       .total("Net cash inflow from operating activities", "Cash generated from operations", "Tax paid")
       .item("Purchase of property, plant and equipment", -211.3, -188.6)
       .item("Purchase of intangible assets", -64.8, -59.0)
       .total("Net cash used in investing activities", "Purchase of property, plant and equipment",
              "Purchase of intangible assets")
       .item("Repayment of lease liabilities", -236.1, -229.4)
       .item("Purchase of own shares", -61.5, 0)
       .item("Dividends paid", -118.2, -110.6)
       .total("Net cash used in financing activities", "Repayment of lease liabilities", "Purchase of own shares",
              "Dividends paid"))
    pages = [
        [("cover", "The Harrow Group plc", "Annual Report and Financial Statements 2024/25"),
         ("p", "Quality and value for every home.")],
        [("h1", "Chair's statement"),
         ("p", "This has been a year of transition and renewal for Harrow. Revenue grew 4.5 percent to "
               "\u00a36,284.3 million and profit before tax rose strongly as our value programme, lower "
               "impairment charges and tight cost control came through."),
         ("p", "Margaret Ellison retired as Chief Executive Officer on 30 June 2024 after eleven years in the "
               "role, and the Board appointed Daniel Okafor, previously Chief Operating Officer, as Chief "
               "Executive Officer with effect from 1 July 2024.", "hw_ceo_change"),
         ("p", "Sarah Lindqvist joined the Board as Chief Financial Officer on 2 September 2024, succeeding "
               "Peter Vance, who stepped down after seven years.", "hw_cfo_change"),
         ("p", "On behalf of the Board I thank Margaret and Peter for their outstanding contribution and "
               "welcome Daniel and Sarah to their new roles. Lady Fiona Marsh, Chair")],
        [("h1", "Chief Executive's review"),
         ("p", "My first months as Chief Executive have confirmed the strength of the Harrow brand and the "
               "loyalty of our 9.2 million customers. We sharpened prices on more than 3,000 everyday "
               "lines, refreshed 64 stores and grew online sales to 31 percent of the total."),
         ("p", "Our food halls had an excellent year, with like-for-like sales up 6.8 percent, and clothing "
               "returned to growth in the second half after a difficult spring. Home continued to be "
               "affected by weak housing transactions."),
         ("p", "Our priorities for the coming year are clear: better value, a simpler and faster supply "
               "chain, and a store estate that matches how our customers shop today."),
         ("p", "Daniel Okafor, Chief Executive Officer")],
        [("h1", "Capital allocation and shareholder returns"),
         ("p", "Our capital allocation framework gives priority to investment in the business, a "
               "progressive ordinary dividend and a strong balance sheet, with surplus capital returned to "
               "shareholders."),
         ("p", "In November 2024 the Board launched a share buyback programme of up to \u00a3150 million, "
               "to be completed by the end of 2025.", "hw_buyback"),
         ("p", "By 31 March 2025 the company had repurchased 21.3 million ordinary shares for a total "
               "consideration of \u00a361.5 million. The repurchased shares have been cancelled."),
         ("p", "The Board recommends a final dividend of 7.4 pence per share, bringing the total dividend for "
               "the year to 11.1 pence, an increase of 5.7 percent.")],
        fill(RISK, **kw),
        [("h1", "Our colleagues"),
         ("p", "At 31 March 2025, the Group had 38,520 colleagues, of whom 71 percent work part-time in "
               "our stores.", "hw_employees"),
         *fill(SUSTAINABILITY, **kw)[1:]],
        [("h1", "Board of Directors"),
         ("p", GOVERNANCE_INTRO.format(**kw)),
         ("bullets", ["Lady Fiona Marsh, Chair", "Daniel Okafor, Chief Executive Officer",
                      "Sarah Lindqvist, Chief Financial Officer", "Richard Hale, Senior Independent Director",
                      "Priya Raman, Independent Non-Executive Director",
                      "Oliver Grant, Independent Non-Executive Director"], "hw_board"),
         ("p", COMMITTEES)],
        [("table", inc.t)],
        [("table", cf.t),
         ("p", "Purchase of own shares relates to the share buyback programme announced in November 2024.")],
        [("h1", "Alternative performance measures"),
         ("p", "Management uses adjusted profit before tax, which excludes impairment of store assets and "
               "other adjusting items, to assess the underlying performance of the Group. Adjusted measures "
               "are not defined by IFRS and may not be comparable with similar measures of other "
               "companies."),
         ("p", "Net debt comprises borrowings and lease liabilities less cash and cash equivalents. Free "
               "cash flow is net cash inflow from operating activities less capital expenditure and lease "
               "repayments.")],
        fill(FORWARD, **kw),
    ]
    return dict(key="harrow", name=kw["name"], cur="GBP", industry="Retail",
                header="The Harrow Group plc | Annual Report 2024/25", pages=pages)


# --------------------------------------------------------------------------------------------
# Company 4: Kitsune Robotics Ltd (JPY, amounts in millions of yen; balance sheet split over 2 pages)
# --------------------------------------------------------------------------------------------

def kitsune() -> dict:
    kw = dict(name="Kitsune Robotics Ltd", short="Kitsune", year="fiscal 2024", fy_end="March 31, 2025",
              activity="industrial automation", customers="automotive and electronics manufacturers",
              region="Japan, China and Southeast Asia", hq="Nagoya", ceo="Hiroshi Tanabe",
              chair="Kenji Morimoto")
    unit = "(in millions of yen)"
    cols = ["", "FY2024", "FY2023"]
    inc = Stmt(Table("kitsune/income", "Consolidated Statement of Income", unit, cols))
    (inc.item("Net sales", 318442, 296107)
        .item("Cost of sales", -204881, -193550)
        .total("Gross profit", "Net sales", "Cost of sales")
        .item("Selling, general and administrative expenses", -71320, -68014)
        .item("Research and development expenses", -19874, -18233)
        .total("Operating profit", "Gross profit", "Selling, general and administrative expenses",
               "Research and development expenses")
        .item("Non-operating income (expenses), net", 2915, -1108)
        .total("Profit before income taxes", "Operating profit", "Non-operating income (expenses), net")
        .item("Income taxes", -8710, -4633)
        .total("Profit attributable to owners of parent", "Profit before income taxes", "Income taxes"))
    bs = Stmt(Table("kitsune/balance", "Consolidated Balance Sheet", unit, cols, split_after=16))
    (bs.head("Assets")
       .item("Cash and deposits", 58214, 49870)
       .item("Notes and accounts receivable", 71530, 66214)
       .item("Merchandise and finished goods", 33408, 30117)
       .item("Work in process", 18772, 17940)
       .item("Raw materials and supplies", 21655, 23081)
       .item("Other current assets", 6127, 5532)
       .item("Allowance for doubtful accounts", -412, -388)
       .total("Total current assets", "Cash and deposits", "Notes and accounts receivable",
              "Merchandise and finished goods", "Work in process", "Raw materials and supplies",
              "Other current assets", "Allowance for doubtful accounts")
       .item("Buildings and structures, net", 52380, 50412)
       .item("Machinery and equipment, net", 44917, 41205)
       .item("Land", 16240, 16240)
       .item("Construction in progress", 9833, 6120)
       .item("Intangible assets", 12604, 11388)
       .item("Investment securities", 24175, 22960)
       .item("Deferred tax assets", 5218, 5731)
       .item("Other investments and other assets", 3811, 3502)
       .total("Total non-current assets", "Buildings and structures, net", "Machinery and equipment, net",
              "Land", "Construction in progress", "Intangible assets", "Investment securities",
              "Deferred tax assets", "Other investments and other assets")
       .total("Total assets", "Total current assets", "Total non-current assets")
       .head("Liabilities")
       .item("Notes and accounts payable", 41166, 38420)
       .item("Short-term borrowings", 12500, 15000)
       .item("Income taxes payable", 3904, 2215)
       .item("Other current liabilities", 18330, 17061)
       .total("Total current liabilities", "Notes and accounts payable", "Short-term borrowings",
              "Income taxes payable", "Other current liabilities")
       .item("Long-term borrowings", 45000, 40000)
       .item("Retirement benefit liability", 14872, 15310)
       .item("Other non-current liabilities", 4105, 3987)
       .total("Total liabilities", "Total current liabilities", "Long-term borrowings",
              "Retirement benefit liability", "Other non-current liabilities"))
    ta = bs.vals["Total assets"]
    tl = bs.vals["Total liabilities"]
    cap, surplus, treasury = (21350, 21350), (24102, 24102), (-3360, -3360)
    bs.head("Net assets")
    bs.item("Share capital", *cap).item("Capital surplus", *surplus)
    bs.item("Retained earnings", *(ta[i] - tl[i] - cap[i] - surplus[i] - treasury[i] for i in range(2)))
    bs.item("Treasury shares", *treasury)
    bs.total("Total net assets", "Share capital", "Capital surplus", "Retained earnings", "Treasury shares")
    bs.total("Total liabilities and net assets", "Total liabilities", "Total net assets")
    assert bs.vals["Total liabilities and net assets"] == ta
    pages = [
        [("cover", "Kitsune Robotics Ltd", "Integrated Report 2025 (fiscal year ended March 31, 2025)"),
         ("p", "Automation that works alongside people.")],
        [("h1", "Message from the President"),
         ("p", "In fiscal 2024 Kitsune achieved record net sales of 318.4 billion yen, up 7.5 percent, as "
               "demand for collaborative robots and autonomous mobile robots grew strongly in electronics "
               "and logistics. Operating profit rose 37 percent thanks to a better product mix and "
               "productivity gains at our Nagoya and Suzhou plants."),
         ("p", "We raised the annual dividend to 64 yen per share from 52 yen, in line with our policy of a "
               "consolidated payout ratio of 30 percent."),
         ("p", "Hiroshi Tanabe, President and Chief Executive Officer")],
        [("h1", "New products"),
         ("p", "During the fiscal year, Kitsune launched three new products:", None),
         ("bullets", ["KR-7 Cobot, a seven-axis collaborative robot with a payload of 12 kg",
                      "Vixen AMR 300, an autonomous mobile robot for factory and warehouse logistics",
                      "FoxEye Vision Suite, AI-based inspection software for our robot controllers"],
          "ks_products"),
         ("p", "The KR-7 Cobot was launched in June 2024 and had shipped more than 4,800 units by year end. "
               "Vixen AMR 300 entered the Japanese and Chinese markets in October 2024, and FoxEye Vision "
               "Suite is now offered as an option on all new controllers."),
         ("p", "Together the new products contributed 21.6 billion yen to net sales in their first year.")],
        fill(RISK, **kw),
        [("h1", "Human capital"),
         ("p", "As of March 31, 2025, the Kitsune group had 22,140 employees in 14 countries.", "ks_employees"),
         *fill(SUSTAINABILITY, **kw)[1:]],
        [("h1", "Corporate governance"),
         ("p", GOVERNANCE_INTRO.format(**kw)),
         ("p", "Directors:"),
         ("bullets", ["Kenji Morimoto, Chairman of the Board", "Hiroshi Tanabe, President and CEO",
                      "Yuki Sato, Director and CFO", "Aiko Fujimura, Outside Director",
                      "David Lam, Outside Director", "Naomi Ishikawa, Outside Director"], "ks_board")],
        [("table", inc.t)],
        [("h1", "Financial position"),
         ("p", "Total assets at the end of the fiscal year increased as a result of higher cash and "
               "receivables, inventory build-up ahead of new product launches and capital expenditure at "
               "the Nagoya plant. Borrowings rose slightly as we financed the new Suzhou logistics centre."),
         ("p", "Inventories were kept under close review. Raw materials decreased while finished goods "
               "increased to support the launch of the KR-7 Cobot and Vixen AMR 300 in new markets."),
         ("table", bs.t)],
        # the balance sheet continues on this page (the layout code inserts its second part here)
        [("p", "Net assets per share increased to 1,914 yen. The equity ratio was 63.0 percent.")],
        fill(FORWARD, **kw),
    ]
    return dict(key="kitsune", name=kw["name"], cur="JPY", industry="Technology",
                header="Kitsune Robotics Ltd | Integrated Report 2025", pages=pages)


COMPANIES = (northwind, aurelia, harrow, kitsune)
