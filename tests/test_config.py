import pytest

from rag.core.config import ConfigError, RunConfig, available_presets, load_config


def test_presets_exist_and_load():
    assert {"offline", "openai", "gpu", "test"} <= set(available_presets())
    for name in available_presets():
        cfg = load_config(name)
        assert isinstance(cfg, RunConfig) and cfg.preset == name


def test_offline_is_keyless_and_openai_is_the_winners_stack():
    off, oai, gpu = load_config("offline"), load_config("openai"), load_config("gpu")
    assert off.llm.backend == "llama_cpp" and off.embed.backend == "local"
    assert oai.embed.model == "text-embedding-3-large" and oai.llm.model.startswith("gpt-4o")
    assert gpu.parse.pipeline == "standard" and gpu.device == "cuda" and gpu.llm.backend == "vllm"
    assert gpu.parse.artifacts_path == "data/models/docling" and gpu.llm.vllm.gpu_memory_utilization < 1


def test_test_preset_extends_offline():
    t = load_config("test")
    assert t.llm.gguf == "qwen2.5-coder-0.5b"
    assert t.retrieve.mode == load_config("offline").retrieve.mode  # inherited


def test_overrides_dotted_and_nested():
    cfg = load_config("offline", overrides={"chunk.sizes": [300, 1000], "rerank": {"mode": "none"}}, run="x")
    assert cfg.chunk.sizes == (300, 1000) and cfg.rerank.mode == "none" and cfg.run == "x"


def test_frozen():
    cfg = load_config("offline")
    with pytest.raises(Exception):
        cfg.run = "other"
    with pytest.raises(Exception):
        cfg.chunk.overlap = 3


@pytest.mark.parametrize("overrides,needle", [
    ({"chunk.sizez": 3}, "chunk.sizez"),
    ({"nope": 1}, "nope"),
    ({"rerank.mode": "magic"}, "rerank.mode"),
    ({"chunk.overlap": -1}, "chunk.overlap"),
    ({"retrieve.top_k_chunks": "many"}, "retrieve.top_k_chunks"),
    ({"answer.pages_per_call": {"boolean": -1}}, "answer.pages_per_call.boolean"),
    ({"answer.pages_per_call": {"bool": 1}}, "answer.pages_per_call"),
])
def test_unknown_key_or_bad_value_names_it(overrides, needle):
    with pytest.raises(ConfigError, match=needle.replace(".", r"\.")):
        load_config("offline", overrides=overrides)


def test_unknown_preset():
    with pytest.raises(ConfigError, match="unknown preset 'nosuch'"):
        load_config("nosuch")


def test_hashes_change_with_the_section_only():
    a = load_config("offline")
    b = load_config("offline", overrides={"rerank.mode": "llm"})
    assert a.section_hash("chunk") == b.section_hash("chunk")
    assert a.section_hash("rerank") != b.section_hash("rerank")
    assert a.config_hash() != b.config_hash()


def test_a_datasets_settings_file_sits_between_the_preset_and_the_overrides(tmp_path):
    from rag.core.config import DATASET_SETTINGS

    (tmp_path / DATASET_SETTINGS).write_text("[answer]\ncomputed_figures = true\n[retrieve]\nstatement_pages = 3\n")
    cfg = load_config("test", data_dir=str(tmp_path))
    assert cfg.answer.computed_figures is True and cfg.retrieve.statement_pages == 3
    assert cfg.llm.gguf == load_config("test").llm.gguf  # the rest is the preset's
    cfg = load_config("test", {"retrieve.statement_pages": 1}, data_dir=str(tmp_path))
    assert cfg.retrieve.statement_pages == 1 and cfg.answer.computed_figures is True  # --set wins
    assert load_config("test", data_dir=str(tmp_path / "none")).answer.computed_figures is False  # no file


@pytest.mark.parametrize("text,needle", [
    ("[answer\n", "not valid TOML"),
    ("[answer]\ncomputed_figurez = true\n", "unknown key 'answer.computed_figurez'"),
    ("[answer]\ncomputed_figures = 'maybe'\n", "bad value for 'answer.computed_figures'"),
    ('run = "x"\n', "may not set run"),
    ('outputs_dir = "/tmp"\n', "may not set outputs_dir"),
])
def test_a_bad_dataset_settings_file_is_named(tmp_path, text, needle):
    from rag.core.config import DATASET_SETTINGS

    (tmp_path / DATASET_SETTINGS).write_text(text)
    with pytest.raises(ConfigError, match=rf"^{tmp_path / DATASET_SETTINGS}: .*{needle}"):
        load_config("offline", data_dir=str(tmp_path))


def test_the_machine_knobs_of_the_docs_load_through_set_and_leave_item_keys_alone():
    """docs/cluster.md's per-task resources and node files (``run.*`` is ``execution.*``) and docs/cpu.md's
    llama.cpp threads and server environment: ``--set`` reaches them, and the speed-only ones change no stage's
    item key (a run moved onto a cluster or given more threads re-runs nothing)."""
    from rag.core import deps
    from rag.core.config import parse_set
    base = load_config("offline")
    cfg = load_config("offline", overrides=parse_set([
        "run.num_gpus=1", "run.memory=2000000000", "run.max_in_flight=4", "run.stage_inputs=false",
        "llm.n_threads_batch=4", 'llm.server_env={"OMP_WAIT_POLICY": "ACTIVE"}']))
    e = cfg.execution
    assert (e.num_gpus, e.memory, e.max_in_flight, e.stage_inputs) == (1, 2_000_000_000, 4, False)
    assert cfg.llm.n_threads_batch == 4 and cfg.llm.server_env == {"OMP_WAIT_POLICY": "ACTIVE"}
    assert all(deps.config_signature(cfg, s) == deps.config_signature(base, s) for s in deps.PIPELINE)
    assert load_config("offline", overrides=parse_set(["llm.n_threads=1"])).llm.n_threads == 1


def test_the_seed_and_the_passage_prefix_enter_the_keys_they_change():
    """The run's seed is a run input (every stage's sharing signature); a passage prefix set by hand changes the
    vectors, so the index stage's key (``auto``, the default, stays out: keys from before it existed hold)."""
    from rag.core import deps
    from rag.core.stages import name_of
    base, seeded = load_config("offline"), load_config("offline", overrides={"seed": 7})
    assert deps.lineage_signature(seeded, name_of("parse")) != deps.lineage_signature(base, name_of("parse"))
    prefixed = load_config("offline", overrides={"embed.passage_prefix": "passage: "})
    assert prefixed.embed.passage_prefix == "passage: "
    assert "passage_prefix" not in deps.config_signature(base, name_of("index")).get("embed", {})
    assert deps.config_signature(prefixed, name_of("index")) != deps.config_signature(base, name_of("index"))


def test_a_submissions_identity_is_set_in_the_answer_section():
    from rag.answer.common.submission import build_submission
    cfg = load_config("offline", overrides={"answer.team_email": "me@example.org", "answer.submission_name": "mine"})
    sub = build_submission([], cfg.answer.team_email, cfg.answer.submission_name).model_dump()
    assert (sub["team_email"], sub["submission_name"]) == ("me@example.org", "mine")
