"""`ldx ask`, `ldx eval retrieval`, `ldx eval qa`, `ldx eval cuad`: the retrieval work's commands (the
reader's training ones are in flows/cli_reader.py).

What the commands run is imported inside them, on lines marked `# start-up`, for what it adds to every
`ldx` command's start-up (0.4 s alone; timed after `import flows.cli`): retrieval.ask, retrieval.eval.search,
retrieval.encoder and retrieval.reader import torch (~1.4 s); retrieval.store and pipeline.store pyarrow
(~0.15 s); retrieval.hybrid and retrieval.eval.cuad numpy (~0.12 s).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from flows.cli import app  # noqa: F401  (imported for its side effect order: the root app exists first)
from flows.cli_common import (
    ConfigOpt,
    CuadOpt,
    SetOpt,
    console,
    eval_app,
    existing_path,
    fail,
    fail_on_bad_input,
    plain,
    resolve_config,
)
from pipeline.errors import DocumentError
from pipeline.paths import CLAUSE_HEAD, SHARED_DATA

KindOpt = Annotated[
    list[str] | None, typer.Option("--kind", help="Only documents of this kind (repeatable).")
]
CourtOpt = Annotated[str | None, typer.Option("--court", help="Only documents whose court contains this.")]
DateFromOpt = Annotated[str | None, typer.Option("--from", help="Only documents dated on/after YYYY-MM-DD.")]
DateToOpt = Annotated[str | None, typer.Option("--to", help="Only documents dated on/before YYYY-MM-DD.")]
HtmlOpt = Annotated[
    Path | None,
    typer.Option(
        "--html",
        dir_okay=False,
        help="Also write the answers as a page: each citation boxed on its page image.",
    ),
]


def _print_json(obj) -> None:
    console.print_json(json.dumps(obj, ensure_ascii=False, default=str))


@eval_app.command("retrieval")
def eval_retrieval(
    corpus: Annotated[
        Path, typer.Option("--corpus", help="CASES.jsonl(.gz): one {id, title, text} per line.")
    ],
    queries: Annotated[Path, typer.Option("--queries", help="Q.jsonl: one {task_id, query} per line.")],
    qrels: Annotated[
        Path,
        typer.Option("--qrels", help="QRELS.tsv with header: task_id, annotator, case_id, label (graded)."),
    ],
    dense_passages: Annotated[
        int, typer.Option(help="First passages per case for the dense arms; 0 = all, as `ldx run` indexes.")
    ] = 2,
    dense_case: Annotated[
        str, typer.Option(help="A dense arm ranks a case by its best passage (passages) or mean key (mean).")
    ] = "passages",
    key_cache: Annotated[
        Path | None, typer.Option(help="Folder of the txl arms' raw passage keys, reused by a rerun.")
    ] = None,
    passage_chars: Annotated[int, typer.Option(help="Characters per passage (lines packed greedily).")] = 400,
    dense_model: Annotated[
        str,
        typer.Option(
            help="Dense arms, comma-separated: minilm (packaged sentence model), txl (the "
            "encoder's keys, each case read in order with memory, through the key head "
            "retrieval.key_head), txl_raw (the same keys without a head)."
        ),
    ] = "minilm,txl",
    no_dense: Annotated[bool, typer.Option("--no-dense", help="BM25 only (no dense arm).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Document retrieval in the CLCR layout: nDCG@10/@30 and recall@100 for BM25, each dense arm, and their
    hybrid with language-aware weights (retrieval.arm_weights / zh_arm_weights) and with equal weights."""
    from retrieval.eval.search import RetrievalEvalConfig, evaluate_retrieval  # start-up: torch

    for path in (corpus, queries, qrels):
        existing_path(path)
    models = _dense_arms(() if no_dense else dense_model.split(","), dense_case)
    cfg_all = resolve_config(config, set_)
    cfg = RetrievalEvalConfig(
        passage_chars=passage_chars,
        dense_passages=dense_passages,
        dense_case=dense_case,
        dense_models=models,
        key_cache=str(key_cache) if key_cache else None,
        checkpoint=cfg_all.model.checkpoint,
        key_head=cfg_all.retrieval.key_head,
    )
    with fail_on_bad_input():
        result = evaluate_retrieval(corpus, queries, qrels, cfg, cfg_all.retrieval)
    if as_json:
        _print_json(result)
    else:
        _print_retrieval_table(result, models)


