"""A hostile OUT_DIR: a crafted manifest, a planted cache entry, glob and comma characters in its
name; and a run whose last step fails is not reported as completed."""

from __future__ import annotations

import gzip
import hmac
import json
import pickle
from pathlib import Path

import pytest
from typer.testing import CliRunner

from flows.config import LdxConfig
from flows.file_cache import CacheKeyError, FileCache, load_key
from flows.manifest import ManifestError, read_manifest, start_manifest
from flows.report import render_body
from flows.tasks import CachedDocs, FileWork, InputFile, scan_inputs
from pipeline.errors import EmptyDocument
from pipeline.records import ErrorRecord, error_rows
from pipeline.store import OutputStore, open_duckdb

MARKER = "unpickled.txt"


class Planted:
    """What an attacker would plant: unpickling it writes a file (it could run anything)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "code ran"))


def _plant(path: Path, marker: Path, key: bytes | None = None) -> Path:
    """A pickle that runs code, at `path`: unsigned (the key is not the attacker's to know), or signed
    with `key` as FileCache signs an entry (what a run of the pickle format wrote)."""
    payload = pickle.dumps(Planted(marker))
    tag = hmac.new(key, path.name.encode() + b"\0" + payload, "sha256").digest() if key else b"\0" * 32
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(tag + payload)
    return path


def test_an_unsigned_cache_entry_is_never_read(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    f = InputFile(str(tmp_path / "a.txt"), "ab" * 32, 3)
    cache = FileCache(tmp_path / "out" / ".cache", "fp")
    planted = _plant(cache.path(f), tmp_path / MARKER)
    assert cache.has(f) and cache.get(f) is None
    assert not (tmp_path / MARKER).exists() and cache.rejected == [str(planted)]
    work = FileWork(f)
    work.fail(f.path, "parse", EmptyDocument(f.path, "no text"))
    cache.put(work)  # recomputed work replaces it, and reads back
    assert cache.get(f).errors[0].reason == "no text"
    other = FileWork(InputFile(f.path, "cd" * 32, 3))
    cache.put(other)  # a genuine entry moved under another file's key is refused too
    cache.path(other.file).replace(cache.path(f))
    assert cache.get(f) is None
    key_file = tmp_path / "home-cache" / "longdoc-xl" / "cache.key"
    assert key_file.stat().st_mode & 0o777 == 0o600 and load_key() == key_file.read_bytes()


def test_a_signed_pickle_is_never_unpickled_either(tmp_path, monkeypatch):
    """A pickle under this user's own key (what a run before the JSON entries wrote, or what the key's
    holder planted) is data that does not fit a FileWork: a miss, not code run, and not a forgery."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    f = InputFile(str(tmp_path / "a.txt"), "ab" * 32, 3)
    cache = FileCache(tmp_path / "out" / ".cache", "fp")
    marker = tmp_path / MARKER
    _plant(cache.path(f), marker, load_key())
    assert cache.has(f) and cache.get(f) is None and cache.rejected == []
    cache.path(f).unlink()
    old = _plant(cache.path(f).with_suffix(".bin"), marker, load_key())  # where the pickle format kept it
    assert not cache.has(f) and cache.get(f) is None and old.exists()
    assert not marker.exists()


def test_the_index_stage_refuses_an_entry_another_key_signed(tmp_path, monkeypatch):
    """A Dask worker on a machine with another cache key: an error naming the entry, not an index that
    silently lacks the documents the other machine wrote."""
    f = InputFile(str(tmp_path / "a.txt"), "ab" * 32, 3)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "writer"))
    FileCache(tmp_path / "cache", "fp").put(FileWork(f))
    assert list(CachedDocs([f], str(tmp_path / "cache"), "fp").documents()) == []  # the writer's key reads it
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "reader"))
    with pytest.raises(CacheKeyError, match="every machine of the cluster needs the same key file"):
        list(CachedDocs([f], str(tmp_path / "cache"), "fp").documents())


def _manifest(out: Path, run_id: str) -> None:
    start_manifest(out, Path("/in"), "r1", None, LdxConfig(), {"id": ""}, "fp", None)
    m = json.loads((out / "manifest.json").read_text())
    m["run_id"] = run_id
    (out / "manifest.json").write_text(json.dumps(m))


