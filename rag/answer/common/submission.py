"""ERC submission JSON: build from answer records, validate, write (an invalid one is never written).

Format (Enterprise RAG Challenge, round 2)::

    {"team_email": str, "submission_name": str,
     "answers": [{"question_text": str, "kind": str, "value": ..., "references":
                  [{"pdf_sha1": str, "page_index": int}]}]}

``page_index`` is the 0-based physical page (= ``page - 1``); this is one of the two places in
``rag`` that speak 0-based pages. Values by kind: number -> float or "N/A"; boolean -> true/false (or
"N/A" for a question that names no company of the dataset, as ERC's own schema allows for any kind);
name -> str or "N/A"; names -> list of str or "N/A"; comparative -> company name or "N/A".
"""
from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ...core.artifacts import write_json_atomic
from ...core.dataset import Kind

NA = "N/A"


class SubmissionError(ValueError):
    """The submission does not fit the ERC format; the message lists every problem."""


class SubmissionReference(BaseModel):
    model_config = ConfigDict(extra="forbid")
    pdf_sha1: str = Field(pattern=r"^[0-9a-f]{40}$")
    page_index: int = Field(ge=0)  # 0-based physical page


class SubmissionAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question_text: str = Field(min_length=1)
    kind: Kind
    value: Any
    references: list[SubmissionReference] = Field(default_factory=list)

    @model_validator(mode="after")
    def _value_fits_kind(self) -> "SubmissionAnswer":
        v, k = self.value, self.kind
        ok = {
            "number": (v == NA) or (isinstance(v, (int, float)) and not isinstance(v, bool)
                                    and math.isfinite(v)),
            "boolean": isinstance(v, bool) or v == NA,  # N/A: a question routed to no single report
            "name": v == NA or (isinstance(v, str) and bool(v.strip())),
            "comparative": v == NA or (isinstance(v, str) and bool(v.strip())),
            "text": v == NA or (isinstance(v, str) and bool(v.strip())),  # issue 31's free-text kind
            "names": v == NA or (isinstance(v, list) and len(v) > 0
                                 and all(isinstance(x, str) and x.strip() for x in v)),
        }[k]
        if not ok:
            raise ValueError(f"value {v!r} does not fit kind {k!r}")
        return self


class Submission(BaseModel):
    model_config = ConfigDict(extra="forbid")
    team_email: str = Field(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
    submission_name: str = Field(min_length=1)
    answers: list[SubmissionAnswer]


def validate_submission(obj: dict[str, Any]) -> Submission:
    """Validate a plain dict; raises :class:`SubmissionError` naming each bad answer and field."""
    try:
        return Submission.model_validate(obj)
    except ValidationError as e:
        problems = []
        for err in e.errors():
            loc = ".".join(str(x) for x in err["loc"])
            m = re.match(r"answers\.(\d+)", loc)
            if m and isinstance(obj.get("answers"), list) and int(m.group(1)) < len(obj["answers"]):
                q = str(obj["answers"][int(m.group(1))].get("question_text", ""))[:60]
                loc += f" ({q!r})"
            problems.append(f"{loc}: {err['msg']}")
        raise SubmissionError("invalid ERC submission:\n  " + "\n  ".join(problems)) from None


def export_value(kind: str, value: Any) -> Any:
    """Answer-record value -> the value the ERC format wants for ``kind`` (None/empty -> "N/A")."""
    if kind == "boolean":
        # "If there is no mention, return False": an unanswered boolean exports as False; "N/A" stays
        # (06 sets it only where nothing was read: a question routed to no single report, or one whose report
        # or 05 item failed; the closing warning says "answered N/A", and so does the export).
        return value if isinstance(value, bool) or value == NA else False
    if value is None or value == NA or value == [] or value == "":
        return NA
    if kind == "number":
        if isinstance(value, bool):
            return value  # rejected by validation: a bool is not a number
        try:
            return float(value)
        except (TypeError, ValueError):
            return value  # rejected by validation with the offending value named
    if kind == "names":
        return [str(x) for x in value] if isinstance(value, list) else [str(value)]
    return str(value)


def build_submission(records: Iterable[dict[str, Any]], team_email: str, submission_name: str) -> Submission:
    """Answer records (``question_text``/``text``, ``kind``, ``value``, ``references`` [{sha1, page}],
    page 1-based) -> validated :class:`Submission` with 0-based ``page_index``."""
    answers = []
    for r in records:
        refs = [{"pdf_sha1": ref["sha1"], "page_index": int(ref["page"]) - 1} for ref in r.get("references", [])]
        answers.append({"question_text": r.get("question_text") or r.get("text"), "kind": r["kind"],
                        "value": export_value(r["kind"], r.get("value")), "references": refs})
    return validate_submission({"team_email": team_email, "submission_name": submission_name,
                                "answers": answers})


def write_submission(path: Path | str, submission: Submission | dict[str, Any]) -> Path:
    """Validate (again) and write atomically; raises :class:`SubmissionError` without writing."""
    sub = submission if isinstance(submission, Submission) else validate_submission(submission)
    sub = validate_submission(sub.model_dump(mode="json"))
    return write_json_atomic(path, sub.model_dump(mode="json"), indent=2)
