"""The analyst's review of a run: OUT_DIR/report.html, one page per document under OUT_DIR/review/, and
the run's Prefect artifacts.

report.html is self-contained (figures as base64 SVG, inline CSS and script, no network): the run overview,
the flag queue (filtered in the page) and the documents, each linking to its page (flows.review_docs),
which shows the pages holding its flagged or cited blocks as images rendered then (flows.review_pages).
Everything is drawn from the Jinja2 templates in flows/templates/. Each figure is drawn from a DuckDB
query over the run's Parquet parts, and the page shows that query verbatim: run it with `duckdb` inside
OUT_DIR to get the same numbers.
"""

from __future__ import annotations

import base64
import io
import json
from dataclasses import dataclass
from pathlib import Path

import duckdb
import matplotlib
import pyarrow.dataset as ds
from markupsafe import Markup
from prefect.artifacts import create_markdown_artifact, create_table_artifact

from flows.manifest import read_manifest
from flows.review_data import FLAG_LIST, flag_counts, flag_queue, flagged, model_cards
from flows.review_docs import TEMPLATES, doc_href, write_document_pages
from pipeline.records import SCHEMAS
from pipeline.store import atomic_write_text, part_files

matplotlib.use("Agg")  # figures drawn to SVG, no display; set before pyplot is imported
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

REPORT = "report.html"
MAX_DOCS = 2000  # rows of the documents table, each with its own page


@dataclass
class Figure:
    title: str
    table: str
    sql: str  # the query as shown: run it with `duckdb` started in OUT_DIR
    kind: str  # "bar", "barh" or "hist"
    xlabel: str
    query: str  # the same query over the run's part files as listed by `_connect`: what the page runs


def _parts(table: str, run_id: str) -> str:
    """The shown source of a table's rows in one run. Only ever displayed: run ids are checked on
    reading the manifest (flows.manifest.RUN_ID), and queries that run read `_connect`'s views."""
    return f"read_parquet('{table}/run_id={run_id}/*.parquet')"


def _view(table: str) -> str:
    return f"run_{table}"


def _figure(title: str, table: str, template: str, kind: str, xlabel: str, run_id: str) -> Figure:
    return Figure(
        title,
        table,
        template.format(src=_parts(table, run_id)),
        kind,
        xlabel,
        template.format(src=_view(table)),
    )


def figures(run_id: str) -> list[Figure]:
    specs = [
        (
            "Documents per kind",
            "documents",
            "SELECT kind, count(*) AS documents FROM {src} GROUP BY kind ORDER BY documents DESC, kind",
            "bar",
            "documents",
        ),
        (
            "Block types",
            "blocks",
            "SELECT CAST(type AS VARCHAR) AS type, count(*) AS blocks FROM {src} GROUP BY 1 ORDER BY blocks DESC, type",
            "barh",
            "blocks",
        ),
        (
            "Segment lengths (tokens)",
            "segments",
            "SELECT n_tokens, count(*) AS segments FROM {src} GROUP BY n_tokens ORDER BY n_tokens",
            "hist",
            "tokens per segment",
        ),
        (
            "Errors by reason",
            "errors",
            "SELECT stage || ': ' || error_type AS reason, count(*) AS errors FROM {src} GROUP BY 1 ORDER BY errors DESC, reason",
            "barh",
            "errors",
        ),
        (
            "Predictions per task",
            "predictions",
            "SELECT task, count(*) AS predictions FROM {src} GROUP BY task ORDER BY predictions DESC, task",
            "barh",
            "predictions",
        ),
        (
            "Prediction scores",
            "predictions",
            "SELECT round(score, 2) AS score, count(*) AS predictions FROM {src} WHERE score IS NOT NULL "
            "GROUP BY 1 ORDER BY 1",
            "hist",
            "score",
        ),
    ]
    return [_figure(*spec, run_id) for spec in specs]


def _connect(out_dir: Path, run_id: str):
    """A connection with one view per table over the run's part files, listed here and handed over as
    a dataset: no character of OUT_DIR or of the run id ever reaches DuckDB as SQL or as a glob."""
    con = duckdb.connect()
    for table, schema in SCHEMAS.items():
        files = part_files(out_dir, table, run_id)
        con.register(
            _view(table),
            ds.dataset(files, schema=schema, format="parquet") if files else schema.empty_table(),
        )
    return con


def _has_parts(out_dir: Path, table: str, run_id: str) -> bool:
    return bool(part_files(out_dir, table, run_id))


def _plot(fig: Figure, rows: list[tuple]) -> str:
    with plt.rc_context({"svg.fonttype": "none", "font.size": 9}):
        if fig.kind == "hist":  # rows of (value, count): a histogram query's rows do not grow with the run
            values, counts = [r[0] for r in rows], [r[1] for r in rows]
            f, ax = plt.subplots(figsize=(6, 3))
            ax.hist(values, bins=min(40, max(5, len(values))), weights=counts, color="#4472c4")
            ax.set_xlabel(fig.xlabel)
            ax.set_ylabel("count")
        else:
            labels, counts = [str(r[0]) for r in rows], [r[1] for r in rows]
            if fig.kind == "barh":
                f, ax = plt.subplots(figsize=(6, max(2.0, 0.6 + 0.25 * len(rows))))
                ax.barh(labels[::-1], counts[::-1], color="#4472c4")
                ax.set_xlabel(fig.xlabel)
            else:
                f, ax = plt.subplots(figsize=(6, 3))
                ax.bar(labels, counts, color="#4472c4")
                ax.set_ylabel(fig.xlabel)
        if fig.kind == "bar":
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        elif fig.kind == "barh":
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(fig.title)
        f.tight_layout()
        buf = io.BytesIO()
        f.savefig(buf, format="svg")
        plt.close(f)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _summary(manifest: dict) -> dict:
    counts: dict = {}
    for key, value in manifest.get("counts", {}).items():  # run stages (index …) report their own counts
        counts.update(
            {f"{key}.{k}": v for k, v in value.items()} if isinstance(value, dict) else {key: value}
        )
    seconds = manifest.get("seconds", {})
    total = sum(seconds.values()) or 1.0
    model = manifest.get("model") or {}
    facts = [
        ("run id", manifest.get("run_id")),
        ("status", manifest.get("status")),
        ("Prefect flow run", manifest.get("flow_run_id")),
        ("started", manifest.get("started_at")),
        ("ended", manifest.get("ended_at")),
        ("input", manifest.get("input_dir")),
        ("code version", manifest.get("code_version")),
        ("model", model.get("checkpoint") or "none (no model stage ran)"),
        ("model sha256", model.get("sha256") or "—"),
        ("stages", " → ".join(manifest.get("stages", []))),
    ]
    stages = [(k, v, 100 * v / total) for k, v in seconds.items()]
    return {"facts": facts, "counts": counts, "stages": stages}