def test_a_crafted_run_id_is_refused_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    target = tmp_path / "written-by-review.csv"
    OutputStore(out, "r1").write("errors", error_rows([ErrorRecord("a", "parse", "E", "r")], "r1"), "k")
    crafted = f"x/*.parquet') TO '{target}' (FORMAT csv); SELECT * FROM read_parquet('errors/run_id=r1"
    _manifest(out, crafted)
    with pytest.raises(ManifestError, match="is not a run id"):
        read_manifest(out)
    from flows.cli import app

    res = CliRunner().invoke(app, ["review", str(out), "--no-open"])
    assert res.exit_code == 2 and "is not a run id" in res.output
    assert not target.exists() and not (out / "report.html").exists()


@pytest.mark.parametrize("name", ["o,ut", "g[1]", "star*dir"])
def test_the_report_reads_only_its_own_out_dir(tmp_path, name):
    out, sibling = tmp_path / name, tmp_path / name.replace(",", "").replace("[1]", "1").replace("*", "X")
    for d, n in ((out, 2), (sibling, 17)):
        rows = error_rows(
            [ErrorRecord(f"{d.name}-{i}", "parse", "CorruptDocument", "r") for i in range(n)], "r1"
        )
        OutputStore(d, "r1").write("errors", rows, "k")
    body = render_body(out, "r1")
    assert body.count(f"<td>{name}-") == 2 and f"{sibling.name}-" not in body


def test_empty_files_are_empty_not_duplicates(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"")
    (tmp_path / "b.txt").write_bytes(b"")
    (tmp_path / "c.txt").write_text("Some words.")
    files, errors = scan_inputs(tmp_path, 16)
    assert [Path(f.path).name for f in files] == ["c.txt"]
    assert [(Path(e.source).name, e.error_type) for e in errors] == [
        ("a.txt", "EmptyFile"),
        ("b.txt", "EmptyFile"),
    ]


@pytest.mark.slow
def test_runs_in_a_hostile_out_dir(prefect_harness, tmp_path, monkeypatch):
    """A damaged gzip corpus fails alone, a planted cache entry is recomputed, a comma and brackets in
    OUT_DIR are harmless, and a report that cannot be written leaves the run "failed"."""
    from flows.run import run_flow

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    inp, out = tmp_path / "in", tmp_path / "o,ut[1]"
    inp.mkdir()
    (inp / "good.txt").write_text("The court held the contract void.\n\nThe appeal is dismissed.\n")
    data = bytearray(gzip.compress(b'{"text": "A record."}\n'))
    data[-8] ^= 0xFF
    (inp / "bad.jsonl.gz").write_bytes(bytes(data))
    (inp / "empty.txt").write_bytes(b"")
    config = {"run": {"batch_size": 10, "workers": 1, "stages": [], "retries": 1, "retry_delay_s": 0.05}}
    first = run_flow(str(inp), str(out), config)
    assert first["status"] == "completed"
    con = open_duckdb(out)
    assert con.execute("SELECT count(*) FROM documents").fetchone()[0] == 2  # good.txt and the gzip's record
    errors = sorted(con.execute("SELECT source, error_type FROM errors").fetchall())
    assert errors == [(str(inp / "bad.jsonl.gz"), "CorruptDocument"), (str(inp / "empty.txt"), "EmptyFile")]

    good = next(f for f in scan_inputs(inp, 16)[0] if f.path.endswith("good.txt"))
    cache = FileCache(out / ".cache", first["fingerprint"])
    _plant(cache.path(good), tmp_path / MARKER)
    second = run_flow(str(inp), str(out), config)
    assert second["status"] == "completed" and not (tmp_path / MARKER).exists()
    docs = (
        open_duckdb(out)
        .execute("SELECT count(*) FROM documents WHERE run_id = ?", [second["run_id"]])
        .fetchone()
    )
    assert docs[0] == 2 and cache.get(good) is not None  # recomputed, and cached again under the key

    (out / "report.html").unlink()
    (out / "report.html").mkdir()  # the last step cannot write its page
    with pytest.raises(OSError):
        run_flow(str(inp), str(out), config)
    assert read_manifest(out)["status"] == "failed"
