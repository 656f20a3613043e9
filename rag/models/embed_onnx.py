"""ONNX Runtime for the local embedder (``embed.runtime = "onnx" | "onnx-int8"``): the same vectors, faster on CPU.

Contract:
- :class:`OnnxEmbedder` is a :class:`rag.models.embed_local.LocalEmbedder` whose model runs in ONNX Runtime. It
  embeds as the torch path does: the tokenizer sentence-transformers built for the model (saved with the
  export, its normalizer included), truncation to ``max_seq_length`` = min(model's,
  ``embed.max_input_tokens``) wordpieces incl. [CLS]/[SEP] (``truncation="longest_first"``), the model's
  own pooling and normalization modules (traced into the graph), and both ``long_text`` modes
  (the windows come from ``LocalEmbedder``'s code). fp32 vectors match torch's to cosine >= 0.999
  (tests/test_embed_onnx.py); ``"onnx-int8"`` is the fp32 graph after ONNX Runtime's dynamic int8
  quantization of the weights (cosine ~0.99, measured there and in benchmarks/index.py).
- Export once, offline, from the packaged (or folder) weights: :func:`ensure_export` writes
  ``<models_dir>/onnx/<model>-<sha256 of the weights files, 12 hex>/`` holding ``model.onnx``, the
  tokenizer files and ``export.json`` (max_seq_length, input names, versions); the int8 graph
  (:data:`QUANT_FILE`) is made from ``model.onnx`` on first use. Every file is written to a temp name and
  renamed, and ``export.json`` is written last, so a killed export leaves no folder that looks complete and two
  processes exporting at once both end with the same files. New weights -> a new folder; the torch
  exporter runs only when the folder is missing.
- Speed: within one call, texts are tokenized once, sorted by token count and run in batches of
  ``embed.batch_size`` padded to their own longest text (``LocalEmbedder.sort_window`` batches per
  call); ONNX Runtime runs ``embed.threads`` intra-op threads (0: the cores this process may use) that
  wait passively (no spinning).
- Keys: the runtime is part of every cache key of this embedder (``key_extra``) and of 04's item keys and
  index metas (``rag.core.deps``), so vectors of different runtimes never mix.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path

import numpy as np

from .base import ModelUnavailable
from .embed_local import LocalEmbedder, _local_source, quiet_weight_loading

# Bump when the exported graph or the files beside it change (a new folder is exported).
EXPORT_VERSION = "onnx-export-1"
# ONNX opset of the exported graph (onnxruntime 1.32 runs up to 23; 17 has LayerNormalization).
OPSET = 17
# The int8 graph: uint8 weights quantized per channel (ONNX Runtime dynamic quantization). Measured on 30
# passages of a real report vs the fp32 graph (AVX2 CPU, no VNNI): int8 per tensor min cosine 0.903 (mean
# 0.946: the u8s8 kernels saturate on AVX2), int8 per channel 0.986 / 0.990, uint8 per channel 0.990 / 0.993.
QUANT_FILE = "model.int8-u8pc.onnx"
# Weight files whose bytes name an export (the first ones present, in this order).
_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
_EXPORT_LOCK = threading.Lock()


def weights_hash(folder: Path) -> str:
    """sha256 (hex) of the model folder's weights file(s) and config: what an export is keyed by."""
    h = hashlib.sha256()
    found = [f for f in _WEIGHT_FILES if (folder / f).is_file()]
    if not found:
        raise ModelUnavailable(f"{folder}: no weights file ({' or '.join(_WEIGHT_FILES)}) to export to ONNX")
    for name in (found[0], "config.json"):
        p = folder / name
        if p.is_file():
            h.update(name.encode())
            with open(p, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
    return h.hexdigest()


def _transformer_folder(source: Path) -> Path:
    """The folder holding the transformer's config + weights (a sentence-transformers model may keep them
    in a module subfolder named by modules.json)."""
    modules = source / "modules.json"
    if modules.is_file():
        for m in json.loads(modules.read_text()):
            if m.get("type", "").endswith("Transformer"):
                return source / m.get("path", "")
    return source


def export_dir(models_dir: Path, model_name: str, source: Path) -> Path:
    """``<models_dir>/onnx/<model>-<weights sha256[:12]>`` (the model name made file-safe)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(model_name).name or model_name)
    return Path(models_dir) / "onnx" / f"{safe}-{weights_hash(_transformer_folder(source))[:12]}"


def _atomic_write(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600; the models folder is read by every run
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _export(source: str, out: Path, max_input_tokens: int) -> None:
    """Trace the sentence-transformers model (transformer + pooling + normalize) to ``out/model.onnx``."""
    import torch
    from sentence_transformers import SentenceTransformer

    quiet_weight_loading()
    st = SentenceTransformer(source, device="cpu")
    st.eval()
    class _Graph(torch.nn.Module):  # tensors in, sentence embedding out (what st.forward returns)
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            feats = {"input_ids": input_ids, "attention_mask": attention_mask, "token_type_ids": token_type_ids}
            return self.model(feats)["sentence_embedding"]

    probe = st.tokenizer(["an export probe", "a second, longer probe text for the dynamic axes"],
                         padding=True, return_tensors="pt")
    args = (probe["input_ids"], probe["attention_mask"],
            probe.get("token_type_ids", torch.zeros_like(probe["input_ids"])))
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        onnx_tmp = Path(tmp) / "model.onnx"
        with torch.inference_mode():
            torch.onnx.export(_Graph(st), args, str(onnx_tmp), input_names=["input_ids", "attention_mask",
                              "token_type_ids"], output_names=["sentence_embedding"], opset_version=OPSET,
                              dynamic_axes={n: {0: "batch", 1: "seq"} for n in ("input_ids", "attention_mask",
                                                                               "token_type_ids")}
                              | {"sentence_embedding": {0: "batch"}}, do_constant_folding=True, dynamo=False)
        tok_tmp = Path(tmp) / "tokenizer"
        st.tokenizer.save_pretrained(str(tok_tmp))
        for f in sorted(tok_tmp.iterdir()):
            (out / "tokenizer").mkdir(exist_ok=True)
            _atomic_write(out / "tokenizer" / f.name, f.read_bytes())
        _atomic_write(out / "model.onnx", onnx_tmp.read_bytes())
    meta = {"source": source, "export_version": EXPORT_VERSION, "torch": torch.__version__, "opset": OPSET,
            "max_seq_length": int(st.max_seq_length or max_input_tokens),
            "inputs": list(getattr(st.tokenizer, "model_input_names", ["input_ids", "attention_mask"]))}
    _atomic_write(out / "export.json", json.dumps(meta, indent=1).encode())


def _quantize(fp32: Path, int8: Path) -> None:
    """ONNX Runtime dynamic quantization (8-bit weights per channel, activations quantized per batch at run
    time): see :data:`QUANT_FILE` for why uint8 per channel."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(dir=int8.parent) as tmp:
        out = Path(tmp) / int8.name
        quantize_dynamic(str(fp32), str(out), weight_type=QuantType.QUInt8, per_channel=True)
        _atomic_write(int8, out.read_bytes())


def ensure_export(model_name: str, models_dir: Path, max_input_tokens: int, int8: bool = False,
                  hub: bool = False) -> tuple[Path, Path]:
    """(export folder, graph file) for ``model_name``, exporting / quantizing first when missing."""
    source = Path(_local_source(model_name, hub))
    if not source.is_dir():
        raise ModelUnavailable(f"embed.runtime=onnx needs the model as a folder; {model_name!r} resolves to "
                               f"{source} (a hub name: load it once with the torch runtime, then set embed.model "
                               "to its folder)")
    folder = export_dir(models_dir, model_name, source)
    with _EXPORT_LOCK:
        if not (folder / "export.json").is_file():
            try:
                _export(str(source), folder, max_input_tokens)
            except ModelUnavailable:
                raise
            except Exception as e:  # noqa: BLE001 - any exporter failure: name the model and the folder
                raise ModelUnavailable(f"embed.runtime=onnx: exporting {model_name!r} ({source}) to {folder} "
                                       f"failed: {str(e)[:500]}") from e
        graph = folder / "model.onnx"
        if int8:
            q = folder / QUANT_FILE
            if not q.is_file():
                _quantize(graph, q)
            graph = q
    return folder, graph


class _Model:
    """What ``LocalEmbedder``'s window code reads from a loaded model: ``tokenizer`` and ``max_seq_length``."""

    def __init__(self, tokenizer, max_seq_length: int, session, inputs: list[str]):
        self.tokenizer = tokenizer
        self.max_seq_length = max_seq_length
        self.session = session
        self.inputs = inputs


class OnnxEmbedder(LocalEmbedder):
    """``LocalEmbedder`` with the model in ONNX Runtime (``runtime`` "onnx" or "onnx-int8")."""

    def __init__(self, model_name: str, batch_size: int, max_input_tokens: int, cache, long_text: str = "truncate",
                 long_text_overlap: int = 32, hub: bool = False, runtime: str = "onnx",
                 models_dir: Path | str = "data/models", threads: int = 0):
        super().__init__(model_name, batch_size, max_input_tokens, cache, long_text, long_text_overlap, hub, threads)
        if runtime not in ("onnx", "onnx-int8"):
            raise ValueError(f"OnnxEmbedder runtime must be 'onnx' or 'onnx-int8', not {runtime!r}")
        self.runtime = runtime
        self.models_dir = Path(models_dir)
        self.key_extra = ("runtime", runtime)  # cache keys: vectors of different runtimes never mix
        self.graph_path: Path | None = None

    def _load(self):
        with self._lock:
            if self._model is None:
                import onnxruntime as ort
                from transformers import AutoTokenizer

                folder, graph = ensure_export(self.model_name, self.models_dir, self.max_input_tokens,
                                              int8=self.runtime == "onnx-int8", hub=self.hub)
                meta = json.loads((folder / "export.json").read_text())
                opts = ort.SessionOptions()
                opts.intra_op_num_threads = self.threads
                opts.inter_op_num_threads = 1
                opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
                # Threads wait passively, as llama.cpp's do here (docs/benchmarks.md): a spinning thread
                # holds a core that another process on a shared 2-core machine needs, and its partner waits.
                opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
                try:
                    session = ort.InferenceSession(str(graph), opts, providers=["CPUExecutionProvider"])
                    tok = AutoTokenizer.from_pretrained(str(folder / "tokenizer"))
                except Exception as e:  # noqa: BLE001 - a broken export folder: name it and the fix
                    raise ModelUnavailable(f"embed.runtime={self.runtime}: cannot load {graph} ({str(e)[:300]}); "
                                           f"delete {folder} to export it again") from e
                names = {i.name for i in session.get_inputs()}
                self.graph_path = graph
                # As LocalEmbedder: the smaller of the model's own limit and the configured one (wordpieces).
                self._model = _Model(tok, min(meta["max_seq_length"], self.max_input_tokens), session,
                                     [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in names])
        return self._model

    def _run(self, ids: list[list[int]]) -> np.ndarray:
        """Sentence embeddings of token-id lists (specials included), in batches sorted by length."""
        m = self._load()
        dim = None
        out: list[np.ndarray | None] = [None] * len(ids)
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        for s in range(0, len(order), self.batch_size):
            idx = order[s:s + self.batch_size]
            width = max(len(ids[i]) for i in idx)
            input_ids = np.full((len(idx), width), m.tokenizer.pad_token_id or 0, dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for r, i in enumerate(idx):  # right padding, as the tokenizer pads for the torch path
                input_ids[r, :len(ids[i])] = ids[i]
                mask[r, :len(ids[i])] = 1
            feeds = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
            with self._lock:  # ONNX Runtime already uses its threads; parallel runs only thrash
                vecs = m.session.run(None, {k: feeds[k] for k in m.inputs})[0]
            dim = vecs.shape[1]
            for r, i in enumerate(idx):
                out[i] = vecs[r]
        return np.vstack(out).astype(np.float32, copy=False) if out else np.zeros((0, dim or 0), np.float32)

    def _embed_texts(self, texts: list[str]) -> tuple[np.ndarray, int]:
        m = self._load()
        # As sentence-transformers' Transformer.preprocess: truncation "longest_first" at max_seq_length.
        enc = m.tokenizer(texts, truncation="longest_first", max_length=m.max_seq_length, verbose=False)
        return self._run([list(x) for x in enc["input_ids"]]), 0

    def _embed_pieces(self, pieces: list[list[int]]) -> tuple[np.ndarray, int]:
        return self._run(pieces), 0
