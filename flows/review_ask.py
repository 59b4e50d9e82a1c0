"""`ldx ask ... --html FILE`: the answers as a page, each citation shown on its page image with its block's
box drawn (one box per page the block covers; the page images go to FILE's folder, in `<FILE stem>_pages/`,
rendered as flows.review_pages renders the document pages'). A citation of a non-PDF document shows its
text alone.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

from flows.review_data import page_boxes
from flows.review_docs import TEMPLATES
from flows.review_pages import PageRenderer, PageView, box_on_image
from pipeline.store import atomic_write_text, open_duckdb

MAX_PAGES_PER_CITATION = 2  # a block runs over at most this many shown pages

# The latest run's row of each cited segment, with its block's boxes, and each cited document's source.
_BLOCKS_SQL = """
SELECT s.segment_id, b.block_idx, b.page, b.bbox, b.spans
FROM segments s JOIN blocks b ON b.doc_id = s.doc_id AND b.block_idx = s.block_idx AND b.run_id = s.run_id
WHERE list_contains(?, s.segment_id)
QUALIFY row_number() OVER (PARTITION BY s.segment_id ORDER BY s.run_id DESC) = 1
"""
_SOURCES_SQL = """
SELECT doc_id, source FROM documents WHERE list_contains(?, doc_id)
QUALIFY row_number() OVER (PARTITION BY doc_id ORDER BY run_id DESC) = 1
"""


def _views(renderer: PageRenderer, citation, block, source: str | None, base: Path) -> list[PageView]:
    block_idx, boxes = block
    views = []
    for page in list(dict.fromkeys(pg for pg, _ in boxes))[:MAX_PAGES_PER_CITATION]:
        got = renderer.render(citation.doc_id, source, page)
        if got is None:
            continue
        path, width, height = got
        view = PageView(page, quote(Path(os.path.relpath(path, base)).as_posix()), width, height)
        label = f"{citation.segment_id} {citation.block_type}"
        view.boxes = [box_on_image(bbox, block_idx, label, True) for pg, bbox in boxes if pg == page]
        views.append(view)
    return views


def write_ask_page(path: Path, out_dir: Path, answers: list) -> Path:
    """Write `answers` (retrieval.ask.Answer) over the run in `out_dir` as the page `path`."""
    path = Path(path).resolve()
    cited = [c for a in answers for c in a.citations]
    con = open_duckdb(out_dir)
    blocks = {
        sid: (idx, page_boxes(page, bbox, spans))
        for sid, idx, page, bbox, spans in con.execute(
            _BLOCKS_SQL, [sorted({c.segment_id for c in cited}) or [""]]
        ).fetchall()
    }
    sources = dict(con.execute(_SOURCES_SQL, [sorted({c.doc_id for c in cited}) or [""]]).fetchall())
    renderer = PageRenderer(path.parent / f"{path.stem}_pages")
    shown = []
    for answer in answers:
        items = []
        for n, c in enumerate(answer.citations, 1):
            block = blocks.get(c.segment_id) or (None, page_boxes(c.page, c.bbox, None))
            views = _views(renderer, c, block, sources.get(c.doc_id), path.parent)
            items.append({"n": n, "c": c, "pages": views})
        shown.append({"a": answer, "citations": items})
    atomic_write_text(path, TEMPLATES.get_template("ask.html.j2").render(answers=shown, index=str(out_dir)))
    return path
