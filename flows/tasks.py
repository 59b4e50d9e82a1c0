"""The run flow's tasks: one Prefect task per stage and per batch of input files, and the per-file cache.

A batch moves through parse → segment → the registered model stages → write. Each task takes and
returns a `FileBatch`, so a stage is one task run per batch in the UI, with its own retries and timing.
What a file produced is kept in a signed cache (flows/file_cache.py) keyed on the file's sha256, the
effective config and the model id; a later run restores it instead of processing the file again.
"""

from __future__ import annotations

import hashlib
import json
import math
import queue
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from flows.config import LdxConfig
from flows.file_cache import KEY_FILE, CacheKeyError, FileCache, key_dir
from flows.work import FileWork, InputFile
from pipeline import __version__ as PIPELINE_VERSION
from pipeline import segment
from pipeline.errors import DocumentError
from pipeline.parsing import corpus_windows, iter_documents
from pipeline.process import release_freed_memory
from pipeline.records import ErrorRecord, sha256_file
from pipeline.store import OutputStore
from retrieval.predict.card import model_card
from retrieval.predict.stage import PREDICT_STAGE
from retrieval.stage import INDEX_STAGE
from retrieval.stages import WAITING, BatchStage, DocWork, RunStage, StageContext, Waiting

# Stages after `segment` (retrieval.stages says what each kind takes and returns); `run.stages` in the
# config chooses which of them a run executes.
BATCH_STAGES: dict[str, BatchStage] = {"predict": PREDICT_STAGE}
RUN_STAGES: dict[str, RunStage] = {"index": INDEX_STAGE}

# Failures worth another try (writing to a busy disk, a lost connection, a device that ran out of
# memory); anything else that a stage raises for one document is that document's error. Reading an
# input never lands here: the parser turns its OSError (damaged gzip, a file gone) into that file's
# DocumentError, so one bad file cannot fail its whole batch.
TRANSIENT = (OSError, TimeoutError, ConnectionError, MemoryError)


@dataclass
class FileBatch:
    index: int
    files: list[FileWork]
    seconds: dict[str, float] = field(default_factory=dict)  # stage -> wall time spent on this batch

    def live_docs(self) -> list[DocWork]:
        return [d for f in self.files for d in f.docs]


def load_stages(config: LdxConfig) -> None:
    """Let the chosen stages start their slow set-up (the index stage: its process) before the first batch
    needs it; `ldx run` does so while its Prefect server starts. Threads only: Dask's workers are other
    processes."""
    if config.run.task_runner == "threads":
        batch, run = active_stages(config)
        for name in batch:
            BATCH_STAGES[name].prepare(config)
        for name in run:
            RUN_STAGES[name].prepare(config)


def active_stages(config: LdxConfig) -> tuple[list[str], list[str]]:
    """The names of the chosen batch stages and run stages, in registry order."""
    chosen = set(config.run.stages)
    if "encode" in chosen:
        chosen.add("index")
    return [k for k in BATCH_STAGES if k in chosen], [k for k in RUN_STAGES if k in chosen]


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


