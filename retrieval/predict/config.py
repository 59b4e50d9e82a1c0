"""Options of the predict stage. Kept apart from the heads' code so that reading a config (every `ldx`
command does) loads neither torch nor scikit-learn."""

from __future__ import annotations

from pipeline.config import Options


class PredictConfig(Options):
    """The predict stage of `ldx run` (retrieval/predict/stage.py): each analyst task on or off, and its knobs."""

    roles: bool = True  # block role of every segment; a disagreement with the rule type is flagged
    # the role head whose towers read the Transformer-XL (roles.npz; encodes every segment once more, blind
    # to the rule types: ~8 s CPU per 100 criminal judgments, benchmarks/predict_speed.py) or its text-only
    # twin (roles_text.npz, ~0.9 s)
    role_encoder: bool = True
    articles: bool = True  # 刑法 articles from the FACTS of Chinese criminal judgments
    article_memory: bool = True  # join retrieved similar cases' articles as extra memory
    consistency: bool = True  # verdict–facts consistency flags
    provisos: bool = True  # 但书 / "provided that" spans with the clause each restricts
    duplicates: bool = (
        True  # near-duplicates and shared passages, against earlier batches too (OUT_DIR/dedup)
    )
    claim_tree: bool = True  # each patent claim independent or dependent, with its parent claims
    # the description passages that support each element of a patent's independent claims
    claim_support: bool = True
    claim_support_k: int = 3  # passages cited per element
    # fuse the MiniLM sentence model with BM25 (false: BM25 alone; benchmarks/claim_support.py)
    claim_support_dense: bool = True
    clauses: bool = True  # CUAD's clause categories in contracts, each with the sentences that hold it
    # a category is reported when its likeliest sentence is this likely (clauses.npz's probability)
    clause_min_probability: float = 0.5
    clause_evidence_k: int = 3  # sentences cited per clause row (those reaching the bar), likeliest first
    connective_attention: bool = True  # per-document attention to connectives (needs a model)
    heads_dir: str | None = None  # None = the shipped heads in data/models/heads/
    # a disagreement with the rule type is flagged above this score: the smallest (of 0.5 … 0.999) whose flags
    # were >= 80% right on held-apart judgments parsed blind (benchmarks/role_flag_precision.py --zh-docs 60,
    # roles.npz with context, cues and decoding: 60 Chinese criminal judgments with their markers cut out,
    # precision 0.939 / recall 0.874; 13 Indian judgments, 0.810 / 0.427; together 0.882 / 0.613; the
    # previous head needed 0.98 for 0.890 / 0.574)
    role_disagreement_min_score: float = 0.95
    # the same for the text-only twin (role_encoder = false; same run with --text-only): zh 0.957 / 0.861,
    # Indian 0.810 / 0.351, together 0.898 / 0.563 (at 0.98 the Indian precision was 0.795)
    text_role_disagreement_min_score: float = 0.99
    # predicted articles this sure are compared with the cited: at 0.6, 3.3% of the real criminal judgments
    # got an article_disagrees flag, at 0.9 0.5%, with the same detection (benchmarks/predict_consistency.py)
    article_consistency_threshold: float = 0.9
    duplicate_doc_threshold: float = 0.8  # estimated Jaccard of shingle sets
    duplicate_passage_threshold: float = 0.8
    attention_max_segments: int = 8  # segments per document run with diagnostics on (explicit attention path)
