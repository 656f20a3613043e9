"""answer.currency_source (rag.answer.common.report_currency): the report's currency from subset.csv or from
the report's own text (02_clean pages)."""
from __future__ import annotations

from rag.core.artifacts import write_json_atomic


def _write_clean(cfg, sha1: str, pages: list[str]) -> None:
    from rag.clean import report_path
    from rag.core.records import CleanPage, CleanReport

    rep = CleanReport(sha1=sha1, company="Acme", pages=[CleanPage(page=i + 1, markdown=t) for i, t in enumerate(pages)])
    (cfg.run_dir / "02_clean").mkdir(parents=True, exist_ok=True)
    path = report_path(cfg, sha1)
    write_json_atomic(path, rep.model_dump())


def test_subset_source_keeps_the_listed_currency(make_cfg):
    from rag.answer.common.report_currency import report_currency

    cfg = make_cfg()
    _write_clean(cfg, "a" * 40, ["All amounts are presented in Japanese yen."])
    assert report_currency(cfg, "a" * 40, "AUD") == "AUD"


def test_text_source_reads_the_currency_the_report_states(make_cfg):
    from rag.answer.common.report_currency import report_currency

    cfg = make_cfg(overrides={"answer": {"currency_source": "text"}})
    _write_clean(cfg, "b" * 40, ["Annual report 2023", "The financial statements are presented in Japanese yen."])
    assert report_currency(cfg, "b" * 40, "AUD") == "JPY"
    # no 02 file, or a text naming no currency: the listed one
    assert report_currency(cfg, "c" * 40, "AUD") == "AUD"
    _write_clean(cfg, "d" * 40, ["Our fleet grew to 420 trucks."])
    assert report_currency(cfg, "d" * 40, "CAD") == "CAD"
