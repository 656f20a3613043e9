"""What every answer path of stage 06 shares (no module here imports an answer path or the dispatcher).

Contracts, one module each:
- :mod:`.context`: the pages a question is answered from (read from stage 05's records), packed to fit.
- :mod:`.prompts`: the answer prompts per kind and their schemas; :mod:`.calls`: one structured model call and
  where the prompt files are; :mod:`.example_check`: an answer never copied from a prompt's example.
- :mod:`.printed`: numbers as printed (parsing, scales, currencies, the power-of-1,000 sanity check).
- :mod:`.md_tables`: Markdown grids of clean pages and the periods their columns name.
- :mod:`.focus`: a page cut to the lines naming the question's topic.
- :mod:`.page_check`: pages put in the order of the reader's own P(the page answers).
- :mod:`.yes_no_check`: one yes/no check put to the reader, and its P(true) from the log-probabilities.
- :mod:`.submission`: the submission JSON built, validated and written.
"""
