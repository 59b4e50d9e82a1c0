"""`ldx review`: report.html, the flag queue and the document pages from a run's Parquet, and `ldx ask
--html`, each opened in headless Chromium: no console errors, a screenshot per view, and the boxes drawn on
the page images where the Parquet bboxes put them."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import unquote

import numpy as np
import pytest
from PIL import Image
from typer.testing import CliRunner

from flows.cli import app
from flows.config import LdxConfig
from flows.manifest import finish_manifest, start_manifest
from flows.report import figures, write_report
from flows.review_docs import doc_href
from flows.review_pages import MAX_PAGES_PER_DOC, SCALE, PageRenderer, safe_name
from flows.tasks import FileWork, InputFile, sha256_file, write_parts
from pipeline import load_documents, segment
from pipeline.errors import CorruptDocument
from pipeline.store import OutputStore, open_duckdb
from retrieval.predict.config import PredictConfig
from retrieval.predict.stage import predict_stage
from retrieval.stages import DocWork
from tests.test_flow import write_jsonl_slice

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine")
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--force-device-scale-factor=1",
]
BAR_RGB = (0x44, 0x72, 0xC4)  # the figures' bar colour
MARK_RGB = (0xFF, 0x00, 0xFF)  # a flagged or cited block's box (flows/templates/style.css.j2)
FRAME_RGB = (0x00, 0xA8, 0x44)  # the frame around a page image
# real judgments on paper: an English opinion whose proviso is flagged, a Chinese criminal case report
PDFS = ("en/judgments/us_opinions_pdf/mo_ct_app_ed108783.pdf", "zh/pdf/杨某海交通肇事案.pdf")


def _work(path: Path, cfg: LdxConfig) -> FileWork:
    work = FileWork(InputFile(str(path), sha256_file(path), path.stat().st_size))
    work.docs = [DocWork(d, segments=segment(d, cfg.segment)) for d in load_documents(path, cfg.parse)]
    return work


@pytest.fixture(scope="module")
def out_dir(shared_data, tmp_path_factory) -> Path:
    """A run's outputs written through the same store and rows as the flow, from real judgments (JSONL and
    PDF), with the predict stage's rows (the text-only role head: the encoder's twin costs more CPU)."""
    tmp = tmp_path_factory.mktemp("report")
    src = tmp / "criminal.jsonl"
    write_jsonl_slice(shared_data, src, 8)
    out = tmp / "out"
    cfg = LdxConfig()
    store = OutputStore(out, "r-test")
    works = [_work(p, cfg) for p in (src, *(shared_data / p for p in PDFS))]
    works[0].fail(str(src), "parse", CorruptDocument(f"{src}:9", "not a JSON line"))
    docs = [d for w in works for d in w.docs]
    config = PredictConfig(role_encoder=False, connective_attention=False)
    preds = predict_stage([d.document for d in docs], [s for d in docs for s in d.segments], config)
    for d in docs:
        d.predictions = [p for p in preds if p.doc_id == d.document.doc_id]
    for w in works:
        write_parts(store, w)
    manifest = start_manifest(out, tmp, "r-test", None, cfg, {"id": ""}, "fp", None)
    counts = {"documents": len(docs), "segments": sum(len(d.segments) for d in docs), "errors": 1}
    finish_manifest(out, manifest, "completed", counts, {"parse": 1.0, "segment": 0.5, "write": 0.1})
    result = CliRunner().invoke(app, ["review", str(out), "--no-open"])
    assert result.exit_code == 0, result.output
    return out


def _chromium(url: str, tmp: Path, size: str) -> tuple[list[str], np.ndarray]:
    """The console lines a page logs while it loads, and its screenshot (rows x columns x RGB)."""
    shot = tmp / f"shot-{len(list(tmp.glob('shot-*')))}.png"
    proc = subprocess.run(
        [
            CHROMIUM,
            *FLAGS,
            f"--user-data-dir={tmp / 'profile'}",
            "--enable-logging=stderr",
            "--v=0",
            f"--window-size={size}",
            f"--screenshot={shot}",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    return console, np.asarray(Image.open(shot).convert("RGB"), dtype=np.int16)


def _dom(url: str, tmp: Path) -> str:
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp / 'profile'}", "--dump-dom", url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout


def _near(img: np.ndarray, rgb, tol=40) -> np.ndarray:
    """The pixels within `tol` of the colour on every channel."""
    return (np.abs(img - np.array(rgb, dtype=np.int16)) < tol).all(axis=-1)


def test_figure_queries_run_as_shown_inside_out_dir(out_dir):
    con = open_duckdb(out_dir)
    con.execute("SET file_search_path = ?", [str(out_dir)])
    kinds = dict(con.execute(figures("r-test")[0].sql).fetchall())
    assert kinds == dict(con.execute("SELECT kind, count(*) FROM documents GROUP BY kind").fetchall())
    assert sum(kinds.values()) == 10
    # a histogram's query returns (value, count) rows, as many as distinct values, not one per row
    lengths = next(f for f in figures("r-test") if f.table == "segments")
    rows = con.execute(lengths.sql).fetchall()
    assert sum(n for _, n in rows) == con.execute("SELECT count(*) FROM segments").fetchone()[0] > len(rows)


@needs_chromium
def test_review_writes_a_page_that_chromium_renders_without_errors(out_dir, tmp_path):
    page = out_dir / "report.html"
    html = page.read_text(encoding="utf-8")
    assert "http://" not in html and "https://" not in html  # self-contained: nothing to fetch
    # kinds, block types, segment lengths, errors, predictions per task, scores
    assert html.count("data:image/svg+xml;base64,") == 6
    assert "read_parquet(&#39;segments/run_id=r-test/*.parquet&#39;)" in html  # autoescaped (markupsafe)
    console, img = _chromium(page.as_uri(), tmp_path, "1200,3000")
    assert console == []
    dom = _dom(page.as_uri(), tmp_path)
    assert len(re.findall(r"<figure>", dom)) == 6
    links = set(re.findall(r'<a href="(review/docs/[0-9a-f]{16}\.html)">', dom))
    assert len(links) == 10 and all((out_dir / link).is_file() for link in links)  # every document's page
    assert '<input id="filter"' in dom
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 50  # not blank
    assert _near(img, BAR_RGB, 12).sum() > 500  # the plots are on screen


@needs_chromium
def test_flag_queue_lists_every_flag_by_score_and_filters_in_the_page(out_dir, tmp_path):
    con = open_duckdb(out_dir)
    flags = con.execute(
        "SELECT task, score FROM predictions WHERE task LIKE 'consistency:%' OR task IN "
        "('block_role_disagrees', 'proviso', 'near_duplicate', 'shared_passage')"
    ).fetchall()
    tasks = {t for t, _ in flags}
    assert "proviso" in tasks and len(flags) >= 2
    url = (out_dir / "report.html").as_uri()
    console, _ = _chromium(url + "#flags?task=proviso", tmp_path, "1200,1600")
    assert console == []
    dom = _dom(url + "#flags?task=proviso", tmp_path)
    rows = re.findall(r'<tr data-task="([^"]*)"[^>]*?( style="display: none;")?><td>([0-9.]+)</td>', dom)
    assert len(rows) == len(flags)
    scores = [float(s) for _, _, s in rows]
    assert scores == sorted(scores, reverse=True)
    shown = [t for t, hidden, _ in rows if not hidden]
    assert shown == ["proviso"] * sum(t == "proviso" for t, _ in flags)
    assert f"{len(shown)} of {len(flags)} flags shown" in dom
    hrefs = re.findall(r'<a href="(review/docs/[^"#]+)#(pred-[0-9a-f]{12})">', dom)
    assert len(hrefs) == len(flags)
    for path, anchor in hrefs:  # each flag opens its row on its document's page
        assert f'<tr id="{anchor}">' in (out_dir / path).read_text(encoding="utf-8")


def _first_frame(img: np.ndarray) -> tuple[int, int]:
    """Top-left pixel of the first page image: inside the topmost frame's 2-px border."""
    frame = _near(img, FRAME_RGB, 30)
    rows = np.flatnonzero(frame.sum(axis=1) > 200)  # a frame's top edge, not a stray pixel
    assert rows.size, "no page image on screen"
    y = int(rows[0])
    return int(np.flatnonzero(frame[y])[0]) + 2, y + 2


