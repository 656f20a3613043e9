"""``rag ask "question" --data D``: one question answered from an indexed dataset, printed with its pages.

Contracts:
- ``infer_kind(text, n_companies) -> kind``: the ERC answer kind a question asks for, from its wording
  (``--kind`` overrides): several companies named -> comparative; why / explain -> text; "how many / how
  much" -> number; "Did/Does/Is/Has ..." -> boolean; "names/titles/list/what are the" -> names; "who /
  which ..." or "name/title" -> name; else number; the cue words of German, French, Spanish, Italian,
  Portuguese, Russian, Chinese and Japanese beside English (tests/data/kind_phrasings.tsv measures them).
- ``ask(cfg, ds, text, kind=None, llm=None, counter=None) -> AskResult``: routes, retrieves and answers
  like stages 05 and 06 (``retrieve_question`` / ``answer_question``: same config, same model cache) but
  writes no stage artifact. The dataset's reports must be indexed (``ensure_indexed`` runs 01-04, which
  skip every current item). QuestionError (a user error) when the question names no company of the
  dataset.
- ``format_result(res) -> str``: answer, kind, routed companies, and each cited page (1-based, as
  printed in the PDF viewer) with a snippet of the page around the question's words.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .core import stages as _stages
from .core.config import RunConfig
from .core.dataset import KINDS, Dataset, Question  # noqa: F401 - KINDS: the CLI's --kind choices
# Characters of page text shown under each cited page.
SNIPPET_CHARS = 300
# The kind's cue words in the languages users write (tests/data/kind_phrasings.tsv measures them: 73 phrasings,
# 9 languages). Open questions (issue 31): causes, explanations, descriptions -> the short-text kind.
_TEXT = re.compile(r"^\s*(?:why|how(?!\s+(?:much|many|long|big|large|old|often)\b)|explain|describe|summari[sz]e)\b|"
                   r"\bwhat\s+(?:drove|drives|caused|causes|explains|led\s+to)\b|"
                   r"\bwhat\s+(?:were|are)\s+the\s+(?:main\s+|major\s+|key\s+)?(?:drivers|reasons|factors|causes)\b|"
                   r"^\W*(?:warum|wieso|weshalb|pourquoi|por\s+qu[eé]|perch[eé]|почему|зачем|объясните|опишите|"
                   r"erl[aä]utern|beschreiben|expliquez|d[eé]crivez|explique|describa)\b|为什么|为何|なぜ|どうして", re.I)
_LEAD = re.compile(r"^\s*(?:as\s+of|at\s+the\s+end\s+of|in|during)\s[^,?]{1,40},\s*", re.I)
# How many / how much: a count or an amount, whatever noun follows ("How many directors ..." is a number).
_COUNT = re.compile(r"^\W*(?:how\s+(?:many|much)|wie\s+(?:viele?|hoch)|combien|cu[aá]nt[oa]s?|quant[ioe]s?|"
                    r"quant[oa]s|сколько)\b|多少|几[个名家位]|何人|いくら|何件|何社", re.I)
_BOOLEAN = re.compile(r"^\W*(?:did|does|do|is|are|was|were|has|have|had|will|can|could|"
                      r"hat|hatte|haben|ist|war|sind|gab|gibt|wurden?|"  # de
                      r"est-ce\s+que?|y\s+a-t-il|"  # fr
                      r"anunci[oó]|tiene|tuvo|hay|hubo|ha|han|es|fue|existe"  # es
                      r")\b|\w-t-(?:il|elle|ils|elles)\b|\sли\s|是否|有没有|是不是|吗\s*[？?]?\s*$|ましたか|ありますか",
                      re.I)
_NAMES = re.compile(r"\b(?:names|titles|list|what are the|which (?:\w+ ){0,2}\w+[^s\W]s)\b|^\W*name\s+(?:the|all)\b|"
                    r"\b(?:welche|nennen\s+sie|namen|quels\s+sont|quelles\s+sont|noms|cu[aá]les\s+son|nombres)\b|"
                    r"哪些|名单|すべて挙げ|名前を", re.I)
_NAME = re.compile(r"^\s*(?:who|which)\b|\b(?:name|title)\b|^\W*(?:wer|qui|qui[eé]n|chi|quem|кто)\b|谁|誰", re.I)


class QuestionError(ValueError):
    """A question ``rag ask`` cannot answer from this dataset (a user error: one line, no traceback)."""


@dataclass
class AskResult:
    question: str
    kind: str
    kind_inferred: bool
    companies: list[str]
    value: Any
    references: list[dict[str, Any]]  # {"sha1", "page" (1-based), "company", "snippet"}
    na_reason: str | None = None
    reason: str = ""  # the answering call's one-sentence reasoning_summary (yes/no and text answers)
    filings: list[str] = field(default_factory=list)  # "3M Company 10-K 2018: FY2018 named ..." (routing)
    seconds: float = 0.0
    usage: dict[str, int] = field(default_factory=dict)


def infer_kind(text: str, n_companies: int = 1) -> str:
    """The answer kind ``text`` asks for (see module docstring)."""
    if n_companies > 1:
        return "comparative"
    if _TEXT.search(text):
        return "text"
    # A leading period or company clause ("As of Q2'2023, is Pfizer ...?") does not change the kind.
    text = _LEAD.sub("", text)
    if _TEXT.search(text):
        return "text"
    if _COUNT.search(text):
        return "number"
    if _BOOLEAN.search(text):
        return "boolean"
    if _NAMES.search(text):  # before _NAME: "the names of" is a list, "the name of" one
        return "names"
    if _NAME.search(text):
        return "name"
    return "number"


def routed_companies(ds: Dataset, text: str, by_content: bool = False) -> list[str]:
    """The companies (dataset order of appearance in ``text``) the question names; QuestionError when
    it is empty or names none (checked before any indexing or model call), except with ``by_content``
    (``retrieve.route_by_content``: 05 routes it by the filings' text; [] then)."""
    from .retrieve.route import route

    if not text.strip():
        raise QuestionError("the question is empty")
    routed = route(text, ds.reports)
    if not routed and by_content:
        return []
    if not routed:
        names = "; ".join(sorted({r.company for r in ds.reports}))
        raise QuestionError(f"the question names no company of {ds.root}: write one of: {names} "
                            "(a short form also works: the name without 'Inc.'/'plc', its leading words such as 'Downer', or an "
                            "alias from subset.csv's 'aliases' column such as a ticker)")
    return [ds.report(s).company for s in routed]


# What ``rag ask`` runs before answering: 01..04, from the registry (rag.core.stages).
INDEX_STAGES = tuple(_stages.PIPELINE[:_stages.PIPELINE.index(_stages.name_of("index")) + 1])


def ensure_indexed(cfg: RunConfig, ds: Dataset, progress: bool = True) -> None:
    """Stages 01-04 over the dataset; items whose inputs are unchanged are skipped (seconds when done).
    ``progress=False``: no progress or stage lines on stdout."""
    import contextlib
    import io

    from .pipeline import run_direct

    with contextlib.nullcontext() if progress else contextlib.redirect_stdout(io.StringIO()):
        run_direct(cfg, ds, list(INDEX_STAGES), progress=progress)


def _snippet(page_text: str, question: str, value: Any) -> str:
    from .retrieve.rerank import page_excerpt

    text = page_text
    printed = re.sub(r"\.0+$", "", f"{value:,.2f}") if isinstance(value, (int, float)) and not isinstance(value, bool) else ""
    if printed:  # centre on the printed figure when it is on the page ("1,234.5"), else on the question's words
        digits = printed.split(".")[0]
        at = text.find(digits)
        if at >= 0:
            lo = max(0, at - SNIPPET_CHARS // 2)
            return ("... " if lo else "") + " ".join(text[lo:lo + SNIPPET_CHARS].split()) + " ..."
    return " ".join(page_excerpt(text, question, SNIPPET_CHARS).split())


def ask(cfg: RunConfig, ds: Dataset, text: str, kind: str | None = None, llm: Any = None,
        counter: Any = None) -> AskResult:
    """Route, retrieve and answer one question (see module docstring)."""
    from .answer import answer_question
    from .retrieve import retrieve_question

    text = text.strip()
    companies = routed_companies(ds, text, cfg.retrieve.route_by_content)
    inferred = kind is None
    kind = kind or infer_kind(text, len(dict.fromkeys(companies)))
    if kind not in KINDS:
        raise QuestionError(f"unknown kind {kind!r}: one of {', '.join(KINDS)}")
    if llm is None:
        from .models import get_llm

        llm = get_llm(cfg)
    if counter is None:
        from .models import count_tokens

        counter = lambda t: count_tokens(t, cfg)  # noqa: E731
    q = Question(qid="ask", text=text, kind=kind)
    rec = retrieve_question(cfg, q, ds, llm=llm)
    companies = companies or [r.company for r in rec.routed]  # routed by content
    d = answer_question(llm, cfg, ds, q, rec, counter)
    page_text = {(p.sha1, p.page): p.text or "" for pages in rec.candidates.values() for p in pages}
    refs = [{"sha1": r["sha1"], "page": r["page"], "company": ds.report(r["sha1"]).company,
             "snippet": _snippet(page_text.get((r["sha1"], r["page"]), ""), text, d["value"])}
            for r in d["references"]]
    return AskResult(question=text, kind=kind, kind_inferred=inferred, companies=companies, value=d["value"],
                     references=refs, na_reason=d.get("na_reason"), reason=_reason(d),
                     filings=filing_lines([(r.filing or r.company, r.why) for r in rec.routed]),
                     seconds=d.get("seconds", 0.0), usage=d.get("usage", {}))


def filing_lines(routed: list[tuple[str, str]]) -> list[str]:
    """"filing (why)" per routed filing; filings sharing one reason (both 10-Ks of a company, no period
    named) name it once, after the last of them, instead of once each."""
    out = []
    for i, (filing, why) in enumerate(routed):
        last_of_reason = i + 1 == len(routed) or routed[i + 1][1] != why
        out.append(filing + (f" ({why})" if why and last_of_reason else ""))
    return out


def _reason(d: dict[str, Any]) -> str:
    """The reasoning_summary of the call whose answer stood (the last call that parsed), for yes/no and text
    (a yes/no read without reasoning: P(true) per page read, "page 12: P(true) 0.31"); either with the pages whose
    true the calibration passed over;
    for an answer computed in code (any kind), the formula with its operands and pages; for a text answer ranked
    in code, the rows it ranked and why they."""
    computed = (d.get("interpretation") or {}).get("computed")
    if (d.get("interpretation") or {}).get("source") == "computed" and computed:
        from .answer.computed import computed_reason

        return computed_reason(computed, d.get("value"))
    if d.get("kind") not in ("boolean", "text"):
        return ""
    registered = (d.get("interpretation") or {}).get("registered")
    if registered:  # read from the cover's 12(b) table (answer.text_registered)
        return f"read in code from the cover's table of securities registered under Section 12(b) (page {registered['page']})"
    ranking = (d.get("interpretation") or {}).get("ranking") or {}
    if ranking.get("taken"):  # a text answer ranked in code (answer.text_ranking)
        how = "the change from the column to its right" if ranking.get("by_change") else "its figure"
        best = (ranking.get("groups") or [{}])[0]
        return (f"ranked in code, each row by {how}: page {ranking.get('page')}'s rows "
                f"\"{best.get('describe', '')}\" print most of the question's words (score {best.get('score')})")
    parsed = [c.get("parsed") for c in d.get("calls", []) if c.get("parsed")]
    if parsed:
        return str(parsed[-1].get("reasoning_summary", "")) + _passed_over(d)
    # a yes/no decided by P(true) alone (answer.boolean_reasoning false): the probability read on each page
    read = [(p["page"], c["p_true"]) for c in d.get("calls", []) if c.get("p_true") is not None
            for p in c.get("pages", [])[:1]]
    return "; ".join(f"page {pg}: P(true) {pt:.2f}" for pg, pt in read) + _passed_over(d)


def _passed_over(d: dict[str, Any]) -> str:
    """Pages whose true the calibration passed over (answer.boolean_calibration), as " (page 12's true passed
    over: P(true) 0.31, 0.27 for other yes/no questions)"; "" when none was. The others' mean is the one the
    decision used (P(true) minus ``calib_score``: controls whose call failed left out)."""
    out = []
    for c in d.get("calls", []):
        if (c.get("interpretation") or {}).get("calibration_rejected") and c.get("pages"):
            p = c.get("p_true") or 0.0
            out.append(f"page {c['pages'][0]['page']}'s true passed over: P(true) {p:.2f}, "
                       f"{p - c['calib_score']:.2f} for other yes/no questions")
    return f" ({'; '.join(out)})" if out else ""


def format_result(res: AskResult) -> str:
    """The printed answer (see module docstring)."""
    value = ", ".join(map(str, res.value)) if isinstance(res.value, list) else res.value
    lines = [f"Answer: {value}",
             f"Kind: {res.kind}" + (" (inferred; --kind to change)" if res.kind_inferred else ""),
             f"Company: {', '.join(dict.fromkeys(res.companies))}"]
    if res.filings and any(f != c for f, c in zip(res.filings, res.companies)):
        lines.append("Filing: " + "; ".join(res.filings))
    if res.reason:
        lines.append(f"Why: {res.reason}")
    if res.na_reason:
        lines.append(f"Why N/A: {res.na_reason}")
    for r in res.references:
        lines.append(f"  page {r['page']} of {r['company']} ({r['sha1'][:8]}): {r['snippet']}")
    if not res.references:
        lines.append("  (no page cited)")
    tok = res.usage.get("prompt_tokens", 0) + res.usage.get("completion_tokens", 0)
    lines.append(f"({res.seconds:.1f}s, {tok} tokens)")
    return "\n".join(lines)
