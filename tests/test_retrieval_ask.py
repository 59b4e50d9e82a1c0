"""`ldx ask` over a small real indexed run (a CUAD contract PDF), and the session cache of states."""

from __future__ import annotations

import json

import pymupdf
import pytest
import torch
from run_tables import write_run_tables
from tiny_models import tiny_encoder
from typer.testing import CliRunner

from pipeline.store import open_duckdb
from pipeline.tokenizer import load_tokenizer
from retrieval.cache import DocStateCache
from retrieval.encoder import sha256_file
from retrieval.stage import index_segments
from retrieval.store import SegmentStore
from txl.checkpoint import save_model

PDF = "en/contracts/pdf/AlliedEsportsEntertainmentInc_20190815_8-K_EX-10.34_11788308_EX-10.34_Sponsorship Agreement.pdf"


@pytest.fixture(scope="module")
def indexed_run(shared_data, tmp_path_factory):
    """OUT_DIR with the tables `ldx run` writes for one real PDF, and its index built by a tiny random model."""
    out = tmp_path_factory.mktemp("run")
    doc, segments = write_run_tables(out, shared_data / PDF)
    tok = load_tokenizer()
    model = tiny_encoder(tok, mem_len=128)
    ckpt = out / "tiny.pt"
    save_model(ckpt, model)
    # the first 40 segments get states (enough for the dense arm); BM25 covers every Parquet segment
    counts = index_segments(out, [segments[:40]], model, tok, model_id=sha256_file(ckpt))
    assert counts["indexed_segments"] == 40 == counts["index_keys"]
    return out, ckpt, doc, segments


def test_ask_json_cites_parquet_segments_on_the_pdf(indexed_run, shared_data):
    from flows.cli import app

    out, ckpt, doc, segments = indexed_run
    q = "Who pays the sponsorship fee and when is it due?"
    res = CliRunner().invoke(
        app, ["ask", q, "--index", str(out), "--k", "5", "--json", "--set", f"model.checkpoint={ckpt}"]
    )
    assert res.exit_code == 0, res.output
    answer = json.loads(res.output)
    assert answer["answer"] == "none" and answer["reader"] is None  # no reader checkpoint: said plainly
    # an English contract: the sentence model searches too
    assert set(answer["arms"]) == {"bm25", "minilm", "txl"}
    cites = answer["citations"]
    assert len(cites) == 5
    texts = dict(open_duckdb(out).execute("SELECT segment_id, text FROM segments").fetchall())
    pdf = pymupdf.open(shared_data / PDF)
    for c in cites:
        assert c["doc_id"] == doc.doc_id and texts[c["segment_id"]] == c["text"]
        assert set(c) == {"doc_id", "segment_id", "block_type", "page", "bbox", "score", "text"}
        assert 0 <= c["page"] < pdf.page_count
        x0, y0, x1, y1 = c["bbox"]
        rect = pdf[c["page"]].rect
        assert -1 <= x0 < x1 <= rect.width + 1 and -1 <= y0 < y1 <= rect.height + 1
        # the cited words are printed inside that box of that page
        clip = pdf[c["page"]].get_text("text", clip=pymupdf.Rect(x0 - 2, y0 - 2, x1 + 2, y1 + 2))
        first_word = c["text"].split()[0]
        assert first_word in clip
    assert any("sponsor" in c["text"].lower() for c in cites[:3])

    only_doc = CliRunner().invoke(app, ["ask", q, "--index", str(out), "--doc", "0000", "--json"])
    assert only_doc.exit_code != 0 and "no document 0000" in only_doc.output
    missing = CliRunner().invoke(app, ["ask", q, "--index", str(out / "nope")])
    assert missing.exit_code != 0 and "no such directory" in missing.output


def test_ask_reads_an_answer_from_the_cited_segments_and_caches_the_document(indexed_run):
    from retrieval.ask import Asker
    from retrieval.reader.runtime import Reader, ReaderConfig, ReaderHead
    from txl.checkpoint import load_model

    out, ckpt, doc, _ = indexed_run
    model, _ = load_model(ckpt)
    torch.manual_seed(0)
    reader_file = out / "reader.pt"
    Reader(ReaderHead(ReaderConfig(32)), model, load_tokenizer()).save(
        reader_file, sha256_file(ckpt), {}
    )  # untrained head
    session = Asker(out, checkpoint=str(ckpt), device="cpu", reader=reader_file)
    first = session.ask("Who pays the sponsorship fee?", k=3)
    assert first.reader == str(reader_file)
    assert first.answer in ("YES", "NO", "none") or any(first.answer in c.text for c in first.citations)
    assert session.cache.misses == 1 and doc.doc_id in session.cache
    session.ask("When is the sponsorship fee due?", k=3)
    assert session.cache.misses == 1 and session.cache.hits >= 1  # the document was not read again


