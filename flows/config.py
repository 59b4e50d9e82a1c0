"""The effective configuration: one typed section per subsystem, from code defaults, a TOML file and
command-line overrides (`section.key=value`), in that order."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Literal

import tomli_w
from pydantic import Field, ValidationError

from pipeline.config import ConfigError, Options, ParseConfig, SegmentConfig, apply_overrides
from retrieval.config import RetrievalConfig
from retrieval.predict.config import PredictConfig
from txl.config import ModelConfig


class RunConfig(Options):
    workers: int = 2  # concurrent batch tasks (threads, or local Dask worker processes)
    # documents per task batch: the predict stage encodes a batch's documents 32 side by side (the default
    # RetrievalConfig.encode_lanes), and a smaller batch leaves some of those lanes idle
    batch_size: int = 32
    # A run's memory is bounded by these, not by its corpus: batches started and not yet written (this
    # many per worker), and documents handed to a run stage (the encoder) that it has not taken yet. Past
    # either, no new batch starts: parsing waits for the slowest stage instead of holding every document.
    batches_per_worker: int = Field(2, ge=1)
    stage_backlog: int = Field(32, ge=1)
    task_runner: Literal["threads", "dask"] = "threads"
    dask_address: str | None = None  # a running Dask scheduler; None = a local cluster
    # Dask worker resources the run stages (the index stage's encoder) ask for, e.g. {"GPU": 1}: they then
    # run only on a worker started with `--resources GPU=1`; empty = any worker. Threads ignore it.
    dask_stage_resources: dict[str, float] = {}
    retries: int = 2  # more tries for the stages that can fail transiently (I/O, model, write)
    retry_delay_s: float = 2.0  # first retry delay; doubles on each further try
    # parse and segment always run; encode and index are one stage (the encoder writes each segment's
    # states into the index as it goes, and injection reads them back), so naming either runs both
    stages: list[Literal["parse", "segment", "encode", "index", "predict"]] = [
        "parse",
        "segment",
        "encode",
        "index",
        "predict",
    ]
    cache_dir: str | None = None  # per-file result cache; None = OUT_DIR/.cache
    open_report: bool = False


class LdxConfig(Options):
    parse: ParseConfig = ParseConfig()
    segment: SegmentConfig = SegmentConfig()
    model: ModelConfig = ModelConfig()
    retrieval: RetrievalConfig = RetrievalConfig()
    predict: PredictConfig = PredictConfig()
    run: RunConfig = RunConfig()


def load_config(path: str | Path | None = None, overrides: list[str] | None = None) -> LdxConfig:
    data: dict = {}
    if path is not None:
        path = Path(path)
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{path}: config file not found") from None
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{path}: not valid TOML ({e})") from None
    apply_overrides(data, overrides, min_depth=2, example="segment.max_tokens=256")
    try:
        return LdxConfig.model_validate(data)
    except ValidationError as e:
        where = f"{path}: " if path else ""
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors())
        raise ConfigError(f"{where}bad config ({problems})") from None


def config_toml(config: LdxConfig) -> str:
    """The effective config as TOML (what `ldx config show` prints and a file can hold). TOML has no
    null: an unset key is listed as a comment under its section's header, so a file keeps it unset."""
    sections = []
    for section, values in config.model_dump(mode="json").items():
        header = f"[{section}]\n"  # tomli-w leaves it out of a section that holds only tables
        body = tomli_w.dumps({section: {k: v for k, v in values.items() if v is not None}}).removeprefix(
            header
        )
        unset = "".join(f"# {key} = (unset)\n" for key, value in values.items() if value is None)
        sections.append(header + unset + body)
    return "\n".join(sections)