def _documents(con, out_dir: Path, run_id: str) -> dict | None:
    """The documents table (the first MAX_DOCS by source), each row linking to its page; None without
    documents."""
    if not _has_parts(out_dir, "documents", run_id):
        return None
    docs = con.execute(
        "SELECT d.doc_id, d.kind, d.language, d.title, d.n_pages, d.n_blocks, coalesce(f.n, 0), d.source "
        f"FROM {_view('documents')} d LEFT JOIN (SELECT doc_id, count(*) AS n FROM {_view('predictions')} "
        f"WHERE {flagged('task')} GROUP BY doc_id) f ON f.doc_id = d.doc_id "
        "ORDER BY d.source, d.doc_id LIMIT ?",
        [FLAG_LIST, MAX_DOCS],
    ).fetchall()
    return {"rows": [(d[0], doc_href(d[0]), d[1:]) for d in docs], "truncated": len(docs) == MAX_DOCS}


def _errors(con, out_dir: Path, run_id: str) -> list[tuple] | None:
    if not _has_parts(out_dir, "errors", run_id):
        return None
    return con.execute(
        f"SELECT source, stage, error_type, reason FROM {_view('errors')} ORDER BY source LIMIT ?", [MAX_DOCS]
    ).fetchall()


def render_body(out_dir: str | Path, run_id: str) -> str:
    """Everything but the run summary: the figures, flag queue, errors and documents, from the run's Parquet
    parts alone (the flow draws them while its run stages finish)."""
    out_dir = Path(out_dir).resolve()
    con = _connect(out_dir, run_id)
    figs = []
    for fig in figures(run_id):
        if not _has_parts(out_dir, fig.table, run_id):
            continue
        rows = con.execute(fig.query).fetchall()
        if rows:
            figs.append({"title": fig.title, "sql": fig.sql, "svg_base64": _plot(fig, rows)})
    documents = _documents(con, out_dir, run_id)
    linked = {row[0] for row in documents["rows"]} if documents else set()
    flags = flag_queue(con, model_cards(out_dir, run_id), lambda d: doc_href(d) if d in linked else None)
    return TEMPLATES.get_template("body.html.j2").render(
        figures=figs,
        flags=flags,
        flag_counts=flag_counts(con),
        errors=_errors(con, out_dir, run_id),
        documents=documents,
    )


def render(out_dir: str | Path, body: str | None = None) -> str:
    """The page; `body` is `render_body`'s output when it was drawn already."""
    out_dir = Path(out_dir).resolve()
    manifest = read_manifest(out_dir)
    if manifest is None:
        raise FileNotFoundError(f"{out_dir}: no manifest.json; is this the OUT_DIR of an `ldx run`?")
    run_id = manifest["run_id"]
    body = render_body(out_dir, run_id) if body is None else body
    # the body is this module's own rendered template, already escaped
    return TEMPLATES.get_template("page.html.j2").render(
        run_id=run_id, body=Markup(body), **_summary(manifest)
    )


def write_report(out_dir: str | Path, body: str | None = None) -> Path:
    """report.html and the document pages it links to (with the page images they show)."""
    out_dir = Path(out_dir).resolve()
    page = render(out_dir, body)  # refuses an OUT_DIR without a valid manifest before writing anything
    run_id = read_manifest(out_dir)["run_id"]
    write_document_pages(
        _connect(out_dir, run_id),
        out_dir,
        model_cards(out_dir, run_id),
        MAX_DOCS,
    )
    path = out_dir / REPORT
    atomic_write_text(path, page)
    return path


def publish_artifacts(manifest: dict) -> None:
    """A table (per stage) and a markdown summary on the Prefect flow run, for the UI."""
    seconds = manifest.get("seconds", {})
    total = sum(seconds.values()) or 1.0
    counts = manifest.get("counts", {})
    create_table_artifact(
        key="ldx-run-stages",
        table=[
            {"stage": k, "seconds": round(v, 2), "share": f"{100 * v / total:.0f}%"}
            for k, v in seconds.items()
        ],
        description=f"Time per stage of run {manifest['run_id']}",
    )
    lines = [
        f"# LongDoc-XL run `{manifest['run_id']}`",
        "",
        f"{manifest['input_dir']} → {manifest.get('out_dir', '')}  ",
        f"code {manifest['code_version']}, model {(manifest.get('model') or {}).get('sha256') or 'none'}",
        "",
        "| count | value |",
        "|---|---|",
        *[f"| {k} | {json.dumps(v) if isinstance(v, dict) else v} |" for k, v in counts.items()],
    ]
    create_markdown_artifact(key="ldx-run-summary", markdown="\n".join(lines), description="Run summary")
