"""Demo corpus, company 3: The Harrow Group plc (GBP, amounts in £ millions, one decimal)."""
from __future__ import annotations

from .base import COMMITTEES, FORWARD, GOVERNANCE_INTRO, RISK, SUSTAINABILITY, Stmt, Table, fill


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
