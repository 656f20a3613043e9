"""Issue 45's probes on answers and consoles: no answer copied from a prompt's example (any kind), an unread
yes/no exports N/A, the answer kind guessed on phrasings in nine languages (accuracy printed), one routing
reason per reason, no SIGINT to a kernel on a clean shutdown, no weight-loading bar, no pip resolver
ERROR from the llama.cpp setup step. Each fails on the code before the fix (main bcf3d6a)."""
from __future__ import annotations

import asyncio
import collections
import json
import re
import sys
from pathlib import Path

import pytest

from rag.answer import na_record
from rag.answer.common.context import CtxPage
from rag.answer.common.example_check import copied, example_blocks
from rag.answer.interpret import part_value
from rag.answer.common.submission import build_submission
from rag.ask import filing_lines, infer_kind
from rag.core.config import PROJECT_ROOT
from rag.core.dataset import Question

pytestmark = pytest.mark.reliability

PROMPTS = PROJECT_ROOT / "prompts"
PHRASINGS = Path(__file__).parent / "data" / "kind_phrasings.tsv"
SHA = "a" * 40


def _example(name: str) -> dict:
    return next(ans for n, ans in example_blocks(PROMPTS) if n == name)


def _part(*texts: str) -> list[CtxPage]:
    return [CtxPage(SHA, i + 1, t, i) for i, t in enumerate(texts)]


def test_a_text_answer_copied_from_the_example_is_na_and_a_real_one_stands(make_cfg):
    cfg = make_cfg()
    example = _example("text.txt")["final_answer"]
    page = _part("Operating margin fell to 11.0% on weaker volumes in Asia and higher wages.")
    call = {"parsed": {"final_answer": example, "relevant_pages": [1]}}
    value, info = part_value(cfg, "text", call, page, page, "Why did Beta Ltd's margin fall?", "USD")
    assert value == "N/A" and info["example_copied"] and "prompts/examples/text.txt" in info["na_reason"]
    own = {"parsed": {"final_answer": "Operating margin fell to 11.0% on weaker Asian volumes and higher wages."}}
    assert part_value(cfg, "text", own, page, page, "Why did Beta Ltd's margin fall?", "USD")[0].startswith("Operating")


def test_every_kind_is_checked_against_every_example():
    # a comparative naming the example's winner, a name from the names example, the example's figure
    assert copied("comparative", "Acme Corp", "", PROMPTS) and copied("names", ["Chief Financial Officer"], "", PROMPTS)
    assert copied("number", 1312400000.0, "", PROMPTS, ["Revenue 1,198,000"])
    assert copied("number", 1312400000.0, "", PROMPTS, ["Revenue 1,312,400 (thousands)"]) is None  # printed: real
    ex = _example("boolean.txt")
    reasoning = f"{ex['step_by_step_analysis']} {ex['reasoning_summary']}"
    assert copied("boolean", True, reasoning, PROMPTS)
    assert copied("boolean", True, "Page 4 reports the purchase of Zeta GmbH in May.", PROMPTS) is None
    assert copied("text", "N/A", "", PROMPTS) is None and copied("name", "Mary Major", "", PROMPTS) is None


def test_examples_are_about_fictional_companies_only():
    """No real report's answer is an example: every example question names the fictional Acme Corp, and the
    text example no longer carries 3M's FY2022 operating-margin wording (20.8% in 2021, 19.1% in 2022)."""
    for path in sorted((PROMPTS / "examples").glob("*.txt")):
        question = re.split(r"^--- \w+\s*$", path.read_text(encoding="utf-8").split("--- question", 1)[1],
                            flags=re.M)[0]
        assert "Acme Corp" in question, path.name
    assert not re.search(r"20\.8%|19\.[15]%", (PROMPTS / "examples" / "text.txt").read_text(encoding="utf-8"))


def test_a_yes_no_about_an_unreadable_report_exports_na_as_the_warning_says():
    q = Question(qid="q000", text="Did Acme Corp buy back shares?", kind="boolean")
    rec = na_record(q, "failed in 01_parse: not a PDF")
    sub = build_submission([rec], "a@b.c", "t")
    assert rec["value"] == "N/A" and sub.answers[0].value == "N/A"


