"""Pieces every stage shares: the stage contract (:mod:`rag.core.deps`), the item loop
(:mod:`rag.core.loop`), usage records (:mod:`rag.core.usage`) and question text helpers
(:mod:`rag.core.text`)."""
