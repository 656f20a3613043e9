"""The demo corpus's building blocks: :class:`Table`, :class:`Stmt` (totals computed from rows), :func:`fmt`
(report-style numbers) and the narrative shared by the four fictional companies (:func:`fill`)."""
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
