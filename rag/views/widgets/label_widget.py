"""Hand-labelling widget (notebook 08): one question at a time, resumes where the user stopped.

Shows the model's answer (``06_answer/submission.json``), its reasoning (``06_answer/debug/<qid>.json``)
and each cited page (image rendered with pypdfium2 + the page's text from ``02_clean/<sha1>.json``).
Buttons: Accept (model value and cited pages are right), Save correction (value and gold pages typed in
the boxes), Skip, Back, Next. Every button press appends one line to ``labels.jsonl`` (``rag.core.labels``).

Gold pages are typed as ``sha1:page`` (1-based page; a unique sha1 prefix is enough; a bare page number
means the question's first cited report, or the only report), separated by commas or new lines.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...core.config import RunConfig
from ...core.dataset import Dataset, Question
from ...core.labels import append_label, labels_path, latest_labels
from ...label import format_value, label_state, parse_pages, parse_value  # noqa: F401 - tests use them here
from .page_viewer import render_page_png

REASONING_KEYS = ("step_by_step_analysis", "reasoning_summary", "reasoning", "final_answer", "p_true", "na_reason")
REASONING_DEPTH = 6  # how deep reasoning fields are searched in a debug record
PAGE_TEXT_CHARS = 6000  # page text shown under a page image


# ---- data (no ipywidgets needed) -----------------------------------------------------------
def model_answers(cfg: RunConfig) -> dict[str, dict[str, Any]]:
    """``{question text: {"value", "refs"}}`` from the run's submission; {} when 06 has not run."""
    from ...answer import submission_path
    from ...evaluate import load_submission

    p = submission_path(cfg)
    return load_submission(p) if p.exists() else {}


def _walk(node: Any, depth: int = 0):
    """Yield (key, value) pairs of nested dicts/lists (debug records nest calls -> parsed -> fields)."""
    if depth > REASONING_DEPTH:
        return
    if isinstance(node, dict):
        for k, v in node.items():
            yield k, v
            yield from _walk(v, depth + 1)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v, depth + 1)


