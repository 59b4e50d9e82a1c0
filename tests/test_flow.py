"""The run flow on a small real corpus: outputs read back with DuckDB, the cache, bad inputs, the lock."""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from flows.config import LdxConfig
from flows.manifest import read_manifest, resumable_run
from flows.tasks import FileCache, FileWork, InputFile, make_batches, scan_inputs
from pipeline.errors import EmptyDocument
from pipeline.store import OutputStore, open_duckdb

N_JSONL = 12
PDFS = {  # a few real PDFs of each kind, small enough for a quick run
    "zh": "zh/pdf/杨某海交通肇事案.pdf",
    "en_judgment": "en/judgments/us_opinions_pdf/circuit_8thCircuit-071306U.pdf",
    "en_judgment_2": "en/judgments/us_opinions_pdf/circuit_FederalCircuit-09-1361.pdf",
    "contract": "en/contracts/pdf/UsioInc_20040428_SB-2_EX-10.11_1723988_EX-10.11_Affiliate Agreement 2.pdf",
}
# The model stages (index …) encode every segment on the CPU: minutes for this corpus, so the flow tests
# run parse → segment → write; the retrieval tests cover the index stage itself.
CONFIG = {"run": {"batch_size": 3, "workers": 2, "stages": []}}


def write_jsonl_slice(shared: Path, path: Path, n: int, start: int = 0) -> None:
    """n complete criminal judgments (the `fd` field) as the JSONL the parser reads."""
    with (
        gzip.open(shared / "zh/judgments/judge_criminal.jsonl.gz", "rt", encoding="utf-8") as f,
        open(path, "w") as out,
    ):
        for i, line in enumerate(f):
            if i < start:
                continue
            if i >= start + n:
                break
            rec = json.loads(line)
            out.write(json.dumps({"id": rec["text_id"], "text": rec["fd"]}, ensure_ascii=False) + "\n")