def _dense_arms(names, dense_case: str) -> tuple[str, ...]:
    """The dense arms named (each known) once --dense-case is known too; else a one-line error."""
    from retrieval.eval.search import DENSE_CASES, DENSE_MODELS  # start-up: torch

    models = tuple(m.strip() for m in names if m.strip())
    bad = [m for m in models if m not in DENSE_MODELS]
    if bad:
        fail(f"--dense-model: unknown {', '.join(bad)}; choose from {', '.join(DENSE_MODELS)}")
    if dense_case not in DENSE_CASES:
        fail(f"--dense-case: {dense_case!r}; choose from {', '.join(DENSE_CASES)}")
    return models


def _print_retrieval_table(result: dict, models: tuple[str, ...]) -> None:
    table = Table(
        title=f"retrieval: {result['n_queries']} queries ({result['n_zh_queries']} Chinese), "
        f"{result['n_cases']} cases"
    )
    table.add_column("arm")
    for metric in ("ndcg@10", "ndcg@30", "recall@100"):
        table.add_column(metric, justify="right")
    for arm in ("bm25", *models, "hybrid", "hybrid_equal", "bm25+txl"):
        if arm in result:
            table.add_row(arm, *(f"{result[arm][m]:.4f}" for m in ("ndcg@10", "ndcg@30", "recall@100")))
    console.print(table)


