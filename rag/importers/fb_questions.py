"""One FinanceBench question as a project question: its text and kind, its gold in the dataset's terms and its
FinanceBench metadata. Pure: no file access (the import, :mod:`rag.importers.financebench`, reads the files).

Contract:
- ``map_question(q, sha1_by_doc) -> MappedQuestion``: one benchmark row (question, answer, doc_name, evidence
  [{doc_name, evidence_page_num (0-based)}], ...) as a project question (text, kind), its gold (answers in the
  unit the question asks, evidence pages as 0-based ``sha1:page_index`` pools, one pool per evidence entry)
  and its metadata (type, answer form, unit, decimals shown). ``form`` is "number" (gold is one number: kind
  number), "yes/no" (gold starts with yes/no: kind boolean, gold "True"/"False") or "text" (kind text, gold
  the free-text answer).
- ``answer_form(answer)``, ``asked_unit(question)``, ``gold_number(answer)``: the pieces it is made of.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

FORMS = ("number", "yes/no", "text")
_KIND_OF_FORM = {"number": "number", "yes/no": "boolean", "text": "text"}
# One number, maybe signed, with $ and a trailing % ("$1577.00", "30.8%", "-3.7", "(0.5)").
_NUMBER = re.compile(r"^\(?\s*(?P<sign>-)?\s*\$?\s*(?P<num>\d[\d,]*(?:\.\d+)?|\.\d+)\s*(?P<pct>%)?\s*\)?$")
_YESNO = re.compile(r"^\s*(?P<w>yes|no)\b", re.I)
# The unit a question asks for; first match wins (a question says it once).
_UNITS = (("USD billions", re.compile(r"\b(?:USD|US\$|\$)\s*billions?\b|\bbillions?\s+of\s+(?:USD|dollars)", re.I)),
          ("USD millions", re.compile(r"\b(?:USD|US\$|\$)\s*millions?\b|\bmillions?\s+of\s+(?:USD|dollars)", re.I)),
          ("USD thousands", re.compile(r"\b(?:USD|US\$|\$)\s*thousands?\b", re.I)),
          ("percent", re.compile(r"\bpercent(?:s|age)?\b|\bas\s+a\s+%|%\s*\)|in\s+%", re.I)))


@dataclass(frozen=True)
class MappedQuestion:
    text: str
    kind: str  # project kind: number | boolean | text
    form: str  # FinanceBench answer form: number | yes/no | text
    answers: tuple[str, ...]  # gold in the dataset's terms (number in the asked unit, "True"/"False", text)
    pools: tuple[tuple[str, ...], ...]  # ("sha1:page_index" 0-based, ...) per evidence entry
    doc_name: str
    meta: dict = field(default_factory=dict)  # financebench_id, question_type, unit, decimals, gold as written...

    def question_json(self, sha1_by_doc: dict[str, str] | None = None) -> dict:
        """questions.json's entry; ``filing``: the sha1 of the question's own filing (its doc_name), read by
        the per-filing setting (``retrieve.given_filing``)."""
        filing = (sha1_by_doc or {}).get(self.doc_name, "")
        return {"text": self.text, "kind": self.kind, "financebench_id": self.meta.get("financebench_id", ""),
                **({"filing": filing} if filing else {})}

    def gold_json(self) -> dict:
        return {"kind": self.kind, "answers": list(self.answers), "reference_pools": [list(p) for p in self.pools]}


def answer_form(answer: str) -> str:
    """"number" (one number, $ and % allowed), "yes/no" (starts with yes or no), else "text"."""
    if _NUMBER.match(answer.strip()):
        return "number"
    if _YESNO.match(answer):
        return "yes/no"
    return "text"


def asked_unit(question: str) -> str:
    """The unit the question asks its number in: "USD millions", "USD billions", "percent" or ""."""
    for unit, rx in _UNITS:
        if rx.search(question):
            return unit
    return ""


def gold_number(answer: str) -> tuple[float, int, bool]:
    """(value, decimals shown, had %) of a number-form gold answer ("$1577.00" -> (1577.0, 2, False))."""
    m = _NUMBER.match(answer.strip())
    if not m:
        raise ValueError(f"not a number answer: {answer!r}")
    num = m.group("num").replace(",", "")
    value = float(num) * (-1 if m.group("sign") or answer.strip().startswith("(") else 1)
    decimals = len(num.split(".")[1]) if "." in num else 0
    return value, decimals, bool(m.group("pct"))


def map_question(q: dict, sha1_by_doc: dict[str, str]) -> MappedQuestion:
    """One FinanceBench question -> project question + gold + metadata (see module contract).

    Evidence pages stay 0-based (``sha1:page_index``, as answers.json stores them); evidence in a document
    missing from ``sha1_by_doc`` is dropped (and counted in ``meta["evidence_dropped"]``).
    """
    answer = str(q["answer"]).strip()
    form = answer_form(answer)
    kind = _KIND_OF_FORM[form]
    meta = {k: q.get(k) for k in ("financebench_id", "company", "question_type", "question_reasoning",
                                  "justification")}
    meta.update(form=form, gold_as_written=answer, doc_name=q["doc_name"])
    if form == "number":
        value, decimals, pct = gold_number(answer)
        unit = asked_unit(q["question"]) or ("percent" if pct else "")
        meta.update(unit=unit, decimals=decimals)
        answers: tuple[str, ...] = (f"{value:.{decimals}f}",)
    elif form == "yes/no":
        answers = ("True" if _YESNO.match(answer).group("w").lower() == "yes" else "False",)
    else:
        answers = (answer,)
    pools, dropped = [], 0
    for ev in q.get("evidence") or []:
        doc = ev.get("doc_name") or ev.get("evidence_doc_name") or q["doc_name"]
        page = ev.get("evidence_page_num")
        if doc not in sha1_by_doc or not isinstance(page, int):
            dropped += 1
            continue
        ref = f"{sha1_by_doc[doc]}:{page}"
        if (ref,) not in pools:
            pools.append((ref,))
    meta["evidence_dropped"] = dropped
    return MappedQuestion(text=q["question"], kind=kind, form=form, answers=answers, pools=tuple(pools),
                          doc_name=q["doc_name"], meta=meta)
