"""The Parquet store under OUT_DIR: atomic files, one partition per run, a writer lock, DuckDB views.

Layout: OUT_DIR/<table>/run_id=<run>/part-<key>.parquet. A part is keyed by what it holds (usually a
doc_id), so writing the same key again replaces the file instead of adding rows: a resumed run
neither loses nor duplicates rows. Runs accumulate side by side as hive partitions.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import __version__ as PIPELINE_VERSION
from pipeline.records import SCHEMA_VERSION, SCHEMAS, to_table

TABLES = tuple(SCHEMAS)
LOCK_NAME = ".ldx.lock"


class StoreLocked(RuntimeError):
    """Another process is writing this OUT_DIR."""


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temp file in the same directory, fsync, then rename over the target."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, obj) -> None:
    atomic_write_text(path, json.dumps(obj, ensure_ascii=False, indent=2, default=str))


def atomic_write_table(path: Path, table: pa.Table, metadata: dict[str, str]) -> None:
    schema_meta = dict(table.schema.metadata or {})
    schema_meta.update({k.encode(): v.encode() for k, v in metadata.items()})
    table = table.replace_schema_metadata(schema_meta)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        pq.write_table(table, tmp, compression="zstd")
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _safe_key(key: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in key)


class OutputStore:
    """Writes the tables of one run under OUT_DIR; hold `lock()` while writing."""

    def __init__(self, out_dir: str | Path, run_id: str, model_id: str = ""):
        self.out_dir = Path(out_dir)
        self.run_id = run_id
        self.model_id = model_id
        self._lock_file = None

    @property
    def file_metadata(self) -> dict[str, str]:
        return {
            "schema_version": SCHEMA_VERSION,
            "pipeline_version": PIPELINE_VERSION,
            "model_id": self.model_id,
            "run_id": self.run_id,
        }

    def part_path(self, table: str, key: str) -> Path:
        return self.out_dir / table / f"run_id={self.run_id}" / f"part-{_safe_key(key)}.parquet"

    def write(self, table: str, rows: list[dict], key: str) -> Path:
        """Write one part of `table`; the same key in the same run replaces the earlier part."""
        if table not in SCHEMAS:
            raise KeyError(f"unknown table {table!r}; known: {', '.join(TABLES)}")
        path = self.part_path(table, key)
        atomic_write_table(path, to_table(table, rows), self.file_metadata)
        return path

    @contextmanager
    def lock(self):
        """Exclusive writer lock on OUT_DIR; released by the OS even when the process is killed."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        path = self.out_dir / LOCK_NAME
        f = open(path, "a+")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "another process"
            f.close()
            raise StoreLocked(f"{self.out_dir} is being written by {holder}; wait for it to finish") from None
        f.seek(0)
        f.truncate()
        f.write(f"run {self.run_id} (pid {os.getpid()})")
        f.flush()
        try:
            yield self
        finally:
            f.truncate(0)
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
            f.close()


def open_duckdb(out_dir: str | Path, con=None):
    """A DuckDB connection with one view per table over every run's Parquet parts under OUT_DIR.

    A table that has no file yet gets an empty view with its schema, so queries never fail on a
    fresh OUT_DIR.
    """
    import duckdb

    out_dir = Path(out_dir)
    con = con or duckdb.connect()
    for name, schema in SCHEMAS.items():
        files = sorted((out_dir / name).glob("run_id=*/*.parquet"))
        if files:
            glob = str(out_dir / name / "run_id=*" / "*.parquet").replace("'", "''")
            con.execute(
                f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet('{glob}', hive_partitioning = false)"
            )
        else:
            con.register(f"_{name}_empty", schema.empty_table())
            con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM _{name}_empty")
    return con
