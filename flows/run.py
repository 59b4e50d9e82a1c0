"""The run flow: INPUT_DIR → parse → segment → encode → predict → write (per batch) → index (per run).

Batches move through their stages independently: a stage's task is submitted the moment the batch's
previous stage finishes, so the task runner's workers never sit waiting on an upstream result.
"""

from __future__ import annotations

import queue
from collections import Counter, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.cache_policies import NO_CACHE
from prefect.context import get_run_context
from prefect.futures import PrefectFuture
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.tasks import exponential_backoff
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from flows import manifest as mf
from flows.config import LdxConfig
from flows.report import publish_artifacts, render_body, write_report
from flows.tasks import (
    DocFeed,
    FileBatch,
    FileCache,
    active_stages,
    config_fingerprint,
    make_batches,
    model_stage_batch,
    model_stage_run,
    parse_batch,
    restore_batch,
    scan_inputs,
    segment_batch,
    write_batch,
    write_parts,
)
from flows.work import FileWork, InputFile, document_error
from pipeline.records import ErrorRecord, error_rows
from pipeline.store import OutputStore
from retrieval.stages import StageContext

FRESH = "fresh"
CACHED = "cached"
POLL_S = 0.25  # how often a driver holding batches back looks at the run stages' backlog again


@dataclass
class Tally:
    """What the written batches held, for the manifest, the artifacts and the progress line."""

    files: int = 0
    cached_files: int = 0
    documents: int = 0
    pages: int = 0
    blocks: int = 0
    segments: int = 0
    predictions: int = 0
    errors: int = 0

    def add(self, work: FileWork) -> None:
        """One file or window of a JSONL corpus written; a file counts once, with its first window."""
        self.files += work.file.first
        self.cached_files += work.cached and work.file.first
        self.documents += len(work.docs)
        self.pages += sum(d.document.n_pages or 0 for d in work.docs)
        self.blocks += sum(len(d.document.blocks) for d in work.docs)
        self.segments += sum(len(d.segments) for d in work.docs)
        self.predictions += sum(len(d.predictions) for d in work.docs)
        self.errors += len(work.errors)


def task_runner_for(config: LdxConfig):
    if config.run.task_runner == "dask":
        # start-up: prefect_dask adds ~0.2 s to every run's import of this module; only --dask runs need it
        from prefect_dask import DaskTaskRunner

        if config.run.dask_address:
            return DaskTaskRunner(address=config.run.dask_address)
        return DaskTaskRunner(cluster_kwargs={"n_workers": config.run.workers, "threads_per_worker": 1})
    # one more thread per run stage: those take the batches' documents while the batches run
    return ThreadPoolTaskRunner(max_workers=config.run.workers + len(active_stages(config)[1]))


@task(name="scan", cache_policy=NO_CACHE, persist_result=False)
def scan(input_dir: str, lines_per_part: int) -> tuple[list[InputFile], list[ErrorRecord]]:
    return scan_inputs(Path(input_dir), lines_per_part)


