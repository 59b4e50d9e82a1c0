"""The index stage of `ldx run`: encode every segment of the run, then commit the segment-state store
under OUT_DIR/index/, with the sentence model's vectors of the English segments that `ldx ask` searches
and ranks by (retrieval/store_vectors.py; `retrieval.sentence_model`).

The store keeps each segment's key and the inputs of `retrieval.state_layers`, so the stage runs only
the layers below the highest input it keeps (`index_layers`: layers 0 and 1 of the shipped model, whose
keys read layer 0 and whose store keeps layer 2). Retrieved slots are read only by the layers whose
states are stored, none of which runs then, so the stage injects nothing: injecting would change no
key or state it keeps (tests/test_index_layers.py).

`INDEX_STAGE` is the flow's "index" run stage (a retrieval.stages.RunStage; flows/tasks.py RUN_STAGES):

    INDEX_STAGE(docs: DocSource, ctx: StageContext) -> dict[str, int]

It reads `work.segments` of each DocWork and `ctx.config` (model, retrieval) and `ctx.out_dir`. The
plain-Python entry point is `index_segments(out_dir, segments_by_doc, model, tokenizer, config)`; the
flow's stage runs it in a child process of its own (in the stage's own process where that is daemonic, as a
Dask worker is).
Without a checkpoint the stage indexes nothing and says so in its counts (`no_model: 1`); `ldx ask`
then searches with BM25 (and the sentence model) alone.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import queue
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import torch

from pipeline.process import die_with_parent, release_freed_memory
from pipeline.records import Segment
from retrieval.config import RetrievalConfig
from retrieval.encoder import checkpoint_file, load_encoder
from retrieval.evidence import is_english
from retrieval.inject import DocInput, encode_stream
from retrieval.predict.config import PredictConfig
from retrieval.sentence import embed
from retrieval.stages import WAITING, DocSource, DocWork, StageConfig, StageContext, Waiting
from retrieval.store import SegmentStore, StoreError
from retrieval.store_dedup import StoreDuplicates
from txl.keys import key_dim, key_identity, key_layer
from txl.model import autocast
from txl.retrieved import layer_indices

INDEX_DIR = "index"
TRIM_EVERY = 16  # documents encoded between handing freed memory back (pipeline.process)
# Documents sent to the index process and not yet taken in by its encoder: past them the stage waits, and
# the run's feed holds back new batches (flows.run), so that a run's memory does not grow with its corpus.
INBOX_DOCUMENTS = 32


def open_or_create(root: Path, model, config: RetrievalConfig, model_id: str = "") -> SegmentStore:
    """The store at `root`, created for this model's shapes if absent; refuses one built by another model
    or with other keys (another key head, or raw keys: txl.keys).

    A store with no model id and no keys is what a run killed before its first commit left behind (code
    before the model id went into the first manifest): it holds nothing, so it is made anew."""
    key_head = key_identity(model)
    try:
        store = SegmentStore.open(root, config=config)
    except StoreError:
        if (root / "manifest.json").exists():
            raise
        return _create(root, model, config, model_id)
    store.discard_uncommitted()
    if "model_id" not in store.manifest and len(store) == 0:
        (root / "manifest.json").unlink()
        return _create(root, model, config, model_id)
    if store.manifest.get("key_head", "") != key_head:
        built = store.manifest.get("key_head") or "raw keys"
        raise StoreError(
            f"{root}: built with {built}, not {key_head or 'raw keys'}; re-index with a new OUT_DIR"
        )
    if store.manifest.get("model_id", "") != model_id or store.dim != key_dim(model):
        raise StoreError(
            f"{root}: built with model {store.manifest.get('model_id') or '?'}; re-index with a new OUT_DIR"
        )
    return store


def _create(root: Path, model, config: RetrievalConfig, model_id: str) -> SegmentStore:
    cfg = model.cfg
    layers = layer_indices(config.state_layers, cfg.n_layer)
    shape = (len(layers), config.states_per_layer, cfg.d_model)
    return SegmentStore.create(
        root, key_dim(model), shape, config, layers, model_id=model_id, key_head=key_identity(model)
    )


def index_segments(
    out_dir: str | Path,
    segments_by_doc: Iterable[list[Segment] | Waiting],
    model,
    tokenizer,
    config: RetrievalConfig | None = None,
    model_id: str = "",
    segmenter: str = "",
    retracted: Callable[[], Iterable[str]] = tuple,
    duplicate_threshold: float | None = None,
) -> dict[str, int]:
    """Encode and index documents (each a list of its segments in order; a `WAITING`: none is ready yet);
    a re-indexed document replaces its old entries. Commits once at the end.

    `retracted`, asked once the documents run out, names documents to leave out after all (their batch
    failed after they were handed over).

    `segmenter` names the segmentation that produced the segments (a hash of its config). While it is
    the one the store was built with, a document whose segments the store already holds exactly is kept
    as it is: doc ids are content hashes and the store is bound to one model, so its states would not
    change, and a rerun on unchanged input encodes nothing again.

    `duplicate_threshold` (None: the predict stage's default): near-duplicates apart in cross-document
    injection (retrieval/store_dedup.py)."""
    cfg = config or RetrievalConfig()
    store = open_or_create(Path(out_dir) / INDEX_DIR, model, cfg, model_id)
    if duplicate_threshold is None:
        duplicate_threshold = PredictConfig().duplicate_doc_threshold
    duplicates = StoreDuplicates(store, duplicate_threshold)
    reuse = bool(segmenter) and store.manifest.get("segmenter") == segmenter
    counts = {"docs": 0, "segs": 0, "kept": 0, "sentence_vectors": 0}
    # the English segments' sentence-model vectors for `ldx ask` (retrieval/store_vectors.py), on its device
    sentences = str(next(model.parameters()).device) if cfg.sentence_model else None
    t0, stats = time.perf_counter(), {}
    signed = duplicates if cfg.inject_cross_document else None  # signatures only where injection reads them
    docs = _to_encode(segments_by_doc, store, tokenizer, reuse, counts, signed, sentences)
    layers = index_layers(model, store)
    stream = encode_stream(model, docs, store, _inert(cfg, store, layers), stats, duplicates, False, layers)
    for n, _ in enumerate(stream, 1):
        if n % TRIM_EVERY == 0:
            release_freed_memory()
    gone = list(retracted())
    for doc_id in gone:
        store.delete_document(doc_id)
    store.manifest["pooling"] = cfg.pooling
    store.manifest["segmenter"] = segmenter
    store.commit()
    return {
        "indexed_documents": counts["docs"],
        "kept_documents": counts["kept"],
        "indexed_segments": counts["segs"],
        "reused_prefix_segments": stats.get("reused_segments", 0),
        "retracted_documents": len(gone),
        "index_keys": len(store),
        "embedded_sentence_vectors": counts["sentence_vectors"],
        "sentence_vectors": store.n_sentence_vectors,
        "state_bytes_per_segment": store.state_bytes_per_segment,
        "index_ms": int(1000 * (time.perf_counter() - t0)),
    }


def index_layers(model, store: SegmentStore) -> int | None:
    """How many of the model's layers the index stage runs (None: all of them): those below the highest
    layer whose input it keeps, the one its keys read and each whose states the store keeps."""
    if not store.state_layers:
        return None
    needed = max(key_layer(model), *store.state_layers)
    return needed if needed < model.cfg.n_layer else None


def _inert(cfg: RetrievalConfig, store: SegmentStore, layers: int | None) -> RetrievalConfig:
    """`cfg` with nothing injected where no layer that runs reads the retrieved slots: injecting would
    change nothing kept, and leaving it out lets more segments share a forward call (retrieval.lanes)."""
    if layers is None or layers > min(store.state_layers):
        return cfg
    return cfg.model_copy(update={"inject_k": 0})


def _to_encode(
    segments_by_doc: Iterable[list[Segment] | Waiting],
    store: SegmentStore,
    tokenizer,
    reuse: bool,
    counts: dict,
    duplicates: StoreDuplicates | None,
    sentences: str | None = None,
) -> Iterator[DocInput | Waiting]:
    """The documents `index_segments` encodes, each deleted from the store first; with `reuse`, one the
    store already holds exactly is skipped (counted as kept), its signature made (with `duplicates`) if
    the store lacks it. With `sentences` (a device), each document's English segments get
    their sentence-model vectors, a kept document's where it has none yet."""
    for segments in segments_by_doc:
        if isinstance(segments, Waiting):  # the stream works on the documents it has meanwhile
            yield segments
            continue
        if not segments:
            continue
        segments = sorted(segments, key=lambda s: s.seg_idx)
        doc_id = segments[0].doc_id
        # segment ids run doc_id:0 … doc_id:n-1, so all present and doc_id:n absent means the same set
        if (
            reuse
            and all(s.segment_id in store for s in segments)
            and f"{doc_id}:{len(segments)}" not in store
        ):
            counts["kept"] += 1
            if sentences:
                counts["sentence_vectors"] += _add_sentence_vectors(store, segments, sentences)
            if duplicates is not None and doc_id not in store.signatures.hashes:
                duplicates.enter(doc_id, segments)
            continue
        store.delete_document(doc_id)
        if sentences:
            counts["sentence_vectors"] += _add_sentence_vectors(store, segments, sentences)
        counts["docs"] += 1
        counts["segs"] += len(segments)
        yield DocInput.encoded(segments, tokenizer)


def _add_sentence_vectors(store: SegmentStore, segments: list[Segment], device: str) -> int:
    """Embed the document's English segments that have no vector for their text in the store; how many."""
    todo = [
        s
        for s in segments
        if is_english(s.text, store.config) and not store.has_sentence_vector(s.segment_id, s.text)
    ]
    if todo:
        texts = [s.text for s in todo]
        # in fp32, as `ldx ask` embeds what is missing: the encoder's bf16 autocast is not for this model
        with torch.autocast(torch.device(device).type, enabled=False):
            vectors = embed(texts, device=device)
        store.add_sentence_vectors([s.segment_id for s in todo], texts, vectors)
    return len(todo)


class _Worker:
    """The index process and its two queues."""

    def __init__(self, checkpoint: Path, config):
        spawn = multiprocessing.get_context(
            "spawn"
        )  # a fork of a threaded process with torch loaded is unsafe
        self.inbox, self.outbox = spawn.Queue(INBOX_DOCUMENTS), spawn.Queue()
        self.key = _worker_key(checkpoint, config)
        self.process = spawn.Process(
            target=_index_child,
            name="ldx-index",
            daemon=True,
            args=(self.inbox, self.outbox, os.getpid(), str(checkpoint), config),
        )
        self.process.start()

    def send(self, item: object) -> bool:
        """Put `item` in the child's inbox, waiting while the inbox is full; False if the child ended."""
        while self.process.is_alive():
            try:
                self.inbox.put(item, timeout=1.0)
                return True
            except queue.Full:
                continue
        return False

    def result(self) -> tuple[str, object]:
        """The child's ("ok", counts) or ("error", message), waiting while it lives."""
        while True:
            try:
                return self.outbox.get(timeout=1.0)
            except queue.Empty:
                if self.process.is_alive():
                    continue
            try:  # it may have written its result just before it ended
                return self.outbox.get(timeout=5.0)
            except queue.Empty:
                return "error", f"it ended without a result (exit code {self.process.exitcode})"

    def close(self) -> None:
        """End the child and let go of its queues without waiting on them: a queue's feeder thread blocked
        on a dead child's full pipe would otherwise keep the run from exiting (Queue._finalize_join)."""
        self.process.join(timeout=10)  # it has sent its result and is exiting
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=10)
        for q in (self.inbox, self.outbox):
            q.cancel_join_thread()
            q.close()