def _marked_rects(con, doc_id: str, page: int, tasks_sql: str) -> list[tuple[int, int, int, int]]:
    """From the Parquet alone: the pixel rectangles, on the shown image of `page`, of the blocks the
    document's predictions (other than block roles) cite."""
    rows = con.execute(
        "SELECT DISTINCT b.block_idx, s.bbox FROM predictions p, unnest(p.evidence) AS e(ev), blocks b, "
        "unnest(b.spans) AS sp(s) WHERE p.doc_id = ? AND b.doc_id = p.doc_id AND " + tasks_sql + " AND "
        "ev.char_start IS NOT NULL AND b.char_start < ev.char_end AND b.char_end > ev.char_start AND s.page = ?",
        [doc_id, page],
    ).fetchall()
    return [tuple(round(v * SCALE) for v in bbox) for _, bbox in rows]


def _edges_drawn(marks: np.ndarray, rect) -> bool:
    """Each of the rectangle's four sides has the mark colour along 80% of its length, within 3 px of it
    (the border is 3 px wide, inside the box)."""
    x0, y0, x1, y1 = rect
    y1 = min(y1, marks.shape[0])  # a box running past the screenshot's bottom

    def along(strip: np.ndarray, axis: int) -> float:
        return strip.any(axis=axis).mean() if strip.size else 0.0

    sides = [
        along(marks[max(0, y0 - 3) : y0 + 4, x0:x1], 0),  # top
        along(marks[y0:y1, max(0, x0 - 3) : x0 + 4], 1),  # left
        along(marks[y0:y1, max(0, x1 - 4) : x1 + 3], 1),  # right
    ]
    if y1 == rect[3]:
        sides.append(along(marks[max(0, y1 - 4) : y1 + 3, x0:x1], 0))  # bottom
    return min(sides) >= 0.8


