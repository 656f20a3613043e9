"""Demo corpus, company 2: Aurelia Pharma AG (EUR, amounts in € millions, one decimal)."""
from __future__ import annotations

from .base import FORWARD, RISK, SUSTAINABILITY, Stmt, Table, fill


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
