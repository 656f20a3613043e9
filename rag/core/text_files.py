"""Text files a user writes (questions.json, subset.csv, pdf_dirs.txt): read as UTF-8, with or without a BOM.

Contract: ``read_utf8(path) -> str`` (a leading UTF-8 BOM dropped); a file that is not UTF-8 raises
:class:`NotUtf8` (a ValueError) whose message is one line naming the file, the first bad byte, its offset and
line, and the fix. Why no silent fallback to latin-1: a company name read with the wrong encoding would route
nothing and look like a model error; saying so costs the user one re-save (issue 45: a latin-1 questions.json
gave a raw UnicodeDecodeError traceback, exit 1).
"""
from __future__ import annotations

import codecs
from pathlib import Path


class NotUtf8(ValueError):
    """A text file that does not decode as UTF-8; the message is the one line to print."""


def read_utf8(path: Path | str) -> str:
    """The file's text (UTF-8, BOM dropped); raises :class:`NotUtf8` (see module docstring)."""
    path = Path(path)
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise NotUtf8(not_utf8_message(path, data, e)) from None


def not_utf8_message(path: Path, data: bytes, e: UnicodeDecodeError) -> str:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        what = "UTF-16 text (it starts with a UTF-16 byte order mark)"
    else:
        line = data.count(b"\n", 0, e.start) + 1
        what = f"byte 0x{data[e.start]:02x} at offset {e.start} (line {line}) is not UTF-8"
    return f"{path}: {what}; save it as UTF-8 (e.g. iconv -f latin1 -t utf-8, or your editor's 'Save as UTF-8')"
