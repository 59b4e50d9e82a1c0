"""What a model stage of `ldx run` is: the types the flow (flows/tasks.py) hands to the stages after
`segment`, and the two kinds of stage it runs. They live here, below the flow, so that the stage modules
(retrieval.predict.stage, retrieval.stage) can name them without importing Prefect.

- A `BatchStage` runs once per batch: it fills each `DocWork.predictions` in place (e.g. "predict").
- A `RunStage` sees every document of the run, cached ones included, from a `DocSource` as their batches
  are segmented, and returns counts for the manifest (e.g. "index", which builds OUT_DIR/index/ whose
  ids are the run's segment ids). It writes no Parquet rows: the report is drawn from the tables while
  the run stages finish.

The flow registers stage objects by name (flows.tasks.BATCH_STAGES, RUN_STAGES); `run.stages` in the
config chooses which of them a run executes.
"""

from __future__ import annotations

from collections.abc import Iterator, Set
from dataclasses import dataclass, field
from typing import Protocol

from pipeline.config import SegmentConfig
from pipeline.records import Document, Prediction, Segment
from retrieval.config import RetrievalConfig
from retrieval.predict.config import PredictConfig
from txl.config import ModelConfig


@dataclass
class DocWork:
    """One document on its way through the stages."""

    document: Document
    segments: list[Segment] = field(default_factory=list)
    predictions: list[Prediction] = field(default_factory=list)


@dataclass(frozen=True)
class Waiting:
    """In a stream of documents: none is ready just now. The consumer may work on what it holds; asking
    for the next item then blocks until one comes."""


WAITING = Waiting()


class StageConfig(Protocol):
    """The parts of the run's config (flows.config.LdxConfig) that the stages read."""

    @property
    def segment(self) -> SegmentConfig: ...

    @property
    def model(self) -> ModelConfig: ...

    @property
    def retrieval(self) -> RetrievalConfig: ...

    @property
    def predict(self) -> PredictConfig: ...


@dataclass(frozen=True)
class StageContext:
    config: StageConfig
    out_dir: str
    run_id: str
    model_id: str


class DocSource(Protocol):
    """A run stage's documents: a live feed of the batches being segmented, or those read back from the
    cache once the batches are done."""

    def documents(self) -> Iterator[DocWork | Waiting]:
        """The documents in arrival order, with a `WAITING` wherever none is ready yet."""
        ...

    @property
    def retracted(self) -> Set[str]:
        """Asked once `documents()` ran out: doc_ids handed over whose batch failed afterwards, to be
        left out."""
        ...


class BatchStage(Protocol):
    def prepare(self, config: StageConfig) -> None:
        """Start slow set-up before the first batch needs it (`ldx run` calls it while its Prefect
        server starts; threads runner only, as Dask's workers are other processes)."""
        ...

    def __call__(self, docs: list[DocWork], ctx: StageContext) -> None: ...


class RunStage(Protocol):
    def prepare(self, config: StageConfig) -> None:
        """As `BatchStage.prepare`."""
        ...

    def __call__(self, docs: DocSource, ctx: StageContext) -> dict[str, int]: ...
