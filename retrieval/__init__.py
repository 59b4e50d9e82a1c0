"""retrieval: the FAISS segment-state store, memory injection, hybrid search and cited answers.

Modules: `store` (FAISS keys + Parquet metadata + compact fp16 states; pooled by txl.pooling), `inject` (retrieved
memory while encoding), `stage` (the index stage of `ldx run`), `hybrid` (BM25 + dense + RRF, filters),
`text` (BM25 terms), `sentence` (packaged MiniLM), `ask` (cited answers), `cache` (session cache),
`stages` (what a model stage of `ldx run` is). Subpackages: `predict` (the analyst predictions and their
heads), `reader` (the extractive reader and its training), `eval` (retrieval and QA evaluation).

For the flow: `retrieval.stage.INDEX_STAGE(docs, ctx) -> dict[str, int]` is the "index" run stage;
`retrieval.stage.index_segments(out_dir, segments_by_doc, model, tokenizer, config, model_id)` is the same
work from plain Python.
"""