def scan_inputs(input_dir: Path, lines_per_part: int) -> tuple[list[InputFile], list[ErrorRecord]]:
    """Every regular, non-hidden file under INPUT_DIR (recursively); the parser judges the formats. A
    plain JSONL corpus comes as windows of `lines_per_part` lines, so that a corpus of any size is read
    a batch at a time.

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
            windows = corpus_windows(path, lines_per_part) if size else None
        except OSError as e:  # removed or unreadable since the listing: this file's error alone
            errors.append(ErrorRecord(str(path), "scan", "UnreadableFile", e.strerror or str(e), None))
            continue
        if size == 0:  # every empty file has the same bytes; each is empty, not a copy of another
            errors.append(ErrorRecord(str(path), "scan", "EmptyFile", "empty file (0 bytes)", None))
            continue
        if digest in seen:
            errors.append(
                ErrorRecord(
                    str(path), "scan", "DuplicateDocument", f"same bytes as {seen[digest]}", digest[:16]
                )
            )
            continue
        seen[digest] = str(path)
        files += [InputFile(str(path), digest, size, w) for w in windows or [None]]
    return files, errors


def make_batches(files: list[FileWork], batch_size: int, start: int = 0, workers: int = 1) -> list[FileBatch]:
    """Batches of about `batch_size` documents, largest files first so that stragglers come early, and
    small enough that every worker gets one when there are few files.

    A window of a JSONL corpus weighs its lines; any other file its size against the typical such
    file's, so a gzipped corpus or a very large PDF forms a batch alone.
    """
    whole = sorted(w.file.size for w in files if w.file.window is None)
    typical = whole[len(whole) // 2] if whole else 1
    weighted = sorted(((_weight(w.file, typical), w) for w in files), key=lambda pair: -pair[0])
    target = min(batch_size, max(1, math.floor(sum(wt for wt, _ in weighted) / max(workers, 1))))
    batches: list[FileBatch] = []
    current: list[FileWork] = []
    weight = 0.0
    for wt, w in weighted:
        current.append(w)
        weight += wt
        if weight >= target:
            batches.append(FileBatch(start + len(batches), current))
            current, weight = [], 0.0
    if current:
        batches.append(FileBatch(start + len(batches), current))
    return batches


def _weight(file: InputFile, typical: int) -> float:
    if file.window is not None:
        return max(1, file.window.stop - file.window.start)
    return max(1.0, file.size / max(typical, 1))


# ---- stage tasks ----------------------------------------------------------------------------------


def _timed(batch: FileBatch, stage: str, t0: float) -> FileBatch:
    batch.seconds[stage] = batch.seconds.get(stage, 0.0) + time.perf_counter() - t0
    return batch


@task(name="parse", cache_policy=NO_CACHE, persist_result=False)
def parse_batch(batch: FileBatch, config: LdxConfig) -> FileBatch:
    """Read every file of the batch into Documents; a bad file or record becomes an error row."""
    t0 = time.perf_counter()
    for work in batch.files:
        bad: list[DocumentError] = []
        try:
            docs = iter_documents(work.file.path, config.parse, errors=bad, window=work.file.window)
            work.docs = [DocWork(doc) for doc in docs]
        except TRANSIENT:
            raise
        except Exception as e:  # noqa: BLE001 - one file's failure must not stop the run
            work.fail(work.file.path, "parse", e, work.file.key)
        for e in bad:
            work.fail(work.file.path, "parse", e)
    return _timed(batch, "parse", t0)


@task(name="segment", cache_policy=NO_CACHE, persist_result=False)
def segment_batch(batch: FileBatch, config: LdxConfig) -> FileBatch:
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
def model_stage_batch(batch: FileBatch, stage: str, ctx: StageContext) -> FileBatch:
    """A registered batch stage (predict …) over the batch's live documents."""
    t0 = time.perf_counter()
    BATCH_STAGES[stage](batch.live_docs(), ctx)
    release_freed_memory()  # the stage's tensors are gone; without this the run's heap grows batch by batch
    return _timed(batch, stage, t0)


@task(name="write", cache_policy=NO_CACHE, persist_result=False)
def write_batch(batch: FileBatch, ctx: StageContext, cache_dir: str, fingerprint: str) -> FileBatch:
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
def restore_batch(batch: FileBatch, cache_dir: str, fingerprint: str) -> FileBatch:
    """Cached files' work, read back from the result store; a file whose entry is unreadable stays
    `cached=False` with no documents, and the flow sends it through the stages again."""
    t0 = time.perf_counter()
    file_cache = FileCache(cache_dir, fingerprint)
    batch.files = [file_cache.get(w.file) or w for w in batch.files]
    for path in file_cache.rejected:
        get_run_logger().warning(
            f"{path}: cache entry failed its signature check; ignored, the file is processed again"
        )
    return _timed(batch, "restore", t0)


