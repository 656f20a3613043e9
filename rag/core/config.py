"""One frozen run configuration, loaded from a named preset file plus overrides.

Contract:
- ``load_config(preset, **top_level, overrides={...})`` returns a frozen :class:`RunConfig`.
- Presets live in ``rag/presets/<name>.toml``; a preset may ``extends = "other"``.
- Overrides are a mapping whose keys are dotted paths (``"chunk.sizes": [1000]``) or nested
  mappings (``{"chunk": {"size": 1000}}``); ``run.executor`` & co. stand for ``execution.*``. An unknown
  key or a bad value raises :class:`ConfigError` naming the key.
- A dataset folder may hold ``rag-settings.toml`` (:data:`DATASET_SETTINGS`): the settings that suit its
  questions (an importer writes it, e.g. FinanceBench's computed figures), merged over the preset and under
  the top-level fields and overrides. It may not name the run's places (``data_dir``, ``run``, folders).
- Every knob of the pipeline lives here; functions take values from the config, never literals.

Page convention used throughout ``rag``: ``page`` is the 1-based physical page number of the PDF.
Only the ERC export (and the gold loader) speak 0-based ``page_index``.
"""
from __future__ import annotations

import hashlib
import json
import os
import tomllib
from pathlib import Path
from typing import Any, Mapping, Sequence

from pydantic import Field, ValidationError, model_validator

PRESETS_DIR = Path(__file__).parent.parent / "presets"  # rag/presets
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def project_path(value: str | Path) -> Path:
    """A configured path: absolute as given, a relative one against the project root (not the cwd, so a
    notebook run from notebooks/ reads the same files as the CLI)."""
    p = Path(value)
    return p if p.is_absolute() else PROJECT_ROOT / p


DATASET_SETTINGS = "rag-settings.toml"  # in a dataset folder: its own defaults over the preset's
# What a dataset's settings may not set: the run's identity and places are the caller's.
_NOT_DATASET_KEYS = ("preset", "data_dir", "run", "outputs_dir", "models_dir", "cache_dir")


class ConfigError(ValueError):
    """A preset or override that does not fit the schema; the message names the key."""


from .config_sections import (  # noqa: F401 - the sections are part of this module's interface
    _Frozen, ParseConfig, CleanConfig, ChunkConfig, IndexConfig, RetrieveConfig, RerankConfig, AnswerConfig,
    ExecutionConfig)
from .config_models import EmbedConfig, LLMConfig, VLLMConfig  # noqa: F401 - as the stage sections


class RunConfig(_Frozen):
    preset: str = Field("offline", description="The preset the run was loaded from (rag/presets/<name>.toml).")
    data_dir: str = Field("data/demo", description="The dataset folder (pdfs/, subset.csv, questions.json).")
    run: str = Field("demo", description="The run's name: its folder under outputs_dir.")
    outputs_dir: str = Field("outputs", description="Where run folders are written.")
    models_dir: str = Field("data/models", description="Where model weights are found and assembled.")
    cache_dir: str = Field("outputs/.cache", description="Disk caches of vectors and completions.")
    seed: int = Field(42, description="The run's seed (a run input: part of every stage's sharing signature).")
    # Resolved once by rag.models.device.resolve_device; read by docling (parse.device overrides it), the
    # embedder, the cross-encoder, OCR (when onnxruntime has CUDA) and the llama.cpp / vLLM servers.
    # Speed only: no item key depends on it.
    device: str = Field("auto", pattern=r"^(auto|cpu|cuda(:\d+)?)$",
                        description="Where the local models run: \"auto\" (CUDA when torch sees a GPU, else CPU), "
                                    "\"cpu\", \"cuda\", \"cuda:N\".")
    parse: ParseConfig = ParseConfig()
    clean: CleanConfig = CleanConfig()
    chunk: ChunkConfig = ChunkConfig()
    embed: EmbedConfig = EmbedConfig()
    index: IndexConfig = IndexConfig()
    retrieve: RetrieveConfig = RetrieveConfig()
    rerank: RerankConfig = RerankConfig()
    llm: LLMConfig = LLMConfig()
    answer: AnswerConfig = AnswerConfig()
    execution: ExecutionConfig = ExecutionConfig()

    @model_validator(mode="after")
    def _dense_needs_vectors(self) -> "RunConfig":
        if self.index.chunk_vectors == "on_demand" and self.retrieve.mode != "bm25" and self.retrieve.dense_pool == 0:
            raise ValueError(f"index.chunk_vectors='on_demand' stores no chunk vectors, so retrieve.mode="
                             f"{self.retrieve.mode!r} must rank a pool of BM25 chunks: set retrieve.dense_pool > 0 "
                             f"(or index.chunk_vectors='stored', or retrieve.mode='bm25')")
        return self

    def path(self, field: str) -> Path:
        """Resolve a path field (``data_dir``, ``outputs_dir``…) against the project root."""
        return project_path(getattr(self, field))

    @property
    def run_dir(self) -> Path:
        return self.path("outputs_dir") / self.run

    def section_hash(self, *sections: str) -> str:
        """Stable hash of the named config sections (what a stage's outputs depend on)."""
        data = {s: self.model_dump(mode="json")[s] for s in sections}
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def config_hash(self) -> str:
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()[:16]


def available_presets() -> list[str]:
    return sorted(p.stem for p in PRESETS_DIR.glob("*.toml"))


