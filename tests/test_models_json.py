"""Unit tests: tolerant JSON extraction, schema prompts, rate limiter and backoff (no models)."""
from __future__ import annotations

import pytest
from pydantic import BaseModel

from rag.models.jsonx import extract_json, parse_structured, repair_messages, with_schema_prompt
from rag.models.ratelimit import RateLimiter, backoff_s, parse_retry_after


class Ans(BaseModel):
    value: float
    pages: list[int]


@pytest.mark.parametrize("text, expected", [
    ('{"a": 1}', {"a": 1}),
    ('```json\n{"a": 1}\n```', {"a": 1}),
    ('Sure! Here it is:\n```\n{"a": [1, 2]}\n```\nHope it helps.', {"a": [1, 2]}),
    ('The answer is {"a": "x}y", "b": {"c": null}} as requested.', {"a": "x}y", "b": {"c": None}}),
    ('{"a": 1, "b": [1, 2,],}', {"a": 1, "b": [1, 2]}),
    ('{"a": "line one\nline two\ttab"}', {"a": "line one\nline two\ttab"}),
    ("<think>maybe {not json}</think>{\"ok\": True, \"n\": None}", {"ok": True, "n": None}),
    ('[{"p": 1}, {"p": 2}]', [{"p": 1}, {"p": 2}]),
    ('{"s": "a, ]"}', {"s": "a, ]"}),  # a comma + closer inside a string is content, not a trailing comma
    ('{"s": "True"}', {"s": "True"}),  # Python literal words inside strings stay text
    # json-repair, the last local fallback: output cut at max_tokens, bare keys, single quotes
    ('{"a": 1', {"a": 1}),
    ('{"step": "The table shows', {"step": "The table shows"}),
    ("{'final_answer': 12.5, 'relevant_pages': [3]}", {"final_answer": 12.5, "relevant_pages": [3]}),
    ('Here: {final_answer: 12.5, relevant_pages: [3]} done', {"final_answer": 12.5, "relevant_pages": [3]}),
])
def test_extract_json_tolerates_model_noise(text, expected):
    assert extract_json(text) == expected


@pytest.mark.parametrize("text", ["", "   ", "no json here", "{", "{{"])
def test_extract_json_raises_valueerror(text):
    with pytest.raises(ValueError):
        extract_json(text)


def test_parse_structured_validates_against_schema():
    assert parse_structured('x ```json\n{"value": 1.5, "pages": [3]}``` y', Ans) == Ans(value=1.5, pages=[3])
    with pytest.raises(ValueError):  # pydantic.ValidationError is a ValueError
        parse_structured('{"value": "many", "pages": [3]}', Ans)


def test_schema_prompt_and_repair_messages_carry_schema():
    schema = Ans.model_json_schema()
    msgs = with_schema_prompt([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}], schema)
    assert len(msgs) == 2 and msgs[0]["content"].startswith("S") and '"pages"' in msgs[0]["content"]
    msgs = with_schema_prompt([{"role": "user", "content": "U"}], schema)
    assert msgs[0]["role"] == "system" and msgs[1]["content"] == "U"
    rep = repair_messages(schema, "BAD OUTPUT", "Expecting value")
    assert "BAD OUTPUT" in rep[1]["content"] and '"value"' in rep[1]["content"] and "Expecting" in rep[1]["content"]


class FakeClock:
    def __init__(self):
        self.t = 0.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.t += s


def test_rate_limiter_requests_per_minute():
    clk = FakeClock()
    rl = RateLimiter(requests_per_minute=60, sleep=clk.sleep, clock=clk)  # 1 request/s after a burst of 60
    for _ in range(60):
        assert rl.acquire() == 0
    assert rl.acquire() == pytest.approx(1.0)
    assert clk.t == pytest.approx(1.0)


def test_rate_limiter_tokens_per_minute_and_oversized_request():
    clk = FakeClock()
    rl = RateLimiter(tokens_per_minute=600, sleep=clk.sleep, clock=clk)  # 10 tokens/s
    assert rl.acquire(500) == 0
    assert rl.acquire(200) == pytest.approx(10.0)  # 100 left, 100 missing at 10/s
    assert rl.acquire(10_000) == pytest.approx(60.0)  # more than a minute's budget: waits for a full bucket


def test_backoff_and_retry_after():
    assert backoff_s(3, 1.0, 60.0, retry_after=2.5) == 2.5
    assert backoff_s(3, 1.0, 60.0, retry_after=500) == 60.0
    for attempt in range(8):
        assert 0 <= backoff_s(attempt, 1.0, 10.0) <= min(10.0, 2 ** attempt)
    assert parse_retry_after("3") == 3.0 and parse_retry_after(None) is None and parse_retry_after("soon") is None
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: no wait