class Driver:
    """Submits each batch's next stage as soon as its previous one finishes; collects the outcome.

    A batch starts only while fewer than `run.batches_per_worker` per worker are under way and no run
    stage has `run.stage_backlog` documents waiting: the documents in memory are bounded by those, not by
    the corpus. A written batch is let go."""

    def __init__(
        self,
        ctx: StageContext,
        cache_dir: str,
        fingerprint: str,
        progress: Progress,
        bar,
        total: int,
        feeds: list[DocFeed],
    ):
        cfg = ctx.config.run
        retry = {
            "retries": cfg.retries,
            "retry_delay_seconds": exponential_backoff(cfg.retry_delay_s)(max(cfg.retries, 1)),
        }
        batch_stages, _ = active_stages(ctx.config)
        self.ctx, self.cache_dir, self.fingerprint = ctx, cache_dir, fingerprint
        self.store = OutputStore(ctx.out_dir, ctx.run_id, ctx.model_id)
        self.progress, self.bar = progress, bar
        self.total_parts, self.parts_done = total, 0
        self.feeds = feeds
        self.fed: set[str] = set()
        # The same progress in the Prefect UI, on the flow run's Artifacts tab.
        self.artifact = create_progress_artifact(0.0, key="ldx-run-progress", description="parts written")
        self.tally = Tally()
        self.seconds: Counter[str] = Counter()
        self.plans: dict[str, list[tuple[str, Any]]] = {
            FRESH: [
                ("parse", lambda b: parse_batch.with_options(**retry).submit(b, ctx.config)),
                ("segment", lambda b: segment_batch.submit(b, ctx.config)),
                *[
                    (
                        name,
                        lambda b, name=name: model_stage_batch.with_options(name=name, **retry).submit(
                            b, name, ctx
                        ),
                    )
                    for name in batch_stages
                ],
                ("write", lambda b: write_batch.with_options(**retry).submit(b, ctx, cache_dir, fingerprint)),
            ],
            CACHED: [
                ("restore", lambda b: restore_batch.with_options(**retry).submit(b, cache_dir, fingerprint)),
                ("write", lambda b: write_batch.with_options(**retry).submit(b, ctx, cache_dir, fingerprint)),
            ],
        }
        self.done: queue.Queue[PrefectFuture] = queue.Queue()
        self.pending: dict[PrefectFuture, tuple[str, int, FileBatch]] = {}
        self.waiting: deque[tuple[str, FileBatch]] = deque()  # batches not started yet
        self.next_index = 0

    def submit(self, plan: str, step: int, batch: FileBatch, upstream: PrefectFuture | None = None) -> None:
        # Handing the finished upstream future (not its value) to the task records the lineage in Prefect.
        future = self.plans[plan][step][1](upstream or batch)
        self.pending[future] = (plan, step, batch)
        future.add_done_callback(self.done.put)

    def start(self, files: list[FileWork], plan: str) -> None:
        """Batch the files; they start as `admit` lets them."""
        run = self.ctx.config.run
        batches = make_batches(files, run.batch_size, self.next_index, run.workers)
        self.next_index += len(batches)
        self.waiting.extend((plan, batch) for batch in batches)
        self.admit()

    def admit(self) -> None:
        """Start waiting batches while the bounds allow; a batch under way has one pending future."""
        run = self.ctx.config.run
        while (
            self.waiting
            and len(self.pending) < run.batches_per_worker * run.workers
            and all(feed.backlog < run.stage_backlog for feed in self.feeds)
        ):
            plan, batch = self.waiting.popleft()
            self.submit(plan, 0, batch)

    def run(self) -> None:
        while self.pending or self.waiting:
            try:
                future = self.done.get(timeout=POLL_S)
            except queue.Empty:
                self.admit()  # a run stage may have caught up
                continue
            plan, step, batch = self.pending.pop(future)
            stage = self.plans[plan][step][0]
            future.wait()  # settles the future's final state locally, without asking the API
            if not future.state.is_completed():
                self.give_up(batch, stage, future.result(raise_on_failure=False))
                continue
            batch = future.result()
            missed = [w for w in batch.files if not w.cached] if stage == "restore" else []
            if missed:
                batch.files = [w for w in batch.files if w.cached]
            if stage in ("segment", "restore"):
                self.feed(batch)
            if step + 1 < len(self.plans[plan]):
                self.submit(plan, step + 1, batch, upstream=future)
            else:
                self.finish(batch)
            if missed:  # after this batch's next step is pending, so that `admit` counts it as under way
                self.start(missed, FRESH)

    def feed(self, batch: FileBatch) -> None:
        """Hand the batch's segmented documents to the run stages now, not after its other stages: the
        encoder starts early. A batch that fails later takes them back (give_up)."""
        for work in batch.files:
            self.fed.update(d.document.doc_id for d in work.docs)
            for feed in self.feeds:
                feed.put(work.docs)

    def finish(self, batch: FileBatch) -> None:
        for work in batch.files:
            self.tally.add(work)
            self.fed.difference_update(d.document.doc_id for d in work.docs)
        self.seconds.update(batch.seconds)
        self.report_progress(batch)
        self.admit()  # the batch is written: another may start

    def report_progress(self, batch: FileBatch) -> None:
        self.parts_done += len(batch.files)
        self.progress.update(
            self.bar,
            advance=len(batch.files),
            description=f"{self.tally.documents} documents · {self.tally.errors} errors · {self.tally.cached_files} cached files",
        )
        done = 100.0 * self.parts_done / self.total_parts if self.total_parts else 100.0
        update_progress_artifact(self.artifact, min(done, 100.0))

    def give_up(self, batch: FileBatch, stage: str, exc: BaseException | Any) -> None:
        """A batch whose stage failed every try: each of its files gets an error row; the run goes on."""
        get_run_logger().error(f"batch {batch.index}: {stage} failed after retries: {exc!r}")
        taken = {d.document.doc_id for w in batch.files for d in w.docs} & self.fed
        for feed in self.feeds:
            feed.retract(taken)
        for work in batch.files:
            failed = FileWork(work.file, errors=[document_error(work.file.path, stage, exc, work.file.key)])
            write_parts(self.store, failed)
            self.tally.add(failed)
        self.report_progress(batch)
        self.admit()  # the batch is given up: another may start


