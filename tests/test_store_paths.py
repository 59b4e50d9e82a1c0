"""OUT_DIRs whose names hold glob or SQL characters, a lock file that is a link, a damaged part."""

from __future__ import annotations

import os

import pytest

from pipeline.records import ErrorRecord, error_rows
from pipeline.store import OutputStore, StoreLocked, TableUnreadable, open_duckdb


def _write(out_dir, n: int, run_id: str = "r1") -> None:
    rows = error_rows(
        [ErrorRecord(f"{out_dir.name}-{i}.pdf", "parse", "EmptyDocument", "empty") for i in range(n)], run_id
    )
    OutputStore(out_dir, run_id).write("errors", rows, "k")


@pytest.mark.parametrize(
    ("name", "sibling"), [("g[1]", "g1"), ("star*dir", "starXdir"), ("q?", "qq"), ("a,b'c", "a")]
)
def test_open_duckdb_reads_only_its_own_out_dir(tmp_path, name, sibling):
    _write(tmp_path / name, 2)
    _write(tmp_path / sibling, 17)
    rows = open_duckdb(tmp_path / name).execute("SELECT source FROM errors ORDER BY source").fetchall()
    assert rows == [(f"{name}-0.pdf",), (f"{name}-1.pdf",)]


def test_a_truncated_part_is_a_one_line_error(tmp_path):
    _write(tmp_path, 3)
    part = next((tmp_path / "errors").rglob("*.parquet"))
    part.write_bytes(part.read_bytes()[:40])
    with pytest.raises(TableUnreadable, match="errors table cannot be read") as info:
        open_duckdb(tmp_path).execute("SELECT count(*) FROM errors").fetchall()
    assert "\n" not in str(info.value)


def test_the_lock_never_follows_a_link_nor_truncates_another_file(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me")
    out = tmp_path / "out"
    out.mkdir()
    (out / ".ldx.lock").symlink_to(precious)
    with pytest.raises(StoreLocked, match="lock file"), OutputStore(out, "r1").lock():
        pass
    (out / ".ldx.lock").unlink()
    os.link(precious, out / ".ldx.lock")  # a hard link: the same file under the lock's name
    with pytest.raises(StoreLocked, match="not a lock file"), OutputStore(out, "r1").lock():
        pass
    (out / ".ldx.lock").unlink()
    (out / ".ldx.lock").write_text("someone's notes")
    with pytest.raises(StoreLocked, match="not a lock file"), OutputStore(out, "r1").lock():
        pass
    assert precious.read_text() == "keep me" and (out / ".ldx.lock").read_text() == "someone's notes"
    (out / ".ldx.lock").unlink()
    with OutputStore(out, "r1").lock():
        assert (out / ".ldx.lock").read_text().startswith("run r1")
    with OutputStore(out, "r2").lock():  # a lock file this code left behind is reused
        pass
