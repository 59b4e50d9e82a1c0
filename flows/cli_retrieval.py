"""`ldx ask`, `ldx eval retrieval`, `ldx eval qa`: the retrieval work's commands."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from flows.cli import app  # noqa: F401  (imported for its side effect order: the root app exists first)
from flows.cli_common import console, eval_app, existing_path, fail


def _print_json(obj) -> None:
    console.print_json(json.dumps(obj, ensure_ascii=False, default=str))


@eval_app.command("retrieval")
def eval_retrieval(
    corpus: Annotated[Path, typer.Option("--corpus", help="CASES.jsonl(.gz): one {id, title, text} per line.")],
    queries: Annotated[Path, typer.Option("--queries", help="Q.jsonl: one {task_id, query} per line.")],
    qrels: Annotated[
        Path, typer.Option("--qrels", help="QRELS.tsv with header: task_id, annotator, case_id, label (graded).")
    ],
    dense_passages: Annotated[
        int, typer.Option(help="Passages per case embedded by the sentence model (its cost grows with this).")
    ] = 2,
    passage_chars: Annotated[int, typer.Option(help="Characters per passage (lines packed greedily).")] = 400,
    no_dense: Annotated[bool, typer.Option("--no-dense", help="BM25 only (no sentence model).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Document retrieval in the CLCR layout: nDCG@10/@30 and recall@100 for BM25, dense and the hybrid."""
    from pipeline.errors import DocumentError
    from retrieval.eval_retrieval import RetrievalEvalConfig, evaluate_retrieval

    for path in (corpus, queries, qrels):
        existing_path(path)
    cfg = RetrievalEvalConfig(passage_chars=passage_chars, dense_passages=dense_passages)
    try:
        result = evaluate_retrieval(corpus, queries, qrels, cfg, dense=not no_dense)
    except DocumentError as e:
        fail(str(e))
    if as_json:
        _print_json(result)
        return
    from rich.table import Table

    table = Table(title=f"retrieval: {result['n_queries']} queries, {result['n_cases']} cases")
    table.add_column("arm")
    for metric in ("ndcg@10", "ndcg@30", "recall@100"):
        table.add_column(metric, justify="right")
    for arm in ("bm25", "dense", "hybrid"):
        if arm in result:
            table.add_row(arm, *(f"{result[arm][m]:.4f}" for m in ("ndcg@10", "ndcg@30", "recall@100")))
    console.print(table)
