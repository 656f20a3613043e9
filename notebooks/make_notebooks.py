"""Regenerate the thin notebooks: python notebooks/make_notebooks.py (the .ipynb files are what runs)."""
import sys
from pathlib import Path

import nbformat as nbf

OUT = Path(__file__).resolve().parent
sys.path.insert(0, str(OUT.parent))
from rag.core.stages import NOTEBOOKS, STAGES  # noqa: E402  the stage registry: order, packages

PARAMS = '''preset = "offline"      # a file in rag/presets/
data_dir = "data/demo"  # dataset folder in the ERC layout
run = "demo"            # outputs/<run>/
overrides = {}          # e.g. {"rerank.mode": "none", "chunk.sizes": [300, 1000]}
executor = None         # "ray": items on a Ray cluster (run.ray_address etc. in overrides); None: as configured
interactive = False     # True: show widgets (never needed by headless runs)'''

SETUP = '''from rag.notebook import setup
from rag.views.common import manifest_summary
cfg, ds = setup(preset, data_dir, run, overrides, executor)'''

NBS = {
 "01_parse": ("# 01 · Parse PDFs with docling\nFull StandardPdfPipeline when its weights are present, else the model-free native pipeline with tables rebuilt from line cells. Output: `outputs/<run>/01_parse/<sha1>.json` (1-based pages).",
   ["manifest_summary(cfg, \"01_parse\")",
    "from rag.views.parse import parse_table\nparse_table(cfg, ds)  # pages and tables per report",
    "from rag.views.parse import show_page_figure\nshow_page_figure(cfg, ds)  # the page with the most tables, table boxes in red",
    "if interactive:\n    from rag.views.widgets.page_viewer import page_viewer\n    report = ds.reports[0]\n    from rag.parse import load_parsed\n    display(page_viewer(load_parsed(cfg, report.sha1), report.pdf))"]),
 "02_clean": ("# 02 · Clean page text, keep tables with their units\nGlyph cleanup, header/footer removal, OCR for garbled pages, table scale and currency carried into the table text.",
   ["manifest_summary(cfg, \"02_clean\")",
    "from rag.views.clean import clean_table\nclean_table(cfg, ds)  # what cleanup and OCR changed",
    "if interactive:\n    from rag.views.widgets.page_viewer import clean_viewer\n    report = ds.reports[0]\n    from rag.clean import load_clean\n    display(clean_viewer(load_clean(cfg, report.sha1), report.pdf))"]),
 "03_chunk": ("# 03 · Chunk pages\n≈300 cl100k tokens with 50 overlap (sizes in config), never cutting a table row; every chunk keeps its page.",
   ["manifest_summary(cfg, \"03_chunk\")",
    "from rag.views.chunk import chunk_length_table\nchunk_length_table(cfg, ds)  # chunk lengths in the embedder's own tokens vs its input limit",
    "if interactive:\n    from rag.views.widgets.chunk_browser import chunk_browser\n    display(chunk_browser(cfg))"]),
 "04_index": ("# 04 · Index: one FAISS IndexFlatIP + one BM25 per report\nEmbeddings through the model layer (offline: all-MiniLM-L6-v2).",
   ["manifest_summary(cfg, \"04_index\")",
    "from rag.views.index import index_table\nindex_table(cfg, ds)  # index size and embedding time per report"]),
 "05_retrieve": ("# 05 · Route, retrieve, lift to pages, rerank\nEvery score is kept per candidate page: dense, bm25, fused, llm, final.",
   ["manifest_summary(cfg, \"05_retrieve\")",
    "from rag.evaluate.retrieval_metrics import retrieval_metrics\nretrieval_metrics(cfg, ds)  # hit@k against gold pools (empty without gold)",
    "from rag.views.retrieve import retrieval_questions\nretrieval_questions(cfg, ds)  # per question: routing, top pages, gold rank",
    "if interactive:\n    from rag.views.widgets.retrieval_viewer import retrieval_viewer, gold_pages\n    display(retrieval_viewer(cfg, gold=gold_pages(ds)))"]),
 "06_answer": ("# 06 · Answer by kind, validate references, export the ERC submission\nChain-of-thought structured output; references exported as `{pdf_sha1, page_index}` (0-based).",
   ["manifest_summary(cfg, \"06_answer\")",
    "from rag.views.answer import answer_questions\nanswer_questions(cfg, ds)  # per question: answer, cited page snippet, right/wrong with gold",
    "if interactive:\n    from rag.views.widgets.reasoning_viewer import reasoning_viewer\n    display(reasoning_viewer(cfg, ds))"]),
 "07_evaluate": ("# 07 · Evaluate\nERC round-2 rules: numbers within 1%, booleans/names exact, names by Jaccard; −0.1 per wrong reference, −0.25 per missed pool; Score = G + R/2.",
   ["import json\nfrom rag.evaluate import scores_path\nscores = json.loads(scores_path(cfg).read_text())\nscores.get(\"totals\", scores)",
    "import pandas as pd\npd.DataFrame(scores.get(\"by_kind\", []))  # scores by answer kind",
    "fb = scores.get(\"financebench\")  # FinanceBench datasets only (rag import financebench): paper-style verdicts\nif fb:\n    st = fb.get(\"setting\") or {}  # shared (routed here) or per filing (retrieve.given_filing), the paper's baseline beside it\n    print(f\"setting: {st.get('setting', 'shared')}; paper: {st.get('paper_baseline')} {st.get('paper_baseline_accuracy')}\")\n    display(pd.DataFrame([fb[\"totals\"]]), pd.DataFrame(fb[\"by_type\"]), pd.DataFrame(fb[\"by_form\"]))",
    "from rag.views.evaluate import earlier_runs\nearlier_runs(cfg)  # this run beside earlier scored runs of the same dataset",
    "from rag.evaluate.plots import stage_costs\nstage_costs(cfg)  # per stage: time, items, tokens, cost (summed item usage records)",
    "from IPython.display import Image\nfor png in sorted(scores_path(cfg).parent.glob(\"*.png\")):\n    display(Image(filename=str(png)))"]),
 "08_label": ("# 08 · Hand-label answers\nHeadless runs only report label counts; with `interactive=True` the labelling widget opens where you stopped. Labels: `data/<name>/labels.jsonl` (append-only).",
   ["from rag.label import label_counts\nlabel_counts(ds)",
    "if interactive:\n    from rag.views.widgets.label_widget import label_widget\n    display(label_widget(cfg, ds))",
    "from rag.evaluate.financebench import text_verdicts_table\n# FinanceBench text answers judged by hand (correct / incorrect / refusal; 07 scores text answers with them)\ntext_verdicts_table(cfg, ds)",
    "if interactive:  # buttons Correct / Incorrect / Refusal over the text answers (None: not a FinanceBench dataset)\n    from rag.views.widgets.verdict_widget import verdict_widget\n    w = verdict_widget(cfg, ds)\n    if w is not None:\n        display(w)"]),
}

assert set(NBS) == set(NOTEBOOKS), f"notebooks without cells or not in rag.core.stages: {set(NBS) ^ set(NOTEBOOKS)}"


def stage_cells(name: str) -> list[str]:
    """The cell every stage notebook starts with: run the stage (none for 08, a notebook only)."""
    st = STAGES[name]
    if st.notebook_only:
        return []
    return [f"from {st.module} import {st.run_function}\nsummary = {st.run_function}(cfg, ds)\nsummary"]


for name in NOTEBOOKS:
    md, cells = NBS[name]
    cells = stage_cells(name) + cells
    nb = nbf.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    p = nbf.v4.new_code_cell(PARAMS)
    p.metadata["tags"] = ["parameters"]
    nb.cells = [nbf.v4.new_markdown_cell(md), p, nbf.v4.new_code_cell(SETUP)] + [nbf.v4.new_code_cell(c) for c in cells]
    for i, c in enumerate(nb.cells):
        c["id"] = f"{name}-{i}"
    nbf.write(nb, OUT / f"{name}.ipynb")
print("ok")
