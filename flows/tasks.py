"""The run flow's tasks: one Prefect task per stage and per batch of input files, and the per-file cache.

A batch moves through parse → segment → the registered model stages → write. Each task takes and
returns a `Batch`, so a stage is one task run per batch in the UI, with its own retries and timing.
What a file produced is kept in a signed cache (flows/file_cache.py) keyed on the file's sha256, the
effective config and the model id; a later run restores it instead of processing the file again.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import queue
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from flows.config import LdxConfig
from flows.file_cache import FileCache
from pipeline import __version__ as PIPELINE_VERSION
from pipeline.errors import DocumentError
from pipeline.records import (
    Document,
    ErrorRecord,
    Prediction,
    Segment,
    block_rows,
    document_rows,
    error_rows,
    prediction_rows,
    segment_rows,
    sha256_file,
)
from pipeline.store import OutputStore

# Stages after `segment`, registered as "module:function" so that their heavy modules load only when a
# run reaches them. The retrieval and prediction work add theirs here:
#   a batch stage is `fn(docs: list[DocWork], ctx: StageContext) -> None`; it fills the `predictions`
#     of each DocWork in place (e.g. "predict");
#   a run stage is `fn(docs: Callable[[], Iterator[DocWork | None]], ctx: StageContext) -> dict[str, int]`;
#     it sees every document of the run, cached ones included, as their batches are segmented (a None
#     between them says that no document is ready yet); once they run out, the ids in
#     `getattr(docs, "retracted", ())` are documents whose batch failed afterwards: leave them out
#     (e.g. "index" builds OUT_DIR/index/ whose ids are the run's segment ids), and returns counts; it
#     writes no Parquet rows (the report is drawn from the tables while the run stages finish).
# `run.stages` in the config chooses which of them a run executes.
BATCH_STAGES: dict[str, str] = {"predict": "retrieval.predict:predict_batch_stage"}
RUN_STAGES: dict[str, str] = {"index": "retrieval.stage:index_run_stage"}

# Failures worth another try (writing to a busy disk, a lost connection, a device that ran out of
# memory); anything else that a stage raises for one document is that document's error. Reading an
# input never lands here: the parser turns its OSError (damaged gzip, a file gone) into that file's
# DocumentError, so one bad file cannot fail its whole batch.
TRANSIENT = (OSError, TimeoutError, ConnectionError, MemoryError)


@dataclass(frozen=True)
class InputFile:
    path: str
    sha256: str
    size: int

    @property
    def key(self) -> str:
        """The part key of everything this file produced: its doc_id when it holds one document."""
        return self.sha256[:16]


@dataclass
class DocWork:
    """One document on its way through the stages."""

    document: Document
    segments: list[Segment] = field(default_factory=list)
    predictions: list[Prediction] = field(default_factory=list)


@dataclass
class FileWork:
    file: InputFile
    docs: list[DocWork] = field(default_factory=list)
    errors: list[ErrorRecord] = field(default_factory=list)
    cached: bool = False
    settled: bool = True  # False once a failure was not the document's fault: then it is never cached

    def fail(self, source: str, stage: str, exc: BaseException, doc_id: str | None = None) -> None:
        self.errors.append(document_error(source, stage, exc, doc_id))
        self.settled = self.settled and isinstance(exc, DocumentError) and exc.lasting

    def tables(self, run_id: str) -> dict[str, list[dict]]:
        rows: dict[str, list[dict]] = {name: [] for name in ("documents", "blocks", "segments", "predictions")}
        for w in self.docs:
            rows["documents"] += document_rows(w.document, run_id)
            rows["blocks"] += block_rows(w.document.blocks, run_id)
            rows["segments"] += segment_rows(w.segments, run_id)
            rows["predictions"] += prediction_rows(w.predictions, run_id)
        rows["errors"] = error_rows(self.errors, run_id)
        return rows


@dataclass
class Batch:
    index: int
    files: list[FileWork]
    seconds: dict[str, float] = field(default_factory=dict)  # stage -> wall time spent on this batch

    def live_docs(self) -> list[DocWork]:
        return [d for f in self.files for d in f.docs]


@dataclass(frozen=True)
class StageContext:
    config: LdxConfig
    out_dir: str
    run_id: str
    model_id: str


def document_error(source: str, stage: str, exc: BaseException, doc_id: str | None = None) -> ErrorRecord:
    if isinstance(exc, DocumentError):
        return ErrorRecord(source=exc.source, stage=stage, error_type=type(exc).__name__, reason=exc.reason, doc_id=doc_id)
    return ErrorRecord(source=source, stage=stage, error_type=type(exc).__name__, reason=str(exc) or repr(exc), doc_id=doc_id)


@cache
def load_stage(target: str) -> Callable:
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def load_stages(config: LdxConfig) -> None:
    """Import the chosen stages' modules (torch, the model code) before the first batch needs them, and
    let a stage module that has a `prepare(config)` start its work (the index stage: its process);
    `ldx run` does so while its Prefect server starts. Threads only: Dask's workers are other processes."""
    if config.run.task_runner == "threads":
        batch, run = active_stages(config)
        for target in {**batch, **run}.values():
            prepare = getattr(importlib.import_module(target.partition(":")[0]), "prepare", None)
            if prepare is not None:
                prepare(config)


