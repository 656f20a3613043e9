"""What a number question asks for: a percentage, a count or an amount of money (stage 06, sentence candidates).

Contract: ``_kinds(question, company) -> (percent, count, money)``, read from the metric (ERC boilerplate and
the company removed): a percentage question (``numbers.asks_percent``); money when a currency or a per-share
figure is asked, or the metric names money ("revenue", "assets", "backlog"); a count when it names counted
things ("number of", "employees", "stores", "branch count"). A parenthesised measure ("(barrels)", "(MW)")
makes it neither money nor a count. ``_MEASURE`` (a measure printed right after a figure) is shared with
:mod:`rag.answer.numbers.prose`, whose sentences a count question takes only in the measure it names.
"""
from __future__ import annotations

import re

from ..common import printed as nums
from ...core.questions import search_text

_MONEY_WORDS = re.compile(r"(?i)\b(?:revenue|sales|turnover|income|profit|loss|cash|expenditure|capex|debt|"
                          r"assets|equity|deposits|spend|spent|spending|cost|costs|expenses?|investment|"
                          r"dividend|aum|under management|backlog)\b")  # not "value": every ERC custom metric asks "the value of"
_COUNT_WORDS = re.compile(r"(?i)\bnumber of\b|\bhow many\b|\b(?:count|fleet size)\b|"
                          r"\b(?:employees|headcount|staff|workforce|patents?|stores?|branch(?:es)?|customers|"
                          r"subscribers|members|users|therapies|sites|locations|"
                          r"people|vessels|beds|clinics|openings|dealerships|mw|megawatts|capacity)\b")
# A measure printed right after the figure (or after a range: "2 to 10 years"): a count question takes it only
# when the question names it.
_MEASURE = re.compile(r"(?i)^\s*(?:(?:to|-|–|and)\s*\d[\d,.]*\s*)?"
                      r"(square|sq\.?|feet|ft|acres?|hectares?|km|kilometres?|kilometers?|miles?|tonnes?|tons?|"
                      r"mw|gw|mwh|gwh|kw|kwh|barrels?|boe|litres?|liters?|gallons?|hours?|days?|weeks?|months?|years?|"
                      r"times|x|shares?)\b")
_BBL = re.compile(r"(?i)^\s*(?:bbls?|mmbbls?|boe|mcf|bcf|oz|ounces)\b")  # measures printed only as abbreviations


def _kinds(question: str, company: str) -> tuple[bool, bool, bool]:
    """(percent, count, money) of the metric asked for."""
    q = search_text(question, company)
    pct = nums.asks_percent(question)
    money = bool(nums.question_currency(question)) or nums.asks_per_share(question)
    if not money and any(_MEASURE.match(u) or _BBL.match(u) for u in re.findall(r"\(([^)]*)\)", q)):
        return pct, False, False  # "(barrels)", "(MW)": a quantity in a measure, neither money nor a count
    count = not pct and not money and bool(_COUNT_WORDS.search(q))
    money = money or (not pct and not count and bool(_MONEY_WORDS.search(q)))
    return pct, count, money
