"""The ``rag`` console command (rag.cli) and ``rag ask`` (rag.ask)."""
from __future__ import annotations

import json
import shutil

import pytest

from rag.ask import format_result, infer_kind
from rag.cli import main

TEMPLATES = [  # ERC round-2 question templates (company "Acme Corp") and the kind each asks for
    ("For Acme Corp, what was the value of Number of patents at year-end at the end of the period listed in "
     "annual report? If data is not available, return 'N/A'.", "number"),
    ("What was the value of Total deposits at year-end of Acme Corp at the end of the period listed in annual "
     "report? If data is not available, return 'N/A'.", "number"),
    ("Did Acme Corp announce a share buyback plan in the annual report? If there is no mention, return False.",
     "boolean"),
    ("Which leadership positions changed at Acme Corp in the reporting period? If data is not available, "
     "return 'N/A'. Give me the title of the position.", "names"),
    ("What are the names of all new products launched by Acme Corp?", "names"),
    ("What was the latest merger or acquisition that Acme Corp was involved in? Return name of the entity "
     "or 'N/A'.", "name"),
    ("Who is the chief executive officer of Acme Corp?", "name"),
]


@pytest.mark.parametrize("text,kind", TEMPLATES)
def test_the_kind_is_inferred_from_the_wording(text, kind):
    assert infer_kind(text, 1) == kind


def test_several_companies_make_a_comparative_question():
    assert infer_kind("Which of the companies had the highest revenue: Acme Corp, Beta plc?", 2) == "comparative"


def test_help_lists_every_command_and_an_unknown_one_exits_2(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for cmd in ("init", "ask", "run", "check", "score", "ablate", "lab"):
        assert f"  {cmd} " in out
    assert main(["frobnicate"]) == 2
    assert "unknown command 'frobnicate'" in capsys.readouterr().err


@pytest.mark.parametrize("cmd", ["init", "ask", "run", "check", "score", "ablate", "valgen", "lab", "kernel"])
def test_every_subcommand_has_help(cmd, capsys):
    with pytest.raises(SystemExit) as e:
        main([cmd, "--help"])
    assert e.value.code == 0 and "usage:" in capsys.readouterr().out


def test_a_bad_dataset_is_one_message_without_traceback_and_debug_shows_it(tmp_path, capsys):
    (tmp_path / "questions.json").write_text("[]")
    assert main(["ask", "Did Acme Corp grow?", "--data", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: DatasetError:") and "subset.csv: missing file" in err and "Traceback" not in err
    with pytest.raises(Exception, match="subset.csv"):
        main(["ask", "Did Acme Corp grow?", "--data", str(tmp_path), "--debug"])


def test_rag_init_on_a_folder_without_pdfs_is_one_error_line(tmp_path, capsys):
    (tmp_path / "reports").mkdir()
    assert main(["init", str(tmp_path / "mine"), "--pdfs", str(tmp_path / "reports")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: InitError:") and "no .pdf files" in err and err.count("\n") == 1
    assert not (tmp_path / "mine").exists()


def test_a_question_naming_no_company_fails_before_indexing(demo_dir, tmp_path, capsys):
    data = tmp_path / "demo"
    shutil.copytree(demo_dir, data)
    assert main(["ask", "What was the revenue of Nobody Ltd?", "--data", str(data), "--preset", "test",
                 "--set", f"outputs_dir={tmp_path / 'out'}"]) == 2
    err = capsys.readouterr().err
    assert "error: QuestionError: the question names no company" in err and "Northwind Logistics Inc." in err
    assert not (tmp_path / "out").exists()  # nothing indexed


def test_lab_runs_jupyterlab_on_the_project_kernel(capsys):
    assert main(["lab", "--dry-run", "--no-browser"]) == 0
    out = capsys.readouterr().out
    assert "-m jupyterlab" in out and "default_kernel_name=enterprise-rag" in out and "--no-browser" in out


def test_format_result_prints_the_answer_kind_and_each_cited_page():
    from rag.ask import AskResult

    res = AskResult(question="q", kind="number", kind_inferred=True, companies=["Acme Corp"], value=1234.5,
                    references=[{"sha1": "ab" * 20, "page": 7, "company": "Acme Corp", "snippet": "Revenue 1,234.5"}],
                    seconds=3.2, usage={"prompt_tokens": 900, "completion_tokens": 40})
    text = format_result(res)
    assert text.splitlines()[:3] == ["Answer: 1234.5", "Kind: number (inferred; --kind to change)", "Company: Acme Corp"]
    assert "page 7 of Acme Corp (abababab): Revenue 1,234.5" in text and "940 tokens" in text


@pytest.mark.llm
@pytest.mark.slow
def test_rag_ask_answers_a_demo_question_for_real(demo_dir, tmp_path, capsys):
    """End to end on the demo corpus with the test preset (0.5B model on llama.cpp): indexes, answers one
    question whose gold answer is known, prints the cited page; nothing is written into a stage folder
    of the run beyond 01-04."""
    data = tmp_path / "demo"
    shutil.copytree(demo_dir, data)
    gold = json.loads((data / "answers.json").read_text())
    questions = json.loads((data / "questions.json").read_text())
    q = next(x for x in questions if x["kind"] == "boolean" and gold[x["text"]]["answers"] == ["True"])
    out_dir = tmp_path / "out"
    argv = ["ask", q["text"], "--data", str(data), "--preset", "test", "--quiet",
            "--set", f"outputs_dir={out_dir}", "--set", f"cache_dir={tmp_path / 'cache'}"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1] == "Kind: boolean (inferred; --kind to change)"
    assert out.splitlines()[0] in ("Answer: True", "Answer: False")  # a 0.5B model: the format, not the truth
    stages = sorted(p.name for p in (out_dir / "demo").iterdir() if p.is_dir())
    assert stages == ["01_parse", "02_clean", "03_chunk", "04_index"]