def _phrasings() -> list[tuple[str, str, str]]:
    rows = [ln.rstrip("\n").split("\t") for ln in PHRASINGS.read_text(encoding="utf-8").splitlines()
            if ln.strip() and not ln.startswith("#")]
    return [(k, lang, text) for k, lang, text in rows]


def test_the_kind_is_guessed_right_on_phrasings_in_nine_languages(capsys):
    rows = _phrasings()
    assert len(rows) >= 60 and len({lang for _, lang, _ in rows}) >= 5
    right = collections.Counter()
    total = collections.Counter()
    misses = []
    for kind, lang, text in rows:
        got = infer_kind(text)
        total[lang] += 1
        right[lang] += got == kind
        if got != kind:
            misses.append(f"  {lang} {kind} -> {got}: {text}")
    with capsys.disabled():
        print(f"\nkind inference on {PHRASINGS.name}: {sum(right.values())}/{len(rows)} = "
              f"{sum(right.values()) / len(rows):.1%}  (" +
              ", ".join(f"{lang} {right[lang]}/{n}" for lang, n in sorted(total.items())) + ")")
        print("\n".join(misses))
    assert sum(right.values()) / len(rows) >= 0.95
    # the probes' two phrasings
    assert infer_kind("How many directors sit on the board of Acme Corp?") == "number"
    assert infer_kind("谁是Acme公司的首席执行官？") == "name"


def test_filings_sharing_one_routing_reason_name_it_once():
    why = "no period named: the latest filings"
    assert filing_lines([("3M 10-K 2018", why), ("3M 10-K 2022", why)]) == ["3M 10-K 2018", f"3M 10-K 2022 ({why})"]
    assert filing_lines([("A 10-K", "x"), ("A 8-K", "y")]) == ["A 10-K (x)", "A 8-K (y)"]


def test_a_clean_kernel_shutdown_sends_no_sigint(tmp_path):
    """jupyter_client interrupts a kernel before shutting it down; a kernel inside a handler then logged
    "[IPKernelApp] ERROR | KeyboardInterrupt caught in kernel." on clean runs. The run's manager does not."""
    from rag.kernels import RunKernelManager

    marker = tmp_path / "sigint"

    async def go():
        km = RunKernelManager(kernel_name="python3")
        await km.start_kernel()
        kc = km.client()
        kc.start_channels()
        try:
            await kc.wait_for_ready(timeout=120)
            # ipykernel restores its saved SIGINT handler after each execute: make ours the saved one
            code = (f"import signal, pathlib\nh = lambda *a: pathlib.Path({str(marker)!r}).write_text('x')\n"
                    "signal.signal(signal.SIGINT, h)\nget_ipython().kernel.saved_sigint_handler = h")
            await kc.execute_interactive(code, timeout=60)
        finally:
            kc.stop_channels()
            await km.shutdown_kernel()

    asyncio.run(go())
    assert not marker.exists(), "the kernel received SIGINT during a clean shutdown"


def test_weight_loading_prints_no_progress_bar():
    from transformers.utils import logging as tl

    from rag.models.embed_local import quiet_weight_loading

    tl.enable_progress_bar()
    quiet_weight_loading()
    assert not tl.is_progress_bar_enabled()


def test_the_llama_setup_step_installs_its_requirements_before_the_no_deps_reinstall():
    """pip printed "ERROR: pip's dependency resolver ... llama-cpp-python requires numpy, which is not
    installed" in a fresh ``make run``: the --no-deps reinstall ran before any of its requirements."""
    make = (PROJECT_ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = make.split("$(LLAMA_STAMP):", 1)[1].split("\n\n", 1)[0]
    deps = recipe.index('"diskcache>=5.6.1"')
    assert deps < recipe.index("--force-reinstall --no-deps") and "numpy$(NUMPY_PIN)" in recipe
    pin = re.search(r'"numpy(==[^"]+)"', (PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8")).group(1)
    sed = re.search(r"NUMPY_PIN\s*:= \$\(shell (.+)\)\n", make).group(1).replace("$$", "$")
    import subprocess

    got = subprocess.run(["bash", "-c", sed], cwd=PROJECT_ROOT, capture_output=True, text=True).stdout.strip()
    assert got == pin