def _read_preset(name: str, seen: tuple[str, ...] = ()) -> dict[str, Any]:
    path = PRESETS_DIR / f"{name}.toml"
    if not path.exists():
        raise ConfigError(f"unknown preset {name!r}: no file {path} (have: {', '.join(available_presets())})")
    if name in seen:
        raise ConfigError(f"preset {name!r} extends itself through {' -> '.join(seen)}")
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from e
    parent = data.pop("extends", None)
    base = _read_preset(parent, seen + (name,)) if parent else {}
    return _deep_merge(base, data)


def _deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in extra.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = v
    return out


def _nest(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """Turn ``{"chunk.sizes": [1]}`` into ``{"chunk": {"sizes": [1]}}``; nested mappings pass through.
    ``run.<field>`` of the execution section is ``execution.<field>`` (``run`` itself is the run's name)."""
    nested: dict[str, Any] = {}
    for key, value in overrides.items():
        parts = str(key).split(".")
        if len(parts) == 2 and parts[0] == "run" and parts[1] in ExecutionConfig.model_fields:
            parts = ["execution", parts[1]]
        node = nested
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            if not isinstance(node, dict):
                raise ConfigError(f"override {key!r}: {p!r} is not a section")
        if isinstance(value, Mapping):
            node[parts[-1]] = _deep_merge(node.get(parts[-1], {}), _nest(value))
        else:
            node[parts[-1]] = value
    return nested


def parse_set(items: Sequence[str]) -> dict[str, Any]:
    """``--set`` values of the CLIs: ``["a.b=1", "c=[1,2]", "d=none"]`` -> overrides for :func:`load_config`;
    values parsed as JSON when they parse."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"--set {item!r}: expected KEY=VALUE")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def load_config(preset: str = "offline", overrides: Mapping[str, Any] | None = None, **top: Any) -> RunConfig:
    """Build the frozen config: preset file, then ``top`` keyword fields, then ``overrides``.

    ``top`` takes plain top-level fields (``data_dir=…, run=…``); ``None`` values are ignored so a
    notebook's parameters cell can pass its defaults through.
    """
    data = _read_preset(preset)
    data["preset"] = preset
    top = {k: v for k, v in top.items() if v is not None}
    data_dir = top.get("data_dir", data.get("data_dir", RunConfig.model_fields["data_dir"].default))
    settings, settings_file = read_dataset_settings(data_dir)
    if settings:
        try:
            RunConfig.model_validate(_deep_merge(data, settings))
        except ValidationError as e:
            raise ConfigError(f"{settings_file}: " + "; ".join(_problems(e))) from None
        data = _deep_merge(data, settings)
    data = _deep_merge(data, top)
    data = _deep_merge(data, _nest(overrides or {}))
    try:
        cfg = RunConfig.model_validate(data)
    except ValidationError as e:
        raise ConfigError(f"config preset {preset!r}: " + "; ".join(_problems(e))) from None
    _check_files(cfg, preset)
    return cfg


def _problems(e: ValidationError) -> list[str]:
    problems = []
    for err in e.errors():
        loc = ".".join(str(x) for x in err["loc"])
        if err["type"] == "extra_forbidden":
            problems.append(f"unknown key {loc!r}")
        elif not err["loc"]:  # a rule across sections (RunConfig's validators): its message says it all
            problems.append(err["msg"].removeprefix("Value error, "))
        else:
            problems.append(f"bad value for {loc!r}: {err['msg']} (got {err.get('input')!r})")
    return problems


def read_dataset_settings(data_dir: str | Path) -> tuple[dict[str, Any], Path]:
    """``(settings, file)``: the dataset folder's :data:`DATASET_SETTINGS` as a nested mapping (``{}`` when the
    folder has none). Raises :class:`ConfigError` naming the file for bad TOML or a key naming the run's places."""
    path = project_path(data_dir) / DATASET_SETTINGS
    if not path.is_file():
        return {}, path
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from e
    bad = [k for k in _NOT_DATASET_KEYS if k in data]
    if bad:
        raise ConfigError(f"{path}: a dataset's settings may not set {', '.join(bad)} (the run's command does)")
    return data, path


def looks_like_model_file(name: str) -> bool:
    """True when a model setting (``llm.gguf``) names a file (``*.gguf`` or a path) rather than a key of the
    weights table (:data:`rag.models.weights.GGUF`, whose keys are neither)."""
    return name.lower().endswith(".gguf") or "/" in name or os.sep in name


def model_file_candidates(name: str, models_dir: Path | str | None = None) -> list[Path]:
    """Where a model file given by path is looked for, in order: as given (absolute, or relative to the
    working directory), in ``models_dir`` (default: the config's), under the project root."""
    p = Path(name).expanduser()
    if p.is_absolute():
        return [p]
    models = Path(models_dir) if models_dir else PROJECT_ROOT / RunConfig().models_dir
    return list(dict.fromkeys([Path.cwd() / p, models / p, PROJECT_ROOT / p]))


def missing_model_file(name: str, models_dir: Path | str | None = None) -> str:
    """"" when the model file ``name`` (a path) is found, else what was tried (one line)."""
    cands = model_file_candidates(name, models_dir)
    if any(c.is_file() for c in cands):
        return ""
    return f"llm.gguf={name!r}: no such file (looked at {', '.join(map(str, cands))})"


def _check_files(cfg: RunConfig, preset: str) -> None:
    """Model files the config names by path must exist (a key of the weights table is made by `make models`
    and checked when used)."""
    if cfg.llm.backend == "llama_cpp" and looks_like_model_file(cfg.llm.gguf):
        missing = missing_model_file(cfg.llm.gguf, cfg.path("models_dir"))
        if missing:
            raise ConfigError(f"config preset {preset!r}: bad value for 'llm.gguf': " + missing)