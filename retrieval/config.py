"""Options of the retrieval subsystem: the segment-state store, injection and hybrid search (the predict
stage's are in retrieval.predict.config)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from pipeline.config import Options


class RetrievalConfig(Options):
    # trade-offs: retrieval/faiss_index.py; "auto" = flat below `exact_below_keys` keys, HNSW from there
    index_type: Literal["auto", "flat", "ivfpq", "hnsw"] = "auto"
    # flat's single query grows with the keys: p50 0.45 ms at 10k, 8.5 ms (p95 9.8) at 100k, d = 256, one
    # thread (benchmarks/retrieval_speed.py); HNSW 0.32 ms (p95 0.52) at recall@10 0.997 at 100k
    exact_below_keys: int = 50_000
    # how the last layer's states become one raw key when no key head is attached (a head pools its own way)
    pooling: Literal["mean", "max", "first", "last"] = "mean"
    # the key head of the FAISS keys (txl.keys): "auto" = data/models/keys.pt when trained on the encoder,
    # "raw" = pooled states as they are, else a head file
    key_head: str = "auto"
    # the layers whose states a stored segment keeps, the only layers that read them back as retrieved
    # memory (negative: counted from the top). On the shipped 4-layer model layer 2 does the reading:
    # a window's full states there cut held-apart perplexity by 5.5% (distant recalls 15%), at layer 3
    # alone by 0.1%, at every layer by 5.7% (benchmarks/lm_ablations.py --read-layers)
    state_layers: list[int] = Field(default_factory=lambda: [-2])
    # P state vectors kept per stored segment and layer (a longer segment's are pooled, txl.pooling): 128,
    # a whole window; 1 layer x 128 x 256 fp16 = 64 KiB per segment (32 pooled states at all 4 layers,
    # the same bytes, gave 1.5%)
    states_per_layer: int = 128
    hnsw_m: int = 32  # graph degree of the HNSW index
    # candidates an HNSW query keeps (recall against latency); None = `ef_search`'s rule by size
    hnsw_ef_search: int | None = None
    ivf_nlist: int = 1024  # IVF cells (fewer when the store is small)
    ivf_nprobe: int = 32  # cells visited per query
    pq_m: int = 32  # bytes per key in the IVF-PQ index (must divide the key dimension)
    ivf_refine_k_factor: int = 8  # IVF-PQ re-ranks k·this candidates exactly (keeps fp32 keys); 0 = off
    inject_k: int = 2  # retrieved segments injected as extra memory
    inject_cross_document: bool = False
    encode_lanes: int = 32  # documents encoded side by side in one forward call
    encode_batch_tokens: int = 8192  # lanes x padded segment length per call, at most (about)
    encode_window: int = 128  # documents in flight, among which each call picks similar segment lengths
    # consecutive segments of a document up to this many tokens share one forward call where nothing can be
    # injected into them (txl.model's seg_starts: the same states, far fewer steps); 0 = one segment per call
    encode_pack_tokens: int = 128
    reuse_prefixes: bool = True  # encode a prefix shared by several documents once (retrieval/prefix.py)
    prefix_cache_bytes: int = 256 * 2**20
    bm25: bool = True
    dense: bool = True
    rrf_k: int = 60
    arm_weights: dict[str, float] = Field(
        default_factory=dict
    )  # RRF weight per arm (bm25, txl, minilm); unnamed = 1
    # Chinese queries: MiniLM's English vocabulary maps most Han characters to [UNK]; the shipped encoder's
    # keys rank CLCR cases at 0.949 x BM25's nDCG@10, and fused with BM25 at equal weights they gain 5%
    # with an interval over the queries that spans zero, so BM25 answers alone (retrieval/hybrid.py)
    zh_arm_weights: dict[str, float] = Field(default_factory=lambda: {"minilm": 0.0, "txl": 0.0})
    zh_min_han_share: float = (
        0.3  # a query is Chinese when at least this share of its letters are Han characters
    )
    # `ldx ask` on English: the packaged sentence model (all-MiniLM-L6-v2) as the dense arm "minilm" over the
    # run's English segments and as half of the evidence-sentence score (retrieval/evidence.py)
    sentence_model: bool = True
    # a Chinese question's evidence sentences (which MiniLM cannot read) ranked with the cosine of their
    # Transformer-XL keys and the question's beside term overlap (retrieval/store_arm.py); needs `dense`
    sentence_keys: bool = True
    # an English question about a contract's clause ("Which state's law governs this agreement?") answered by
    # the clause head (retrieval/clause_questions.py) from the contract asked about or cited first
    clause_answers: bool = True
    # an English question asking for a person, date, amount, duration, place or condition answered with the
    # phrase of that shape nearest the question's words (retrieval/english_spans.py), before the reader
    typed_spans: bool = True
    # a typed span is given only from a line at least this relevant to the question (english_spans' relevance,
    # in [0, 1]), else the reader answers or says it found no confident answer. Set at 0.25 a priori, then
    # checked on english_spans dev + test (84 questions, `benchmarks/english_spans.py --set dev test`):
    # retrieval.eval.metrics.choose_threshold over answer-vs-abstain F1 keeps every typed answer (its bar,
    # 0.314, is the lowest relevance any of them had): no higher bar raises that F1
    typed_min_relevance: float = 0.25
    # a reader span from a sentence on the side a question asks about (the court's ruling or a party's
    # request: retrieval/sides.py) ranks as if its sentence held this much more of the question; set a priori
    side_prior: float = 0.5
    # semantic anchoring (retrieval/anchoring.py): empty the memory before segment i when the key of segment
    # i-1 (the encoder's own key, through the key head) has drifted from the key of segment 0. Off: every
    # threshold tried raised held-apart perplexity (+2.4% at 0, +7.6% at 0.1; benchmarks/anchoring.py)
    anchoring: bool = False
    # cosine of the key-head keys under which memory is reset. The rule: reset once the last segment is no
    # closer to its own opening than a segment of an unrelated document is, i.e. the median cosine between
    # keys of different documents (~0.1 with the shipped head; benchmarks/anchoring.py prints it)
    anchoring_threshold: float = 0.1
    cache_bytes: int = 512 * 2**20  # session cache of document states

    def ef_search(self, n_keys: int) -> int:
        """HNSW candidates per query over `n_keys` keys: `hnsw_ef_search`, else n_keys / 650 and at least
        128. Measured (benchmarks/retrieval_speed.py --ef-search, d = 256, one thread): at 100k keys 128
        gives recall@10 0.997 at p95 0.52 ms (1536: 0.998 at 4.7 ms); at 1M 128 gives 0.778, 1024 0.949 at
        3.5 ms, 1536 0.959 at 5.4 ms. Restricted searches (injection lookups) score exactly instead."""
        return self.hnsw_ef_search or max(128, n_keys // 650)
