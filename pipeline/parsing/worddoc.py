"""The court site's `.doc` downloads (裁判文书网): an OLE2 container whose WordDocument stream holds
GBK-encoded HTML rather than a Word binary. Each block-level HTML element is a paragraph."""

from __future__ import annotations

import re
from pathlib import Path

import olefile
from lxml import etree, html

from pipeline.config import ParseConfig
from pipeline.errors import CorruptDocument, DocumentError, EmptyDocument, OverLimit, UnsupportedFormat
from pipeline.parsing.layout import clean_line
from pipeline.parsing.spans import Extracted, TextBuilder

_BLOCKS = ("p", "div", "h1", "h2", "h3", "h4", "h5", "h6", "li", "td", "tr", "table", "body")
_CHARSET = re.compile(rb"charset\s*=\s*[\"']?([A-Za-z0-9_-]+)", re.IGNORECASE)
_WS = re.compile(r"[ \t\r\n\xa0]+")


def _decode(data: bytes, source: str) -> str:
    declared = _CHARSET.search(data[:2048])
    encodings = [declared.group(1).decode()] if declared else []
    for enc in [*encodings, "gb18030", "utf-8"]:
        try:
            return data.decode("gb18030" if enc.lower() in ("gbk", "gb2312") else enc)
        except (UnicodeDecodeError, LookupError):
            continue
    raise UnsupportedFormat(source, "HTML inside the .doc is neither GBK nor UTF-8")


def paragraphs(markup: str) -> list[str]:
    root = html.fromstring(markup)
    out = []
    for el in root.iter(*_BLOCKS):
        if any(child.tag in _BLOCKS for child in el.iterdescendants()):
            continue  # a container: its block children are read on their own
        if text := clean_line(_WS.sub(" ", el.text_content())):  # 民 事 裁 定 书 → 民事裁定书
            out.append(text)
    return out


def _word_stream(path: Path, limit: int) -> bytes:
    source = str(path)
    try:
        with olefile.OleFileIO(str(path)) as ole:
            if not ole.exists("WordDocument"):
                raise UnsupportedFormat(
                    source, "OLE file without a WordDocument stream (not a Word document)"
                )
            if ole.get_size("WordDocument") > limit:
                raise OverLimit(source, "WordDocument stream over parse.max_decompressed_bytes")
            return ole.openstream("WordDocument").read()
    except DocumentError:
        raise
    # olefile trips over junk after a valid header with whatever its parsing met (ValueError, struct.error,
    # IndexError, ...): every one of them means a damaged container
    except Exception as e:  # noqa: BLE001
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise CorruptDocument(source, f"damaged OLE container ({reason[:200]})") from None


def read_doc(path: Path, config: ParseConfig) -> Extracted:
    source = str(path)
    data = _word_stream(path, config.max_decompressed_bytes)
    if not data.lstrip()[:1] == b"<":
        raise UnsupportedFormat(
            source, "binary Word 97-2003 document; only the court site's HTML .doc is read"
        )
    try:
        texts = paragraphs(_decode(data, source))
    except (etree.ParserError, ValueError) as e:  # markup lxml cannot make a tree of
        raise CorruptDocument(source, f"unreadable HTML inside the .doc ({e})") from None
    b = TextBuilder("\n")
    for text in texts:
        b.add(text)
    if not b.spans:
        raise EmptyDocument(source, "no text in the document")
    return Extracted(text=b.text(), spans=b.spans)
