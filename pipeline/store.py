"""The Parquet store under OUT_DIR: atomic files, one partition per run, a writer lock, DuckDB views.

Layout: OUT_DIR/<table>/run_id=<run>/part-<key>.parquet. A part is keyed by what it holds (usually a
doc_id), so writing the same key again replaces the file instead of adding rows: a resumed run
neither loses nor duplicates rows. Runs accumulate side by side as hive partitions.
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import stat
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import __version__ as PIPELINE_VERSION
from pipeline.records import SCHEMA_VERSION, SCHEMAS, to_table

TABLES = tuple(SCHEMAS)
LOCK_NAME = ".ldx.lock"
# a view's latest row of each key: a document re-run in a later run replaces its earlier rows
LATEST = "QUALIFY row_number() OVER (PARTITION BY {key} ORDER BY run_id DESC) = 1"


class StoreLocked(RuntimeError):
    """Another process is writing this OUT_DIR."""


class TableUnreadable(RuntimeError):
    """A table under OUT_DIR that cannot be read (a truncated or damaged part)."""


def _temp_beside(path: Path) -> tuple[int, str]:
    """A new temp file in `path`'s directory, opened for writing, with the mode the user's umask gives a
    new file (mkstemp's 0600 would leave every output readable by its writer alone, and analysts
    sharing OUT_DIR could not read the Parquet)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        tmp = str(path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666), tmp
        except FileExistsError:
            continue


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temp file in the same directory, fsync, then rename over the target."""
    fd, tmp = _temp_beside(path)
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
    fd, tmp = _temp_beside(path)
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

    def write(self, table: str, rows: list[dict], key: str, metadata: dict[str, str] | None = None) -> Path:
        """Write one part of `table`; the same key in the same run replaces the earlier part. `metadata`
        joins the run's file metadata (the predictions' model_card)."""
        if table not in SCHEMAS:
            raise KeyError(f"unknown table {table!r}; known: {', '.join(TABLES)}")
        path = self.part_path(table, key)
        atomic_write_table(path, to_table(table, rows), {**self.file_metadata, **(metadata or {})})
        return path

    @contextmanager
    def lock(self):
        """Exclusive writer lock on OUT_DIR; released by the OS even when the process is killed."""
        self.out_dir.mkdir(parents=True, exist_ok=True)
        fd = _open_lock_file(self.out_dir / LOCK_NAME)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise StoreLocked(f"{self.out_dir} is being written by {holder}; wait for it to finish") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{_HOLDER}{self.run_id} (pid {os.getpid()})".encode(), 0)
        try:
            yield self
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


_HOLDER = "run "  # how every lock file this code writes begins


def _open_lock_file(path: Path) -> int:
    """The lock file's descriptor: never through a link, and only a file that is a lock file, since the
    holder line is written over it. Anything else (a link, a directory, a hard link to another file,
    a file with other content) is refused."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as e:
        raise StoreLocked(f"{path}: cannot be used as the lock file ({e.strerror}); remove it") from None
    st = os.fstat(fd)
    head = os.pread(fd, len(_HOLDER), 0)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1 or (head and head != _HOLDER.encode()):
        os.close(fd)
        raise StoreLocked(f"{path}: not a lock file of ours (a link or another file); remove it")
    return fd


def part_files(out_dir: str | Path, table: str, run_id: str | None = None) -> list[str]:
    """The Parquet parts of `table` (of one run, or of every run), as listed here: callers hand this
    list to the reader so that no character of OUT_DIR is ever read as a glob or as SQL."""
    runs = "run_id=*" if run_id is None else f"run_id={glob_escape(run_id)}"
    return [str(p) for p in sorted((Path(out_dir) / table).glob(f"{runs}/*.parquet")) if p.is_file()]


def glob_escape(part: str) -> str:
    """`part` matched literally by pathlib's glob, whatever `[`, `*` or `?` it holds."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in part)


def open_duckdb(out_dir: str | Path, con=None):
    """A DuckDB connection with one view per table over every run's Parquet parts under OUT_DIR.

    The views read the part files listed here (a pyarrow dataset: DuckDB would expand globs inside
    any path it is given). A table that has no file yet gets an empty view with its schema, so
    queries never fail on a fresh OUT_DIR.
    """
    # every ldx command imports this module; only queries over a run's output need these
    # lazy, a start-up cost: duckdb adds ~0.06 s (measured)
    import duckdb

    # lazy, a start-up cost: pyarrow.dataset adds ~0.24 s (measured)
    import pyarrow.dataset as ds

    con = con or duckdb.connect()
    for name, schema in SCHEMAS.items():
        files = part_files(out_dir, name)
        for f in files:  # the dataset reads lazily: a torn part would fail some later query, unnamed
            try:
                pq.read_metadata(f)
            except (OSError, pa.ArrowInvalid) as e:
                raise TableUnreadable(f"{f}: the {name} table cannot be read ({e})") from None
        con.register(
            f"_{name}_parts",
            ds.dataset(files, schema=schema, format="parquet") if files else schema.empty_table(),
        )
        con.execute(f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM _{name}_parts")
    return con
