"""Reading an ERC submission file for scoring (stage 07 and the FinanceBench scorer).

Contract: ``load_submission(path) -> {question_text: {"kind", "value", "refs": [PageRef 1-based]}}``;
anything off-format raises :class:`SubmissionError` naming the file and the entry. Pages: the file's
``page_index`` is 0-based; the conversion to 1-based ``PageRef.page`` happens here only.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from ..core.artifacts import read_json
from ..core.dataset import PageRef


class SubmissionError(ValueError):
    """A submission file that does not follow the ERC format; the message names the file and entry."""


# ---- inputs ----------------------------------------------------------------------------
def load_submission(path: Path | str) -> dict[str, dict[str, Any]]:
    """Read an ERC submission -> ``{question_text: {"kind", "value", "refs": [PageRef 1-based]}}``.

    Raises :class:`SubmissionError` naming the file and the entry for anything off-format.
    """
    path = Path(path)
    if not path.exists():
        raise SubmissionError(f"{path}: no submission file (run stage 06_answer first)")
    try:
        data = read_json(path)
    except ValueError as e:
        raise SubmissionError(str(e)) from None
    answers = data.get("answers") if isinstance(data, dict) else None
    if not isinstance(answers, list):
        raise SubmissionError(f"{path}: expected an object with an 'answers' list")
    out: dict[str, dict[str, Any]] = {}
    for i, a in enumerate(answers):
        where = f"{path}: answers[{i}]"
        if not isinstance(a, dict) or not isinstance(a.get("question_text"), str):
            raise SubmissionError(f"{where}: missing 'question_text'")
        refs = []
        for j, r in enumerate(a.get("references") or []):
            idx = r.get("page_index") if isinstance(r, dict) else None
            if not isinstance(r, dict) or not isinstance(r.get("pdf_sha1"), str) or \
                    not isinstance(idx, int) or isinstance(idx, bool) or idx < 0:
                raise SubmissionError(f"{where}.references[{j}]: expected {{pdf_sha1: str, page_index: int >= 0}}, got {r!r}")
            refs.append(PageRef(sha1=r["pdf_sha1"], page=idx + 1))  # 0-based page_index -> 1-based page
        if a["question_text"] in out:
            warnings.warn(f"{where}: question answered twice; the last answer counts")
        out[a["question_text"]] = {"kind": a.get("kind"), "value": a.get("value"), "refs": refs}
    return out
