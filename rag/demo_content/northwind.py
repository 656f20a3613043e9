"""Demo corpus, company 1: Northwind Logistics Inc. (USD, amounts in thousands)."""
from __future__ import annotations

from .base import COMMITTEES, FORWARD, GOVERNANCE_INTRO, RISK, SUSTAINABILITY, Stmt, Table, fill


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