def _check_marks(img: np.ndarray, origin, size, rects) -> None:
    """The mark colour draws every expected rectangle (image pixels) and nothing far outside them."""
    ox, oy = origin
    marks = _near(img[oy : oy + size[1], ox : ox + size[0]], MARK_RGB)
    assert rects and marks.any()
    near = np.zeros_like(marks)
    for rect in rects:
        assert _edges_drawn(marks, rect), rect
        x0, y0, x1, y1 = rect
        near[max(0, y0 - 3) : y1 + 3, max(0, x0 - 3) : x1 + 3] = True
    assert (marks & ~near).sum() < 20  # no box where the Parquet puts none


def _doc_id(con, suffix: str) -> str:
    return con.execute("SELECT doc_id FROM documents WHERE ends_with(source, ?)", [suffix]).fetchone()[0]


def _first_view(html: str) -> tuple[int, str, tuple[int, int]]:
    page, src, w, h = re.search(
        r'data-page="(\d+)"[^>]*>\s*<img src="([^"]+)" width="(\d+)" height="(\d+)"', html
    ).groups()
    return int(page) - 1, src, (int(w), int(h))


@needs_chromium
def test_a_pdf_document_page_draws_its_cited_blocks_where_the_parquet_bbox_says(out_dir, tmp_path):
    con = open_duckdb(out_dir)
    doc_id = _doc_id(con, Path(PDFS[0]).name)
    page_file = out_dir / doc_href(doc_id)
    html = page_file.read_text(encoding="utf-8")
    srcs = re.findall(r'<img src="([^"]+)"', html)
    assert 1 <= len(srcs) <= MAX_PAGES_PER_DOC
    assert all(not s.startswith("/") and (page_file.parent / unquote(s)).is_file() for s in srcs)
    assert "<mark" in html and 'class="flag">proviso' in html  # the evidence highlighted, the flag listed
    page, _, size = _first_view(html)
    console, img = _chromium(page_file.as_uri(), tmp_path, "1400,2400")
    assert console == []
    rects = _marked_rects(con, doc_id, page, "p.task <> 'block_role'")
    _check_marks(img, _first_frame(img), size, rects)


def test_pages_render_lazily_and_only_from_the_bytes_the_run_read(out_dir, tmp_path):
    pages = out_dir / "review" / "pages"
    shown = {
        unquote(s).rsplit("/", 1)[-1]
        for f in (out_dir / "review" / "docs").glob("*.html")
        for s in re.findall(r'<img src="([^"]+)"', f.read_text(encoding="utf-8"))
    }
    assert shown and {p.name for p in pages.glob("*.png")} == shown  # only the pages shown are rendered
    before = {p.name: p.stat().st_mtime_ns for p in pages.glob("*.png")}
    write_report(out_dir)
    assert {p.name: p.stat().st_mtime_ns for p in pages.glob("*.png")} == before  # kept, not redrawn
    con = open_duckdb(out_dir)
    doc_id, source = con.execute(
        "SELECT doc_id, source FROM documents WHERE ends_with(source, '.pdf')"
    ).fetchone()
    renderer = PageRenderer(tmp_path / "pages")
    assert renderer.render("0" * 16, source, 0) is None  # another document's id: not these bytes
    assert renderer.render(doc_id, source + ".missing", 0) is None
    assert safe_name(doc_id) == doc_id and re.fullmatch(r"x[0-9a-f]{16}", safe_name("../../etc/x.html"))
    jsonl = con.execute("SELECT doc_id FROM documents WHERE contains(source, '.jsonl:')").fetchone()[0]
    text_only = (out_dir / doc_href(jsonl)).read_text(encoding="utf-8")
    assert "<img" not in text_only and "not a PDF" in text_only and 'id="block-0"' in text_only


