"""The run flow with its default stages (predict, encode + index) on a Dask cluster of separate worker
processes gives the threaded run's outputs: the same Parquet rows and the same index.

The cluster is reached by its address, as `ldx run --dask-address` does (flows.cli_run sets the same two
config fields); one of its two workers has a GPU resource, which the index stage asks for; its workers are
daemonic processes, where the index stage encodes in the worker itself
(retrieval/stage.py) instead of starting a child.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from distributed.diagnostics.plugin import SchedulerPlugin

from pipeline.records import SCHEMAS
from pipeline.store import open_duckdb

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
RUN = {"batch_size": 2, "workers": 2}


def _run(out: Path, run: dict) -> dict:
    """The samples run with these `run` options (its task runner among them)."""
    from flows.config import LdxConfig
    from flows.run import run_flow, task_runner_for

    cfg = LdxConfig.model_validate({"run": run})
    return run_flow.with_options(task_runner=task_runner_for(cfg))(
        str(SAMPLES), str(out), cfg.model_dump(mode="json")
    )


@pytest.fixture(scope="module")
def runs(prefect_harness, demo_run, tmp_path_factory):
    """The threaded run is the session's demo run: the same samples, the same RUN options. The Dask run
    is on a cluster where one worker of two has a GPU resource and `run.dask_stage_resources` asks for it
    (what the index stage may not leave, the outputs, must still be the threaded run's)."""
    from distributed import Client, Nanny, Scheduler, SpecCluster, get_task_stream

    from flows.manifest import read_manifest

    threaded = read_manifest(demo_run)
    assert {k: threaded["config"]["run"][k] for k in RUN} == RUN
    root = tmp_path_factory.mktemp("dask")
    workers = {
        "cpu": {"cls": Nanny, "options": {"nthreads": 1}},
        "gpu": {"cls": Nanny, "options": {"nthreads": 1, "resources": {"GPU": 1}}},
    }
    scheduler = {"cls": Scheduler, "options": {"dashboard_address": None}}
    asked: dict[str, dict | None] = {}
    with SpecCluster(workers=workers, scheduler=scheduler) as cluster, Client(cluster) as client:
        cluster.scheduler.add_plugin(_Restrictions(cluster.scheduler, asked))  # the scheduler runs here
        gpu = next(a for a, w in client.scheduler_info()["workers"].items() if w["resources"])
        with get_task_stream(client) as stream:
            run = {**RUN, "task_runner": "dask", "dask_address": cluster.scheduler_address}
            dask = _run(root / "dask", {**run, "dask_stage_resources": {"GPU": 1}})
    placed = {"gpu": gpu, "tasks": stream.data, "asked": asked}
    return (demo_run, threaded), (root / "dask", dask), placed


def _rows(out: Path, table: str) -> tuple[list[tuple], np.ndarray]:
    """The table's rows without the run id (each run has its own) and without its float columns, in one
    order; and those float columns (a prediction's score) in the same order."""
    schema = SCHEMAS[table]
    floats = [f.name for f in schema if pa.types.is_floating(f.type)]
    others = [f.name for f in schema if f.name != "run_id" and f.name not in floats]
    order = ", ".join(others)
    con = open_duckdb(out)
    rows = con.execute(f"SELECT {order} FROM {table} ORDER BY {order}").fetchall()
    numbers = con.execute(f"SELECT {', '.join(floats) or 'NULL'} FROM {table} ORDER BY {order}").fetchall()
    return rows, np.array(numbers, dtype=np.float64)


def test_dask_run_completes_with_the_model_stages(runs):
    (_, threaded), (_, dask), _ = runs
    assert threaded["status"] == dask["status"] == "completed"
    assert dask["counts"]["index"]["indexed_segments"] == dask["counts"]["segments"] > 50
    assert "no_model" not in dask["counts"]["index"]
    for name in ("files", "documents", "segments", "predictions", "errors"):
        assert dask["counts"][name] == threaded["counts"][name], name


@pytest.mark.parametrize("table", list(SCHEMAS))
def test_dask_run_writes_the_threaded_runs_rows(runs, table):
    (threads_out, _), (dask_out, _), _ = runs
    rows, numbers = _rows(dask_out, table)
    want_rows, want_numbers = _rows(threads_out, table)
    assert rows == want_rows
    assert rows or table == "errors"
    # a score is a model's float32 output: the worker process's math libraries may round its last bit
    # otherwise (measured: 2 ulp on one block-role score)
    np.testing.assert_allclose(numbers, want_numbers, rtol=1e-6)


def test_dask_run_builds_the_threaded_runs_index(runs):
    from retrieval.store import SegmentStore

    (threads_out, _), (dask_out, _), _ = runs
    a, b = SegmentStore.open(threads_out / "index"), SegmentStore.open(dask_out / "index")
    ids = [e["segment_id"] for e in a.entries()]
    assert [e["segment_id"] for e in b.entries()] == ids
    assert [(e["doc_id"], e["seg_idx"], e["block_type"]) for e in b.entries()] == [
        (e["doc_id"], e["seg_idx"], e["block_type"]) for e in a.entries()
    ]
    # the encoder's intra-op threads differ between the runs (a child with half the cores until the
    # batches end, against the worker with all of them), which may move the last bits of a sum
    np.testing.assert_allclose(b.keys(ids), a.keys(ids), atol=1e-4)
    states_a, mask_a = a.states(ids)
    states_b, mask_b = b.states(ids)
    assert (mask_a == mask_b).all()
    np.testing.assert_allclose(states_b.astype(np.float32), states_a.astype(np.float32), atol=2e-2)


def test_the_index_stage_goes_to_the_worker_with_the_resources_it_asks_for(runs):
    """`run.dask_stage_resources`: the index task asks for the GPU resource and runs on the worker that has
    it; the batch tasks ask for nothing."""
    _, (_, dask), placed = runs
    assert dask["status"] == "completed" and dask["counts"]["index"]["indexed_segments"] > 0
    index_tasks = [t for t in placed["tasks"] if t["key"].startswith("model_stage_run")]
    assert [t["worker"] for t in index_tasks] == [placed["gpu"]], [t["key"] for t in placed["tasks"]]
    assert {k: v for k, v in placed["asked"].items() if v} == {index_tasks[0]["key"]: {"GPU": 1}}
    assert len(placed["asked"]) > 3  # scan, parse, segment, predict, write ran too, asking for nothing


class _Restrictions(SchedulerPlugin):
    """A scheduler plugin: the worker resources each task asked for, as it starts processing."""

    def __init__(self, scheduler, asked: dict):
        self.scheduler, self.asked = scheduler, asked

    def transition(self, key, start, finish, *args, **kwargs):
        if finish == "processing":
            self.asked[key] = self.scheduler.tasks[key].resource_restrictions
