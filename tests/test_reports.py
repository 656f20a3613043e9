"""rag.views.<stage> tables on tiny inputs (the real run of every table is the notebook smoke test)."""
from types import SimpleNamespace

from rag.core.dataset import PageRef
from rag.views.answer import _snippet
from rag.views.chunk import chunk_length_table
from rag.views.retrieve import _gold_rank


def _cfg(limit=256, mode="truncate"):
    return SimpleNamespace(embed=SimpleNamespace(max_input_tokens=limit, long_text=mode, backend="local"))


def test_chunk_lengths_against_the_limit():
    t = chunk_length_table(_cfg(), None, lengths=[10, 100, 256, 257, 300, 600])
    rows = {r["tokens"]: r for r in t.to_dict(orient="records")}
    assert rows["192-256"]["chunks"] == 1 and rows["192-256"]["past_limit"] is False  # 256 still fits
    assert rows["257-319"]["chunks"] == 2 and rows["257-319"]["past_limit"] is True
    last = t.iloc[-1]
    assert last["tokens"] == "over 256 (truncate)" and last["chunks"] == 3 and last["share_%"] == 50.0
    cut = (1 + 44 + 344) / sum([10, 100, 256, 257, 300, 600])
    assert last["past_limit"] == f"{100 * cut:.1f}% of tokens never embedded"
    assert "extra windows" in chunk_length_table(_cfg(mode="mean"), None, lengths=[300]).iloc[-1]["past_limit"]
    assert sum(t.chunks[:-1]) == 6  # every chunk in exactly one bin


def test_gold_rank_per_pool_and_snippet():
    ranked = {"a": [5, 9, 2], "b": [1]}
    pools = ((PageRef(sha1="a", page=2), PageRef(sha1="a", page=9)), (PageRef(sha1="b", page=7),))
    assert _gold_rank(ranked, pools) == "2,-"
    page = "x " * 200 + "Net cash from operating activities 406,100 " + "y " * 200
    assert "406,100" in _snippet(page, 406100000)
    assert _snippet("Short page.", "N/A") == "Short page."
