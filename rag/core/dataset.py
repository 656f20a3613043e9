"""Read and validate a dataset folder in the ERC layout.

Layout (``data/<name>/``)::

    pdfs/<sha1>.pdf     the reports, named by the SHA-1 of the file
    pdf_dirs.txt        only when there is no pdfs/: one folder per line (relative to the dataset
                        root, or absolute; blank and '#' lines ignored), searched in order for
                        <sha1>.pdf, so a dataset can use PDFs kept elsewhere (e.g. ../shared)
    subset.csv          sha1, company_name, cur[, major_industry][, period][, doc_type][, file][, aliases]
                        optional columns for several filings per company: ``period`` the fiscal period
                        the filing covers ("2018" fiscal year, "2024Q2" fiscal quarter, "2023-05-05" the
                        date of an 8-K / release), ``doc_type`` one of DOC_TYPES, ``file`` the PDF's name
                        in the PDF folder(s) when it is not <sha1>.pdf (the sha1 is still checked),
                        ``aliases`` other names questions use (";"-separated: ticker, short names)
    questions.json      [{"text": ..., "kind": number|name|names|boolean|comparative|text[, "filing": sha1]}]
                        ``filing``: the question's own filing (FinanceBench's doc_name, written by
                        ``rag import financebench``), a sha1 of subset.csv; read only with
                        ``retrieve.given_filing = true`` (FinanceBench's per-filing setting)
    answers.json        optional gold: {question text: {kind, answers: [value], reference_pools:
                        [["sha1:page_index", ...], ...]}}; page_index is 0-based in the file.
    labels.jsonl        optional hand labels (see rag.core.labels)

Page convention: everything inside ``rag`` uses ``page`` = 1-based physical page. The gold loader
converts the file's 0-based ``page_index`` to 1-based ``page`` once, here.

``load_dataset`` collects every problem (file, row, what is wrong) and raises one
:class:`DatasetError` listing them all. The subset.csv rows and their PDFs are read by :mod:`rag.core.subset`.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, get_args

from .text_files import NotUtf8, read_utf8

# The reports (subset.csv + the PDF folders); the names are part of this module's interface.
from .subset import (DOC_TYPES, ISO_CURRENCIES, PERIOD_RE, SUBSET_COLUMNS, Report, _Rec,  # noqa: F401
                     load_reports, normalize_doc_type, sha1_of, unlisted_pdfs)

# The answer kinds, spelled once (prompts, submission, labels, ask and the loaders read these); "text":
# a short free-text answer (issue 31).
Kind = Literal["number", "name", "names", "boolean", "comparative", "text"]
KINDS: tuple[str, ...] = get_args(Kind)


class DatasetError(ValueError):
    """Invalid dataset; ``problems`` holds one ``"file:row: message"`` line each."""

    def __init__(self, root: Path, problems: list[str]):
        self.problems = problems
        super().__init__(f"dataset {root} has {len(problems)} problem(s):\n  " + "\n  ".join(problems))


class Question(_Rec):
    qid: str  # "q000", "q001"… in questions.json order
    text: str
    kind: Kind
    filing: str = ""  # the question's own filing (sha1), when the dataset gives one (questions.json "filing")


class PageRef(_Rec):
    sha1: str
    page: int  # 1-based


class Gold(_Rec):
    kind: Kind
    answers: tuple[str, ...]
    # Each pool: pages of which any one is enough; 1-based pages.
    pools: tuple[tuple[PageRef, ...], ...] = ()


class Dataset(_Rec):
    root: Path
    name: str
    reports: tuple[Report, ...]
    questions: tuple[Question, ...]
    gold: dict[str, Gold]  # by question text
    # Not errors, but worth a line at the start of a run (PDFs in the folder that subset.csv does not list).
    warnings: tuple[str, ...] = ()

    def report(self, sha1: str) -> Report:
        for r in self.reports:
            if r.sha1 == sha1:
                return r
        raise KeyError(f"no report {sha1} in dataset {self.root}")

    def question(self, qid: str) -> Question:
        for q in self.questions:
            if q.qid == qid:
                return q
        raise KeyError(f"no question {qid} in dataset {self.root}")


def parse_ref(ref: str) -> PageRef:
    """``"sha1:page_index"`` (0-based, as in answers.json) → PageRef with 1-based page."""
    sha1, _, idx = ref.rpartition(":")
    if not sha1 or not idx.isdigit():
        raise ValueError(f"bad reference {ref!r}: expected 'sha1:page_index'")
    return PageRef(sha1=sha1, page=int(idx) + 1)


def _load_json(path: Path, problems: list[str]):
    try:
        return json.loads(read_utf8(path))  # a BOM is fine; latin-1 etc. is one problem line with the fix
    except NotUtf8 as e:
        problems.append(str(e))
        return None
    except json.JSONDecodeError as e:
        problems.append(f"{path}:{e.lineno}: not valid JSON ({e.msg})")
        return None


def _load_questions(root: Path, problems: list[str]) -> list[Question]:
    path = root / "questions.json"
    if not path.exists():
        problems.append(f"{path}: missing file")
        return []
    data = _load_json(path, problems)
    if data is None:
        return []
    if not isinstance(data, list):
        problems.append(f"{path}: expected a list of {{text, kind}}")
        return []
    out = []
    first: dict[str, int] = {}  # normalized text -> index of its first occurrence
    for i, q in enumerate(data):
        where = f"{path}[{i}]"
        if not isinstance(q, dict) or not isinstance(q.get("text", ""), str):
            problems.append(f"{where}: 'text' must be a string (got {type(q.get('text')).__name__ if isinstance(q, dict) else type(q).__name__})")
            continue
        if not q.get("text", "").strip():
            problems.append(f"{where}: missing 'text'")
            continue
        if q.get("kind") not in KINDS:
            problems.append(f"{where}: unknown answer kind {q.get('kind')!r} (expected one of {', '.join(KINDS)})")
            continue
        norm = " ".join(q["text"].split())
        if norm in first:
            # Gold and labels are keyed by text: a repeated question would be answered and scored twice.
            problems.append(f"{where}: duplicate of question [{first[norm]}] ({norm[:60]!r})")
            continue
        filing = q.get("filing", "")
        if not isinstance(filing, str):
            problems.append(f"{where}: 'filing' must be a report's sha1 (a string), got {type(filing).__name__}")
            continue
        first[norm] = i
        out.append(Question(qid=f"q{i:03d}", text=q["text"], kind=q["kind"], filing=filing.strip().lower()))
    return out


def _load_gold(root: Path, problems: list[str], shas: set[str]) -> dict[str, Gold]:
    path = root / "answers.json"
    if not path.exists():
        return {}
    data = _load_json(path, problems)
    if not isinstance(data, dict):
        if data is not None:
            problems.append(f"{path}: expected an object keyed by question text")
        return {}
    gold = {}
    for text, g in data.items():
        where = f"{path}[{text[:60]!r}]"
        if not isinstance(g, dict) or g.get("kind") not in KINDS:
            problems.append(f"{where}: unknown answer kind {g.get('kind') if isinstance(g, dict) else g!r}")
            continue
        try:
            pools = tuple(tuple(parse_ref(r) for r in pool) for pool in g.get("reference_pools", []))
        except ValueError as e:
            problems.append(f"{where}: {e}")
            continue
        gold[text] = Gold(kind=g["kind"], answers=tuple(str(a) for a in g.get("answers", [])), pools=pools)
    return gold


def load_dataset(root: Path | str, check_hashes: bool = True) -> Dataset:
    """Load and validate ``root``; raises :class:`DatasetError` listing every problem found."""
    root = Path(root)
    if not root.is_dir():
        raise DatasetError(root, [f"{root}: not a directory"])
    problems: list[str] = []
    reports = load_reports(root, problems, check_hashes)
    questions = _load_questions(root, problems)
    gold = _load_gold(root, problems, {r.sha1 for r in reports})
    shas = {r.sha1 for r in reports}
    problems += [f"{root / 'questions.json'}[{int(q.qid[1:])}]: filing {q.filing!r} is not a sha1 of subset.csv"
                 for q in questions if q.filing and reports and q.filing not in shas]
    if problems:
        raise DatasetError(root, problems)
    warnings = unlisted_pdfs(root, reports)
    if not questions:  # parsing and indexing still make sense; answering and scoring do not
        warnings.append(f"{root / 'questions.json'}: no questions (05_retrieve..07_evaluate have nothing to do)")
    return Dataset(root=root, name=root.name, reports=tuple(reports), questions=tuple(questions), gold=gold,
                   warnings=tuple(warnings))
