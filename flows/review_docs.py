"""One review page per document (OUT_DIR/review/docs/<doc>.html): its blocks with their types, its
predictions with their evidence highlighted in the text, and the pages that hold flagged or cited blocks
as images with the boxes drawn (flows.review_pages renders them into OUT_DIR/review/pages/).

Which pages are shown, at most MAX_PAGES_PER_DOC per document: the pages of the blocks the flags point
to, highest score first, then those of the other predictions' evidence, then the first page. Documents
are written highest flag first, so that when a review reaches MAX_IMAGES the flagged ones have theirs.
"""

from __future__ import annotations

import bisect
import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, StrictUndefined

from flows.review_data import (
    FLAG_LIST,
    ROLE_TASK,
    BlockRow,
    Pred,
    blocks_by_doc,
    card_text,
    flagged,
    predictions_by_doc,
)
from flows.review_pages import MAX_PAGES_PER_DOC, PageRenderer, PageView, box_on_image, safe_name
from pipeline.store import atomic_write_text

REVIEW_DIR = "review"
# Autoescaped: every value from a document or the manifest reaches the page as text. A None shows empty.
TEMPLATES = Environment(
    loader=PackageLoader("flows", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    finalize=lambda value: "" if value is None else value,
)
CHUNK = 200  # documents read from the tables at a time


def doc_href(doc_id: str) -> str:
    """A document page's address relative to OUT_DIR."""
    return f"{REVIEW_DIR}/docs/{quote(safe_name(doc_id))}.html"


@dataclass
class Mark:
    start: int  # offsets into the block's text
    end: int
    anchor: str
    label: str


@dataclass
class ShownBlock:
    row: BlockRow
    roles: list[str] = field(default_factory=list)
    marks: list[Mark] = field(default_factory=list)

    def pieces(self) -> list[tuple[str, list[str], list[str]]]:
        """(text, labels of the marks over it, anchors starting here) for the block's text cut at every
        mark's edges; overlapping marks each keep their label."""
        text = self.row.text
        cuts = sorted({0, len(text), *(c for m in self.marks for c in (m.start, m.end))})
        out, started = [], set()
        for a, b in zip(cuts, cuts[1:], strict=False):
            over = [m for m in self.marks if m.start <= a and b <= m.end]
            ids = [m.anchor for m in over if m.anchor not in started]
            started.update(ids)
            out.append((text[a:b], [m.label for m in over], ids))
        return out


class DocPage:
    """The shown pieces of one document."""

    def __init__(self, blocks: list[BlockRow], preds: list[Pred]):
        self.blocks = [ShownBlock(b) for b in blocks]
        self.starts = [b.char_start for b in blocks]
        self.preds = sorted(
            (p for p in preds if p.task != ROLE_TASK),
            key=lambda p: (not p.flag, -(p.score or 0.0), p.task, p.segment_id or ""),
        )
        self.cited: dict[str, list[int]] = {}  # prediction anchor -> block indexes its evidence covers
        for p in preds:
            if p.task == ROLE_TASK:
                self._add_role(p)
            else:
                self._add_marks(p)

    def block_at(self, offset: int) -> list[int]:
        i = bisect.bisect_right(self.starts, offset) - 1
        return [i] if i >= 0 and offset < self.blocks[i].row.char_end else []

    def covering(self, a: int, b: int) -> list[int]:
        lo = max(0, bisect.bisect_right(self.starts, a) - 1)
        hi = bisect.bisect_left(self.starts, b)
        return [i for i in range(lo, hi) if self.blocks[i].row.char_end > a]

    def _add_role(self, p: Pred) -> None:
        start = next((e["char_start"] for e in p.evidence if e.get("char_start") is not None), None)
        for i in self.block_at(start) if start is not None else []:
            self.blocks[i].roles.append(f"{p.value} {p.score or 0:.2f}")

    def _add_marks(self, p: Pred) -> None:
        label = f"{p.task}: {p.value}"
        cited = self.cited.setdefault(p.anchor, [])
        for e in p.evidence:
            a, b = e.get("char_start"), e.get("char_end")
            if a is None or b is None:
                continue
            for i in self.covering(a, b):
                blk = self.blocks[i].row
                if i not in cited:
                    cited.append(i)
                if len(blk.text) == blk.char_end - blk.char_start:  # offsets hold for this block's text
                    lo, hi = max(a, blk.char_start) - blk.char_start, min(b, blk.char_end) - blk.char_start
                    self.blocks[i].marks.append(Mark(lo, hi, p.anchor, label))

    def pages_to_show(self) -> list[int]:
        order = [
            pg for p in self.preds for i in self.cited.get(p.anchor, []) for pg, _ in self.blocks[i].row.spans
        ]
        order += [pg for b in self.blocks[:1] for pg, _ in b.row.spans]
        shown: list[int] = []
        for pg in order:
            if pg not in shown and len(shown) < MAX_PAGES_PER_DOC:
                shown.append(pg)
        return shown

    def page_views(
        self, renderer: PageRenderer, doc_id: str, source: str | None, base: Path
    ) -> list[PageView]:
        """The shown pages as images (relative to `base`, the folder of the HTML page) with every block on
        them outlined and the cited ones marked."""
        marked = {i for ids in self.cited.values() for i in ids}
        views = []
        for page in self.pages_to_show():
            got = renderer.render(doc_id, source, page)
            if got is None:
                continue
            path, width, height = got
            src = quote(Path(os.path.relpath(path, base)).as_posix())
            view = PageView(page, src, width, height)
            for i, b in enumerate(self.blocks):
                for pg, bbox in b.row.spans:
                    if pg == page:
                        label = f"block {b.row.block_idx} {b.row.type}"
                        view.boxes.append(box_on_image(bbox, b.row.block_idx, label, i in marked))
            views.append(view)
        return views

    def shown_preds(self, cards: dict) -> list[dict]:
        out = []
        for p in self.preds:
            blocks = [self.blocks[i].row for i in self.cited.get(p.anchor, [])]
            notes = [e["text"] for e in p.evidence if e.get("char_start") is None and e.get("text")]
            out.append(
                {
                    "p": p,
                    "card": card_text(cards, p.task, p.model_id),
                    "blocks": [(b.block_idx, b.type, b.page) for b in blocks],
                    "notes": notes,
                }
            )
        return out


_DOC_SQL = (
    "SELECT doc_id, kind, language, title, source, n_pages, meta.court, meta.case_number, meta.date, "
    "meta.patent_number, meta.filing_date, meta.parties FROM run_documents ORDER BY source, doc_id LIMIT ?"
)


def _top_scores(con) -> dict[str, float]:
    return dict(
        con.execute(
            f"SELECT doc_id, max(score) FROM run_predictions WHERE {flagged('task')} GROUP BY doc_id",
            [FLAG_LIST],
        ).fetchall()
    )


def _meta_facts(court, case_number, date, patent_number, filing_date, parties) -> list[tuple[str, object]]:
    """The header facts a document states (a judgment's court and case number, a patent's number and
    filing date, the parties with their roles), those it does not state left out."""
    named = "; ".join(f"{p['name']} ({p['role']})" if p["role"] else p["name"] for p in parties or [])
    facts = [
        ("court", court),
        ("case number", case_number),
        ("patent number", patent_number),
        ("date", date),
        ("filed", filing_date),
        ("parties", named),
    ]
    return [(k, v) for k, v in facts if v not in (None, "")]


def write_document_pages(con, out_dir: Path, cards: dict, max_docs: int, renderer=None) -> set[str]:
    """Every listed document's page (the first `max_docs` by source); returns the doc ids written."""
    docs = con.execute(_DOC_SQL, [max_docs]).fetchall()
    top = _top_scores(con)
    docs.sort(key=lambda d: -(top.get(d[0]) or -1.0))  # flagged documents first: they get images first
    folder = out_dir / REVIEW_DIR / "docs"
    renderer = renderer or PageRenderer(out_dir / REVIEW_DIR / "pages")
    written = set()
    for n in range(0, len(docs), CHUNK):
        chunk = docs[n : n + CHUNK]
        ids = [d[0] for d in chunk]
        blocks, preds = blocks_by_doc(con, ids), predictions_by_doc(con, ids)
        for doc_id, kind, language, title, source, n_pages, *meta in chunk:
            page = DocPage(blocks[doc_id], preds[doc_id])
            views = page.page_views(renderer, doc_id, source, folder)
            facts = [("doc_id", doc_id), ("kind", kind), ("language", language), *_meta_facts(*meta)]
            facts += [("pages", n_pages), ("source", source)]
            html = TEMPLATES.get_template("document.html.j2").render(
                title=title or source or doc_id,
                facts=facts,
                preds=page.shown_preds(cards),
                pages=views,
                blocks=page.blocks,
                paged=any(b.row.spans for b in page.blocks),
                report="../../report.html",
            )
            atomic_write_text(out_dir / doc_href(doc_id), html)
            written.add(doc_id)
    return written