def build_corpus(shared: Path, root: Path) -> dict[str, int]:
    """Good documents and one of each kind of bad input; returns what the run must find."""
    root.mkdir(parents=True)
    write_jsonl_slice(shared, root / "criminal.jsonl", N_JSONL)
    with open(root / "criminal.jsonl", "a") as f:
        f.write('{"id": "broken", "text": "unterminated\n')  # a truncated record inside a good corpus
    (root / "pdf").mkdir()
    for name, rel in PDFS.items():
        shutil.copy(shared / rel, root / "pdf" / f"{name}.pdf")
    import pymupdf

    src = (shared / PDFS["en_judgment"]).read_bytes()
    (root / "bad").mkdir()
    (root / "bad" / "truncated.pdf").write_bytes(src[: len(src) // 3])
    with pymupdf.open(shared / PDFS["en_judgment_2"]) as doc:
        doc.save(
            root / "bad" / "encrypted.pdf", encryption=pymupdf.PDF_ENCRYPT_AES_256, owner_pw="o", user_pw="u"
        )
    (root / "bad" / "empty.txt").write_bytes(b"")
    (root / "bad" / "table.csv").write_text("a,b\n1,2\n")
    shutil.copy(
        root / "pdf" / "contract.pdf", root / "pdf" / "zz_copy_of_contract.pdf"
    )  # sorts after the original
    return {"documents": N_JSONL + len(PDFS), "bad_inputs": 6}


@pytest.fixture(scope="module")
def corpus(shared_data, tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("flow") / "in"
    return root, build_corpus(shared_data, root)


@pytest.fixture(scope="module")
def first_run(prefect_harness, corpus, tmp_path_factory):
    from flows.run import run_flow

    out = tmp_path_factory.mktemp("flow") / "out"
    manifest = run_flow(str(corpus[0]), str(out), CONFIG)
    return out, manifest


def rows(out: Path, table: str, run_id: str) -> list[tuple]:
    con = open_duckdb(out)
    return con.execute(
        f"SELECT * EXCLUDE (run_id) FROM {table} WHERE run_id = ? ORDER BY ALL", [run_id]
    ).fetchall()


def test_run_writes_every_document_and_counts_match(first_run, corpus):
    out, manifest = first_run
    expected = corpus[1]
    run_id = manifest["run_id"]
    con = open_duckdb(out)
    n_docs = con.execute("SELECT count(*) FROM documents WHERE run_id = ?", [run_id]).fetchone()[0]
    assert n_docs == expected["documents"] == manifest["counts"]["documents"]
    kinds = dict(con.execute("SELECT kind, count(*) FROM documents GROUP BY kind").fetchall())
    assert kinds.get("zh_judgment", 0) >= N_JSONL
    # every document has blocks and segments, and segments point at existing blocks
    assert con.execute("SELECT count(*) FROM documents WHERE n_blocks = 0").fetchone()[0] == 0
    orphans = con.execute(
        "SELECT count(*) FROM segments s ANTI JOIN blocks b ON s.doc_id = b.doc_id AND s.block_idx = b.block_idx"
    ).fetchone()[0]
    assert orphans == 0
    for table in ("blocks", "segments"):
        n = con.execute(f"SELECT count(*) FROM {table} WHERE run_id = ?", [run_id]).fetchone()[0]
        assert n == manifest["counts"][table] > n_docs
    assert con.execute("SELECT count(DISTINCT doc_id) = count(*) FROM documents").fetchone()[0]
    assert con.execute("SELECT count(DISTINCT segment_id) = count(*) FROM segments").fetchone()[0]
    pages = con.execute("SELECT sum(n_pages) FROM documents").fetchone()[0]
    assert pages == manifest["counts"]["pages"] > len(PDFS)
    part = next((out / "segments" / f"run_id={run_id}").glob("*.parquet"))
    meta = pq.read_schema(part).metadata
    assert meta[b"run_id"].decode() == run_id and meta[b"schema_version"] and meta[b"pipeline_version"]
    assert manifest["status"] == "completed" and manifest["flow_run_id"]
    assert set(manifest["seconds"]) >= {"parse", "segment", "write"}
    assert (out / "report.html").stat().st_size > 10_000


def test_a_jsonl_corpus_is_read_in_windows_of_batch_size_lines_and_counts_as_one_file(
    first_run, corpus, tmp_path
):
    files, _ = scan_inputs(corpus[0], CONFIG["run"]["batch_size"])
    parts = [f for f in files if f.path.endswith("criminal.jsonl")]
    # 12 judgments and the broken record: 13 lines, 3 a window
    assert [(f.window.start, f.window.stop) for f in parts] == [(0, 3), (3, 6), (6, 9), (9, 12), (12, 13)]
    assert [f.first for f in parts] == [True, False, False, False, False]
    assert parts[0].key == parts[0].sha256[:16] and len({f.key for f in parts}) == 5
    cache = FileCache(tmp_path / "cache", "fp")
    assert len({cache.key(f) for f in parts}) == 5
    for batch in make_batches([FileWork(f) for f in files], 3, workers=2):
        assert sum(f.file.window.stop - f.file.window.start for f in batch.files if f.file.window) <= 3
    out, manifest = first_run
    assert manifest["counts"]["files"] == len({f.path for f in files}) < len(files)
    sources = (
        open_duckdb(out)
        .execute(
            "SELECT source FROM documents WHERE run_id = ? AND source LIKE '%criminal.jsonl:%'",
            [manifest["run_id"]],
        )
        .fetchall()
    )
    assert sorted(int(s.rsplit(":", 1)[1]) for (s,) in sources) == list(range(1, N_JSONL + 1))


def test_bad_inputs_become_one_readable_error_row_each(first_run, corpus):
    out, manifest = first_run
    con = open_duckdb(out)
    errors = con.execute(
        "SELECT source, stage, error_type, reason FROM errors WHERE run_id = ? ORDER BY source",
        [manifest["run_id"]],
    ).fetchall()
    by_name = {Path(src.split(":")[0]).name: (stage, etype, reason) for src, stage, etype, reason in errors}
    assert len(errors) == 6 == manifest["counts"]["errors"]
    assert by_name["truncated.pdf"][1] == "CorruptDocument"
    assert by_name["encrypted.pdf"][1] == "EncryptedDocument"
    assert (
        by_name["empty.txt"][1] == "EmptyFile"
    )  # reported at the scan, never as a copy of another empty file
    assert by_name["table.csv"][1] == "UnsupportedFormat" and ".csv" in by_name["table.csv"][2]
    assert by_name["zz_copy_of_contract.pdf"][1:] == (
        "DuplicateDocument",
        f"same bytes as {corpus[0] / 'pdf/contract.pdf'}",
    )
    assert (
        by_name["criminal.jsonl"][1] == "CorruptDocument"
    )  # the broken record; its 12 neighbours are documents
    assert all(len(reason) > 5 for _, _, _, reason in errors)


def test_rerun_on_unchanged_input_is_all_cache_hits_with_equal_outputs(first_run, corpus):
    from flows.run import run_flow

    out, first = first_run
    second = run_flow(str(corpus[0]), str(out), CONFIG)
    assert second["run_id"] != first["run_id"]
    assert second["counts"]["cached_files"] == second["counts"]["files"] == first["counts"]["files"]
    assert "parse" not in second["seconds"] and "restore" in second["seconds"]
    for table in ("documents", "blocks", "segments", "errors"):
        assert rows(out, table, second["run_id"]) == rows(out, table, first["run_id"]), table


def test_one_batch_in_flight_runs_the_batches_one_after_another_with_equal_outputs(
    first_run, corpus, tmp_path
):
    from prefect import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

    from flows.run import run_flow

    out, first = first_run
    config = {"run": {**CONFIG["run"], "workers": 1, "batches_per_worker": 1}}
    manifest = run_flow(str(corpus[0]), str(tmp_path / "out"), config)
    for table in ("documents", "blocks", "segments", "errors"):
        assert rows(tmp_path / "out", table, manifest["run_id"]) == rows(out, table, first["run_id"]), table
    files, _ = scan_inputs(corpus[0], 3)
    n_tasks = 3 * len(make_batches([FileWork(f) for f in files], 3, workers=1))  # parse, segment, write
    flow_runs = FlowRunFilter(id=FlowRunFilterId(any_=[manifest["flow_run_id"]]))
    with get_client(sync_client=True) as client:
        for _ in range(60):  # the API records task runs from their events, a moment after they end
            runs = [
                r for r in client.read_task_runs(flow_run_filter=flow_runs) if r.name.split("-")[0] != "scan"
            ]
            if len(runs) == n_tasks and all(r.end_time for r in runs):
                break
            time.sleep(0.5)
    assert len(runs) == n_tasks > 3
    runs.sort(key=lambda r: r.start_time)
    # no batch's stage overlaps another's: each starts after the one before it ended
    assert all(b.start_time >= a.end_time for a, b in itertools.pairwise(runs))


def test_doc_feed_counts_what_waits_and_lets_go_once_its_stage_stops():
    from flows.tasks import DocFeed
    from pipeline.records import Document
    from retrieval.stages import DocWork

    docs = [DocWork(Document(f"d{i}", "s", "zh_judgment", "zh", "text")) for i in range(5)]
    feed = DocFeed()
    feed.put(docs[:3])
    feed.put(docs[3:])
    assert feed.backlog == 5
    taken = feed.documents()
    assert [next(taken).document.doc_id for _ in range(4)] == ["d0", "d1", "d2", "d3"]
    assert feed.backlog == 1
    feed.stop()  # the stage ended: nothing it left is held, and nothing waits on it
    assert feed.backlog == 0
    feed.put(docs)
    feed.close()
    assert feed.backlog == 0 and list(feed.documents()) == []


def test_second_writer_on_one_out_dir_is_refused(tmp_path, corpus):
    from flows.cli import app

    out = tmp_path / "out"
    with OutputStore(out, "holder").lock():
        result = CliRunner().invoke(app, ["run", str(corpus[0]), "--out", str(out)])
    assert result.exit_code != 0
    assert "being written by run holder" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_scan_reports_copies_and_skips_hidden_files(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.txt").write_text("same")
    (tmp_path / "y.txt").write_text("same")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "z.txt").write_text("other")
    files, errors = scan_inputs(tmp_path, 16)
    assert [Path(f.path).name for f in files] == ["x.txt"]
    assert [(e.error_type, Path(e.source).name) for e in errors] == [("DuplicateDocument", "y.txt")]


@given(
    st.lists(st.integers(min_value=0, max_value=10**7), max_size=60),
    st.integers(min_value=1, max_value=20),
    st.integers(min_value=1, max_value=4),
)
def test_batches_hold_every_file_once_and_feed_every_worker(sizes, batch_size, workers):
    files = [FileWork(InputFile(f"/f{i}", f"{i:064x}", s)) for i, s in enumerate(sizes)]
    batches = make_batches(files, batch_size, start=5, workers=workers)
    held = [w.file.path for b in batches for w in b.files]
    assert sorted(held) == sorted(w.file.path for w in files)
    assert [b.index for b in batches] == list(range(5, 5 + len(batches)))
    assert all(len(b.files) <= batch_size for b in batches)
    alike = [FileWork(InputFile(f"/g{i}", f"{i:064x}", 1000)) for i in range(len(sizes))]
    assert len(make_batches(alike, batch_size, workers=workers)) >= min(workers, len(alike))


def test_file_cache_round_trip_and_torn_entry_is_a_miss(tmp_path):
    f = InputFile(str(tmp_path / "a.txt"), "ab" * 32, 3)
    cache = FileCache(tmp_path / "cache", "fp")
    work = FileWork(f)
    work.fail(f.path, "parse", EmptyDocument(f.path, "no text"))
    cache.put(work)
    assert cache.has(f) and not FileCache(tmp_path / "cache", "other").has(f)
    back = cache.get(f)
    assert back.cached and back.errors[0].reason == "no text"
    for p in (tmp_path / "cache").rglob("*"):
        if p.is_file():
            p.write_bytes(p.read_bytes()[:20])  # what a kill in the middle of the write leaves
    assert cache.get(f) is None


def test_only_an_unfinished_run_on_the_same_input_and_config_resumes(tmp_path):
    from flows.manifest import start_manifest

    cfg = LdxConfig()
    m = start_manifest(tmp_path, Path("/in"), "r1", None, cfg, {"id": ""}, "fp", None)
    assert resumable_run(tmp_path, Path("/in"), "fp")["run_id"] == "r1"
    assert resumable_run(tmp_path, Path("/other"), "fp") is None
    assert resumable_run(tmp_path, Path("/in"), "fp2") is None
    m["status"] = "completed"
    (tmp_path / "manifest.json").write_text(json.dumps(m))
    assert resumable_run(tmp_path, Path("/in"), "fp") is None
    assert read_manifest(tmp_path)["run_id"] == "r1"


ATTEMPTS: list[int] = []


class FailingStage:
    """A batch stage whose device keeps going away: a transient error on every try."""

    def prepare(self, config) -> None:
        """Nothing to set up."""

    def __call__(self, docs, ctx) -> None:
        ATTEMPTS.append(len(docs))
        raise OSError("device went away")


def test_a_stage_failing_every_retry_becomes_error_rows_and_the_run_goes_on(
    prefect_harness, shared_data, tmp_path, monkeypatch
):
    from flows import tasks
    from flows.run import run_flow

    monkeypatch.setitem(tasks.BATCH_STAGES, "predict", FailingStage())
    corpus = tmp_path / "in"
    corpus.mkdir()
    write_jsonl_slice(shared_data, corpus / "criminal.jsonl", 2)
    config = {"run": {"retries": 2, "retry_delay_s": 0.05, "stages": ["predict", "index"]}}
    manifest = run_flow(str(corpus), str(tmp_path / "out"), config)
    assert ATTEMPTS == [2, 2, 2]  # the first try and two retries, each over the batch's two documents
    assert manifest["status"] == "completed"
    assert manifest["stages"] == ["parse", "segment", "predict", "index", "write"]
    # the encoder had the documents as soon as they were segmented; their batch failed, so it gave them back
    assert manifest["counts"]["index"]["retracted_documents"] == 2
    assert manifest["counts"]["index"]["index_keys"] == 0
    errors = open_duckdb(tmp_path / "out").execute("SELECT stage, error_type, reason FROM errors").fetchall()
    assert errors == [("predict", "OSError", "device went away")]
    assert not list((tmp_path / "out" / ".cache").rglob("entries/*"))  # not cached: the next run tries again
