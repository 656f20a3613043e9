"""Demo corpus, company 4: Kitsune Robotics Ltd (JPY, amounts in millions of yen; balance sheet split over 2 pages)."""
from __future__ import annotations

from .base import FORWARD, GOVERNANCE_INTRO, RISK, SUSTAINABILITY, Stmt, Table, fill


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