def active_stages(config: LdxConfig) -> tuple[dict[str, str], dict[str, str]]:
    chosen = set(config.run.stages)
    if "encode" in chosen:
        chosen.add("index")
    return (
        {k: v for k, v in BATCH_STAGES.items() if k in chosen},
        {k: v for k, v in RUN_STAGES.items() if k in chosen},
    )


# ---- scanning and the cache -----------------------------------------------------------------------




def config_fingerprint(config: LdxConfig, model_id: str) -> str:
    """What decides a file's outputs besides its bytes: the stage options, the model and the stages run."""
    batch, run = active_stages(config)
    relevant = {
        "parse": config.parse.model_dump(mode="json"),
        "segment": config.segment.model_dump(mode="json"),
        "model": config.model.model_dump(mode="json") if batch or run else None,
        "retrieval": config.retrieval.model_dump(mode="json") if batch or run else None,
        "predict": config.predict.model_dump(mode="json") if "predict" in batch else None,
        "stages": sorted(batch) + sorted(run),
        "model_id": model_id,
        "pipeline_version": PIPELINE_VERSION,
    }
    return hashlib.sha256(json.dumps(relevant, sort_keys=True).encode()).hexdigest()


def scan_inputs(input_dir: Path) -> tuple[list[InputFile], list[ErrorRecord]]:
    """Every regular, non-hidden file under INPUT_DIR (recursively); the parser judges the formats.

    Files with identical bytes are one document: the first path (in sorted order) is kept and each
    copy is reported, so doc_ids stay unique within a run.
    """
    files: list[InputFile] = []
    errors: list[ErrorRecord] = []
    seen: dict[str, str] = {}
    for path in sorted(input_dir.rglob("*")):
        rel = path.relative_to(input_dir)
        if not path.is_file() or any(part.startswith(".") for part in rel.parts):
            continue
        try:
            size, digest = path.stat().st_size, sha256_file(path)
        except OSError as e:  # removed or unreadable since the listing: this file's error alone
            errors.append(ErrorRecord(str(path), "scan", "UnreadableFile", e.strerror or str(e), None))
            continue
        if size == 0:  # every empty file has the same bytes; each is empty, not a copy of another
            errors.append(ErrorRecord(str(path), "scan", "EmptyFile", "empty file (0 bytes)", None))
            continue
        if digest in seen:
            errors.append(
                ErrorRecord(str(path), "scan", "DuplicateDocument", f"same bytes as {seen[digest]}", digest[:16])
            )
            continue
        seen[digest] = str(path)
        files.append(InputFile(path=str(path), sha256=digest, size=size))
    return files, errors