def test_a_clause_question_is_answered_by_the_clause_head_with_its_page_and_box(indexed_run):
    from retrieval.ask import Asker
    from retrieval.config import RetrievalConfig

    out, ckpt, doc, _ = indexed_run
    asker = Asker(out, checkpoint=str(ckpt), device="cpu")
    answer = asker.ask("Which state's law governs this agreement?", k=3)
    assert answer.answer_type == "clause" and answer.confidence >= 0.5
    assert any("'Governing Law'" in n for n in answer.notes)
    ev = answer.evidence
    # the question names a place: the answer is the place the clause names, the clause its evidence
    assert "laws of" in ev.sentence and answer.answer == "the State of California" in ev.sentence
    assert ev.page is not None and ev.bbox is not None
    cited = {c.segment_id: c for c in answer.citations}
    assert ev.segment_id == answer.answer_segment and ev.sentence in cited[ev.segment_id].text
    assert len(cited) == len(answer.citations)  # the head's sentences are cited once, after the search's
    assert all(e.segment_id in cited for e in answer.more_evidence)
    # a clause the head finds nowhere in the contract: "none", with its likeliest sentence shown
    escrow = asker.ask("Is the source code held in escrow?", k=3, doc_id=doc.doc_id)
    assert escrow.answer == "none" and escrow.evidence is not None
    assert any("no Source Code Escrow clause found" in n for n in escrow.notes)
    # the bar is the clause rows' (predict.clause_min_probability), as the CLI passes it
    strict = Asker(out, checkpoint=str(ckpt), device="cpu", clause_min_probability=1.01)
    withheld = strict.ask("Which state's law governs this agreement?", k=3)
    assert withheld.answer == "none" and withheld.evidence == ev
    assert any("below 1.01" in n for n in withheld.notes)
    off = Asker(out, config=RetrievalConfig(clause_answers=False), checkpoint=str(ckpt), device="cpu")
    plain = off.ask("Which state's law governs this agreement?", k=3)
    assert plain.answer_type != "clause" and not any("clause head" in n for n in plain.notes)


def test_a_question_naming_its_contract_is_asked_of_it_by_the_rest_of_its_words(indexed_run):
    from retrieval.ask import Asker

    out, ckpt, doc, _ = indexed_run
    asker = Asker(out, checkpoint=str(ckpt), device="cpu")
    question = "Who are the parties to the sponsorship agreement?"
    answer = asker.ask(question, k=3)
    assert answer.question == question and any(f"asked about {doc.doc_id}" in n for n in answer.notes)
    # the preamble names both parties; a sentence's cut after "Inc." before its defined name is no end
    assert (
        answer.answer_type == "clause"
        and answer.answer == "Newegg Inc. and Allied Esports International, Inc."
    )
    assert "(“Newegg”), a Delaware corporation" in answer.evidence.sentence
    other = asker.ask("Who are the parties to the consulting agreement?", k=3)  # no document of this run
    assert not any("asked about" in n for n in other.notes)


def test_reindexing_a_document_replaces_its_entries(indexed_run):
    out, ckpt, _, segments = indexed_run
    from txl.checkpoint import load_model

    model, _ = load_model(ckpt)
    index_segments(out, [segments[:10]], model, load_tokenizer(), model_id=sha256_file(ckpt))
    store = SegmentStore.open(out / "index")
    assert len(store) == 10 == store.index.ntotal
    assert [r["seg_idx"] for r in store.entries()] == list(range(10))


def test_session_cache_is_lru_and_bounded_in_bytes():
    cache = DocStateCache(max_bytes=3 * 4000)
    for d in "abc":
        cache.put(d, [torch.zeros(1000)])  # 4000 bytes each
    assert cache.get("a") is not None  # a becomes the most recent
    cache.put("d", [torch.zeros(1000)])
    assert "b" not in cache and {"a", "c", "d"} <= set(cache._items)
    assert cache.nbytes <= cache.max_bytes
    cache.put("huge", [torch.zeros(10_000)])  # over the whole budget: not kept, nothing evicted
    assert "huge" not in cache and len(cache._items) == 3
    assert cache.get("zzz") is None and cache.hits == 1 and cache.misses == 1
