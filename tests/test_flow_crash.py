"""Crash safety: `ldx run` killed with SIGKILL at random moments, then run again, ends with exactly the
rows of an uninterrupted run, under the run id of the unfinished run."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

from flows.manifest import read_manifest
from tests.test_flow import rows, write_jsonl_slice

LDX = str(Path(sys.executable).with_name("ldx"))
TABLES = ("documents", "blocks", "segments", "errors")


def _start(corpus: Path, out: Path, env: dict, stages: str = "[]") -> subprocess.Popen:
    return subprocess.Popen(
        [
            LDX,
            "run",
            str(corpus),
            "--out",
            str(out),
            "--set",
            "run.batch_size=1",
            "--set",
            f"run.stages={stages}",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_until_flow_started(out: Path, attempt: int, proc: subprocess.Popen) -> None:
    """Until this attempt's flow run has written its manifest (each attempt appends its flow run id)."""
    while proc.poll() is None:
        m = read_manifest(out)
        if m and (len(m["flow_run_ids"]) >= attempt or m["status"] == "completed"):
            return
        time.sleep(0.02)


def test_killed_runs_resume_to_the_outputs_of_an_uninterrupted_run(prefect_harness, shared_data, tmp_path):
    from prefect.settings import PREFECT_API_URL

    corpus = tmp_path / "in"
    corpus.mkdir()
    for i in range(8):  # several files, so that a kill can fall between their writes
        write_jsonl_slice(shared_data, corpus / f"part{i}.jsonl", 4, start=40 + 4 * i)
    (corpus / "notes.csv").write_text("not a document\n")
    # The subprocesses share the session's Prefect test server instead of each starting its own.
    env = {**os.environ, "PREFECT_API_URL": PREFECT_API_URL.value(), "PREFECT_LOGGING_LEVEL": "WARNING"}

    from flows.run import run_flow

    clean = tmp_path / "clean"
    t0 = time.monotonic()
    run_flow(str(corpus), str(clean), {"run": {"batch_size": 1, "stages": []}})
    span = time.monotonic() - t0  # how long the flow itself runs, start-up excluded

    crashed = tmp_path / "crashed"
    rng = random.Random(20261129)
    unfinished = None
    for attempt in range(1, 4):
        proc = _start(corpus, crashed, env)
        _wait_until_flow_started(crashed, attempt, proc)
        time.sleep(rng.uniform(0, span))  # a random moment of the run: scanning, batches, writes, report
        proc.kill()
        proc.wait()
        m = read_manifest(crashed)
        unfinished = m["run_id"] if m["status"] == "running" else None
    proc = _start(corpus, crashed, env)
    assert proc.wait(timeout=180) == 0, proc.stderr.read()[-3000:]

    want, got = read_manifest(clean), read_manifest(crashed)
    assert got["status"] == "completed"
    if unfinished:
        assert got["run_id"] == unfinished  # the rerun resumed the killed run instead of starting anew
    for table in TABLES:
        assert rows(crashed, table, got["run_id"]) == rows(clean, table, want["run_id"]), table
    assert got["counts"]["documents"] == want["counts"]["documents"] == 32
    assert not list(crashed.glob(f"*/run_id={got['run_id']}/.*.tmp"))
