"""OCR of single PDF pages (stage 02 fallback for garbled or text-less pages).

Contract:
- ``render_page(pdf, page, scale) -> PIL.Image``: ``page`` is the 1-BASED physical page; ``scale`` is
  pixels per PDF point (1.0 = 72 dpi, 2.0 = 144 dpi).
- ``ink_share(image) -> float``: share of pixels (0..1) that differ clearly from the page background;
  a page below ``cfg.clean.blank_ink_share`` is blank and never OCR'd.
- ``ocr_image(image, ...) -> list[OcrLine]`` and ``ocr_page(pdf, page, ...) -> OcrPage``: rapidocr
  (onnxruntime, the models bundled in the wheel, no network) -> text lines ordered top-to-bottom,
  then left-to-right within a row. Boxes are in rendered-image pixels (origin top-left).
- ``read_pages(pdf, candidates, *, max_pages, budget_s, clock, blank_ink_share=0, **page_kw) -> PagesRead``:
  OCR ``candidates`` one after another in their order, at most ``max_pages`` read (0: no cap; blank images
  are not counted) and none started after ``budget_s`` seconds of ``clock`` (the page that crosses it is
  finished). The pages read do not depend on speed unless the seconds valve stops first
  (``stopped_by == "seconds"``).
- The rapidocr engine is built once per process, thread count and device (``get_engine``): building it
  loads three ONNX models (~1 s). It runs on CUDA only when the run's device is CUDA and onnxruntime has
  its CUDA provider (onnxruntime-gpu installed), else on the CPU.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

# Grey-level difference (0..255) from the background that counts as ink, not paper noise/JPEG grain.
_INK_DELTA = 40
_ENGINES: dict[tuple[int, str], object] = {}
_ENGINE_LOCK = threading.Lock()


class OcrError(RuntimeError):
    """The page could not be rendered or read; the message names the file and page."""


@dataclass(frozen=True)
class OcrLine:
    text: str
    score: float  # recognizer confidence 0..1 (higher = surer)
    box: tuple[float, float, float, float]  # (left, top, right, bottom), image pixels


@dataclass
class OcrPage:
    page: int  # 1-based
    lines: list[str] = field(default_factory=list)  # reading order
    seconds: float = 0.0
    ink: float = 0.0

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


def engine_device() -> str:
    """"cuda[:N]" when the run's device (rag.models.device) is CUDA AND onnxruntime has its CUDA provider
    (the onnxruntime-gpu package), else "cpu" (the CPU onnxruntime never imports torch to decide)."""
    from ..models.device import is_cuda, model_device, onnx_cuda_available

    if not onnx_cuda_available():
        return "cpu"
    dev = model_device()
    return dev if is_cuda(dev) else "cpu"


def get_engine(threads: int = 2):
    """The process-wide rapidocr engine for ``threads`` onnxruntime intra-op threads, on :func:`engine_device`."""
    device = engine_device()
    key = (threads, device)
    with _ENGINE_LOCK:
        if key not in _ENGINES:
            from rapidocr import RapidOCR

            from ..models.device import cuda_index

            params = {
                "Global.log_level": "warning",
                "EngineConfig.onnxruntime.intra_op_num_threads": int(threads),
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
            }
            if device != "cpu":
                params["EngineConfig.onnxruntime.use_cuda"] = True
                params["EngineConfig.onnxruntime.cuda_ep_cfg.device_id"] = cuda_index(device) or 0
            _ENGINES[key] = RapidOCR(params=params)
        return _ENGINES[key]


def render_page(pdf: Path | str, page: int, scale: float):
    """Render 1-based ``page`` of ``pdf`` to an RGB PIL image at ``scale`` pixels per point."""
    import pypdfium2 as pdfium

    try:
        doc = pdfium.PdfDocument(str(pdf))
    except Exception as e:  # pdfium raises PdfiumError with the reason
        raise OcrError(f"{pdf}: cannot open for OCR ({e})") from None
    try:
        if not 1 <= page <= len(doc):
            raise OcrError(f"{pdf}: page {page} out of range 1..{len(doc)}")
        return doc[page - 1].render(scale=scale).to_pil().convert("RGB")
    finally:
        doc.close()


def ink_share(image) -> float:
    """Share of pixels whose grey level differs by more than ``_INK_DELTA`` from the median (background)."""
    a = np.asarray(image.convert("L"), dtype=np.int16)
    if a.size == 0:
        return 0.0
    bg = int(np.median(a))
    return float((np.abs(a - bg) > _INK_DELTA).mean())


def group_rows(lines: list[OcrLine], row_tolerance: float) -> list[list[OcrLine]]:
    """Reading order: rows top-to-bottom, boxes left-to-right inside a row.

    A box joins the current row when its vertical centre is within ``row_tolerance`` times the
    smaller of (its height, the row's smallest box height) of the row's mean centre, so a taller
    heading beside body text does not swallow the next line.
    """
    rows: list[list[OcrLine]] = []
    for ln in sorted(lines, key=lambda x: ((x.box[1] + x.box[3]) / 2, x.box[0])):
        yc = (ln.box[1] + ln.box[3]) / 2
        h = ln.box[3] - ln.box[1]
        if rows:
            last = rows[-1]
            ryc = sum((x.box[1] + x.box[3]) / 2 for x in last) / len(last)
            rh = min(x.box[3] - x.box[1] for x in last)
            if abs(yc - ryc) <= row_tolerance * max(1e-6, min(h, rh)):
                last.append(ln)
                continue
        rows.append([ln])
    return [sorted(row, key=lambda x: x.box[0]) for row in rows]


def rows_text(lines: list[OcrLine], row_tolerance: float) -> list[str]:
    """One text line per visual row, boxes joined by a space."""
    return [" ".join(x.text for x in row) for row in group_rows(lines, row_tolerance)]


def ocr_image(image, threads: int = 2, min_score: float = 0.5) -> list[OcrLine]:
    """Text boxes of ``image`` (PIL or ndarray) with confidence >= ``min_score`` (unordered)."""
    engine = get_engine(threads)
    arr = np.asarray(image.convert("RGB"))[:, :, ::-1] if hasattr(image, "convert") else image  # RGB -> BGR
    res = engine(np.ascontiguousarray(arr))
    if res is None or getattr(res, "txts", None) is None or res.boxes is None:
        return []
    out = []
    for box, txt, score in zip(res.boxes, res.txts, res.scores):
        if not txt or not txt.strip() or float(score) < min_score:
            continue
        pts = np.asarray(box, dtype=float).reshape(-1, 2)
        out.append(OcrLine(txt.strip(), float(score),
                           (float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max()))))
    return out


def ocr_page(pdf: Path | str, page: int, *, scale: float = 2.0, threads: int = 2, min_score: float = 0.5,
             row_tolerance: float = 0.5, blank_ink_share: float = 0.0) -> OcrPage:
    """Render and OCR one 1-based page; a page with ink share below ``blank_ink_share`` returns no lines."""
    t0 = time.perf_counter()
    img = render_page(pdf, page, scale)
    ink = ink_share(img)
    if ink < blank_ink_share:
        return OcrPage(page=page, lines=[], seconds=round(time.perf_counter() - t0, 3), ink=ink)
    try:
        boxes = ocr_image(img, threads=threads, min_score=min_score)
    except Exception as e:  # onnxruntime / rapidocr failure: name the page
        raise OcrError(f"{pdf}: OCR of page {page} failed: {type(e).__name__}: {e}") from e
    lines = rows_text(boxes, row_tolerance)
    return OcrPage(page=page, lines=lines, seconds=round(time.perf_counter() - t0, 3), ink=ink)


@dataclass
class PagesRead:
    texts: dict[int, str] = field(default_factory=dict)  # 1-based page -> OCR text, in candidate order
    errors: list[str] = field(default_factory=list)  # pages that failed (they count as read)
    blank: list[int] = field(default_factory=list)  # pages whose image was blank (not read, not counted)
    skipped: int = 0  # candidates never started
    stopped_by: str = ""  # "pages" (the cap), "seconds" (the valve) or "" (every candidate tried)
    seconds: float = 0.0


def read_pages(pdf: Path | str, candidates: list[int], *, max_pages: int, budget_s: float,
               clock: Callable[[], float], blank_ink_share: float = 0.0, **page_kw) -> PagesRead:
    """OCR ``candidates`` (1-based pages, in plan order): see the module contract. ``page_kw`` goes to
    :func:`ocr_page` (scale, threads, min_score, row_tolerance)."""
    out = PagesRead()
    start = clock()
    read = 0  # pages whose image went through OCR (errors included: they were tried)
    for n, page in enumerate(candidates):
        stop = "pages" if max_pages and read >= max_pages else "seconds" if clock() - start >= budget_s else ""
        if stop:
            out.skipped, out.stopped_by = len(candidates) - n, stop
            break
        try:
            res = ocr_page(pdf, page, blank_ink_share=blank_ink_share, **page_kw)
        except OcrError as e:
            out.errors.append(str(e))
            read += 1
            continue
        if not res.lines and res.ink < blank_ink_share:
            out.blank.append(page)
            continue
        read += 1
        out.texts[page] = res.text
    out.seconds = round(clock() - start, 3)
    return out
