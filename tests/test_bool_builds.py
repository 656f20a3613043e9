"""The yes/no rule chosen for every llama.cpp build at once (benchmarks/bool_builds.py): the row whose worst
build does best, then the mean, then the default rule and the cut nearest it."""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bool_builds  # noqa: E402


def _row(decision: str, t: float, cut: float, bal: float) -> dict:
    return {"decision": decision, "t": t, "cut": cut, "true_gold_true": 0, "true_gold": 10,
            "false_gold_false": 0, "false_gold": 20, "unread": 0, "balanced": bal}


def _write(tmp_path: Path, name: str, run: str, rows: list[dict]) -> str:
    p = tmp_path / name
    p.write_text(json.dumps({"data": "d", "run": run, "rows": rows}))
    return str(p)


def test_worst_build_decides(tmp_path, capsys):
    # (both, 0.2, 0.11) is best on build A but worst on B; (both, 0.2, 0.09) is the best worst case.
    a = _write(tmp_path, "a.json", "A", [_row("both", 0.2, 0.11, 0.80), _row("both", 0.2, 0.09, 0.76),
                                         _row("both", 0.2, 0.13, 0.70)])
    b = _write(tmp_path, "b.json", "B", [_row("both", 0.2, 0.11, 0.70), _row("both", 0.2, 0.09, 0.75),
                                         _row("both", 0.2, 0.13, 0.74)])
    runs, by = bool_builds.table([a, b])
    assert runs == ["A", "B"]
    assert bool_builds.choose(by) == ("both", 0.2, 0.09)
    assert bool_builds.main([a, b]) == 0
    assert "decision both, t 0.2, cut 0.09" in capsys.readouterr().out


def test_files_of_one_build_merge_and_ties_prefer_the_default(tmp_path):
    # Two decision rules of build A in two files; the rows tie on worst and mean: the default rule, then the cut
    # nearest 0.11, wins. A row one build lacks is not a candidate.
    a1 = _write(tmp_path, "a1.json", "A", [_row("both", 0.2, 0.13, 0.8), _row("both", 0.2, 0.1, 0.8)])
    a2 = _write(tmp_path, "a2.json", "A", [_row("logprob", 0.3, 0.1, 0.8), _row("logprob", 0.3, 0.2, 0.9)])
    b = _write(tmp_path, "b.json", "B", [_row("both", 0.2, 0.13, 0.8), _row("both", 0.2, 0.1, 0.8),
                                         _row("logprob", 0.3, 0.1, 0.8)])
    runs, by = bool_builds.table([a1, a2, b])
    assert runs == ["A", "B"] and ("logprob", 0.3, 0.2) not in by
    assert bool_builds.choose(by) == ("both", 0.2, 0.1)
