"""retrieval: the FAISS segment-state store, memory injection, hybrid search and cited answers.

Modules: `store` (FAISS keys + Parquet metadata + compact fp16 states; pooled by txl.pooling),
`store_search` (the store's top-k search), `store_signatures` (each stored document's MinHash signature),
`store_dedup` (near-duplicates kept apart in cross-document injection), `inject` (retrieved memory while
encoding), `stage` (the index
stage of `ldx run`), `hybrid` (BM25 + dense + RRF, filters),
`text` (BM25 terms), `sentence` (packaged MiniLM), `ask` (cited answers), `cache` (session cache),
`stages` (what a model stage of `ldx run` is), `answer` (whole-phrase, sentence and "not found" answers).
Subpackages: `predict` (the analyst predictions and their heads), `reader` (the extractive reader and its
training), `eval` (retrieval and QA evaluation).

`retrieval.Asker(out_dir).ask(question)` answers questions over an indexed run, models loaded once.

For the flow: `retrieval.stage.INDEX_STAGE(docs, ctx) -> dict[str, int]` is the "index" run stage;
`retrieval.stage.index_segments(out_dir, segments_by_doc, model, tokenizer, config, model_id)` is the same
work from plain Python.
"""

__all__ = ["Asker"]


def __getattr__(name: str):
    # Lazy on purpose: `import retrieval.ask` costs 2.9 s (torch, the encoder, jieba; measured 2026-12-01 on
    # this 2-core machine) against 0.18 s for `retrieval.text`, and every `import retrieval.<module>` runs
    # this package's __init__ first.
    if name == "Asker":
        from retrieval.ask import Asker  # start-up: 2.9 s, paid only by who asks for Asker

        return Asker
    raise AttributeError(f"module 'retrieval' has no attribute {name!r}")
