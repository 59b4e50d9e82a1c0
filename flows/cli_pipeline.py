"""`ldx parse` (and `ldx tokenizer …`): the pipeline's commands."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from flows.cli import app
from flows.cli_common import ConfigOpt, SetOpt, console, existing_path, fail, plain, resolve_config, safe
from pipeline.errors import DocumentError


def _document_json(doc) -> dict:
    data = asdict(doc)
    data["kind"] = str(doc.kind)
    data["meta"]["date"] = doc.meta.date.isoformat() if doc.meta.date else None
    data["meta"]["filing_date"] = doc.meta.filing_date.isoformat() if doc.meta.filing_date else None
    for b in data["blocks"]:
        b["type"] = str(b["type"])
        b["spans"] = [{"page": page, "bbox": list(box)} for page, box in b["spans"]]
    return data


@app.command("parse")
def parse_command(
    file: Annotated[
        Path, typer.Argument(help="A PDF, .txt, .jsonl (first record), USPTO/EP/LegalDocML XML or .doc file.")
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the document and its blocks as one JSON object.")
    ] = False,
    max_chars: Annotated[
        int, typer.Option(help="Characters of each block shown in the table (0 = all).")
    ] = 100,
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Parse one document into typed blocks (type, page, text) with its header metadata."""
    # start-up: the parsers add ~0.16 s to every `ldx` command (0.4 s alone; timed after `import flows.cli`)
    from pipeline.parsing import parse_file

    cfg = resolve_config(config, set_)
    existing_path(file)
    try:
        doc = parse_file(file, cfg.parse)
    except DocumentError as e:
        fail(f"{type(e).__name__}: {e}")
    if as_json:
        print(json.dumps(_document_json(doc), ensure_ascii=False, default=str))
        return
    meta = {k: v for k, v in asdict(doc.meta).items() if v not in (None, [])}
    # Everything from the document (title, path, metadata, text) is printed as literal text.
    console.print(
        plain(doc.title or doc.source, "bold"),
        f" kind={doc.kind} language={doc.language} pages={doc.n_pages} blocks={len(doc.blocks)} doc_id={doc.doc_id}",
        highlight=False,
    )
    if meta:
        console.print(plain(safe(meta)), highlight=False)
    for w in doc.warnings:
        console.print(plain("warning:", "yellow"), plain(w), highlight=False)
    table = Table("#", "type", "page", "text", show_lines=False)
    for b in doc.blocks:
        shown = b.text if max_chars <= 0 or len(b.text) <= max_chars else b.text[:max_chars] + "…"
        page = "" if b.page is None else str(b.page + 1)
        table.add_row(str(b.block_idx), str(b.type) + ("*" if b.ocr else ""), page, plain(shown))
    console.print(table)