def _worker_key(checkpoint: Path, config) -> str:
    return (
        f"{checkpoint}|{config.model.model_dump_json()}|{config.retrieval.model_dump_json()}|"
        f"{config.segment.model_dump_json()}|{config.predict.duplicate_doc_threshold}"
    )


class IndexStage:
    """The "index" run stage (a retrieval.stages.RunStage; see the module docstring)."""

    def __init__(self) -> None:
        self._prepared: _Worker | None = None  # the process prepare() started, if any

    def prepare(self, config: StageConfig) -> None:
        """Start the index process ahead of the run (its imports and model load take seconds), for `ldx run`
        to do while its Prefect server starts; the stage takes it if the run's config is the same."""
        path = checkpoint_file(config.model.checkpoint)
        if path is not None and path.is_file() and self._prepared is None:
            self._prepared = _Worker(path, config)

    def __call__(self, docs: DocSource, ctx: StageContext) -> dict[str, int]:
        """The encoding runs in a child process: in the run's own process it would share the interpreter
        lock with the batch stages (parsing, the predict stage), which left both waiting on 2 cores. The
        documents go to it through a queue as they come; the child dies with the run.

        In a daemonic process (a Dask worker's) no child may be started: there the stage encodes in the
        process itself. It has it to itself then, since Dask runs the run stages after the batches."""
        path = checkpoint_file(ctx.config.model.checkpoint)
        if path is None or not path.is_file():
            return {"indexed_documents": 0, "no_model": 1}
        if multiprocessing.current_process().daemon:
            return _index_here(docs, ctx, path)
        worker, self._prepared = self._prepared, None
        if worker is None or worker.key != _worker_key(path, ctx.config) or not worker.process.is_alive():
            if worker is not None:  # started for another config
                worker.process.kill()
                worker.close()
            worker = _Worker(path, ctx.config)
        try:
            sent = worker.send(_Start(str(ctx.out_dir), ctx.model_id))
            for work in docs.documents():
                if not sent:
                    break  # the child ended: its result (an error) is read below
                if isinstance(work, DocWork) and work.segments:
                    sent = worker.send(work.segments)
            else:
                worker.send(_End(sorted(docs.retracted)))
            status, value = worker.result()
        except BaseException:
            worker.process.kill()
            raise
        finally:
            worker.close()
        if status != "ok":
            raise RuntimeError(f"the index process failed: {value}")
        return value


