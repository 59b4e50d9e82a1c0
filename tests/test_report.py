"""`ldx review`: report.html from a run's Parquet, checked in headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.config import LdxConfig
from flows.manifest import finish_manifest, start_manifest
from flows.report import figures
from flows.tasks import FileWork, InputFile, sha256_file, write_parts
from pipeline import load_documents, segment
from pipeline.errors import CorruptDocument
from pipeline.store import OutputStore, open_duckdb
from retrieval.stages import DocWork
from tests.test_flow import write_jsonl_slice

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
BAR_RGB = (0x44, 0x72, 0xC4)  # the figures' bar colour


@pytest.fixture(scope="module")
def out_dir(shared_data, tmp_path_factory) -> Path:
    """A run's outputs written through the same store and rows as the flow, from real judgments."""
    tmp = tmp_path_factory.mktemp("report")
    src = tmp / "criminal.jsonl"
    write_jsonl_slice(shared_data, src, 8)
    out = tmp / "out"
    cfg = LdxConfig()
    store = OutputStore(out, "r-test")
    work = FileWork(InputFile(str(src), sha256_file(src), src.stat().st_size))
    work.docs = [DocWork(d, segments=segment(d, cfg.segment)) for d in load_documents(src, cfg.parse)]
    work.fail(str(src), "parse", CorruptDocument(f"{src}:9", "not a JSON line"))
    write_parts(store, work)
    manifest = start_manifest(out, tmp, "r-test", None, cfg, {"id": ""}, "fp", None)
    counts = {"documents": len(work.docs), "segments": sum(len(d.segments) for d in work.docs), "errors": 1}
    finish_manifest(out, manifest, "completed", counts, {"parse": 1.0, "segment": 0.5, "write": 0.1})
    return out


def test_figure_queries_run_as_shown_inside_out_dir(out_dir):
    con = open_duckdb(out_dir)
    con.execute("SET file_search_path = ?", [str(out_dir)])
    kinds = dict(con.execute(figures("r-test")[0].sql).fetchall())
    assert kinds == dict(con.execute("SELECT kind, count(*) FROM documents GROUP BY kind").fetchall())
    assert sum(kinds.values()) == 8


def test_review_writes_a_page_that_chromium_renders_without_errors(out_dir, tmp_path):
    from flows.cli import app

    result = CliRunner().invoke(app, ["review", str(out_dir), "--no-open"])
    assert result.exit_code == 0, result.output
    page = out_dir / "report.html"
    html = page.read_text(encoding="utf-8")
    assert "http://" not in html and "https://" not in html  # self-contained: nothing to fetch
    assert html.count("data:image/svg+xml;base64,") == 4  # kinds, block types, segment lengths, errors
    assert "read_parquet(&#39;segments/run_id=r-test/*.parquet&#39;)" in html  # autoescaped (markupsafe)

    shot = tmp_path / "shot.png"
    common = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    proc = subprocess.run(
        [
            *common,
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1200,1400",
            f"--screenshot={shot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert console == []
    dom = subprocess.run(
        [*common, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=60
    ).stdout
    assert len(re.findall(r"<figure>", dom)) == 4
    assert dom.count('<details id="doc-') == 8  # every document links to its blocks
    assert '<input id="filter"' in dom

    from PIL import Image

    img = Image.open(shot).convert("RGB")
    pixels = list(img.getdata())
    assert len(set(pixels)) > 50  # not blank
    bars = sum(1 for p in pixels if all(abs(a - b) < 12 for a, b in zip(p, BAR_RGB, strict=True)))
    assert bars > 500  # the plots are on screen