class DocFeed:
    """The run's documents, handed to a run stage as soon as they are segmented, so that the stage
    (the encoder) works beside the batch stages instead of after them (a retrieval.stages.DocSource).
    A document whose batch fails later is retracted. Threads only: a queue cannot cross to Dask worker
    processes.

    `backlog` (documents handed over and not yet taken) is what the flow reads to hold back new batches
    while the stage is behind."""

    def __init__(self) -> None:
        self._queue: queue.Queue[list[DocWork] | None] = queue.Queue()  # None: closed
        self._lock = threading.Lock()
        self._waiting = 0
        self._taking = True
        self.retracted: set[str] = set()

    @property
    def backlog(self) -> int:
        """Documents handed over and not yet taken; 0 once the stage has stopped taking them."""
        return self._waiting if self._taking else 0

    def put(self, docs: list[DocWork]) -> None:
        if not self._taking:
            return
        with self._lock:
            self._waiting += len(docs)
        self._queue.put(docs)

    def retract(self, doc_ids: set[str]) -> None:
        self.retracted |= doc_ids

    def close(self) -> None:
        self._queue.put(None)

    def stop(self) -> None:
        """The stage takes no more (it returned or failed): what it left is let go, later documents are
        dropped, and no batch waits on it."""
        self._taking = False
        while True:
            try:
                self._queue.get_nowait()
            except queue.Empty:
                return

    def documents(self) -> Iterator[DocWork | Waiting]:
        while True:
            try:
                docs = self._queue.get_nowait()
            except queue.Empty:
                yield WAITING
                docs = self._queue.get()
            if docs is None:
                return
            for doc in docs:
                with self._lock:
                    self._waiting -= 1
                yield doc


@dataclass(frozen=True)
class CachedDocs:
    """A run's documents read back from the file cache once its batches are done (a DocSource)."""

    files: list[InputFile]
    cache_dir: str
    fingerprint: str
    retracted: frozenset[str] = frozenset()  # a failed batch left nothing in the cache to take back

    def documents(self) -> Iterator[DocWork]:
        """Raises CacheKeyError at an entry this process's key does not verify: on a Dask cluster of
        several machines, one whose cache key differs from the writer's; skipping the entry would leave
        its documents out of the index without a word."""
        file_cache = FileCache(self.cache_dir, self.fingerprint)
        for f in self.files:
            work = file_cache.get(f)
            if file_cache.rejected:
                raise CacheKeyError(
                    f"{file_cache.rejected[0]}: cache entry not signed by this machine's cache key "
                    f"({key_dir() / KEY_FILE}); every machine of the cluster needs the same key file"
                )
            if work is not None:
                yield from work.docs


@task(cache_policy=NO_CACHE, persist_result=False)
def model_stage_run(
    stage: str,
    files: list[InputFile],
    cache_dir: str,
    fingerprint: str,
    ctx: StageContext,
    feed: DocFeed | None = None,
) -> dict[str, int]:
    """A registered run stage (index …) over every document of the run: from `feed` while the batches
    run, or read back from the cache once they are done."""
    t0 = time.perf_counter()
    try:
        counts = RUN_STAGES[stage](feed or CachedDocs(files, cache_dir, fingerprint), ctx)
    finally:
        if feed is not None:
            feed.stop()
    return {**counts, "stage_seconds": round(time.perf_counter() - t0, 2)}


def write_parts(store: OutputStore, work: FileWork) -> None:
    for table, rows in work.tables(store.run_id).items():
        if rows:
            # what each prediction rests on: its model's held-apart figures (retrieval.predict.card)
            extra = (
                {
                    "model_card": json.dumps(
                        model_card((r["task"], r["model_id"]) for r in rows), ensure_ascii=False
                    )
                }
                if table == "predictions"
                else None
            )
            store.write(table, rows, work.file.key, extra)