INDEX_STAGE = IndexStage()


@dataclass
class _Start:
    """Where the run writes, and under which model id: the first message a (maybe prepared) child gets."""

    out_dir: str
    model_id: str


@dataclass
class _End:
    """No more documents; these were handed over but their batch failed after all."""

    retracted: list[str]


def _index_child(inbox, outbox, parent: int, checkpoint: str, config) -> None:
    die_with_parent(parent=parent)
    try:
        torch.set_num_threads(config.model.stage_threads())
        start: _Start = inbox.get()
        retracted: list[str] = []

        def incoming() -> Iterator[list[Segment] | Waiting]:
            while True:
                try:
                    item = inbox.get_nowait()
                except queue.Empty:
                    yield WAITING  # the encoder works on what it has, then asks again
                    item = inbox.get()
                if isinstance(item, _End):  # the batches are done: the rest of the encoding has the cores
                    retracted.extend(item.retracted)
                    torch.set_num_threads(config.model.stage_threads(alone=True))
                    return
                yield item

        counts = _encode_run(Path(checkpoint), config, start, incoming(), lambda: retracted)
        outbox.put(("ok", counts))
    except BaseException as e:  # noqa: BLE001 - whatever it was, the run must hear of it
        outbox.put(("error", "".join(traceback.format_exception_only(type(e), e)).strip()))