def reasoning_text(cfg: RunConfig, qid: str) -> str:
    """The reasoning fields found anywhere in ``06_answer/debug/<qid>.json`` (e.g. each call's
    ``parsed.step_by_step_analysis``), as text; the raw record when none is found."""
    from ...answer import load_answer

    try:
        data = load_answer(cfg, qid).model_dump(mode="json")
    except FileNotFoundError:
        return "(no debug record)"
    found = [f"{k}: " + (v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
             for k, v in _walk(data) if k in REASONING_KEYS and v not in (None, "", [])]
    return "\n\n".join(dict.fromkeys(found)) or json.dumps(data, ensure_ascii=False, indent=1)[:PAGE_TEXT_CHARS]


def page_text(cfg: RunConfig, sha1: str, page: int) -> str:
    """Markdown of 1-based ``page`` of a clean report (through ``rag.clean.page_texts``; '' when absent)."""
    from ...clean import page_texts

    try:
        return page_texts(cfg, sha1)[1].get(page, "")
    except FileNotFoundError:
        return ""


# ---- the widget ------------------------------------------------------------------------------
def label_widget(cfg: RunConfig, ds: Dataset, labeller: str = "", path: Path | str | None = None,
                 scale: float = 1.0):
    """An ipywidgets VBox labelling ``ds.questions`` for run ``cfg``; starts at the first unlabelled one."""
    import ipywidgets as W

    path = Path(path) if path else labels_path(ds)
    answers = model_answers(cfg)
    questions: list[Question] = list(ds.questions)
    state = {"i": min(label_state(ds, path).index, max(len(questions) - 1, 0))}

    header, question_html, answer_html, status = W.HTML(), W.HTML(), W.HTML(), W.HTML()
    reasoning = W.Textarea(layout=W.Layout(width="100%", height="120px"), disabled=True)
    page_pick = W.Dropdown(description="cited page")
    image = W.Image(format="png", layout=W.Layout(max_width="700px"))
    text = W.Textarea(layout=W.Layout(width="100%", height="200px"), disabled=True)
    value_box = W.Text(description="value", layout=W.Layout(width="100%"))
    pages_box = W.Textarea(description="gold pages", placeholder="sha1:page (1-based), comma-separated",
                           layout=W.Layout(width="100%", height="60px"))
    who = W.Text(value=labeller, description="labeller")
    buttons = {n: W.Button(description=n) for n in ("Accept", "Save correction", "Skip", "Back", "Next")}

    def current() -> tuple[Question, dict[str, Any] | None]:
        q = questions[state["i"]]
        return q, answers.get(q.text)

    def show_page(_=None) -> None:
        if state.get("quiet"):
            return
        if not page_pick.value:
            image.value, text.value = b"", ""
            return
        sha1, page = page_pick.value
        try:
            image.value = render_page_png(ds.report(sha1).pdf, page, scale)
        except Exception as e:  # noqa: BLE001 - show, do not crash the widget
            image.value, status.value = b"", f"<b>cannot render {sha1[:8]} p{page}: {e}</b>"
        text.value = page_text(cfg, sha1, page)[:PAGE_TEXT_CHARS] or "(no 02_clean text)"

    def show() -> None:
        if not questions:
            header.value = "<b>No questions in this dataset.</b>"
            return
        q, a = current()
        st = label_state(ds, path)
        last = latest_labels(path).get(q.text)
        header.value = (f"<b>{q.qid}</b> ({state['i'] + 1}/{len(questions)}, kind {q.kind}) — "
                        f"labelled {st.labelled}/{st.total}" + (f" — last: {last['status']}" if last else ""))
        question_html.value = f"<p>{q.text}</p>"
        refs = a["refs"] if a else []
        answer_html.value = (f"model answer: <code>{format_value(a['value'])}</code>" if a else "no model answer")
        reasoning.value = reasoning_text(cfg, q.qid)
        state["quiet"] = True  # one render below, not one per trait change
        page_pick.options = [(f"{r.sha1[:8]} p{r.page}", (r.sha1, r.page)) for r in refs] or [("(none)", None)]
        page_pick.value = page_pick.options[0][1]
        state["quiet"] = False
        shown = last if last and last["status"] != "skipped" else None
        value_box.value = format_value(shown["value"] if shown else (a["value"] if a else ""))
        pages_box.value = ", ".join(f"{p['sha1'][:8]}:{p['page']}" for p in shown["pages"]) if shown else \
            ", ".join(f"{r.sha1[:8]}:{r.page}" for r in refs)
        show_page()

    def save(status_name: str) -> None:
        q, a = current()
        try:
            if status_name == "accepted":
                if not a:
                    raise ValueError("no model answer to accept: type a value and Save correction")
                value, pages = a["value"], a["refs"]
            elif status_name == "corrected":
                default = a["refs"][0].sha1 if a and a["refs"] else None
                value, pages = parse_value(value_box.value, q.kind), parse_pages(pages_box.value, ds, default)
            else:
                value, pages = None, []
        except ValueError as e:
            status.value = f"<b style='color:#b00'>{e}</b>"
            return
        append_label(path, q.text, value, pages, status_name, who.value, kind=q.kind, qid=q.qid)
        status.value = f"{q.qid}: {status_name}"
        move(+1)

    def move(step: int) -> None:
        state["i"] = max(0, min(len(questions) - 1, state["i"] + step))
        show()

    buttons["Accept"].on_click(lambda _: save("accepted"))
    buttons["Save correction"].on_click(lambda _: save("corrected"))
    buttons["Skip"].on_click(lambda _: save("skipped"))
    buttons["Back"].on_click(lambda _: move(-1))
    buttons["Next"].on_click(lambda _: move(+1))
    page_pick.observe(show_page, names="value")
    show()
    box = W.VBox([header, question_html, answer_html, W.Label("reasoning"), reasoning, page_pick, image, text,
                  value_box, pages_box, who, W.HBox(list(buttons.values())), status])
    box._label_state = state  # for tests and notebooks: current question index
    box._buttons = buttons
    box._fields = {"value": value_box, "pages": pages_box, "labeller": who}
    return box
