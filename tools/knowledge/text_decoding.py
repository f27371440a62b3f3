"""A text document's bytes → the text that is parsed, indexed and served, or a CorpusError for bytes that are
not text.

Real documentation folders hold pages saved by editors that were not set to UTF-8: a byte-order mark
(Notepad's UTF-8, PowerShell's UTF-16), Latin-1 or Windows-1252 pages, and now and then a binary file with a
text suffix (an image or archive renamed `.md`). Read as UTF-8 with replacement, these became titles such as
'Caf\ufffd \ufffdberblick', passages of NULs and escape codes, and a page of UTF-16 read as every other byte
NUL. Control characters (NUL, ESC, BEL...) are also cut from text that is otherwise fine: they mean nothing
in a page and would reach clients in every answer that quotes it. Each is replaced by a space, not dropped,
so the text keeps its length and line ends (offsets are computed on this text, never on the bytes).
"""

from __future__ import annotations

import codecs
import re

from .errors import CorpusError

#: Bytes of the opening a file is judged by (git's binary test reads 8,000).
SNIFF_BYTES = 8192
#: Above this share of control characters (or undecodable bytes) in the opening, a file is not text.
BINARY_SHARE = 0.05  # random bytes read as Windows-1252 are 13 % controls; the public sets' 1,759 pages: 0 refused
BINARY_FLOOR = 4

_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),  # UTF-32's LE BOM starts as UTF-16's
         (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))
#: C0 controls but tab, line feed, vertical tab, form feed and carriage return; DEL; the C1 controls (what a
#: Latin-1 reading of Windows-1252's punctuation would leave); and lone surrogates, which cannot be encoded.
_CONTROL = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def decode_text(document_id: str, data: bytes) -> str:
    """The text of a file: UTF-8, UTF-16 or UTF-32 when a BOM says so (the BOM is not part of the text), UTF-16
    without one when its NUL bytes show it, else UTF-8, else Windows-1252 (Latin-1 for the five bytes it leaves
    undefined). Raises CorpusError when the opening is not text; control characters become spaces."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            text = data[len(bom):].decode(codec, errors="replace")
            break
    else:
        codec = _utf16_without_bom(data[:SNIFF_BYTES])
        text = data.decode(codec, errors="replace") if codec else _utf8_or_windows_1252(data)
    if not _looks_like_text(text[:SNIFF_BYTES]):
        raise CorpusError(f"{document_id}: binary data, not text; not read")
    return scrub_controls(text)


def scrub_controls(text: str) -> str:
    """`text` with each control character (above) a space: same length, same line ends."""
    return _CONTROL.sub(" ", text)


def _utf16_without_bom(opening: bytes) -> str | None:
    """UTF-16 of mostly ASCII text has a NUL in every other byte, on the same side; binary data does not."""
    if len(opening) < 4 or b"\x00" not in opening:
        return None
    even, odd = opening[0::2], opening[1::2]
    if odd.count(0) > 0.4 * len(odd) and even.count(0) < 0.05 * len(even):
        return "utf-16-le"
    if even.count(0) > 0.4 * len(even) and odd.count(0) < 0.05 * len(odd):
        return "utf-16-be"
    return None


def _utf8_or_windows_1252(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    text = data.decode("utf-8", errors="replace")
    replaced = text.count("\ufffd")
    # A UTF-8 page with a stray bad byte keeps its UTF-8 (its accents are right); a page whose non-ASCII bytes
    # mostly fail as UTF-8 was written in a single-byte code page.
    if sum(1 for c in text if c > "\x7f") - replaced > replaced:
        return text
    return _windows_1252(data)


def _windows_1252(data: bytes) -> str:
    # cp1252 leaves 0x81, 0x8D, 0x8F, 0x90 and 0x9D undefined: read those as Latin-1 (C1 controls, scrubbed later).
    return data.decode("cp1252", errors="latin-1-fallback")


def _latin_1_fallback(error: UnicodeError) -> tuple[str, int]:
    assert isinstance(error, UnicodeDecodeError)
    return error.object[error.start:error.end].decode("latin-1"), error.end


codecs.register_error("latin-1-fallback", _latin_1_fallback)


def _looks_like_text(opening: str) -> bool:
    # A short page with a stray control or two is text with a typo, not a binary file.
    suspicious = len(_CONTROL.findall(opening)) + opening.count("\ufffd")
    return suspicious <= max(BINARY_FLOOR, BINARY_SHARE * len(opening))