def _index_here(docs: DocSource, ctx: StageContext, checkpoint: Path) -> dict[str, int]:
    """The stage in the calling process, with every core (see IndexStage.__call__); the process's torch
    threads are as they were afterwards, for the worker's next tasks."""
    before = torch.get_num_threads()
    torch.set_num_threads(ctx.config.model.stage_threads(alone=True))
    try:
        segments = (w if isinstance(w, Waiting) else w.segments for w in docs.documents())
        return _encode_run(
            checkpoint, ctx.config, _Start(str(ctx.out_dir), ctx.model_id), segments, lambda: docs.retracted
        )
    finally:
        torch.set_num_threads(before)


def _encode_run(
    checkpoint: Path,
    config,
    start: _Start,
    segments_by_doc: Iterable[list[Segment] | Waiting],
    retracted: Callable[[], Iterable[str]],
) -> dict[str, int]:
    """Load the encoder and index the run's documents: the index process's work, or the stage's own."""
    mcfg = config.model
    model, tokenizer = load_encoder(checkpoint, mcfg.device, config.retrieval.key_head)
    segmenter = hashlib.sha256(config.segment.model_dump_json().encode()).hexdigest()[:16]
    with autocast(next(model.parameters()).device, mcfg.dtype):
        return index_segments(
            start.out_dir,
            segments_by_doc,
            model,
            tokenizer,
            config.retrieval,
            start.model_id,
            segmenter,
            retracted,
            config.predict.duplicate_doc_threshold,
        )