@app.command("ask")
def ask(
    question: Annotated[
        str | None,
        typer.Argument(
            help="The question, in any language of the corpus; none: read questions from "
            "stdin, one per line, until EOF or an empty line (models load once)."
        ),
    ] = None,
    index: Annotated[Path, typer.Option("--index", help="OUT_DIR written by `ldx run`.")] = ...,
    k: Annotated[int, typer.Option("--k", min=1, help="Segments to retrieve and cite.")] = 10,
    doc: Annotated[str | None, typer.Option("--doc", help="Only this document (doc_id).")] = None,
    kind: KindOpt = None,
    block_type: Annotated[
        list[str] | None, typer.Option("--block-type", help="Only segments of this block type (repeatable).")
    ] = None,
    court: CourtOpt = None,
    date_from: DateFromOpt = None,
    date_to: DateToOpt = None,
    reader: Annotated[Path | None, typer.Option(help="Reader head; default data/models/reader.pt.")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object (one line per question from stdin).")
    ] = False,
    html: HtmlOpt = None,
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Answer a question over an indexed run, with its evidence sentence and citations (doc, segment, block
    type, page, bbox, text); "none" with the best evidence when no answer is confident enough."""
    import torch  # start-up: torch

    from pipeline.store import TableUnreadable  # start-up: pyarrow
    from retrieval.ask import Asker  # start-up: torch
    from retrieval.store import StoreError  # start-up: pyarrow

    cfg = resolve_config(config, set_)
    existing_path(index, "directory")
    filters = _filters(kind, court, date_from, date_to, block_type)
    torch.set_num_threads(cfg.model.threads or 1)  # more threads than free cores crawls on a shared machine
    try:
        asker = Asker(
            index,
            cfg.retrieval,
            cfg.model.checkpoint,
            cfg.model.device,
            reader,
            cfg.predict.clause_min_probability,
        )
    except (DocumentError, StoreError, TableUnreadable) as e:
        fail(str(e))
    questions = [question] if question is not None else _stdin_questions(sys.stdin)
    answers = []
    for q in questions:
        try:
            answer = asker.ask(q, k=k, doc_id=doc, filters=filters())
        except (DocumentError, StoreError, TableUnreadable) as e:
            fail(str(e))
        _emit(answer, as_json, one_line=question is None)
        answers.append(answer)
    if html is not None:
        _write_html(html, index, answers)


def _filters(kind, court, date_from, date_to, block_type):
    """A maker of the question's search filters: a fresh Filters per question, as ask() narrows it to --doc
    in place."""
    from retrieval.ask import parse_date  # start-up: torch
    from retrieval.hybrid import Filters  # start-up: numpy

    try:
        date_range = parse_date(date_from), parse_date(date_to)
    except ValueError as e:
        fail(f"bad date: {e}")
    return lambda: Filters(
        kinds=set(kind) if kind else None,
        court=court,
        date_from=date_range[0],
        date_to=date_range[1],
        block_types={b.upper() for b in block_type} if block_type else None,
    )


def _write_html(path: Path, index: Path, answers: list) -> None:
    from flows.review_ask import write_ask_page  # start-up: pymupdf (~0.8 s, measured after retrieval.ask)

    try:
        written = write_ask_page(path, index, answers)
    except OSError as e:
        fail(f"{path}: cannot write the page ({e.strerror or e})")
    # on stderr: stdout stays the answers alone (one JSON line per question with --json)
    print(f"wrote {written}", file=sys.stderr)


def _emit(answer, as_json: bool, one_line: bool) -> None:
    """One answer: JSON (one line each when questions come from stdin, so a reader can stream them) or
    the human-readable form."""
    if as_json and one_line:
        print(json.dumps(answer.to_dict(), ensure_ascii=False, default=str), flush=True)
    elif as_json:
        _print_json(answer.to_dict())
    else:
        _print_answer(answer)


def _stdin_questions(stream):
    """Questions one per line until EOF or an empty line; a prompt when a person types them."""
    while True:
        if stream.isatty():
            console.print(plain("question> ", "bold"), end="", highlight=False)
        line = stream.readline()
        if not line.strip():
            return
        yield line.strip()


def _print_answer(answer) -> None:
    if answer.answer_type == "none":
        console.print(plain("answer:", "bold"), plain("no confident answer found"), highlight=False)
    else:
        conf = (
            f" ({answer.answer_type}, confidence {answer.confidence:.2f})"
            if answer.confidence is not None
            else ""
        )
        console.print(plain("answer:", "bold"), plain(answer.answer + conf), highlight=False)
    cited = {c.segment_id: i for i, c in enumerate(answer.citations, start=1)}
    if answer.evidence is not None:
        label = "best evidence:" if answer.answer_type == "none" else "evidence:"
        console.print(plain(label, "bold"), plain(_cited_sentence(answer.evidence, cited)), highlight=False)
    for ev in answer.more_evidence:
        console.print(plain("also:", "dim"), plain(_cited_sentence(ev, cited), "dim"), highlight=False)
    for note in answer.notes:
        console.print(plain(note, "dim"), highlight=False)
    for i, c in enumerate(answer.citations, start=1):
        where = f"p.{c.page + 1}" if c.page is not None else "no page"
        console.print(
            plain(f"[{i}]", "cyan"),
            plain(f"{c.segment_id} {c.block_type} {where} score={c.score:.4f}"),
            highlight=False,
        )
        console.print(plain(f"    {c.text[:200]}"), highlight=False)


def _cited_sentence(ev, cited: dict[str, int]) -> str:
    """An evidence sentence after its citation number and page: "[2] p.3 For these reasons ..."."""
    where = f"[{cited[ev.segment_id]}] " if ev.segment_id in cited else ""
    page = f"p.{ev.page + 1} " if ev.page is not None else ""
    return f"{where}{page}{ev.sentence}"


def _load_reader(head: Path | None, cfg):
    """(reader with its encoder) or a clear failure: no head, no encoder, or a head of another encoder."""
    import torch  # start-up: torch

    from retrieval.encoder import checkpoint_file, load_encoder, sha256_file  # start-up: torch
    from retrieval.reader.runtime import READER_FILE, ReaderMismatch, load_reader  # start-up: torch

    head = head or READER_FILE
    if not head.is_file():
        fail(f"{head}: no reader checkpoint; train one with `ldx train reader --qa FILE`")
    ckpt = checkpoint_file(cfg.model.checkpoint)
    if ckpt is None or not ckpt.is_file():
        fail("no encoder checkpoint: set model.checkpoint or ship one in data/models/")
    try:
        load_reader(head, None, None, sha256_file(ckpt))  # refuse before loading the encoder
    except ReaderMismatch as e:
        fail(str(e))
    torch.set_num_threads(cfg.model.threads or 1)  # more threads than free cores crawls on a shared machine
    model, tokenizer = load_encoder(ckpt, cfg.model.device)
    return load_reader(head, model, tokenizer)


@eval_app.command("qa")
def eval_qa(
    file: Annotated[Path, typer.Argument(help="SQuAD-2.0-layout JSON (CJRC's; multi-span answers too).")],
    split: Annotated[
        str, typer.Option(help="all, or the fixed held-apart split: heldout (never trained on) / train.")
    ] = "heldout",
    limit: Annotated[int | None, typer.Option(help="Only the first N contexts (CPU cost).")] = None,
    reader: Annotated[Path | None, typer.Option(help="Reader head; default data/models/reader.pt.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """Extractive QA end to end: EM, F1 (char-level, best over golds), YES/NO accuracy, no-answer accuracy,
    beside a trivial baseline (always a span: the clause sharing the most question terms)."""
    from retrieval.eval.qa import SPLITS, evaluate_qa  # start-up: torch (~1.6 s on every ldx command)

    cfg = resolve_config(config, set_)
    existing_path(file)
    if split not in SPLITS:
        fail(f"--split must be one of {', '.join(SPLITS)}, not {split!r}")
    loaded = _load_reader(reader, cfg)
    with fail_on_bad_input():
        result = evaluate_qa(file, loaded, split, limit)
    if as_json:
        _print_json(result)
        return
    for name, m in (("reader", result), ("baseline", result["baseline_overlap_clause"])):
        console.print(
            f"{name:8} {m['n_questions']} questions ({split}): EM {m['em']:.2f}  F1 {m['f1']:.2f}  "
            f"span F1 {m['span_f1']:.2f}  YES/NO acc {m['yes_no_acc']:.2f}  no-answer acc {m['no_answer_acc']:.2f}",
            highlight=False,
        )


@eval_app.command("cuad")
def eval_cuad(
    data: CuadOpt = SHARED_DATA / "en" / "contracts",
    contracts: Annotated[
        int | None, typer.Option(help="Only the first N contracts of the split (CPU cost).")
    ] = 20,
    split: Annotated[
        str, typer.Option(help="heldout (contracts never trained on), train or all.")
    ] = "heldout",
    k: Annotated[
        int, typer.Option("--k", min=1, help="Retrieved passages the reader reads per question.")
    ] = 5,
    passage_chars: Annotated[
        int, typer.Option(help="Characters per passage (lines packed greedily).")
    ] = 1200,
    reader: Annotated[Path | None, typer.Option(help="Reader head; default data/models/reader.pt.")] = None,
    clauses: Annotated[
        Path | None, typer.Option(help="Clause head; default data/models/heads/clauses.npz when present.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    config: ConfigOpt = None,
    set_: SetOpt = None,
) -> None:
    """CUAD contracts: BM25 segment recall@1/3/5/10 of the answer, then the reader over the top k passages:
    per-question span F1 and AUPR (CUAD paper's precision-recall over answer confidence), beside a baseline
    and the clause head (its category's likeliest sentence of the whole contract, or the name or date in it)."""
    from retrieval.eval.cuad import evaluate_cuad  # start-up: numpy
    from retrieval.predict.clauses import ClauseHead  # start-up: numpy

    cfg = resolve_config(config, set_)
    existing_path(data, "directory")
    if split not in ("heldout", "train", "all"):
        fail(f"--split must be heldout, train or all, not {split!r}")
    clauses = clauses or CLAUSE_HEAD
    if clauses != CLAUSE_HEAD:
        existing_path(clauses)
    with fail_on_bad_input():
        head = ClauseHead.load(clauses) if clauses.is_file() else None
    loaded = _load_reader(reader, cfg)
    with fail_on_bad_input():
        result = evaluate_cuad(loaded, data, contracts, k, passage_chars, split, head)
    if as_json:
        _print_json(result)
        return
    rec = "  ".join(f"R{n} {v}" for n, v in result["segment_recall"].items())
    console.print(
        f"{result['contracts']} contracts, {result['questions']} questions "
        f"({result['answerable']} answerable): segment recall {rec}",
        highlight=False,
    )
    for name in ("reader", "baseline"):
        m = result[name]
        console.print(
            f"{name:8} span F1 {m['span_f1']}  AUPR {m['aupr']}  P@80%R {m['precision_at_80_recall']}",
            highlight=False,
        )
    if "clauses" in result:
        m = result["clauses"]
        console.print(f"clauses  AUPR {m['aupr']}  P@80%R {m['precision_at_80_recall']}", highlight=False)
