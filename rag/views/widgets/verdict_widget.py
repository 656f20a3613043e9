"""08_label's hand verdicts on text answers (FinanceBench's open questions, judged as the paper labels them).

Contract: ``verdict_widget(cfg, ds, labeller="", path=None)`` -> an ipywidgets VBox over the run's text
answers (:func:`rag.evaluate.financebench.text_verdicts_table`): the question, its gold answer, the model's
answer and the text of the pages it cited; buttons Correct / Incorrect / Refusal record a verdict with
:func:`rag.evaluate.financebench.append_verdict` (one appended labels.jsonl line; the last one per question
counts) and move on; Back / Next move without recording. It opens at the first question without a verdict.
07 scores text answers with these verdicts when no LLM judge is configured. ``None`` for a dataset with no
FinanceBench metadata.
"""
from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from ...core.config import RunConfig
from ...core.dataset import Dataset
from ...evaluate.financebench import VERDICTS, append_verdict, hand_verdicts, text_verdicts_table
from .label_widget import model_answers, page_text

PAGE_TEXT_CHARS = 1500  # characters of each cited page shown under the answer


def first_unjudged(questions: list[str], done: dict[str, str]) -> int:
    """Index of the first question without a verdict (the last one when all have one; 0 when none)."""
    return next((i for i, q in enumerate(questions) if q not in done), max(len(questions) - 1, 0))


def verdict_widget(cfg: RunConfig, ds: Dataset, labeller: str = "", path: Path | str | None = None):
    table = text_verdicts_table(cfg, ds)
    if table is None:
        return None
    import ipywidgets as W

    path = Path(path) if path else ds.root / "labels.jsonl"
    answers = model_answers(cfg)
    rows: list[dict[str, Any]] = table.to_dict("records")
    current = {r["question"]: r["answer"] for r in rows}  # a verdict counts for the answer it judged
    state = {"i": first_unjudged([r["question"] for r in rows], hand_verdicts(path, current))}
    header, body, status = W.HTML(), W.HTML(), W.HTML()
    pages = W.Textarea(layout=W.Layout(width="100%", height="220px"), disabled=True)
    who = W.Text(value=labeller, description="labeller")
    buttons = {n: W.Button(description=n) for n in ("Correct", "Incorrect", "Refusal", "Back", "Next")}

    def show() -> None:
        if not rows:
            header.value = "<b>No text questions in this dataset.</b>"
            return
        r = rows[state["i"]]
        done = hand_verdicts(path, current)
        header.value = (f"<b>{state['i'] + 1}/{len(rows)}</b> — judged {sum(x['question'] in done for x in rows)}"
                        f"/{len(rows)}" + (f" — verdict: <b>{done[r['question']]}</b>" if r["question"] in done else ""))
        body.value = (f"<p>{html.escape(r['question'])}</p><p>gold: <i>{html.escape(str(r['gold']))}</i></p>"
                      f"<p>model: <code>{html.escape(str(r['answer']))}</code></p>")
        refs = (answers.get(r["question"]) or {}).get("refs", [])
        pages.value = "\n\n".join(f"--- {x.sha1[:8]} p{x.page} ---\n{page_text(cfg, x.sha1, x.page)[:PAGE_TEXT_CHARS]}"
                                  for x in refs) or "(no cited pages)"

    def judge(name: str) -> None:
        if not rows:
            return
        r = rows[state["i"]]
        append_verdict(path, r["question"], r["answer"], name, who.value)
        status.value = f"{state['i'] + 1}: {name}"
        move(+1)

    def move(step: int) -> None:
        state["i"] = max(0, min(len(rows) - 1, state["i"] + step))
        show()

    for name in VERDICTS:
        buttons[name.capitalize()].on_click(lambda _, n=name: judge(n))
    buttons["Back"].on_click(lambda _: move(-1))
    buttons["Next"].on_click(lambda _: move(+1))
    show()
    box = W.VBox([header, body, W.Label("cited pages"), pages, who, W.HBox(list(buttons.values())), status])
    box._state, box._buttons = state, buttons  # for tests
    return box
