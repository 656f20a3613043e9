"""rag.models.llama_logits: the llama.cpp server's logits and log-probabilities computed only where read
give the same answers and the same numbers as llama-cpp-python's own code (real 0.5B model in-process)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rag.core.config import load_config
from rag.models import llama_logits, weights


def test_lazy_rows_are_the_whole_matrix_log_softmax_bit_for_bit():
    llama = pytest.importorskip("llama_cpp.llama", reason="llama-cpp-python not installed: run `make setup`")
    original = llama.Llama.__dict__["logits_to_logprobs"].__func__
    if getattr(llama.Llama, "_rag_logits_patched", False):
        original = llama_logits._ORIGINAL["logits_to_logprobs"]
    rng = np.random.default_rng(0)
    logits = (rng.standard_normal((12, 3000)) * 6).astype(np.single)
    logits[2, 5] = -np.inf
    logits[4, :] = -np.inf  # a masked row: max not finite
    with np.errstate(invalid="ignore"):  # the masked row gives NaN in both, as llama-cpp-python's own does
        ref = original(logits)
        lazy = llama_logits.LazyRows(logits, original)
        assert len(lazy) == 12
        rows = list(lazy[7:])
        assert len(rows) == 5 and all(np.array_equal(r, ref[7 + i]) for i, r in enumerate(rows))
        assert np.array_equal(lazy[4], ref[4], equal_nan=True) and np.array_equal(lazy[2], ref[2])
    assert np.array_equal(lazy[3], ref[3])  # one row alone = that row of the whole matrix


@pytest.fixture(scope="module")
def small_model():
    pytest.importorskip("llama_cpp", reason="llama-cpp-python not installed: run `make setup`")
    cfg = load_config("test")
    path = weights.gguf_path(cfg.llm.gguf, cfg.path("models_dir"))
    if not path.exists():
        pytest.skip(f"{path} absent: run `make models-test`")
    return str(path)


def _run(path: str, patched: bool) -> dict:
    from llama_cpp import Llama

    llama_logits.uninstall()
    if patched:
        assert llama_logits.install()
    try:
        m = Llama(path, n_ctx=1024, n_batch=16, n_threads=2, logits_all=True, verbose=False, seed=0)
        msgs = [{"role": "system", "content": "Answer in JSON: final_answer is true or false."},
                {"role": "user", "content": "Paris is the capital of France. " * 6
                 + "\nQuestion: Is Paris the capital of France?"}]
        schema = {"type": "object", "properties": {"final_answer": {"type": "boolean"}}, "required": ["final_answer"]}
        out = {}
        # two chat calls: the second reuses the first one's prompt prefix (the server's usual case);
        # n_batch=16 splits each prompt into many batches
        for i, q in enumerate(["Is Paris the capital of France?", "Is Lyon the capital of France?"]):
            msgs[1]["content"] = msgs[1]["content"].rsplit("\nQuestion:", 1)[0] + f"\nQuestion: {q}"
            r = m.create_chat_completion(msgs, response_format={"type": "json_object", "schema": schema},
                                         temperature=0, max_tokens=12, logprobs=True, top_logprobs=5)
            c = r["choices"][0]
            out[f"text{i}"] = c["message"]["content"]
            out[f"lp{i}"] = [(t["token"], t["logprob"], [(a["token"], a["logprob"]) for a in t["top_logprobs"]])
                             for t in c["logprobs"]["content"]]
        # a plain completion echoing its prompt's log-probabilities: every prompt row must be computed
        e = m.create_completion("The capital of France is", max_tokens=3, temperature=0, logprobs=3, echo=True)
        out["echo"] = e["choices"][0]["logprobs"]["token_logprobs"]
        out["echo_text"] = e["choices"][0]["text"]
        return out
    finally:
        llama_logits.uninstall()


def test_patched_server_model_gives_the_same_answers_and_log_probabilities(small_model):
    plain, fast = _run(small_model, False), _run(small_model, True)
    assert fast["text0"] == plain["text0"] and fast["text1"] == plain["text1"]
    for key in ("lp0", "lp1"):
        assert [t for t, _, _ in fast[key]] == [t for t, _, _ in plain[key]]
        for (_, a, ta), (_, b, tb) in zip(fast[key], plain[key]):
            # the last token's logits from a one-row output vs a full-batch output: same up to float rounding
            assert math.isclose(a, b, abs_tol=1e-3)
            assert [t for t, _ in ta][:2] == [t for t, _ in tb][:2]
    assert fast["echo_text"] == plain["echo_text"]
    assert fast["echo"][0] is None and len(fast["echo"]) == len(plain["echo"])
    assert all(math.isclose(a, b, abs_tol=1e-3) for a, b in zip(fast["echo"][1:], plain["echo"][1:]))


def test_install_is_refused_for_an_unchecked_version(monkeypatch):
    llama_cpp = pytest.importorskip("llama_cpp")
    llama_logits.uninstall()
    monkeypatch.setattr(llama_cpp, "__version__", "9.9.9")
    assert llama_logits.install() is False
    assert not getattr(llama_cpp.llama.Llama, "_rag_logits_patched", False)