def _one_document_page(src: Path, out: Path) -> Path:
    """The review page of the one document in `src`, written through the run's store and report."""
    cfg = LdxConfig()
    write_parts(OutputStore(out, "r1"), _work(src, cfg))
    finish_manifest(
        out, start_manifest(out, src.parent, "r1", None, cfg, {"id": ""}, "fp", None), "completed", {}, {}
    )
    write_report(out)
    (page,) = (out / "review" / "docs").glob("*.html")
    return page


def test_document_text_reaches_the_pages_escaped(tmp_path):
    src = tmp_path / "in" / "note.txt"
    src.parent.mkdir()
    src.write_text("The court held <script>alert('x')</script> void & \"final\".\n\nAppeal dismissed.\n")
    page = _one_document_page(src, tmp_path / "out")
    html = page.read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in html and "<script>alert" not in html
    assert "<th>kind</th>" in html and "<th>court</th>" not in html  # what a note does not state is left out
    assert (
        "&amp;" in html
        and "<script"
        not in (tmp_path / "out" / "report.html").read_text(encoding="utf-8").split("</main>")[0]
    )


@needs_chromium
def test_ask_html_shows_each_citation_on_its_page_with_its_box(out_dir, tmp_path):
    con = open_duckdb(out_dir)
    doc_id = _doc_id(con, Path(PDFS[0]).name)
    page_file = tmp_path / "answers" / "ask.html"
    res = CliRunner().invoke(
        app,
        ["ask", "--index", str(out_dir), "--doc", doc_id, "--k", "3", "--json", "--html", str(page_file)],
        input="Was plea counsel ineffective?\n",
    )  # questions from stdin: one JSON line per answer
    assert res.exit_code == 0, res.output
    answer = json.loads(next(line for line in res.output.splitlines() if line.startswith("{")))
    first = answer["citations"][0]
    html = page_file.read_text(encoding="utf-8")
    assert html.count('class="citation cols"') == len(answer["citations"]) == 3
    srcs = re.findall(r'<img src="([^"]+)"', html)
    assert srcs and all((page_file.parent / unquote(s)).is_file() for s in srcs)
    page, _, size = _first_view(html)
    console, img = _chromium(page_file.as_uri(), tmp_path, "1400,2000")
    assert console == []
    seg = first["segment_id"]
    rects = [
        tuple(round(v * SCALE) for v in bbox)
        for (bbox,) in con.execute(
            "SELECT s.bbox FROM segments g, blocks b, unnest(b.spans) AS sp(s) WHERE g.segment_id = ? "
            "AND b.doc_id = g.doc_id AND b.block_idx = g.block_idx AND s.page = ?",
            [seg, page],
        ).fetchall()
    ]
    assert page == first["page"]
    _check_marks(img, _first_frame(img), size, rects)


def test_a_patents_page_states_its_front_page(tmp_path):
    src = tmp_path / "in" / "valve.txt"
    src.parent.mkdir()
    src.write_text(
        "United States Patent\n(54) VALVE ASSEMBLY\n(75) Inventor: Ada B. Marsh, Leeds (GB)\n"
        "(73) Assignee: Northwind Valves Ltd., Leeds (GB)\n(22) Filed:\nMar. 3, 1999\n"
        "US006000123B1\n(45) Date of Patent: Jun. 5, 2001\n\nABSTRACT\n\nA valve assembly for a pressure "
        "vessel.\n\nWhat is claimed is:\n\n1. A valve assembly comprising a seat and a stem.\n"
    )
    page = _one_document_page(src, tmp_path / "out")
    rows = dict(re.findall(r"<tr><th>([^<]+)</th><td>([^<]*)</td></tr>", page.read_text(encoding="utf-8")))
    assert rows["kind"] == "patent" and rows["patent number"] == "6000123"
    assert (rows["date"], rows["filed"]) == ("2001-06-05", "1999-03-03")
    assert rows["parties"] == "Ada B. Marsh (inventor); Northwind Valves Ltd. (assignee)"
    assert "court" not in rows