@flow(name="ldx-run", persist_result=False, validate_parameters=True)
def run_flow(input_dir: str, out_dir: str, config: dict[str, Any] | None = None) -> dict:
    """Parse, segment, encode, index and predict every document under INPUT_DIR into Parquet under OUT_DIR."""
    cfg = LdxConfig.model_validate(config or {})
    inp, out = Path(input_dir).resolve(), Path(out_dir).resolve()
    if not inp.is_dir():
        raise NotADirectoryError(f"{inp}: no such input directory")
    model = mf.model_identity(cfg)
    fingerprint = config_fingerprint(cfg, model["id"])
    resumed = mf.resumable_run(out, inp, fingerprint)
    run_id = resumed["run_id"] if resumed else mf.new_run_id()
    cache_dir = cfg.run.cache_dir or str(out / ".cache")
    logger = get_run_logger()
    flow_run_id = str(get_run_context().flow_run.id)

    with OutputStore(out, run_id, model["id"]).lock() as store:
        logger.info(f"{'resuming' if resumed else 'starting'} run {run_id}: {inp} -> {out}")
        if resumed:
            _drop_unfinished_writes(out, run_id)
        manifest = mf.start_manifest(out, inp, run_id, flow_run_id, cfg, model, fingerprint, resumed)
        try:
            ctx = StageContext(cfg, str(out), run_id, model["id"])
            run_stages = active_stages(cfg)[1]
            # with threads the run stages start now and take each batch's documents once it is segmented
            feeds = {name: DocFeed() for name in run_stages} if cfg.run.task_runner == "threads" else {}
            early = {
                name: model_stage_run.with_options(name=name).submit(
                    name, [], cache_dir, fingerprint, ctx, feed
                )
                for name, feed in zip(run_stages, feeds.values(), strict=False)
            }
            try:
                files, tally, seconds = _run_batches(
                    inp, store, ctx, cache_dir, fingerprint, list(feeds.values())
                )
            finally:
                for feed in feeds.values():
                    feed.close()
            # Every Parquet part is written: the report's figures and tables are drawn while the run stages finish.
            drawing = ThreadPoolExecutor(1, thread_name_prefix="report")
            body = drawing.submit(render_body, out, run_id)
            drawing.shutdown(wait=False)
            counts: dict[str, Any] = asdict(tally)
            for name in run_stages:
                stage = early.get(name) or _submit_run_stage(name, files, cache_dir, fingerprint, ctx)
                counts[name] = stage.result()
                seconds[name] += counts[name].pop("stage_seconds")
        except BaseException:
            mf.finish_manifest(out, manifest, "failed", {}, {})
            raise
        manifest = mf.finish_manifest(out, manifest, "completed", counts, dict(seconds))
        try:  # the report is the run's last step: a run whose report failed is not completed
            write_report(out, body.result())
            publish_artifacts(manifest)
        except BaseException:
            mf.finish_manifest(out, manifest, "failed", counts, dict(seconds))
            raise
    logger.info(f"run {run_id} completed: {counts['documents']} documents, {counts['errors']} errors")
    return manifest


def _submit_run_stage(name: str, files: list, cache_dir: str, fingerprint: str, ctx: StageContext):
    """A run stage's task once the batches are done; on Dask, placed on workers that have the resources
    `run.dask_stage_resources` names (a GPU worker for the encoder)."""
    resources = ctx.config.run.dask_stage_resources
    if ctx.config.run.task_runner != "dask" or not resources:
        return model_stage_run.with_options(name=name).submit(name, files, cache_dir, fingerprint, ctx)
    # The annotation is read when the task is handed to the Dask client, which happens in this thread.
    # start-up: dask comes with prefect_dask (~0.2 s, see task_runner_for); only --dask runs need it
    import dask

    with dask.annotate(resources=dict(resources)):
        return model_stage_run.with_options(name=name).submit(name, files, cache_dir, fingerprint, ctx)


def _drop_unfinished_writes(out: Path, run_id: str) -> None:
    """Temp files a killed run left mid-write; readers never saw them (they are not *.parquet)."""
    for tmp in out.glob(f"*/run_id={run_id}/.*.tmp"):
        tmp.unlink(missing_ok=True)


def _run_batches(
    inp: Path, store: OutputStore, ctx: StageContext, cache_dir: str, fingerprint: str, feeds: list[DocFeed]
):
    files, scan_errors = scan.submit(str(inp), ctx.config.run.batch_size).result()
    if scan_errors:
        store.write("errors", error_rows(scan_errors, store.run_id), "scan")
    file_cache = FileCache(cache_dir, fingerprint)
    hit = {f for f in files if file_cache.has(f)}
    console = Console(stderr=True)
    columns = (
        TextColumn("[bold]ldx run"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("parts · {task.description}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=False) as progress:
        bar = progress.add_task(f"{sum(f.first for f in hit)} cached files", total=len(files))
        driver = Driver(ctx, cache_dir, fingerprint, progress, bar, len(files), feeds)
        # The work lists go to the driver alone, so that a written batch's documents are let go.
        driver.start([FileWork(f) for f in files if f not in hit], FRESH)
        driver.start([FileWork(f) for f in files if f in hit], CACHED)
        driver.run()
    driver.tally.errors += len(scan_errors)
    return files, driver.tally, driver.seconds