def make_batches(files: list[FileWork], batch_size: int, start: int = 0, workers: int = 1) -> list[Batch]:
    """Batches of about `batch_size` documents, largest files first so that stragglers come early, and
    small enough that every worker gets one when there are few files.

    A file's size stands in for its document count: a JSONL corpus of many records forms a batch alone.
    """
    ordered = sorted(files, key=lambda w: -w.file.size)
    typical = sorted(w.file.size for w in files)[len(files) // 2] if files else 1
    weights = [max(1.0, w.file.size / max(typical, 1)) for w in ordered]
    target = min(batch_size, max(1, math.floor(sum(weights) / max(workers, 1))))
    batches: list[Batch] = []
    current: list[FileWork] = []
    weight = 0.0
    for w, wt in zip(ordered, weights, strict=True):
        current.append(w)
        weight += wt
        if weight >= target:
            batches.append(Batch(start + len(batches), current))
            current, weight = [], 0.0
    if current:
        batches.append(Batch(start + len(batches), current))
    return batches


# ---- stage tasks ----------------------------------------------------------------------------------


def _timed(batch: Batch, stage: str, t0: float) -> Batch:
    batch.seconds[stage] = batch.seconds.get(stage, 0.0) + time.perf_counter() - t0
    return batch


@task(name="parse", cache_policy=NO_CACHE, persist_result=False)
def parse_batch(batch: Batch, config: LdxConfig) -> Batch:
    """Read every file of the batch into Documents; a bad file or record becomes an error row."""
    from pipeline.parsing import iter_documents

    t0 = time.perf_counter()
    for work in batch.files:
        bad: list[DocumentError] = []
        try:
            work.docs = [DocWork(doc) for doc in iter_documents(work.file.path, config.parse, errors=bad)]
        except TRANSIENT:
            raise
        except Exception as e:  # noqa: BLE001 - one file's failure must not stop the run
            work.fail(work.file.path, "parse", e, work.file.key)
        for e in bad:
            work.fail(work.file.path, "parse", e)
    return _timed(batch, "parse", t0)


@task(name="segment", cache_policy=NO_CACHE, persist_result=False)
def segment_batch(batch: Batch, config: LdxConfig) -> Batch:
    from pipeline import segment

    t0 = time.perf_counter()
    for work in batch.files:
        kept: list[DocWork] = []
        for d in work.docs:
            try:
                d.segments = segment(d.document, config.segment)
                kept.append(d)
            except TRANSIENT:
                raise
            except Exception as e:  # noqa: BLE001
                work.fail(d.document.source, "segment", e, d.document.doc_id)
        work.docs = kept
    return _timed(batch, "segment", t0)


@task(cache_policy=NO_CACHE, persist_result=False)
def model_stage_batch(batch: Batch, stage: str, target: str, ctx: StageContext) -> Batch:
    """A registered batch stage (encode, predict …) over the batch's live documents."""
    t0 = time.perf_counter()
    load_stage(target)(batch.live_docs(), ctx)
    return _timed(batch, stage, t0)


@task(name="write", cache_policy=NO_CACHE, persist_result=False)
def write_batch(batch: Batch, ctx: StageContext, cache_dir: str, fingerprint: str) -> Batch:
    """Write each file's parts (keyed by the file), then remember the file in the cache.

    The cache entry comes last: a run killed in between redoes the file and rewrites the same parts.
    """
    t0 = time.perf_counter()
    store = OutputStore(ctx.out_dir, ctx.run_id, ctx.model_id)
    file_cache = FileCache(cache_dir, fingerprint)
    for work in batch.files:
        write_parts(store, work)
        if work.settled and not work.cached:
            file_cache.put(work)
    return _timed(batch, "write", t0)


@task(name="restore", cache_policy=NO_CACHE, persist_result=False)
def restore_batch(batch: Batch, cache_dir: str, fingerprint: str) -> Batch:
    """Cached files' work, read back from the result store; a file whose entry is unreadable stays
    `cached=False` with no documents, and the flow sends it through the stages again."""
    t0 = time.perf_counter()
    file_cache = FileCache(cache_dir, fingerprint)
    batch.files = [file_cache.get(w.file) or w for w in batch.files]
    for path in file_cache.rejected:
        get_run_logger().warning(f"{path}: cache entry failed its signature check; ignored, the file is processed again")
    return _timed(batch, "restore", t0)


class DocFeed:
    """The run's documents, handed to a run stage as soon as they are segmented, so that the stage
    (the encoder) works beside the batch stages instead of after them. A document whose batch fails
    later is retracted: once the documents run out, `retracted` names those the stage must leave out.
    Threads only: a queue cannot cross to Dask worker processes."""

    def __init__(self) -> None:
        self._queue: queue.Queue[list[DocWork] | None] = queue.Queue()
        self.retracted: set[str] = set()

    def put(self, docs: list[DocWork]) -> None:
        self._queue.put(docs)

    def retract(self, doc_ids: set[str]) -> None:
        self.retracted |= doc_ids

    def close(self) -> None:
        self._queue.put(None)

    def __call__(self) -> Iterator[DocWork | None]:
        """The documents in arrival order; a None says none is ready just now (the consumer may work
        on what it has and ask again, which then waits)."""
        while True:
            try:
                docs = self._queue.get_nowait()
            except queue.Empty:
                yield None
                docs = self._queue.get()
            if docs is None:
                return
            yield from docs


@task(cache_policy=NO_CACHE, persist_result=False)
def model_stage_run(
    stage: str, target: str, files: list[InputFile], cache_dir: str, fingerprint: str, ctx: StageContext,
    feed: DocFeed | None = None,
) -> dict[str, int]:
    """A registered run stage (index …) over every document of the run: from `feed` while the batches
    run, or read back from the cache once they are done."""

    def docs() -> Iterator[DocWork]:
        file_cache = FileCache(cache_dir, fingerprint)
        for f in files:
            work = file_cache.get(f)
            if work is not None:
                yield from work.docs

    t0 = time.perf_counter()
    counts = load_stage(target)(feed or docs, ctx)
    return {**counts, "stage_seconds": round(time.perf_counter() - t0, 2)}


def write_parts(store: OutputStore, work: FileWork) -> None:
    for table, rows in work.tables(store.run_id).items():
        if rows:
            store.write(table, rows, work.file.key)
