"""The Parquet store: atomic parts, idempotent keys, runs side by side, the writer lock."""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from pathlib import Path

import pytest

from pipeline.records import ErrorRecord, error_rows
from pipeline.store import OutputStore, StoreLocked, atomic_write_bytes, open_duckdb


def _errors(run_id: str, n: int) -> list[dict]:
    return error_rows(
        [ErrorRecord(f"f{i}.pdf", "parse", "EmptyDocument", "empty file") for i in range(n)], run_id
    )


def test_atomic_write_leaves_old_file_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "a.bin"
    atomic_write_bytes(target, b"old")

    def broken_replace(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.bin"]  # no temp file left behind


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_outputs_take_the_users_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        atomic_write_bytes(tmp_path / "a.json", b"{}")
        OutputStore(tmp_path, "run-a").write("errors", _errors("run-a", 1), "k")
    finally:
        os.umask(old)
    part = next((tmp_path / "errors").rglob("*.parquet"))
    # analysts who share OUT_DIR read the Parquet: not only its writer
    assert [f.stat().st_mode & 0o777 for f in (tmp_path / "a.json", part)] == [mode, mode]


def test_same_key_replaces_and_runs_accumulate(tmp_path):
    first = OutputStore(tmp_path, "run-a")
    first.write("errors", _errors("run-a", 3), "k")
    first.write("errors", _errors("run-a", 2), "k")  # a resumed run rewrites its part: no duplicates
    second = OutputStore(tmp_path, "run-b")
    second.write("errors", _errors("run-b", 4), "k")
    con = open_duckdb(tmp_path)
    counts = dict(con.execute("select run_id, count(*) from errors group by run_id").fetchall())
    assert counts == {"run-a": 2, "run-b": 4}
    assert con.execute("select count(*) from segments").fetchone() == (0,)  # empty view, not an error


def _hold_lock(out_dir: str, ready, release) -> None:
    with OutputStore(out_dir, "holder").lock():
        ready.set()
        release.wait(30)


def test_second_writer_is_refused_and_lock_dies_with_holder(tmp_path: Path):
    ctx = mp.get_context("spawn")
    ready, release = ctx.Event(), ctx.Event()
    proc = ctx.Process(target=_hold_lock, args=(str(tmp_path), ready, release))
    proc.start()
    assert ready.wait(60)
    with pytest.raises(StoreLocked, match="holder"):
        with OutputStore(tmp_path, "second").lock():
            pass
    proc.kill()  # like kill -9: the OS drops the flock
    proc.join()
    deadline = time.time() + 10
    while True:
        try:
            with OutputStore(tmp_path, "third").lock():
                break
        except StoreLocked:
            assert time.time() < deadline
            time.sleep(0.1)


def test_unknown_table_is_an_error(tmp_path):
    with pytest.raises(KeyError, match="unknown table"):
        OutputStore(tmp_path, "r").write("nope", [], "k")
