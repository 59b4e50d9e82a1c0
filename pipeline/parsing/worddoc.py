"""The court site's `.doc` downloads (裁判文书网): an OLE2 container whose WordDocument stream holds
GBK-encoded HTML rather than a Word binary. Each block-level HTML element is a paragraph."""

from __future__ import annotations

import re
from pathlib import Path

import olefile
from lxml import html

from pipeline.errors import CorruptDocument, EmptyDocument, UnsupportedFormat
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


def read_doc(path: Path) -> Extracted:
    source = str(path)
    try:
        with olefile.OleFileIO(str(path)) as ole:
            if not ole.exists("WordDocument"):
                raise UnsupportedFormat(source, "OLE file without a WordDocument stream (not a Word document)")
            data = ole.openstream("WordDocument").read()
    except OSError as e:
        raise CorruptDocument(source, f"damaged OLE container ({e})") from None
    if not data.lstrip()[:1] == b"<":
        raise UnsupportedFormat(source, "binary Word 97-2003 document; only the court site's HTML .doc is read")
    b = TextBuilder("\n")
    for text in paragraphs(_decode(data, source)):
        b.add(text)
    if not b.spans:
        raise EmptyDocument(source, "no text in the document")
    return Extracted(text=b.text(), spans=b.spans)
