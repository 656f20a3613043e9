"""Lexicon expansion of stage 05 queries: the shipped vocabulary file, its errors, its use in search."""
from __future__ import annotations

import pytest
from test_retrieve import FakeIndex, _chunk, _embed  # tests/ is on sys.path (pytest rootdir import, as conftest)

from rag.retrieve.query import LexiconError, lexicon_hash, lexicon_path, lexicon_terms, lexicon_topics
from rag.retrieve import retrieve_pages

SHA = "b" * 40


def _cfg(make_cfg, **over):
    return make_cfg(overrides={"rerank.mode": "none", **over})


class WordIndex(FakeIndex):
    """test_retrieve's index stand-in (word-overlap 'BM25', HashEmbedder cosines), counting dense calls."""

    dense_calls = 0

    def dense(self, qvec, k):
        self.dense_calls += 1
        return super().dense(qvec, k)


# Page 3 answers "which leadership positions changed" in the report's own words, sharing no content
# word with the question; pages 1 and 2 share "positions"/"period" with it.
CHUNKS = [
    _chunk(1, 0, "Our market positions strengthened across the period in every region", SHA),
    _chunk(2, 0, "Reporting period revenue by segment and positions held in inventory", SHA),
    _chunk(3, 0, "On 1 July Jane Roe was appointed Non-Executive Director; John Doe resigned as Chief Financial Officer", SHA),
]
TEXTS = {1: "# Markets", 2: "# Segments", 3: "# Directors' report"}
QUESTION = "Which leadership positions changed in the reporting period? Give me the title of the position."


def test_shipped_lexicon_maps_question_words_to_report_words(make_cfg):
    cfg = _cfg(make_cfg)
    assert lexicon_path(cfg).exists()
    assert {"appointed", "resigned", "director"} <= set(lexicon_terms(cfg, QUESTION))
    assert "share_buyback" in lexicon_topics(cfg, "Did Acme announce a share buyback plan in the annual report?")
    assert "repurchase" in lexicon_terms(cfg, "Did Acme announce a share buyback plan?")
    assert "net cash provided by operating activities" in lexicon_terms(cfg, "What is the Cash flow from operations (in USD)?")
    # A question about nothing the lexicon knows adds nothing; terms are deduplicated.
    assert lexicon_terms(cfg, "What colour is the logo?") == []
    terms = lexicon_terms(cfg, "Did Acme mention any mergers or acquisitions or leadership changes?")
    assert len(terms) == len(set(terms))


def test_lexicon_off_adds_nothing_and_hashes_nothing(make_cfg):
    cfg = _cfg(make_cfg, **{"retrieve.lexicon_expansion": False})
    assert lexicon_terms(cfg, QUESTION) == [] and lexicon_topics(cfg, QUESTION) == [] and lexicon_hash(cfg) == ""


def test_lexicon_finds_the_page_the_question_words_miss(make_cfg):
    off = _cfg(make_cfg, **{"retrieve.mode": "bm25", "retrieve.lexicon_expansion": False})
    on = _cfg(make_cfg, **{"retrieve.mode": "bm25"})
    idx = WordIndex(CHUNKS)
    without = retrieve_pages(off, QUESTION, SHA, index=idx, texts=TEXTS, embed=_embed)
    with_lex = retrieve_pages(on, QUESTION, SHA, index=idx, texts=TEXTS, embed=_embed)
    assert 3 not in [p.page for p in without]  # no shared word: BM25 alone never sees page 3
    assert with_lex[0].page == 3
    assert "appointed" in idx.bm25_queries[-1] and "appointed" not in idx.bm25_queries[0]


def test_lexicon_dense_adds_one_dense_query(make_cfg):
    idx = WordIndex(CHUNKS)
    whole = {"retrieve.mode": "dense", "retrieve.dense_pool": 0, "index.chunk_vectors": "stored"}  # counts dense()
    retrieve_pages(_cfg(make_cfg, **whole, **{"retrieve.lexicon_dense": False}), QUESTION, SHA,
                   index=idx, texts=TEXTS, embed=_embed)
    assert idx.dense_calls == 1
    retrieve_pages(_cfg(make_cfg, **whole), QUESTION, SHA, index=idx, texts=TEXTS, embed=_embed)
    assert idx.dense_calls == 3  # the question, then the question + its lexicon terms


@pytest.mark.parametrize("content, problem", [
    (None, "not found"),
    ("[[topic]\nname = 1", "not valid TOML"),
    ('[[topic]]\nname = "x"\nterms = ["a"]\n', "needs name, when"),
    ('[[topic]]\nname = "x"\nwhen = ["(unclosed"]\nterms = ["a"]\n', "bad regular expression"),
    ("title = 'no topics'\n", "no [[topic]]"),
])
def test_bad_lexicon_file_names_the_file_and_problem(make_cfg, tmp_path, content, problem):
    path = tmp_path / "lex.toml"
    if content is not None:
        path.write_text(content)
    cfg = _cfg(make_cfg, **{"retrieve.lexicon": str(path)})
    with pytest.raises(LexiconError) as e:
        lexicon_terms(cfg, QUESTION)
    assert str(path) in str(e.value) and problem in str(e.value)


def test_editing_the_lexicon_changes_the_stage_key(make_cfg, tmp_path):
    from rag.core.dataset import Question
    from rag.retrieve import question_key

    path = tmp_path / "lex.toml"
    path.write_text('[[topic]]\nname = "lead"\nwhen = ["leadership"]\nterms = ["appointed"]\n')
    cfg = _cfg(make_cfg, **{"retrieve.lexicon": str(path)})
    q = Question(qid="q1", text=QUESTION, kind="names")
    k1 = question_key(cfg, q, [], {})
    path.write_text('[[topic]]\nname = "lead"\nwhen = ["leadership"]\nterms = ["appointed", "resigned"]\n')
    assert lexicon_terms(cfg, QUESTION) == ["appointed", "resigned"]
    assert question_key(cfg, q, [], {}) != k1
